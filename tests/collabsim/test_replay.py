"""`incognita collabsim replay`: a finished run re-run from its manifest, its events compared
byte for byte, and the code that made it compared with today's (its manifest's `code`)."""

from __future__ import annotations

import json

from collabsim_paths import CONFIG

from incognita.collabsim.paths import EVENTS, MANIFEST
from incognita.collabsim.replay import replay
from incognita.collabsim.run import simulate, write_run
from incognita.collabsim.world.experiment import load_experiment
from incognita.common.environment import code_identity


def finished_run(tmp_path):
    run = tmp_path / "run"
    write_run(simulate(load_experiment(CONFIG / "daytrader/group_size_6.yaml"), 3), run)
    return run


def edit_manifest(run, change) -> None:
    manifest = json.loads((run / MANIFEST).read_text())
    change(manifest)
    (run / MANIFEST).write_text(json.dumps(manifest))


def test_a_run_made_by_this_code_replays_identically_without_a_warning(tmp_path):
    run = finished_run(tmp_path)
    assert json.loads((run / MANIFEST).read_text())["code"] == code_identity()
    ok, message = replay(run)
    assert ok and "replay identical" in message and "warning" not in message


def test_other_code_is_named_whether_or_not_the_events_still_agree(tmp_path):
    run = finished_run(tmp_path)
    edit_manifest(run, lambda m: m["code"].update(source_sha256="0" * 64, git_commit="abc123def4567890+dirty"))
    ok, message = replay(run)
    assert ok and "the code differs" in message
    assert "source 000000000000 (commit abc123def456+dirty)" in message
    assert f"this replay by source {code_identity()['source_sha256'][:12]}" in message

    lines = (run / EVENTS).read_text().splitlines()
    lines[5] = lines[5].replace('"step":', '"step": ', 1)  # one event no longer as written
    (run / EVENTS).write_text("\n".join(lines) + "\n")
    ok, message = replay(run)
    assert not ok and "diverges at event line 6" in message and "the code differs" in message


def test_a_manifest_without_a_code_identity_says_so(tmp_path):
    run = finished_run(tmp_path)
    edit_manifest(run, lambda m: m.pop("code"))
    ok, message = replay(run)
    assert ok and "records no code identity" in message
