"""JSON-schema validation of config files, with errors that name the file and the key path."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from incognita.common.io import InputError


def load_schema(name: str, package: str = "incognita") -> dict:
    """A JSON schema shipped as package data under `<package>/schemas/`."""
    return json.loads((resources.files(package) / "schemas" / name).read_text(encoding="utf-8"))


@functools.cache
def _validator(schema_name: str, package: str):
    """One validator per schema and process: the workflow's parse validates some fifty files
    against a handful of schemas."""
    import jsonschema  # imported lazily: costs ~0.15 s and only validators need it

    return jsonschema.Draft202012Validator(load_schema(schema_name, package))


def validate(instance: Any, schema_name: str, where: str, package: str = "incognita") -> None:
    """Validate and raise InputError naming the file, the key path and what was expected."""
    validator = _validator(schema_name, package)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for err in errors[:10]:
            key = ".".join(str(p) for p in err.absolute_path) or "<top level>"
            lines.append(f"  {key}: {err.message}")
        raise InputError(f"{where}: invalid ({len(errors)} problem(s)):\n" + "\n".join(lines))
