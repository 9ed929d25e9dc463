"""The controlled request language that scripted participants speak and understand.

A message is ordinary prose followed by zero or more tag lines. A tag line starts with
`#<kind>` and may carry a one-line payload. Prose is for readers (and real models); the
tags are what scripted participants act on, so scripted behaviour never depends on
parsing free text. Kinds:

  agent -> customer   #ask <token>            ask for one customer detail
                      #confirm <summary>      ask permission before a change
                      #tell <text>            pass on requested information
                      #cannot [<text>]        what the customer raised last (its latest
                                              #request: a demand or a fallback) cannot be
                                              done; the optional text is a reason, for
                                              readers only
  customer -> agent   #field <token> <value>  a released detail
                      #notsure <token>        the detail is not in the customer's memory
                      #yes / #no              answer to #confirm
                      #request <text>         the customer raises one of its own demands,
                                              or, answering #cannot, a fallback
  agent -> desk       #remit                  broad question: what do you handle?
                      #call <tool> <json>     run a tool with these arguments
                      #want <pointer> ...     which parts of the result to report
                      #yes                    go ahead with a restated change
  desk -> agent       #handles <text>         the desk's own description of its work
                      #confirm? <tool> <json> restated change awaiting a yes
                      #result <json>          requested parts of a result ({pointer: value})
                      #failed <reason>        the call was attempted and refused
                      #decline                outside this desk's remit
                      #refer <holder>         outside this desk's remit; <holder> handles it
                                              (only in an arm whose holders refer)
                      #missing <argument>     the request lacks a detail
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

KINDS = (
    "ask",
    "confirm",
    "tell",
    "cannot",
    "field",
    "notsure",
    "yes",
    "no",
    "request",
    "remit",
    "call",
    "want",
    "handles",
    "confirm?",
    "result",
    "failed",
    "decline",
    "refer",
    "missing",
)
_TAG = re.compile(r"^#(" + "|".join(re.escape(k) for k in sorted(KINDS, key=len, reverse=True)) + r")(?:\s+(.*))?$")


@dataclass(frozen=True)
class Tag:
    kind: str
    payload: str = ""

    def json(self):
        return json.loads(self.payload)


def tag(kind: str, payload: str = "") -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown tag kind {kind!r}")
    if "\n" in payload:
        raise ValueError("tag payloads are one line")
    return f"#{kind} {payload}".rstrip()


def say(prose: str, *tags: str) -> str:
    return "\n".join([prose, *tags]) if tags else prose


def parse(text: str | None) -> list[Tag]:
    tags = []
    for line in (text or "").splitlines():
        m = _TAG.match(line.strip())
        if m:
            tags.append(Tag(m.group(1), (m.group(2) or "").strip()))
    return tags


def first(text: str | None, kind: str) -> Tag | None:
    return next((t for t in parse(text) if t.kind == kind), None)


def call_tag(tool: str, arguments: dict) -> str:
    return tag("call", f"{tool} {json.dumps(arguments, sort_keys=True)}")


def parse_call(payload: str) -> tuple[str, object]:
    """`tool {json}` -> (tool, arguments); unparsable JSON comes back as the raw string."""
    tool, _, raw = payload.partition(" ")
    try:
        return tool, json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return tool, raw


# A card field named, not stated, in a demand the customer raises ('<item:t_shirt>'): the
# customer's demands are masked (incognita.access.episodes.loop.prompts.mask).
_PLACEHOLDER = re.compile(r"<[^<>]*>")


def placeholders(text: str) -> list[str]:
    """The tokens a masked text names: '<item:t_shirt>' -> 'item:t_shirt'."""
    return [m.group(0)[1:-1] for m in _PLACEHOLDER.finditer(text)]


def strip_placeholders(text: str) -> str:
    return " ".join(_PLACEHOLDER.sub(" ", text).split())
