"""Workflow config: load and validate against the packaged JSON schema."""

from __future__ import annotations

from pathlib import Path

from incognita.common.io import read_yaml
from incognita.common.schema import validate


def load_config(path: str | Path) -> dict:
    """A complete config, schema-checked, with every model and participant entry checked."""
    from incognita.access.episodes.scripted.entries import check_entries

    cfg = read_yaml(path)
    validate(cfg, "config.schema.json", str(path))
    check_entries(cfg)
    return cfg
