"""Reading an agent's JSON reply: what both actions and probe answers start from."""

from __future__ import annotations

import json


def json_reply(raw: str | None) -> tuple[object, str | None]:
    """(document, None), or (None, why it is not JSON). A Markdown code fence around it is allowed."""
    text = (raw or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at character {exc.pos})"
