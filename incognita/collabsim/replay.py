"""Replay: re-run a finished run from its manifest and compare its events byte for byte."""

from __future__ import annotations

from pathlib import Path

from incognita.collabsim.events import to_jsonl
from incognita.collabsim.experiment import load_experiment
from incognita.collabsim.run import EVENTS, MANIFEST, simulate
from incognita.common.io import InputError, read_json


def replay(run: Path) -> tuple[bool, str]:
    manifest = read_json(run / MANIFEST)
    try:
        path, models, seed = manifest["experiment_file"], manifest["models_override"], manifest["seed"]
        label, design = manifest["model"], manifest["design"]
    except KeyError as exc:
        raise InputError(f"{run / MANIFEST}: damaged (field {exc})") from None
    exp = load_experiment(path, models, design)
    if exp.config_hash != manifest["config_hash"]:
        return (
            False,
            f"{run}: {path} changed since this run (config hash {exp.config_hash[:12]} != {manifest['config_hash'][:12]})",
        )
    fresh = to_jsonl(simulate(exp, seed, model_label=label).events).splitlines()
    old = (run / EVENTS).read_text(encoding="utf-8").splitlines()
    for n, (a, b) in enumerate(zip(old, fresh), 1):
        if a != b:
            return False, f"{run}: replay diverges at event line {n}"
    if len(old) != len(fresh):
        return False, f"{run}: replay has {len(fresh)} events, the run {len(old)}"
    return True, f"{run}: replay identical ({len(old)} events, state {manifest['state_hash'][:12]})"
