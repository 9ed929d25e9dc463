"""The airline domain's golden rules (incognita.access.domain.GoldenRules): the forms a card field
takes to equal an argument, and the golden builder's rules that know the airline's records.

`RULES` is the mixin the generic builder (incognita.access.golden.trajectory) is made with: the
read-insertion rule and the selectors of a pick (incognita.access.domains.airline.golden_reads),
and the derivations of values the policy computes (incognita.access.domains.airline.derivations).
Its entity scope admits every read: an airline customer's values come from their own profile and
reservations and from flight searches open to anyone, so no read is out of bounds.
"""

from __future__ import annotations

from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.derivations import Derivations
from incognita.access.domains.airline.golden_reads import AirlineReads
from incognita.access.domains.airline.upstream import airports
from incognita.access.golden import value_matching
from incognita.access.golden.value_matching import GENERIC_PLANS, GENERIC_TRANSFORMS, single_spaced

# Deterministic normalisations an airline field may need to equal an argument, beside the generic
# ones. Each is exact after the normalisation; none guesses.
TRANSFORMS = {
    **GENERIC_TRANSFORMS,
    "month_day": "a date as the customer says it ('May 26', 'the 19th') and the same date in ISO form, "
    "in the year and (for a bare day) the month of the policy's current time",
    "airport": "a city the customer names (or its everyday short name: 'NY', 'sf') and its airport's "
    "IATA code in upstream's airport list",
    "bag_count": "a bag phrase ('3 checked bags', 'one more bag', 'no baggage') and the number it states",
}
# (part, transform) in the order they are tried, over all fields each.
FIELD_PLANS = [*GENERIC_PLANS, (None, "month_day"), (None, "airport")]
# The derivations of `derived` provenances (incognita.access.domains.airline.derivations).
DERIVATIONS = {
    "date_later": "a read date plus the days of a date_shift field",
    "date_earlier": "a read date less the days of a date_shift field ('move back' is said of both ways)",
    "bags_added": "the reservation's bag total plus the count of a baggage field",
    "bag_allowance": "the policy's free bags for the membership and cabin, times the passengers, against the total",
    "fare": "the flights' prices times the passengers, plus insurance and bag fees, less the other payments",
    "compensation": "the policy's certificate per passenger ($100 cancelled, $50 delayed) times the passengers",
}


class RULES(AirlineReads, Derivations):
    """The airline rules of the golden builder (each part's rules are in its mixin's module)."""

    # Every number an airline write takes is a bag count, a fare share or a compensation, which
    # the derivations compute; a number some read happens to hold would be no source of it.
    NUMBERS_FROM_READS = False


def _city(value: str) -> str:
    return sw.CITY_SHORT_NAMES.get(value.strip().lower(), value.strip())


def field_form(field: dict, part: str | None, transform: str | None, value: str) -> bool:
    """Does `value` equal this field under the given part and transform?"""
    fv: str = field["value"]
    if transform == "month_day":
        return part is None and field["kind"] == "date" and fv != value and sw.month_day_date(fv) == value
    if transform == "airport":
        city = _city(fv).casefold()
        return (
            part is None
            and field["kind"] == "airport"
            and any(code == value and c.casefold() == city for code, c in airports())
        )
    if transform == "bag_count":
        return part is None and field["kind"] == "baggage" and str(sw.bag_count(fv)) == value
    if part is not None and field["kind"] == "passenger":
        words = fv.split()
        if len(words) < 2:
            return False
        word = words[0] if part == "first" else words[-1]
        if transform == "casefold":
            return single_spaced(word).casefold() == single_spaced(value).casefold() and word != value
        return transform is None and word == value
    return value_matching.field_form(field, part, transform, value)


def field_value(value: str, part: str | None, transform: str | None) -> str:
    """The argument an agent writes from a released field value in the form the golden file names."""
    if transform == "month_day":
        return sw.month_day_date(value) or value
    if transform == "airport":
        city = _city(value).casefold()
        return next((code for code, c in airports() if c.casefold() == city), value)
    if transform == "bag_count":
        count = sw.bag_count(value)
        return value if count is None else str(count)
    if part is not None:
        words = value.split()
        value = words[0] if part == "first" else words[-1]
    return value
