"""Workflow config: load and validate against the packaged JSON schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from incognita.io import InputError, read_yaml


def load_schema(name: str) -> dict:
    return json.loads((resources.files("incognita") / "schemas" / name).read_text(encoding="utf-8"))


def validate(instance: Any, schema_name: str, where: str) -> None:
    """Validate and raise InputError naming the file, the key path and what was expected."""
    import jsonschema  # imported lazily: costs ~0.15 s and only validators need it

    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for err in errors[:10]:
            key = ".".join(str(p) for p in err.absolute_path) or "<top level>"
            lines.append(f"  {key}: {err.message}")
        raise InputError(f"{where}: invalid ({len(errors)} problem(s)):\n" + "\n".join(lines))


def load_config(path: str | Path) -> dict:
    """A complete config, schema-checked, with every model and participant entry checked."""
    from incognita.backends.entries import check_entries

    cfg = read_yaml(path)
    validate(cfg, "config.schema.json", str(path))
    check_entries(cfg)
    return cfg
