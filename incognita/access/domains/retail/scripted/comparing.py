"""How a scripted agent reads what the customer asks of a replacement relative to the old one.

incognita.access.domains.retail.scripted.picking (`EntryPicker._score`) asks this module, when it chooses among
product variants or order lines, which entries meet the customer's comparisons and
constraints; incognita.access.domains.retail.scripted.choosing holds the plain language rules (terms, scales,
superlatives, comparatives). All rules are general: none names a task, an id or a product.

- Named option values: "size 8" (an option's name with a value) states that option, even
  where the bare value ("8") is too short to be matched as a word.
- Yes/no options named in words: "a waterproof variant" wants `waterproof: yes`, "not
  resistant to water" wants `water resistance: no`; "do not care about waterproof or not"
  wants neither.
- Offsets: "1000 more pieces", "500 pieces less", "250ml more" ask for the old line's value
  plus or minus that much on the option with that name or unit (when the catalogue lacks
  that value: the nearest one on the asked side of the old value).
- Keeping: "the same difficulty" keeps that option of the old line; "the same color as your
  other bottle" takes it from another line of the same product the agent has read; "the
  other bottle you placed" asks for that line's item, or the nearest one to it; "the exact
  same item but ...", "without changing the other options" keep every option the customer
  does not name.
- A budget: "with the previous price", "within what I paid" admits entries priced no higher
  than the old line; among the entries that are otherwise equally good, the cheapest.
- Constraints first: an extreme ("the highest resolution") or comparison is taken among the
  entries that meet the most of the constraints above, as a person reads "the highest
  resolution waterproof camera within the old price".
- Scope: a demand counts for a choice when it names, as a placeholder, the item chosen (or
  the detail that selects it), or names no item at all; a demand about another item does
  not steer this one.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.scripted.choosing import (
    _option_for,
    entry_kind,
    goal_picks,
    match_score,
    option_goals,
    option_rank,
    singular,
    strip_placeholders,
    terms,
)
from incognita.access.domains.retail.source_words import norm
from incognita.access.episodes.scripted.language import placeholders

_YES_NO = {"yes", "no"}
_NEGATORS = re.compile(r"(?:\b(?:not|non|no|without|never)|n't)\W*(?:\w+\W+){0,2}$")
_INDIFFERENT = re.compile(r"\b(?:care|matter|mind|whether|either)\b")
_NUM = r"(\d+(?:\.\d+)?)"
_MORE = r"(more|less|fewer|extra|bigger|larger|smaller|longer|shorter|higher|lower)"
_UP = {"more", "extra", "bigger", "larger", "longer", "higher"}
# "1000 more pieces", "250ml more capacity", "500 pieces less", "250 ml more"
_OFFSET_BEFORE = re.compile(rf"\b{_NUM}\s*([a-z]+)?\s+{_MORE}\s+([a-z]+)")
_OFFSET_AFTER = re.compile(rf"\b{_NUM}\s*([a-z]+)\s+{_MORE}\b(?!\s+[a-z]*\s*than)")
_SAME = re.compile(r"\bsame\s+([a-z-]+(?:\s+[a-z-]+)?)")
_AS_OTHER = re.compile(r"\s*(?:as\s+)?(?:my|your|the)\s+other\b")
_OTHER = re.compile(r"\b(?:the|your|my)\s+other\s+(?:\w+\s+){0,2}?([a-z-]+)")
_KEEP_REST = re.compile(
    r"\b(?:(?:exact\s+)?same\s+(?:item|one|product|specs?|model)\s+but|without\s+changing\s+(?:the\s+|any\s+)?other|"
    r"keep(?:ing)?\s+(?:all\s+)?(?:the\s+)?other\s+options|everything\s+else\s+the\s+same)\b"
)
_BUDGET = re.compile(
    r"\b(?:with(?:in)?|for|under|below|at most|no more than|not more than|up to)\s+(?:the\s+|my\s+|your\s+|what\s+)?"
    r"(?:(?:previous(?:ly)?|original|old|same|earlier|current)\s+(?:\w+\s+)?(?:price|cost|amount)|(?:i|you)\s+paid)\b"
)


def demands_in_scope(raised: list[str], tokens: set[str]) -> list[str]:
    """The raised demands (with their placeholders) that are about one of `tokens` (slugs
    such as 'hiking_boots', the part after the colon), or about no item; placeholders removed."""
    out = []
    for demand in raised:
        named = {
            p.split(":", 1)[1] for p in placeholders(demand) if ":" in p and p.split(":")[0] in ("item", "preference")
        }
        if not named or named & tokens or not tokens:
            out.append(strip_placeholders(demand))
    return out


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")


def read_lines(docs: list[Any]) -> list[dict]:
    """Every order line in the results read so far."""
    return [
        line
        for doc in docs
        if isinstance(doc, dict) and isinstance(doc.get("items"), list)
        for line in doc["items"]
        if isinstance(line, dict) and isinstance(line.get("options"), dict)
    ]


def _options(entry: Any) -> dict:
    options = entry.get("options") if isinstance(entry, dict) else None
    return options if isinstance(options, dict) else {}


# --------------------------------------------------------------------------- named values


def named_option_scores(facts: list[str], entries: list[tuple[Any, Any]]) -> dict:
    """Key -> how many fact parts name one of its options with its value ("size 8", "8 size"),
    counted only where the plain word match (choosing.match_score) found nothing."""
    out: dict = {}
    parts = [p.strip() for f in facts for p in re.split(r"[;,]", strip_placeholders(f)) if p.strip()]
    for key, entry in entries:
        for part in parts:
            said = norm(part)
            for name, value in _options(entry).items():
                pair = {norm(f"{name} {value}"), norm(f"{value} {name}")}
                if said in pair and match_score([part], [str(value)]) <= 0:
                    out[key] = out.get(key, 0) + 1
    return out


# --------------------------------------------------------------------------- constraints


def _name_pattern(name: str) -> re.Pattern:
    """How a text names an option: a one-word name whole ('waterproof'), a longer one by the
    stems of its words in either order ('resistant to water' names 'water resistance')."""
    words = [w for w in re.split(r"[\s/-]+", name.lower()) if w]
    if len(words) == 1:
        return re.compile(rf"\b{re.escape(words[0])}\b")
    a, b = (re.escape(w[:5]) for w in words[:2])
    gap = r"[a-z]*[\s-]+(?:[a-z]+\s+)?"
    return re.compile(rf"\b(?:{a}{gap}{b}[a-z]*|{b}{gap}{a}[a-z]*)\b")


def yes_no_wants(texts: list[str], entries: list[tuple[Any, Any]]) -> dict[str, str]:
    """Option name -> 'yes' or 'no' for each yes/no option of the entries a text names."""
    names = {n for _, e in entries for n, v in _options(e).items() if str(v).lower() in _YES_NO}
    wants: dict[str, str] = {}
    for name in sorted(names):
        pattern = _name_pattern(name)
        for text in texts:
            low = strip_placeholders(text).lower()
            for m in pattern.finditer(low):
                before, after = low[max(0, m.start() - 40) : m.start()], low[m.end() : m.end() + 12]
                if re.match(r"\s*or not\b", after) or _INDIFFERENT.search(before[-25:]):
                    continue  # "do not care about waterproof or not"
                wants[name] = "no" if _NEGATORS.search(before) or before.endswith("non-") else "yes"
    return wants


def offsets(texts: list[str], options: dict, old: dict) -> dict[str, float]:
    """Option name -> the value asked for ("1000 more pieces": the old line's pieces + 1000)."""
    out: dict[str, float] = {}
    for text in texts:
        low = strip_placeholders(text).lower()
        found = [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in _OFFSET_BEFORE.finditer(low)]
        found += [(m.group(1), None, m.group(3), m.group(2)) for m in _OFFSET_AFTER.finditer(low)]
        for number, unit, word, named in found:
            option = _option_for(" ".join(w for w in (named, unit) if w), options) or _unit_option(unit or named, old)
            base = option_rank(old.get(option, "")) if option else None
            step = option_rank(f"{number}{unit or ''}")
            if base is None or step is None:
                continue
            out[option] = base + (step if word in _UP else -step)
    return out


def _unit_option(unit: str | None, old: dict) -> str | None:
    """The option of the old line whose value carries this unit ('ml' -> capacity '500ml')."""
    if not unit:
        return None
    for name, value in old.items():
        m = re.match(r"^\d+(?:\.\d+)?\s*([a-z]+)", str(value).lower())
        if m and singular(m.group(1)) == singular(unit):
            return name
    return None


def _reference_line(texts: list[str], lines: list[dict], old: Any, facts: list[str]):
    """The line 'the other bottle' means: a line read of the old line's product, other than
    the old line, named by the word after 'other'."""
    product = old.get("product_id") if isinstance(old, dict) else None
    old_id = str(old.get("item_id")) if isinstance(old, dict) else None
    words = {singular(m.group(1)) for t in texts for m in _OTHER.finditer(strip_placeholders(t).lower())}
    if not words:
        return None
    others = [
        line
        for line in lines
        if product
        and line.get("product_id") == product
        and str(line.get("item_id")) != old_id
        and words & terms(str(line.get("name", "")))
    ]
    if not others:
        return None
    return max(others, key=lambda line: match_score(facts, [str(v) for v in line["options"].values()]))


def compared_goals(
    facts: list[str],
    scoped: list[str],
    said: list[str],
    entries: list[tuple[Any, Any]],
    old: Any,
    lines: list[dict],
) -> dict:
    """Key -> how many of the customer's goals an entry meets: the constraints of this module
    (`facts` and the demands in scope, `scoped`), then the extremes and comparisons of
    choosing.option_goals (read in `said`) among the entries meeting the most constraints."""
    texts = list(dict.fromkeys([*facts, *scoped]))
    old_options = _options(old)
    variants = bool(old_options) and any(entry_kind(e) == "variant" for _, e in entries)
    sample = next((_options(e) for _, e in entries if _options(e)), {})
    constraints: list[tuple[str, Any]] = []  # (option or '', test of one entry)
    for name, want in yes_no_wants(texts, entries).items():
        constraints.append((name, lambda e, n=name, w=want: str(_options(e).get(n, "")).lower() == w))
    budget = False
    if variants:
        for name, target in offsets(texts, sample, old_options).items():
            constraints.append((name, _near(entries, name, target, option_rank(old_options.get(name, "")))))
        reference = _reference_line(texts, lines, old, facts)
        for low in (strip_placeholders(t).lower() for t in texts):
            for m in _SAME.finditer(low):
                name = _option_for(m.group(1), sample)
                source = reference["options"] if reference and _AS_OTHER.match(low[m.end() :]) else old_options
                if name and name in source:
                    constraints.append((name, _equal(name, source[name])))
        if reference:
            ref = reference["options"]
            common = {id(e): sum(_equal(n, v)(e) for n, v in ref.items()) for _, e in entries}
            most = max(common.values(), default=0)
            constraints.append(("", lambda e, c=common, m=most: c.get(id(e)) == m))
        price = old.get("price") if isinstance(old, dict) else None
        if isinstance(price, (int, float)) and any(_BUDGET.search(strip_placeholders(t).lower()) for t in texts):
            budget = True
            constraints.append(("", lambda e, p=price: isinstance(_price(e), float) and _price(e) <= p))
    goals = option_goals(said)
    if variants and any(_KEEP_REST.search(strip_placeholders(t).lower()) for t in texts):
        changed = {n for n, _ in constraints if n} | {_option_for(w, sample) for _, w, _ in goals}
        kept = {n: v for n, v in old_options.items() if n not in changed}
        if kept and len(kept) < len(old_options):
            constraints.append(("", lambda e, k=kept: all(_equal(n, v)(e) for n, v in k.items())))
    # An offset is the comparison itself: "1000 more pieces" is not also "more pieces".
    offset_options = {n for n, _ in constraints if n and n in old_options}
    goals = [g for g in goals if not (g[0] == "relative" and _option_for(g[1], sample) in offset_options)]
    met = {k: sum(bool(test(e)) for _, test in constraints) for k, e in entries}
    most = max(met.values(), default=0)
    pool = [(k, e) for k, e in entries if met[k] == most] if most else entries
    out = {k: v for k, v in met.items() if v}
    for k, v in goal_picks(goals, pool, old).items():
        out[k] = out.get(k, 0) + v
    if budget and pool:
        # Within a budget, of the entries otherwise equally good, the one that costs least.
        top = max(out.get(k, 0) for k, _ in pool)
        best = [(k, e) for k, e in pool if out.get(k, 0) == top and _price(e) is not None]
        if best:
            cheapest = min(_price(e) for _, e in best)
            for k, e in best:
                if _price(e) == cheapest:
                    out[k] = out.get(k, 0) + 0.25
    return out


def _near(entries: list[tuple[Any, Any]], name: str, target: float, base: float | None):
    """The test an offset's entries pass: the asked value, or, when the catalogue lacks it,
    the nearest value on the asked side of the old one."""
    ranks = {id(e): option_rank(_options(e).get(name, "")) for _, e in entries}
    side = [r for r in ranks.values() if r is not None and (base is None or (r - base) * (target - base) > 0)]
    if not side:
        return lambda e: False
    nearest = min(abs(r - target) for r in side)
    chosen = {r for r in side if abs(r - target) == nearest}
    return lambda e: ranks.get(id(e)) in chosen


def _equal(name: str, value: Any):
    """The test of an entry stating `name: value` (case and punctuation ignored)."""
    return lambda e: norm(str(_options(e).get(name, ""))) == norm(str(value))


def _price(entry: Any) -> float | None:
    price = entry.get("price") if isinstance(entry, dict) else None
    return float(price) if isinstance(price, (int, float)) else None


def scope_tokens(selected_by: tuple, entries: list[tuple[Any, Any]], old: Any) -> set[str]:
    """The slugs a demand must name to steer this choice: the selecting details' and the
    names of the entries (order lines) or of the old line they replace."""
    out = {t.split(":", 1)[1] for t in selected_by if ":" in t}
    named = [e for _, e in entries if isinstance(e, dict) and e.get("name")] + ([old] if isinstance(old, dict) else [])
    return out | {slug(e["name"]) for e in named if e.get("name")}
