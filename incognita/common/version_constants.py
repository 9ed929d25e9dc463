"""A generator's version constant, read from its module's source without importing the module.

Who reads: the workflow, at every parse (`rules/common.smk`), which passes each generator's
version to its rule as a param so that bumping it re-runs exactly that stage. The constant
lives in the module that generates (`card.BUILDER_VERSION`, `harness.GENERATOR_VERSION`, ...),
and those modules import most of the package: importing the five of them cost about 0.18 s of
each `snakemake -n` (2026-12-02), more than any other part of the parse. Reading the
assignment from the source with `ast` costs a few milliseconds and gives the same value, which
tests/common/test_version_constants.py checks against the imported modules.

The invariant: the constant is assigned once, at module level, to a literal (`NAME = 3`).
Anything else is an error naming the file, never a silent default.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

from incognita.common.io import InputError


def read_constant(module: str, name: str) -> Any:
    """The literal value of `name` in `module`'s source, e.g. ("incognita.viewer", "VIEWER_VERSION")."""
    spec = importlib.util.find_spec(module)  # imports the parent packages only
    if spec is None or spec.origin is None:
        raise InputError(f"{module}: no such module")
    path = Path(spec.origin)
    values = []
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                values.append(ast.literal_eval(node.value))
            except (ValueError, TypeError):
                raise InputError(f"{path}:{node.lineno}: {name} must be assigned a literal") from None
    if len(values) != 1:
        raise InputError(f"{path}: expected one module-level assignment of {name}, found {len(values)}")
    return values[0]
