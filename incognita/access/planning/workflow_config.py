"""Workflow config: load and validate against the packaged JSON schema."""

from __future__ import annotations

from pathlib import Path

from incognita.access.cells import design_arms
from incognita.access.stats.exploratory_spec import spec_from_config
from incognita.common.io import read_yaml
from incognita.common.schema import validate

BASE_CONFIG = "config.yaml"  # what an overlay (config/smoke.yaml, config/unbundle.yaml) extends, beside it


def merged(base: dict, overlay: dict) -> dict:
    """`overlay` over `base`, key by key and recursively into mappings, as Snakemake merges a
    --configfile into the Snakefile's config."""
    out = dict(base)
    for key, value in overlay.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_config(path: str | Path) -> dict:
    """A complete config, schema-checked, with its arms and every model and participant entry
    checked. A file without `source` is an overlay: it is read over config.yaml beside it, as the
    workflow reads `--configfile config/smoke.yaml`."""
    from incognita.access.episodes.scripted.entries import check_entries

    cfg = read_yaml(path)
    base = Path(path).with_name(BASE_CONFIG)
    if isinstance(cfg, dict) and "source" not in cfg and base.is_file() and base != Path(path):
        cfg = merged(read_yaml(base) or {}, cfg)
    validate(cfg, "config.schema.json", str(path))
    arms = design_arms(cfg)  # the arm names are the arm registry's, not the schema's
    spec_from_config(cfg, arms)  # an exploratory block names arms of the design
    check_entries(cfg)
    return cfg
