"""Where the access family's stages write: the one place a results path is spelled.

Who reads it: every stage's command (its defaults), the workflow (rules/*.smk take every
results path from here, through rules/common.smk), the run archive, the viewer and the
checks that list what a tree holds.

The invariant: a path depends only on what it is the path of. A domain's own artifacts live
under a folder of that domain (`results/cards/<domain>/<id>.json`, named by the upstream id);
a cell's record is under its qualified task id (`.../<domain>/<id>/r<rep>.json`), so two
domains never collide; what pools every domain (the trials table and everything after it)
has one path, and a design of several domains also has each domain's own statistics and figures
in a folder of that domain under it. Model and task may be Snakemake wildcards ("{model}", "{domain}/{task}"): the
workflow builds its patterns with these functions.
"""

from __future__ import annotations

from pathlib import Path

RESULTS = "results"

# Pooled over domains: one of each per workflow.
EPISODES_DIR = f"{RESULTS}/episodes"
EPISODE_MANIFEST = f"{EPISODES_DIR}/manifest.tsv"
NATIVE_DIR = f"{RESULTS}/native"
TRIALS_TABLE = f"{RESULTS}/trials.parquet"
TRIALS_CSV = f"{RESULTS}/trials.csv"
STATS_DIR = f"{RESULTS}/stats"
FIGURES_DIR = f"{RESULTS}/figures"
VIEWER_DIR = f"{RESULTS}/viewer"
ARCHIVE_DIR = f"{RESULTS}/archive"
# The reader's validation tables, written beside the statistics (incognita.access.reader.reader_stage).
READER_VALIDATION = {
    "validation": f"{STATS_DIR}/reader_validation.csv",
    "validation_labelled": f"{STATS_DIR}/reader_validation_labelled.csv",
    "validation_md": f"{STATS_DIR}/reader_validation.md",
    "fidelity_validation": f"{STATS_DIR}/participant_fidelity_validation.csv",
    "fidelity_validation_md": f"{STATS_DIR}/participant_fidelity_validation.md",
}


def domain_stats_dir(domain: str, root: str | Path = STATS_DIR) -> Path:
    """A domain's own statistics in a design of several domains (the pooled ones are under `root`)."""
    return Path(root) / domain


def domain_figures_dir(domain: str, root: str | Path = FIGURES_DIR) -> Path:
    """A domain's own figures in a design of several domains (the pooled ones are under `root`)."""
    return Path(root) / domain


# --------------------------------------------------------------------------- one domain's artifacts
# Each stage's root holds one folder per domain; `root` is that stage's root.
CARDS_ROOT = f"{RESULTS}/cards"
AUDIT_ROOT = f"{RESULTS}/audit"
GOLDEN_ROOT = f"{RESULTS}/golden"
REFERENCE_ROOT = f"{RESULTS}/reference"


def cards_dir(domain: str, root: str | Path = CARDS_ROOT) -> Path:
    return Path(root) / domain


def card_file(domain: str, local: str, *, rule_built: bool = False, root: str | Path = CARDS_ROOT) -> Path:
    """A task's current card, or (`rule_built`) the card before its repair overlay, kept under v1/."""
    base = cards_dir(domain, root)
    return (base / "v1" if rule_built else base) / f"{local}.json"


def audit_table(domain: str, root: str | Path = AUDIT_ROOT) -> Path:
    return Path(root) / domain / "cards.tsv"


def golden_dir(domain: str, root: str | Path = GOLDEN_ROOT) -> Path:
    return Path(root) / domain


def golden_file(domain: str, local: str, root: str | Path = GOLDEN_ROOT) -> Path:
    return golden_dir(domain, root) / f"{local}.json"


def replay_table(domain: str, root: str | Path = GOLDEN_ROOT) -> Path:
    return golden_dir(domain, root) / "replay.tsv"


def reference_dir(domain: str, root: str | Path = REFERENCE_ROOT) -> Path:
    return Path(root) / domain


def coordination_file(domain: str, root: str | Path = REFERENCE_ROOT) -> Path:
    return reference_dir(domain, root) / "coordination.json"


def locks_verified(domain: str, root: str | Path = REFERENCE_ROOT) -> Path:
    return reference_dir(domain, root) / "locks_verified.txt"


def idle_table(domain: str, root: str | Path = REFERENCE_ROOT) -> Path:
    return reference_dir(domain, root) / "idle.tsv"


def oracle_table(domain: str, root: str | Path = REFERENCE_ROOT) -> Path:
    return reference_dir(domain, root) / "oracle.tsv"


# --------------------------------------------------------------------------- cells


def episode_record(arm: str, model: str, task: str, rep: int | str, root: str | Path = EPISODES_DIR) -> Path:
    """A cell's episode record; `task` is the qualified id (`retail/46`)."""
    return Path(root) / arm / model / task / f"r{rep}.json"


def native_result(
    model: str, task: str, rep: int | str, root: str | Path = NATIVE_DIR, *, unrepaired: bool = False
) -> Path:
    """A native result; `unrepaired`: the archived run of a repaired task without its overlay."""
    base = Path(root) / "archive" / "unrepaired" if unrepaired else Path(root)
    return base / model / task / f"r{rep}.json"


def episode_records(root: str | Path = EPISODES_DIR) -> list[Path]:
    """Every episode record under `root` (<arm>/<model>/<domain>/<id>/r<rep>.json), sorted."""
    return sorted(Path(root).glob("*/*/*/*/r*.json"))


def native_results(root: str | Path = NATIVE_DIR) -> list[Path]:
    """Every live native result under `root` (<model>/<domain>/<id>/r<rep>.json; not the archive), sorted."""
    return sorted(p for p in Path(root).glob("*/*/*/r*.json") if p.parts[len(Path(root).parts)] != "archive")


# --------------------------------------------------------------------------- roots of a path
# What a rule passes its command is the root its inputs or outputs sit under, read back off one
# of them (so a job finds them wherever Snakemake's storage put them): the layouts above, undone.


def episodes_root(record: str | Path) -> Path:
    """The root of an episode record's path (<root>/<arm>/<model>/<domain>/<id>/r<rep>.json)."""
    return _strip(record, 4, "an episode record")


def native_root(result: str | Path) -> Path:
    """The root of a live native result's path (<root>/<model>/<domain>/<id>/r<rep>.json)."""
    return _strip(result, 3, "a native result")


def domain_root(domain_file: str | Path) -> Path:
    """The root of a per-domain stage file (<root>/<domain>/<name>: a card, a golden trajectory,
    a coordination reference, a domain's config file or its copy of the upstream files)."""
    return _strip(domain_file, 1, "a per-domain file")


def domain_of(domain_file: str | Path) -> str:
    """The domain a per-domain stage file belongs to (<root>/<domain>/<name>)."""
    path = Path(domain_file)
    if len(path.parts) < 2:
        raise ValueError(f"{path}: not a per-domain file path")
    return path.parent.name


def _strip(path: str | Path, depth: int, what: str) -> Path:
    path = Path(path)
    if len(path.parts) < depth + 2:
        raise ValueError(f"{path}: not {what} path (too few parts)")
    return path.parents[depth]
