"""One run: (task, condition, seed) -> `events.jsonl`, `observations.jsonl.gz`, `metrics.json` and
`manifest.json` (their names: incognita.collabsim.paths.RUN_FILES).

The files are written atomically, events first and the manifest last, so a directory with a
manifest is a finished run. A model call that fails after its retries (an endpoint that answers
with errors or with bodies that are not an answer) stops the run with none of them written: the
run raises RunFailed, and the command writes the error record `error.json` (paths.ERROR) in the
run's directory and ends with one line naming the endpoint and the failure. While the record is
there the run is refused at once, so Snakemake's retry of the job sends nothing; the calls
answered before the failure are in the response cache, so once the record is deleted, a rerun
resumes without paying for them again.
"""

from __future__ import annotations

import gzip
import json
import math
import platform
from dataclasses import dataclass
from pathlib import Path

from incognita import __version__
from incognita.collabsim import GENERATOR_VERSION
from incognita.collabsim.agents import make_participants
from incognita.collabsim.engine import Engine
from incognita.collabsim.metrics import run_metrics
from incognita.collabsim.paths import ERROR, EVENTS, MANIFEST, METRICS, OBSERVATIONS, Cell, RunKey
from incognita.collabsim.world.events import to_jsonl
from incognita.collabsim.world.experiment import Experiment, model_params
from incognita.collabsim.world.persona_library import persona_for
from incognita.common.backends.base import BackendError
from incognita.common.environment import code_identity, lock_hash
from incognita.common.io import InputError, atomic_write_bytes, atomic_write_text

MANIFEST_VERSION = 1


class RunFailed(Exception):
    """A model call of the run failed after its retries (BackendError): at which step, and how
    many calls had been answered before it (they are in the response cache)."""

    def __init__(self, error: str, step: int, answered: int):
        super().__init__(error)
        self.error, self.step, self.answered = error, step, answered


@dataclass(frozen=True)
class RunResult:
    events: list[dict]
    metrics: dict[str, float]
    manifest: dict
    observations: list[dict]  # what each agent was shown at each turn (Engine.observation)


def simulate(
    exp: Experiment,
    seed: int,
    cache_dir: str | None = None,
    prices: str | None = None,
    model_label: str = "scripted",
    workers: int = 1,
) -> RunResult:
    """Run the experiment once; `cache_dir` and `prices` default to the environment's settings.
    `workers` (model calls in flight at most) changes how long a run takes, never what it records,
    so the manifest leaves it out."""
    participants = make_participants(exp, seed, cache_dir, prices)
    engine = Engine(exp, seed, participants, workers=workers)
    try:
        events = engine.run()
    except BackendError as exc:
        answered = sum(p.usage.calls + p.probe_usage.calls for p in participants.values())
        raise RunFailed(str(exc), engine.step, answered) from exc
    end = events[-1]["payload"]
    usage = {a: vars(p.usage) for a, p in participants.items()}
    probe_usage = {a: vars(p.probe_usage) for a, p in participants.items()}
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        **Cell(exp.task, exp.condition, model_label, exp.design).run(seed).as_dict(),
        "variable": exp.variable,
        "config_hash": exp.config_hash,
        "personas": personas(exp, seed),
        "probe_cadence": exp.probe.cadence,
        "experiment_file": str(exp.source),
        "models_override": exp.models_override,
        "models": model_params(exp),
        "roles": {a.id: a.role for a in exp.agents},
        "incognita_version": __version__,
        "code": code_identity(),
        "lock": lock_hash(),
        "generator_version": GENERATOR_VERSION,
        "python": platform.python_version(),
        "steps": end["steps"],
        "events": len(events),
        "observations": len(engine.observations),
        "state_hash": end["state_hash"],
        "usage": usage,
        "probe_usage": probe_usage,
        "config": exp.resolved,
    }
    return RunResult(events, run_metrics(events), manifest, engine.observations)


def default_workers(exp: Experiment) -> int:
    """Calls in flight in a run: the shared default (incognita.common.fan_out.resolve_workers),
    by whether an agent calls a model over the network."""
    from incognita.common.fan_out import resolve_workers

    return resolve_workers(0, any(a.model.calls_api for a in exp.agents))


def personas(exp: Experiment, seed: int) -> dict[str, str]:
    """agent id -> the id of its persona profile (agents with persona on)."""
    return {a.id: persona_for(list(exp.personas), seed, a.id)["id"] for a in exp.agents if a.persona}


def write_run(result: RunResult, out_dir: str | Path) -> None:
    out = Path(out_dir)
    atomic_write_text(out / EVENTS, to_jsonl(result.events))
    # mtime 0 in the gzip header: the same run gives the same bytes
    atomic_write_bytes(out / OBSERVATIONS, gzip.compress(to_jsonl(result.observations).encode(), mtime=0))
    atomic_write_text(out / METRICS, json.dumps(_finite(result.metrics), sort_keys=True, indent=1) + "\n")
    atomic_write_text(out / MANIFEST, json.dumps(result.manifest, sort_keys=True, indent=1) + "\n")


def _finite(metrics: dict[str, float]) -> dict[str, float | None]:
    """JSON has no NaN: an undefined metric (a rate with no denominator) is null."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in metrics.items()}


def events_bytes(result: RunResult) -> bytes:
    return to_jsonl(result.events).encode("utf-8")


def write_error(failure: RunFailed, exp: Experiment, key: RunKey, out_dir: str | Path) -> Path:
    """The error record of a run that `failure` stopped, in its directory (written atomically)."""
    path = Path(out_dir) / ERROR
    record = {
        **key.as_dict(),
        "error": failure.error,
        "step": failure.step,
        "calls_answered": failure.answered,
        "experiment_file": str(exp.source),
        "config_hash": exp.config_hash,
        "models": model_params(exp),
        "incognita_version": __version__,
    }
    atomic_write_text(path, json.dumps(record, sort_keys=True, indent=1) + "\n")
    return path


def refuse_failed(out_dir: str | Path) -> None:
    """InputError when the run's directory holds an error record: a retry would pay again for the
    calls that failed, so the run waits until the endpoint is fixed and the record deleted."""
    path = Path(out_dir) / ERROR
    if not path.exists():
        return
    try:
        error = json.loads(path.read_text(encoding="utf-8")).get("error", "?")
    except (OSError, ValueError, AttributeError):
        error = "the record is unreadable"
    raise InputError(
        f"{path}: this run failed before and is not run again, so its failed calls are not paid twice "
        f"({error}); fix the endpoint, delete the record, and run again"
    )
