"""Workflow config: load and validate against the packaged JSON schema."""

from __future__ import annotations

import re
from pathlib import Path

from incognita.access.cells import design_arms, design_from_config
from incognita.access.stats.exploratory_spec import spec_from_config
from incognita.common.io import InputError, read_yaml
from incognita.common.schema import key_source, validate

BASE_CONFIG = "config.yaml"  # what an overlay (config/smoke.yaml, config/unbundle.yaml) extends, beside it


def merged(base: dict, overlay: dict) -> dict:
    """`overlay` over `base`, key by key and recursively into mappings, as Snakemake merges a
    --configfile into the Snakefile's config."""
    out = dict(base)
    for key, value in overlay.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_config(path: str | Path) -> dict:
    """A complete config, schema-checked, with its design (arms, models, tasks) and every model and
    participant entry checked. A file without `source` is an overlay: it is read over config.yaml
    beside it, as the workflow reads `--configfile config/smoke.yaml`. A problem names the file
    that sets its key."""
    from incognita.access.episodes.scripted.entries import check_entries

    cfg = read_yaml(path)
    base = Path(path).with_name(BASE_CONFIG)
    sources = [str(path)]
    if isinstance(cfg, dict) and "source" not in cfg and base.is_file() and base != Path(path):
        cfg = merged(read_yaml(base) or {}, cfg)
        sources = [str(base), str(path)]
    validate(cfg, "config.schema.json", str(path), sources=sources)
    try:
        arms = design_arms(cfg)  # the arm names are the arm registry's, not the schema's
        spec_from_config(cfg, arms)  # an exploratory block names arms of the design
        check_entries(cfg)
        design_from_config(cfg)  # the tasks: in the frozen corpora, each once
    except InputError as exc:
        raise InputError(located(str(exc), sources, str(path))) from None
    return cfg


_CONFIG_KEY = re.compile(r"^config key ([^\s:]+):")


def located(message: str, sources: list[str], where: str) -> str:
    """A "config key <key>: ..." message with the file that sets the key in front (the last of
    `sources`, in merge order, that does; else `where`)."""
    match = _CONFIG_KEY.match(message)
    if not match:
        return message
    docs = [(s, read_yaml(s)) for s in sources]
    return f"{key_source(docs, match.group(1).split('.')) or where}: {message}"
