"""Small CLI commands that have no stage module of their own."""

from __future__ import annotations

import json

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


def test_errors_lists_and_deletes_broken_records_only(tmp_path):
    files = {
        "episodes/social/m/11/r0.json": {"error": "BackendError: gave up after 7 attempts (HTTP 503)"},
        "episodes/social/m/11/r1.json": {"error": None},
        "native/m/11/r0.json": _native("ConnectionError: model service went away"),
        "native/m/11/r1.json": _native(None),
        "native/archive/unrepaired/m/11/r0.json": _native("old"),  # archived runs are never touched
    }
    for rel, doc in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(doc))
    roots = [str(tmp_path / "episodes"), str(tmp_path / "native")]
    listed = CliRunner().invoke(main, ["errors", *roots])
    assert listed.exit_code == 0, listed.output
    assert "HTTP 503" in listed.output and "went away" in listed.output and "2 record(s)" in listed.output
    assert all((tmp_path / rel).exists() for rel in files)
    deleted = CliRunner().invoke(main, ["errors", "--delete", *roots])
    assert "2 record(s) with an error deleted" in deleted.output
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == sorted(
        ["episodes/social/m/11/r1.json", "native/m/11/r1.json", "native/archive/unrepaired/m/11/r0.json"]
    )
