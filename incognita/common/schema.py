"""JSON-schema validation of config files, with errors that name the file and the key path.

A config may be several files read one over another (the workflow's config/config.yaml under a
--configfile overlay): each problem then names the file that sets the key, the last one that
does, as the merge keeps it.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from incognita.common.io import InputError, read_yaml


def load_schema(name: str, package: str = "incognita") -> dict:
    """A JSON schema shipped as package data under `<package>/schemas/`."""
    return json.loads((resources.files(package) / "schemas" / name).read_text(encoding="utf-8"))


@functools.cache
def _validator(schema_name: str, package: str):
    """One validator per schema and process: the workflow's parse validates some fifty files
    against a handful of schemas."""
    import jsonschema  # imported lazily: costs ~0.15 s and only validators need it

    return jsonschema.Draft202012Validator(load_schema(schema_name, package))


def validate(
    instance: Any,
    schema_name: str,
    where: str,
    package: str = "incognita",
    sources: Sequence[str | Path] = (),
) -> None:
    """Validate and raise InputError naming the file, the key path and what was expected.
    `sources`: the files `instance` was merged from, the one read last last; each problem then
    names the file that sets its key (else `where`)."""
    validator = _validator(schema_name, package)
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    problems = [p for err in errors for p in _problems(err)]
    if not problems:
        return
    docs = [(str(s), read_yaml(s)) for s in sources]
    lines = [f"{key_source(docs, path) or where}: {'.'.join(path) or '<top level>'}: {text}" for path, text in problems]
    if len(lines) == 1:
        raise InputError(lines[0])
    shown = "\n".join(f"  {line}" for line in lines[:10])
    raise InputError(f"{where}: invalid ({len(lines)} problems):\n{shown}")


def key_source(docs: Sequence[tuple[str, Any]], path: Sequence[str]) -> str | None:
    """The last of `docs` ((file, parsed content), in merge order) that sets the key at `path`."""
    for name, doc in reversed(docs):
        node = doc
        for part in path:
            if not isinstance(node, dict) or part not in node:
                break
            node = node[part]
        else:
            return name
    return None


def _problems(err) -> list[tuple[list[str], str]]:
    """(key path, what is wrong) for one schema error, told as a person would fix it."""
    errors = _meant(err)
    out = []
    for e in errors:
        path = [str(p) for p in e.absolute_path]
        if e.validator == "additionalProperties" and e.validator_value is False and isinstance(e.instance, dict):
            known = list(e.schema.get("properties", {}))
            for key in (k for k in e.instance if k not in known):
                out.append(([*path, str(key)], _unknown_key(str(key), known)))
        else:
            out.append((path, e.message))
    return out


def _unknown_key(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f"unknown key (did you mean {close[0]!r}?)"
    return f"unknown key (expected one of: {', '.join(known)})"


def _meant(err) -> list:
    """For a value valid under none of a oneOf's or anyOf's alternatives, the errors of the one
    alternative of its type (a mapping given where a name or a mapping may stand is judged as a
    mapping), so that the problem is named instead of the whole schema; else the error itself."""
    if err.validator not in ("oneOf", "anyOf") or not err.context:
        return [err]
    branches: dict[int, list] = {}
    for sub in err.context:
        branches.setdefault(sub.schema_path[0], []).append(sub)
    fitting = [
        subs for subs in branches.values() if not any(s.validator == "type" and not s.relative_path for s in subs)
    ]
    if len(fitting) != 1:
        return [err]
    return [e for sub in fitting[0] for e in _meant(sub)]
