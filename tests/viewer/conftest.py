"""The viewer's test fixtures: the site built once per session from the committed smoke
records (tests/fixtures/viewer/) plus one CollabSim run made here, the same site with a
participant-audit finding, Debian's headless Chromium and a page that fails on any console
error (tests/viewer_helpers.py has the pieces)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from viewer_helpers import (
    FIXTURE_EPISODE,
    FIXTURES,
    REFERENCE_ROOT,
    ROOT,
    collabsim_run,
    edited_copy,
    install_chromium,
    launch,
)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("viewer")
    out = tmp / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "incognita",
            "view",
            "--out",
            str(out),
            "--trials",
            str(FIXTURES / "trials.parquet"),
            "--reference-root",
            str(REFERENCE_ROOT),
            "--episodes",
            str(edited_copy(tmp / "episodes")),
            "--native",
            str(FIXTURES / "native"),
            "--collabsim",
            str(collabsim_run(tmp / "collabsim")),
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "16 trials, 1 CollabSim runs" in proc.stdout
    return out


@pytest.fixture(scope="session")
def trials():
    import pandas as pd

    return pd.read_parquet(FIXTURES / "trials.parquet")


@pytest.fixture(scope="session")
def browser():
    reason = install_chromium()
    if reason:
        print(f"skipping the browser tests: {reason}")
        pytest.skip(reason)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipping the browser tests: playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A 1280x800 page whose console errors and uncaught exceptions fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    yield page
    context.close()
    assert problems == [], problems


@pytest.fixture(scope="session")
def audited_site(tmp_path_factory) -> tuple[Path, int, dict, Path]:
    """The site built from a copy of the trials table read with the participant audit
    (docs/fidelity.md): every trial of our arms audited, the fixture episode with one finding on
    its first desk reply, as the reader writes it (the finding, and the count of its kind). Gives
    the site, the finding's event, the finding and the table."""
    import pandas as pd

    from incognita.access.taxonomy import FINDING_KINDS, NATIVE

    tmp = tmp_path_factory.mktemp("audited")
    arm, model, task, rep = FIXTURE_EPISODE
    record = json.loads((FIXTURES / "episodes" / arm / model / task / f"r{rep}.json").read_text())
    event = next(
        i for i, e in enumerate(record["events"]) if e["type"] == "message" and e["sender"] not in ("agent", "USER")
    )
    finding = {"kind": "named_tool", "participant": record["events"][event]["sender"], "event": event,
               "turn": record["events"][event]["turn"], "detail": "get_order_details"}  # fmt: skip
    trials = pd.read_parquet(FIXTURES / "trials.parquet")
    at = (trials["arm"] == arm) & (trials["model"] == model) & (trials["task"] == task) & (trials["rep"] == rep)
    ours = trials["arm"] != NATIVE
    trials["participant_messages"] = pd.array([7 if x else 3 if o else None for x, o in zip(at, ours)], dtype="Int64")
    for kind in FINDING_KINDS:
        counts = [int(x and kind == "named_tool") if o else None for x, o in zip(at, ours)]
        trials[f"findings_{kind}"] = pd.array(counts, dtype="Int64")
    trials["failure_attribution"] = pd.array(["no_participant_fault_found" if x else None for x in at], dtype="string")
    trials["participant_findings"] = pd.array([json.dumps([finding]) if x else None for x in at], dtype="string")
    trials.to_parquet(tmp / "trials.parquet")
    out = tmp / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "incognita", "view", "--out", str(out), "--trials", str(tmp / "trials.parquet"),
         "--reference-root", str(REFERENCE_ROOT), "--episodes", str(FIXTURES / "episodes"),
         "--native", str(FIXTURES / "native"), "--no-collabsim"],
        check=False, cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, event, finding, tmp / "trials.parquet"
