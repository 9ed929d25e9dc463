"""Workflow config: load and validate against the packaged JSON schema."""

from __future__ import annotations

from pathlib import Path

from incognita.access.cells import design_arms
from incognita.common.io import read_yaml
from incognita.common.schema import validate


def load_config(path: str | Path) -> dict:
    """A complete config, schema-checked, with its arms and every model and participant entry checked."""
    from incognita.access.episodes.scripted.entries import check_entries

    cfg = read_yaml(path)
    validate(cfg, "config.schema.json", str(path))
    design_arms(cfg)  # the arm names are the taxonomy's, not the schema's
    check_entries(cfg)
    return cfg
