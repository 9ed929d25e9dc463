"""What the viewer's browser tests (tests/viewer/) share: the fixture records, the site's
addresses, Debian's Chromium and how a page is opened and waited for. The fixtures themselves
(the site built once per session, the browser, a page) are in tests/viewer/conftest.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "viewer"
REFERENCE_ROOT = FIXTURES / "reference"  # <root>/retail/coordination.json
CHROMIUM = "/usr/bin/chromium"
# Flags that work on a machine with a closed network: no background traffic, no sandbox (root).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The fixture episode with a known failure type: the impatient agent in the social arm of
# task retail/11 reaches two desks, gets no read accepted and never attempts the return.
FIXTURE_EPISODE = ("social", "impatient", "retail/11", 0)
FIXTURE_LABEL = "requested_not_obtained"
# An injected message text: it must come out as text, never as markup or code.
HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=1</script> & "quotes"'
HOSTILE_EPISODE = ("direct", "surveyor", "retail/46", 0)


def route(*parts) -> str:
    """A site address from its parts, each URI-encoded as the site's links are (V.href): a
    qualified task id is one part (`retail%2F11`)."""
    return "/".join(quote(str(p), safe="") for p in parts)


os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")


# Events the offline default never produces (a real model does: docs/reader.md), added to one
# copied record so the page's drawing of each is tested; none of them changes the label.
RARE_EVENTS = [
    {"type": "protocol_error", "actor": "agent", "reason": "malformed JSON", "raw": "{not json"},
    {
        "type": "tool_proposal",
        "call_id": "x1",
        "proposer": "agent",
        "tool": "cancel_pending_order",
        "arguments": {"order_id": "#W0000000", "reason": "no longer needed"},
    },
    {
        "type": "gateway_decision",
        "call_id": "x1",
        "proposer": "agent",
        "tool": "cancel_pending_order",
        "arguments": {"order_id": "#W0000000", "reason": "no longer needed"},
        "status": "inadmissible",
        "reason": "order_id: no such order",
        "result": None,
        "write": True,
    },
    {"type": "disclosure", "token": "credit_card", "status": "unknown", "value": None, "reason": None},
    {"type": "truncation", "budget": 300},
]


def edited_copy(dest: Path) -> Path:
    """The fixture episodes, one of them with markup for a message text and the rare events."""
    shutil.copytree(FIXTURES / "episodes", dest)
    arm, model, task, rep = HOSTILE_EPISODE
    path = dest / arm / model / task / f"r{rep}.json"
    record = json.loads(path.read_text())
    first = next(e for e in record["events"] if e["type"] == "message")
    first["text"] = HOSTILE
    turn = record["events"][-1]["turn"]
    record["events"] += [{**e, "turn": turn} for e in RARE_EVENTS]
    path.write_text(json.dumps(record))
    return dest


def collabsim_run(root: Path) -> Path:
    """One real CollabSim run of the smoke design's condition (DayTrader, bandwidth), seed 1."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "incognita",
            "collabsim",
            "run",
            "config/collabsim/daytrader/communication_bandwidth.yaml",
            "--seeds",
            "1",
            "--design",
            "persona",
            "--out-root",
            str(root),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return root


def install_chromium() -> str | None:
    """Debian's chromium, installed when missing; the reason when it cannot be."""
    if Path(CHROMIUM).exists():
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return f"{CHROMIUM} is missing and apt-get cannot install it here (needs root and Debian)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"]):
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            return f"{' '.join(cmd)} failed: {proc.stderr.strip()[-300:]}"
    return None if Path(CHROMIUM).exists() else f"apt-get installed no {CHROMIUM}"


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def open_route(page, base: str, route: str = "") -> None:
    """Load the site at `route` (or follow the route inside an open page) and wait for it."""
    if page.url.startswith(base):
        page.evaluate("h => { delete document.body.dataset.ready; location.hash = h; }", "#" + route)
    else:
        page.goto(f"{base}#{route}")
    page.wait_for_selector("body[data-ready]", timeout=15000)


def rows(page) -> int:
    return page.locator("table.grid tbody tr.row").count()
