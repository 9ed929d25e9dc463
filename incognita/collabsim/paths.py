"""Where CollabSim's results live, and which run is which: the one place both are spelled.

Written by the `incognita collabsim` commands (run, table, stats, figures, paper), whose defaults
are these paths; read by the rules (rules/common.smk imports this module at parse time, so it
imports nothing heavy), the design, the tables, the statistics, replay, the viewer and the
benchmarks. Invariant: a run's key is its cell and its seed (`Cell.run(seed)`), its directory is
the key's parts under <root>/runs, and `RunKey.from_dir(key.dir(root)) == key` for every root;
its manifest carries the same key (`RunKey.from_dict`).

    results/collabsim/                                     RESULTS, the commands' default root
      runs/<task>/<condition>/<model>/<design>/s<seed>/    one run (RunKey.dir): RUN_FILES
      runs.parquet, probes.parquet, convergence.parquet    `incognita collabsim table`
      stats/<name>.{csv,md}                                `... stats` (STATS_OUTPUTS)
      figures/, paper/                                     `... figures`, `... paper`
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, fields
from pathlib import Path

from incognita.common.io import InputError

RESULTS = "results/collabsim"  # relative to the workflow's directory
RUNS = "runs"
SEED_PREFIX = "s"  # a run directory is s<seed>
# The files of one finished run, in the order incognita.collabsim.run.write_run writes them: the
# manifest last, so a run directory with a manifest is a finished run.
# Observations are gzip-compressed (about 30x: each repeats its agent's view of the task).
EVENTS, OBSERVATIONS, METRICS, MANIFEST = "events.jsonl", "observations.jsonl.gz", "metrics.json", "manifest.json"
RUN_FILES = (EVENTS, OBSERVATIONS, METRICS, MANIFEST)
# A run a model call broke (the endpoint failed after its retries) leaves this record in its
# directory instead of the run files; while it is there the run is not started again, so a retry
# of the job does not pay a second time for the calls that failed (incognita.collabsim.run).
ERROR = "error.json"
# The statistics stage's tables (<stats dir>/<name>.{csv,md}; written by
# incognita.collabsim.condition_stats). Named here so the workflow reads them without importing
# the statistics' numerical stack at parse time.
STATS_OUTPUTS = ("summary", "effects", "design_effects", "confidence_agents", "confidence_time", "convergence_time")
_SEED = re.compile(rf"{SEED_PREFIX}(0|[1-9][0-9]*)")  # no sign, no leading zero: one spelling per seed


def runs_dir(root: str | Path = RESULTS) -> Path:
    return Path(root, RUNS)


def runs_table(root: str | Path = RESULTS) -> Path:
    return Path(root, "runs.parquet")


def probes_table(root: str | Path = RESULTS) -> Path:
    return Path(root, "probes.parquet")


def convergence_table(root: str | Path = RESULTS) -> Path:
    return Path(root, "convergence.parquet")


def stats_dir(root: str | Path = RESULTS) -> Path:
    return Path(root, "stats")


def figures_dir(root: str | Path = RESULTS) -> Path:
    return Path(root, "figures")


def paper_dir(root: str | Path = RESULTS) -> Path:
    return Path(root, "paper")


# The same paths under the default root, as the commands' defaults and the rules' files take them.
RUNS_TABLE, PROBES_TABLE, CONVERGENCE_TABLE = str(runs_table()), str(probes_table()), str(convergence_table())
STATS_DIR, FIGURES_DIR, PAPER_DIR = str(stats_dir()), str(figures_dir()), str(paper_dir())


@dataclass(frozen=True)
class Cell:
    """What one `collabsim_run` job runs, for each seed of the design."""

    task: str
    condition: str
    model: str  # a label of collabsim.models
    design: str

    def __post_init__(self) -> None:
        for f in fields(self):  # each part is one directory name
            value = getattr(self, f.name)
            if not isinstance(value, str) or value in ("", ".", "..") or "/" in value or "\\" in value:
                raise InputError(f"CollabSim run key: bad {f.name} {value!r} (a directory name is needed)")

    def run(self, seed: int) -> RunKey:
        return RunKey(self, seed)


CELL_FIELDS = tuple(f.name for f in fields(Cell))
KEY_FIELDS = (*CELL_FIELDS, "seed")
# The ids a run's table rows start with: its key, the condition's variable after the condition.
ID_COLUMNS = (*KEY_FIELDS[:2], "variable", *KEY_FIELDS[2:])


@dataclass(frozen=True)
class RunKey:
    """One run: a cell and a seed."""

    cell: Cell
    seed: int

    def __post_init__(self) -> None:
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise InputError(f"CollabSim run key: bad seed {self.seed!r} (a whole number from 0)")

    @property
    def parts(self) -> tuple[str, ...]:
        """The run's directory names under runs/: task, condition, model, design, s<seed>."""
        return (*(getattr(self.cell, f) for f in CELL_FIELDS), f"{SEED_PREFIX}{self.seed}")

    @property
    def rel(self) -> str:
        """The run's directory relative to runs/, with '/' (also the viewer's name for the run)."""
        return "/".join(self.parts)

    def dir(self, root: str | Path = RESULTS) -> Path:
        return runs_dir(root).joinpath(*self.parts)

    def as_dict(self) -> dict:
        """{task, condition, model, design, seed}: the run's ids in manifests and tables."""
        return {**{f: getattr(self.cell, f) for f in CELL_FIELDS}, "seed": self.seed}

    @classmethod
    def from_dict(cls, ids) -> RunKey:
        """The key of a manifest or a table row (a KeyError names a missing field; the caller
        knows which file it read). A table's seed may be a NumPy integer: it is converted."""
        seed = ids["seed"]
        try:
            seed = operator.index(seed)
        except TypeError:
            raise InputError(f"CollabSim run key: bad seed {seed!r} (a whole number from 0)") from None
        return cls(Cell(*(ids[f] for f in CELL_FIELDS)), seed)

    @classmethod
    def from_dir(cls, path: str | Path) -> RunKey:
        """The key a run directory's path spells (nothing is read from disk)."""
        p = Path(path)
        expected = f"expected <root>/{RUNS}/{'/'.join(f'<{f}>' for f in CELL_FIELDS)}/{SEED_PREFIX}<seed>"
        if len(p.parts) < len(KEY_FIELDS) + 1 or p.parts[-len(KEY_FIELDS) - 1] != RUNS:
            raise InputError(f"{p}: not a CollabSim run directory ({expected}; no {RUNS}/ above the cell)")
        seed = _SEED.fullmatch(p.name)
        if not seed:
            raise InputError(f"{p}: not a CollabSim run directory ({expected}; {p.name!r} is not a seed)")
        try:
            return cls(Cell(*p.parts[-len(KEY_FIELDS) : -1]), int(seed.group(1)))
        except InputError as exc:
            raise InputError(f"{p}: not a CollabSim run directory ({exc})") from None


def results_root(run_file: str | Path) -> Path:
    """The root a run file's path sits under (<root>/runs/<task>/<condition>/<model>/<design>/s<seed>/<file>):
    what a rule passes its command, read back off one of its files, so that a job finds the runs
    wherever Snakemake's storage put them (docs/scale-out.md)."""
    run_dir = Path(run_file).parent
    try:
        RunKey.from_dir(run_dir)
    except InputError as exc:
        raise InputError(f"{run_file}: not a file of a CollabSim run ({exc})") from None
    return run_dir.parents[len(KEY_FIELDS)]  # above runs/ and the key's parts


def finished_runs(root: str | Path = RESULTS) -> list[Path]:
    """Every finished run under <root>/runs (a run is finished once its manifest is written)."""
    pattern = "/".join(("*",) * len(CELL_FIELDS) + (f"{SEED_PREFIX}*", MANIFEST))
    return sorted(p.parent for p in runs_dir(root).glob(pattern))
