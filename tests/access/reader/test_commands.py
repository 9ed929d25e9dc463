"""`incognita errors` (incognita.access.reader.commands): the records a run must retry, and its exit status."""

from __future__ import annotations

import json
import os
import time

from click.testing import CliRunner

from incognita.cli import main


def _native(error):
    """A native result as incognita.access.native.native_run writes it (only the fields its reader needs)."""
    facts = {"model": "m", "task": "11", "rep": 0, "seed": 1, "error": error}
    return {
        "simulations": [
            {
                "termination_reason": "agent_error" if error else "user_stop",
                "messages": [],
                "reward_info": {"reward": 0.0, "info": {"incognita": facts}},
            }
        ]
    }


def _write(root, files: dict) -> list[str]:
    for rel, doc in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return [str(root / "episodes"), str(root / "native")]


def test_errors_lists_and_deletes_broken_records_only(tmp_path):
    files = {
        "episodes/social/m/11/r0.json": {"error": "BackendError: gave up after 7 attempts (HTTP 503)"},
        "episodes/social/m/11/r1.json": {"error": None},
        "native/m/11/r0.json": _native("ConnectionError: model service went away"),
        "native/m/11/r1.json": _native(None),
        "native/archive/unrepaired/m/11/r0.json": _native("old"),  # archived runs are never touched
    }
    roots = _write(tmp_path, files)
    listed = CliRunner().invoke(main, ["errors", *roots])
    assert listed.exit_code == 1, listed.output  # records to retry: not a clean result
    assert "HTTP 503" in listed.output and "went away" in listed.output and "2 record(s)" in listed.output
    assert "`incognita errors --delete`, then `bin/run`, retries them" in listed.output
    assert all((tmp_path / rel).exists() for rel in files)
    deleted = CliRunner().invoke(main, ["errors", "--delete", *roots])
    assert deleted.exit_code == 0 and "2 record(s) with an error deleted" in deleted.output
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == sorted(
        ["episodes/social/m/11/r1.json", "native/m/11/r1.json", "native/archive/unrepaired/m/11/r0.json"]
    )
    clean = CliRunner().invoke(main, ["errors", *roots])
    assert clean.exit_code == 0 and "0 record(s) with an error" in clean.output


def test_a_damaged_record_fails_the_check(tmp_path):
    roots = _write(tmp_path, {"episodes/social/m/11/r0.json": '{"schema_version": 3, "cell": {'})
    out = CliRunner().invoke(main, ["errors", *roots])
    assert out.exit_code == 2, out.output
    assert f"damaged: {tmp_path / 'episodes/social/m/11/r0.json'}" in out.output
    assert "1 record(s) with an error (1 damaged)" in out.output


def test_since_counts_only_what_a_run_wrote_in_one_line(tmp_path):
    roots = _write(
        tmp_path,
        {
            "episodes/social/m/11/r0.json": {"error": "BackendError: HTTP 500"},
            "episodes/social/m/11/r1.json": {"error": "BackendError: HTTP 500"},
        },
    )
    old = tmp_path / "episodes/social/m/11/r0.json"
    start = time.time() - 60
    os.utime(old, (start - 3600, start - 3600))  # written by an earlier run
    out = CliRunner().invoke(main, ["errors", "--since", str(start), "--brief", *roots])
    assert out.exit_code == 1
    since = time.strftime("%H:%M:%S", time.localtime(start))
    assert out.output == (
        f"1 record(s) written since {since} with an error: `incognita errors` lists them; "
        "`incognita errors --delete`, then `bin/run`, retries them (calls answered before come from the cache)\n"
    )
    os.utime(tmp_path / "episodes/social/m/11/r1.json", (start - 3600, start - 3600))
    quiet = CliRunner().invoke(main, ["errors", "--since", str(start), "--brief", *roots])
    assert quiet.exit_code == 0 and quiet.output == ""
