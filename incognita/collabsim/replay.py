"""Replay: re-run a finished run from its manifest and compare its events byte for byte.

The manifest's `code` (incognita.common.environment.code_identity) says which code made the
run. When today's source differs, the replay still runs, and its message says so: identical
events then show the change did not touch this run, and a divergence may be the change itself.
"""

from __future__ import annotations

from pathlib import Path

from incognita.collabsim.paths import EVENTS, MANIFEST, RunKey
from incognita.collabsim.run import simulate
from incognita.collabsim.world.events import to_jsonl
from incognita.collabsim.world.experiment import load_experiment
from incognita.common.environment import code_identity
from incognita.common.io import InputError, read_json


def replay(run: Path) -> tuple[bool, str]:
    manifest = read_json(run / MANIFEST)
    try:
        path, models, key = manifest["experiment_file"], manifest["models_override"], RunKey.from_dict(manifest)
    except KeyError as exc:
        raise InputError(f"{run / MANIFEST}: damaged (field {exc})") from None
    except InputError as exc:
        raise InputError(f"{run / MANIFEST}: damaged ({exc})") from None
    exp = load_experiment(path, models, key.cell.design)
    if exp.config_hash != manifest["config_hash"]:
        return (
            False,
            f"{run}: {path} changed since this run (config hash {exp.config_hash[:12]} != {manifest['config_hash'][:12]})",
        )
    note = code_note(manifest.get("code"))
    fresh = to_jsonl(simulate(exp, key.seed, model_label=key.cell.model).events).splitlines()
    old = (run / EVENTS).read_text(encoding="utf-8").splitlines()
    for n, (a, b) in enumerate(zip(old, fresh), 1):
        if a != b:
            return False, f"{run}: replay diverges at event line {n}{note}"
    if len(old) != len(fresh):
        return False, f"{run}: replay has {len(fresh)} events, the run {len(old)}{note}"
    return True, f"{run}: replay identical ({len(old)} events, state {manifest['state_hash'][:12]}){note}"


def code_note(recorded: dict | None) -> str:
    """'' when the run was made by today's source, else a sentence naming both versions."""
    now = code_identity()
    if recorded is None:
        return f"; warning: the manifest records no code identity (made before it was recorded), now {_name(now)}"
    if recorded.get("source_sha256") == now["source_sha256"]:
        return ""
    return f"; warning: the code differs: the run was made by {_name(recorded)}, this replay by {_name(now)}"


def _name(code: dict) -> str:
    commit = code.get("git_commit")
    return f"source {str(code.get('source_sha256'))[:12]}" + (
        f" (commit {commit[:12]}{'+dirty' * commit.endswith('+dirty')})" if commit else ""
    )
