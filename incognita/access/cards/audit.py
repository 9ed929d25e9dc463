"""Card audit: check every card against its source task under the repair rule.

The rule: whatever the source tells the customer must be releasable, and nothing the
source does not tell the customer may be invented. Each check yields one row
(task, card_version, check, verdict, detail) with verdict pass, fail, warn or info. The checks
here hold for every domain; a domain adds its own (`Domain.cards.audit_checks`: for retail,
incognita.access.domains.retail.card_checks).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incognita.access.cards.text import contains_span, norm
from incognita.access.domain import LOCAL_ID
from incognita.common.io import InputError, read_yaml

if TYPE_CHECKING:
    from incognita.access.domain import Domain

HEADER = ["task", "card_version", "check", "verdict", "detail"]
_QUESTION = re.compile(
    r"\b(know|wonder|ask|tell|get|how many|how much|what|which|why|when|confirm|check|verify|total)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Finding:
    task: str
    card_version: int
    check: str
    verdict: str
    detail: str

    def row(self) -> list[Any]:
        return [self.task, self.card_version, self.check, self.verdict, self.detail]


# --------------------------------------------------------------------------- the checks


def _request_text(card: dict) -> str:
    return "\n".join(t for r in card["requests"] for t in [r["demand"], *r["fallbacks"]])


def _gold_arguments(card: dict) -> set[str]:
    return {f"{a['name']}.{arg}" for a in card["reference_actions"] for arg in a["arguments"]}


def check_fields_in_source(card: dict, source_text) -> Finding:
    """Every span is in the source; a field a repair adds with `from_gold` (a value upstream's gold
    needs and the source never tells the customer) has its spans in the repaired request block
    instead, so the customer states it wherever that block stands in for the source, and names a
    reference write argument of the card."""
    text = source_text(card["source"]["instructions"])
    requests = _request_text(card)
    gold_args = _gold_arguments(card)
    invented, beyond = [], []
    for f in card["fields"]:
        if f.get("from_gold"):
            beyond.append(f"{f['token']} ({f['from_gold']})")
            if f["from_gold"] not in gold_args:
                invented.append(f"{f['token']}: from_gold {f['from_gold']!r} is no argument of a reference action")
            invented += [
                f"{f['token']}: {s!r} (not in the request block)" for s in f["spans"] if not contains_span(requests, s)
            ]
        else:
            invented += [f"{f['token']}: {s!r}" for s in f["spans"] if not contains_span(text, s)]
    parts_ok = [f["token"] for f in card["fields"] if not all(norm(s) in norm(f["value"]) for s in f["spans"])]
    if invented or parts_ok:
        detail = "; ".join(invented + [f"{t}: value is not made of its spans" for t in parts_ok])
        return _f(card, "fields_in_source", "fail", f"not in the source instructions: {detail}")
    detail = f"{len(card['fields'])} field(s), every span found in the source"
    if beyond:
        detail = (
            f"{len(card['fields'])} field(s); {len(card['fields']) - len(beyond)} found in the source, "
            f"{len(beyond)} stated by the repair for upstream's gold: {', '.join(beyond)}"
        )
    return _f(card, "fields_in_source", "pass", detail)


def check_info_requests(card: dict, ambiguities: dict) -> Finding:
    info = card["information_channel"]["communicate_info"]
    if not info:
        return _f(card, "info_requested", "pass", "no information channel")
    known = ambiguities.get(str(card["task_id"]), {}).get("communicate_info")
    texts = [r["demand"] for r in card["requests"]] + [fb for r in card["requests"] for fb in r["fallbacks"]]
    if any(_QUESTION.search(t) for t in texts):
        return _f(card, "info_requested", "pass", f"request block asks for information ({len(info)} item(s) expected)")
    if known:
        return _f(card, "info_requested", "warn", f"ambiguous upstream: {known}")
    return _f(
        card,
        "info_requested",
        "fail",
        f"the agent must communicate {info} but no demand in the request block asks for it",
    )


def check_requests_cover(card: dict) -> Finding:
    n = len(card.get("sentences", []))
    covered = {c for r in card["requests"] for c in r.get("covers", [])}
    uncovered = [i for i in range(n) if i not in covered]
    if uncovered:
        shown = "; ".join(f"[{i}] {card['sentences'][i]}" for i in uncovered)
        return _f(card, "requests_cover_demands", "fail", f"source sentences not in the request block: {shown}")
    return _f(
        card, "requests_cover_demands", "pass", f"{n} source sentence(s) covered by {len(card['requests'])} demand(s)"
    )


_CONCRETE = re.compile(r"#?W?\d[\d,.]*|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+")


def check_requests_invent_nothing(card: dict, source_text) -> Finding:
    """Numbers, ids and emails in the request block must come from the source text, or from a
    value a repair states for upstream's gold (a field with `from_gold`)."""
    stated = [f["value"] for f in card["fields"] if f.get("from_gold")]
    text = norm("\n".join([source_text(card["source"]["instructions"]), *stated]))
    texts = [r["demand"] for r in card["requests"]] + [fb for r in card["requests"] for fb in r["fallbacks"]]
    invented = sorted(
        {
            m.group(0).rstrip(".,")
            for t in texts
            for m in _CONCRETE.finditer(t)
            if norm(m.group(0)) and norm(m.group(0)) not in text
        }
    )
    if invented:
        return _f(card, "requests_invent_nothing", "fail", "values not in the source: " + ", ".join(invented))
    return _f(
        card, "requests_invent_nothing", "pass", "every number, id and email in the request block is in the source"
    )


