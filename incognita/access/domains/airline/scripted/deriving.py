"""The airline's derivation rules as its scripted agent applies them: each computes an argument
from the values the agent obtained (the operands the plan names, the call's other arguments, the
records it read), never from the golden value.

The policy's numbers (free bags per membership and cabin, the bag and insurance fees, the
compensation per passenger) have one home, incognita.access.domains.airline.derivations, which
states them as upstream's airline policy (policy.md in the pinned package) does; the golden
builder recognises a derived value by the same numbers. The rules' names and operands are that
module's too:

* `date_later` / `date_earlier`: the date read plus (minus) the days of the customer's shift;
* `bags_added`: the reservation's bag total plus the bags the customer adds;
* `bag_allowance`: the free bags (membership x cabin x passengers); the bags that are not free
  are the total less those, the total "with all the free allowance" is those;
* `fare`: the flights' prices in the cabin times the passengers, the insurance and the bags that
  are not free, less what the booking's earlier payments cover; a payment with a balance (a
  certificate, a gift card) covers at most its balance, the last one the rest;
* `compensation`: $100 (a cancelled flight) or $50 (a delayed one) per passenger of the
  reservation, by what the customer complains of.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.derivations import BAG_FEE, COMPENSATION, FREE_BAGS, INSURANCE_FEE

# What a complaint is about: a cancelled flight or a delayed one (policy: "Refunds and Compensation").
_CANCELLED = re.compile(r"\bcancel(?:l)?ed\s+(?:flight|by\s+the\s+airline)|\bflight\s+(?:was|got|is)\s+cancel", re.I)
_DELAYED = re.compile(r"\bdelay(?:ed|s)?\b", re.I)


class RuleError(ValueError):
    """A rule cannot be applied to what the agent obtained (the message says what is missing)."""


def shifted_date(date: Any, phrase: Any, sign: int) -> str:
    """`date` moved by the days the customer's shift phrase states (sign -1: earlier)."""
    days = sw.shift_days(str(phrase))
    if days is None:
        raise RuleError(f"{phrase!r} states no shift of days")
    try:
        base = dt.date.fromisoformat(str(date))
    except ValueError:
        raise RuleError(f"{date!r} is not a date") from None
    return (base + dt.timedelta(days=sign * days)).isoformat()


def bags_added(current: Any, phrase: Any) -> int:
    """The reservation's bag total after the bags the customer adds."""
    added = sw.bag_count(str(phrase))
    if not isinstance(current, int) or added is None:
        raise RuleError(f"cannot add {phrase!r} to a bag total of {current!r}")
    return current + added


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The policy's free checked bags of a booking: per passenger, by membership and cabin."""
    per = FREE_BAGS.get(str(membership), {}).get(str(cabin))
    if per is None:
        raise RuleError(f"the policy states no free bags for a {membership!r} member in {cabin!r}")
    return per * passengers


def bag_allowance(membership: str, cabin: str, passengers: int, total: Any, said: str | None) -> int:
    """The bags that are not free; or, when the customer asks for its whole free allowance
    (a bag phrase with no count), the total: the free bags themselves."""
    free = free_bags(membership, cabin, passengers)
    if said is not None and sw.bag_count(said) is None:
        return free
    total = int(total) if isinstance(total, str) and total.isdigit() else total
    if not isinstance(total, int):
        raise RuleError(f"no bag total to weigh against the {free} free bags")
    return max(0, total - free)


def fare(prices: Iterable[Any], passengers: int, insurance: Any, nonfree: Any, others: Iterable[Any]) -> int | float:
    """What one payment of a booking covers: every flight's price times the passengers, the
    insurance and the bags that are not free, less the booking's other payments."""
    total = sum(_number(p) for p in prices) * passengers
    total += INSURANCE_FEE * passengers * (insurance == "yes") + BAG_FEE * (nonfree or 0)
    return total - sum(_number(a) for a in others)


def payment_share(remaining: Any, balance: Any, last: bool) -> int | float:
    """What one payment of a split covers, the payments taken in the customer's order: a card
    with a balance as much of what remains as its balance allows, the last payment (or one with
    no balance, a credit card) all that remains."""
    if last or balance is None:
        return remaining
    return min(_number(balance), remaining)


def compensation(passengers: int, complaints: Iterable[str], statuses: Iterable[str] = ()) -> int:
    """The certificate for a complaint: per passenger, $100 for a cancelled flight, $50 for a
    delayed one. The flights' own statuses, where the agent read them, say which; else the
    customer's words."""
    cancelled, delayed = COMPENSATION
    found = {str(s).lower() for s in statuses}
    if "cancelled" in found:
        return cancelled * passengers
    if "delayed" in found:
        return delayed * passengers
    text = " ".join(complaints)
    if _CANCELLED.search(text):
        return cancelled * passengers
    if _DELAYED.search(text):
        return delayed * passengers
    raise RuleError("the customer complains of neither a cancelled nor a delayed flight")


def count_of(value: Any) -> int:
    """The passengers a value gives: a list of them, or a number."""
    if isinstance(value, list):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise RuleError(f"{value!r} gives no number of passengers")


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            return float(str(value).replace("$", "").replace(",", ""))
        except ValueError:
            raise RuleError(f"{value!r} is not an amount") from None
    return value


def membership_of(values: Iterable[Any]) -> str | None:
    """The membership level among a rule's inputs."""
    return next((str(v) for v in values if isinstance(v, str) and v in FREE_BAGS), None)


def said_phrase(values: Iterable[Any]) -> str | None:
    """The customer's bag phrase among a rule's inputs (a string that is no membership level)."""
    return next((str(v) for v in values if isinstance(v, str) and v not in FREE_BAGS), None)
