"""Reading an agent's JSON reply: what both actions and probe answers start from."""

from __future__ import annotations

import json


def json_reply(raw: str | None) -> tuple[object, str | None]:
    """(document, None), or (None, why it is not JSON). A Markdown code fence around it is allowed."""
    text = (raw or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        # strict=False: a raw tab or newline inside a string (what a JSON grammar on a llama.cpp
        # server can let through) leaves the document's meaning clear, so it is not a format error.
        return json.loads(text, strict=False), None
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at character {exc.pos})"
