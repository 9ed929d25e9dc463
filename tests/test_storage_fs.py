"""The workflow without a shared filesystem: the smoke design with Snakemake's fs storage provider
(snakemake-storage-plugin-fs) as the default storage provider, the way the Kubernetes and Google
Batch executors run it with a bucket (docs/scale-out.md, "Without a shared filesystem").

Every input is then staged from the storage prefix and every output written back to it, and a
job sees its files under .snakemake/storage/, never at results/: a rule that reads a fixed
results/ or data/ path fails, or writes where Snakemake does not look. The run must succeed with
nothing copied into the storage by hand (config/ reaches it through rules/storage.smk), write
nothing to the workflow copy's own results/, compute what the same design computes locally (the
test session's `smoke_build`), and leave nothing to do for an unchanged rerun.

The plugin copies files with the `rsync` binary. Without it (or without the plugin) the test is
skipped, with the reason printed, unless CI is set: .ci/run installs rsync, so there it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
import yaml
from click.testing import CliRunner
from workflow_helpers import ROOT, copy_workflow, guarded_env, snakemake

SMOKE = ("--configfile", "config/smoke.yaml")
NET_LOG = "storage.net.log"


def _skip_or_fail(request, reason: str):
    """Skip, with the reason printed past pytest's capture (a plain `bin/test` run shows it);
    under CI, whose runner provides everything (.ci/run), fail instead."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, and .ci/run should have provided it")
    line = f"tests/test_storage_fs.py skipped: {reason}"
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    pytest.skip(reason)


def storage_args(store) -> tuple[str, ...]:
    return ("--default-storage-provider", "fs", "--default-storage-prefix", str(store))


@pytest.fixture(scope="module")
def stored(request, tmp_path_factory):
    """(workflow copy, storage prefix, seconds): the smoke design built from nothing through the storage."""
    if importlib.util.find_spec("snakemake_storage_plugin_fs") is None:
        _skip_or_fail(request, "snakemake-storage-plugin-fs is not installed (pip install -e '.[test]')")
    if shutil.which("rsync") is None:
        _skip_or_fail(request, "the fs storage plugin needs the rsync binary (Debian: apt-get install rsync)")
    base = tmp_path_factory.mktemp("storage")
    wf, store = copy_workflow(base / "wf"), base / "store"
    store.mkdir()  # empty: nothing is copied into the storage by hand
    t0 = time.monotonic()
    snakemake(wf, *SMOKE, *storage_args(store), env=guarded_env(wf / NET_LOG))
    return wf, store, time.monotonic() - t0


def test_the_smoke_design_runs_through_the_storage(stored):
    wf, store, seconds = stored
    print(f"smoke design through the fs storage provider: {seconds:.0f} s")
    tasks = yaml.safe_load((wf / "config" / "smoke.yaml").read_text())["design"]["tasks"]
    for rel in (
        "results/trials.parquet",
        "results/viewer/index.html",
        "results/collabsim/stats/summary.csv",
        "results/figures",
        *(f"results/reference/{d}/locks_verified.txt" for d in sorted({t.split("/")[0] for t in tasks})),
        "config/arms.yaml",  # a workflow file, copied to the storage by rules/storage.smk
    ):
        assert (store / rel).exists(), f"{rel} is not in the storage"
    # Everything went through the storage: the copy holds no result, log or benchmark of its own.
    written = [name for name in ("results", "data", "logs", "benchmarks") if (wf / name).exists()]
    assert not written, f"written to the workflow copy instead of the storage: {written}"
    assert not (wf / NET_LOG).exists(), (wf / NET_LOG).read_text()


def test_the_lock_check_names_the_recorded_paths(stored):
    """verify-locks checked the artifacts where the job saw them; its lines (copied into
    locks_verified.txt, with its notes) name the paths the locks record, as a local run's do."""
    wf, store, _ = stored
    for verified in sorted(store.glob("results/reference/*/locks_verified.txt")):
        locks = yaml.safe_load((wf / "config" / "domains" / verified.parent.name / "locks.yaml").read_text())
        expected = [
            f"{name} v{e['version']}: ok ({e['path']}, frozen {e['frozen']})"
            for name, e in sorted(locks["artifacts"].items())
        ]
        assert [ln for ln in verified.read_text().splitlines() if not ln.startswith("note: ")] == expected


def test_the_results_equal_a_local_build(stored, smoke_build, tmp_path):
    """The same files as the smoke design built locally, with the same content once wall-clock
    fields are set aside (bench/compare_trees.py) and the two places a job's view of its inputs
    is recorded: the upstream harness keeps the card and golden paths its scripted participants
    read (native results), and a CollabSim manifest the condition file it ran (and the viewer
    shows both). There the job's paths lie below .snakemake/storage/fs/<prefix>/."""
    wf, store, _ = stored
    staged = re.escape(f".snakemake/storage/fs/{str(store).lstrip('/')}/")
    mapping = tmp_path / "storage.yaml"
    mapping.write_text(yaml.safe_dump({"values": [{"pattern": staged, "replace": ""}]}))
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "compare_trees.py"),
            str(store / "results"),
            str(smoke_build / "results"),
            "--map",
            str(mapping),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_unchanged_rerun_does_nothing(stored):
    wf, store, _ = stored
    proc = snakemake(wf, "-n", *SMOKE, *storage_args(store))
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout


# --------------------------------------------------------------------------- the pieces it needs


def test_verify_locks_checks_an_artifact_where_it_is_given(tmp_path):
    from incognita.access.freeze import write_locks
    from incognita.access.selection.commands import verify_locks
    from incognita.common.io import sha256_file

    staged = tmp_path / "staged" / "coordination.json"
    staged.parent.mkdir()
    staged.write_text(json.dumps({"tasks": {}}))
    locks = tmp_path / "locks.yaml"
    entry = {"path": "results/reference/x/coordination.json", "version": 3, "frozen": "2026-12-01"}
    write_locks(locks, {"coordination": {**entry, "sha256": sha256_file(staged)}})
    runner = CliRunner()

    given = runner.invoke(verify_locks, ["--locks", str(locks), "--artifact", f"coordination={staged}"])
    assert given.exit_code == 0, given.output
    assert given.output == "coordination v3: ok (results/reference/x/coordination.json, frozen 2026-12-01)\n"

    recorded = runner.invoke(verify_locks, ["--locks", str(locks)])  # not at its recorded path here
    assert recorded.exit_code != 0 and "results/reference/x/coordination.json" in str(recorded.exception)

    unknown = runner.invoke(verify_locks, ["--locks", str(locks), "--artifact", f"corpus={staged}"])
    assert unknown.exit_code != 0
    assert str(locks) in str(unknown.exception) and "'corpus'" in str(unknown.exception)

    malformed = runner.invoke(verify_locks, ["--locks", str(locks), "--artifact", str(staged)])
    assert malformed.exit_code == 2 and "expected NAME=PATH" in malformed.output


def test_a_collabsim_run_file_gives_its_root():
    from incognita.collabsim.paths import Cell, results_root
    from incognita.common.io import InputError

    key = Cell("daytrader", "baseline", "scripted", "persona").run(2)
    for root in ("results/collabsim", ".snakemake/storage/fs/tmp/store/results/collabsim"):
        assert str(results_root(key.dir(root) / "manifest.json")) == root
    with pytest.raises(InputError, match="results/collabsim/manifest.json: not a file of a CollabSim run"):
        results_root("results/collabsim/manifest.json")
