"""Repair overlays: versioned, per-task corrections of the customer side of a card.

An overlay lives in config/repairs/<task>.yaml. Applying it yields card version
1 + overlay version; the rule-built card stays on disk under the version-keyed path
(results/cards/v1/) and is never pooled with repaired data. Overlays may change what the
customer knows and asks for, never the reference actions or the information channel.
"""

from __future__ import annotations

import copy
from pathlib import Path

from incognita.common.io import InputError, read_yaml, sha256_file

FORBIDDEN = {
    "reference_actions": "repairs never touch reference actions",
    "information_channel": "repairs never touch the success criterion",
    "actions": "repairs never touch reference actions",
    "evaluation_criteria": "repairs never touch the success criterion",
}


def overlay_path(repairs_dir: str | Path, task_id: str) -> Path:
    return Path(repairs_dir) / f"{task_id}.yaml"


def load_overlay(path: str | Path, known_tasks: set[str] | None = None) -> dict:
    """Read and validate one overlay; errors name the file and the offending field."""
    from incognita.common.schema import validate

    path = Path(path)
    overlay = read_yaml(path)
    if not isinstance(overlay, dict):
        raise InputError(f"{path}: an overlay must be a mapping, got {type(overlay).__name__}")
    for key, why in FORBIDDEN.items():
        if key in overlay:
            raise InputError(f"{path}: field '{key}' is not allowed in a repair overlay ({why})")
    validate(overlay, "repair.schema.json", str(path))
    if overlay["task"] != path.stem:
        raise InputError(f"{path}: field 'task' is {overlay['task']!r} but the file is named for task {path.stem!r}")
    if known_tasks is not None and overlay["task"] not in known_tasks:
        raise InputError(f"{path}: field 'task' names unknown task {overlay['task']!r}")
    return overlay


def apply_overlay(card: dict, overlay: dict, path: str | Path) -> dict:
    """Return a new card with the overlay applied; the input card is left untouched."""
    path = Path(path)
    out = copy.deepcopy(card)
    n_sentences = len(card.get("sentences", []))
    if "opening_line" in overlay:
        out["opening_line"] = overlay["opening_line"]
    if "requests" in overlay:
        for i, req in enumerate(overlay["requests"]):
            bad = [c for c in req["covers"] if c >= n_sentences]
            if bad:
                raise InputError(
                    f"{path}: requests[{i}].covers names sentence(s) {bad} but task {card['task_id']} "
                    f"has {n_sentences} source sentence(s) (0-based)"
                )
        out["requests"] = [
            {"demand": r["demand"], "fallbacks": list(r.get("fallbacks", [])), "covers": list(r["covers"])}
            for r in overlay["requests"]
        ]
    tokens = {f["token"] for f in out["fields"]}
    for token in overlay.get("remove_fields", []):
        if token not in tokens:
            raise InputError(f"{path}: remove_fields names token {token!r}, which card {card['task_id']} does not have")
    out["fields"] = [f for f in out["fields"] if f["token"] not in set(overlay.get("remove_fields", []))]
    for i, fld in enumerate(overlay.get("add_fields", [])):
        if any(f["token"] == fld["token"] for f in out["fields"]):
            raise InputError(f"{path}: add_fields[{i}].token {fld['token']!r} already exists on the card")
        out["fields"].append(dict(fld))
    out["card_version"] = 1 + overlay["version"]
    out["repairs"] = [
        {
            "file": path.as_posix(),
            "version": overlay["version"],
            "reason": overlay["reason"].strip(),
            "sha256": sha256_file(path),
        }
    ]
    return out