def check_withholding(card: dict) -> Finding:
    if card["withholds_disclosure"]:
        return _f(card, "withholds_disclosure", "info", "the source tells the customer to withhold something by design")
    return _f(card, "withholds_disclosure", "pass", "no withholding instruction")


def audit_card(
    card: dict, db: dict, vocabulary: dict[str, list[str]], ambiguities: dict, domain: Domain
) -> list[Finding]:
    """All checks of one card: the generic ones, then its domain's own (`Domain.cards.audit_checks`);
    `ambiguities` are the choices the upstream instructions do not settle (the domain's
    upstream_ambiguities.yaml, reported as warn rather than fail)."""
    rules = domain.cards
    findings = [
        check_fields_in_source(card, rules.source_text),
        check_info_requests(card, ambiguities),
        check_requests_cover(card),
        check_requests_invent_nothing(card, rules.source_text),
        check_withholding(card),
    ]
    findings += [_f(card, *row) for row in rules.audit_checks(card, db, vocabulary, ambiguities)]
    for rep in card["repairs"]:
        findings.append(_f(card, "repair", "info", f"{rep['file']} v{rep['version']}: {rep['reason']}"))
    return findings


def _f(card: dict, check: str, verdict: str, detail: str) -> Finding:
    return Finding(card["task_id"], card["card_version"], check, verdict, detail)


# --------------------------------------------------------------------------- known upstream ambiguities


@functools.lru_cache(maxsize=4)
def _read_ambiguities(path: str, mtime_ns: int) -> dict[str, dict[str, str]]:
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of task id -> list of {{argument, reason}}")
    out: dict[str, dict[str, str]] = {}
    for task, entries in data.items():
        if not LOCAL_ID.fullmatch(str(task)):
            raise InputError(f"{path}: key {task!r}: not an upstream task id")
        if not isinstance(entries, list) or not entries:
            raise InputError(f"{path}: {task}: expected a non-empty list of {{argument, reason}}")
        for entry in entries:
            if not isinstance(entry, dict):
                raise InputError(f"{path}: {task}: each entry must be a mapping with argument and reason")
            unknown = sorted(set(entry) - {"argument", "reason"})
            if unknown:
                raise InputError(f"{path}: {task}: unknown key {unknown[0]!r} (allowed: argument, reason)")
            for key in ("argument", "reason"):
                if not isinstance(entry.get(key), str) or not entry[key].strip():
                    raise InputError(f"{path}: {task}: {key}: missing or not a non-empty string")
            tool, _, arg = entry["argument"].partition(".")
            if entry["argument"] != "communicate_info" and not (
                re.fullmatch(r"[a-z_]+", tool) and re.fullmatch(r"[a-z_]+", arg)
            ):
                raise InputError(
                    f"{path}: {task}: argument {entry['argument']!r}: expected <tool>.<argument> or communicate_info"
                )
            out.setdefault(str(task), {})[entry["argument"]] = " ".join(entry["reason"].split())
    return out


def load_ambiguities(path: str | Path, write_tools: Collection[str] | None = None) -> dict[str, dict[str, str]]:
    """A domain's upstream-ambiguities file (choices its source instructions do not settle) as
    {task: {argument: reason}}; InputError names the file and the key of anything malformed, and,
    given the domain's `write_tools`, an argument of a tool that is not one of them (a choice the
    audit compares is always a write's: a misspelt tool would silently never match)."""
    try:
        mtime = Path(path).stat().st_mtime_ns
    except OSError:
        raise InputError(f"{path}: file not found") from None
    known = _read_ambiguities(str(path), mtime)
    if write_tools is not None:
        for task, entries in known.items():
            for argument in entries:
                tool = argument.partition(".")[0]
                if argument != "communicate_info" and tool not in write_tools:
                    raise InputError(
                        f"{path}: {task}: argument {argument!r}: {tool!r} is not one of the domain's write tools "
                        f"({', '.join(sorted(write_tools))})"
                    )
    return known
