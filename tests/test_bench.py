"""Every benchmark script under bench/ runs in its quick mode and prints its table.

Nothing here checks a time: benchmarks measure, tests do not. The point is that a change
which breaks a benchmark fails CI instead of being found the next time someone measures.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

import pytest
from workflow_helpers import ROOT, add_task_stages, copy_workflow

# (script, arguments, a line its table must print)
QUICK = [
    ("stage_times.py", ["--quick"], "audit"),
    ("dry_run.py", ["--quick"], "floor"),
    ("stats.py", ["--quick"], "s"),
    ("model_overhead.py", ["--quick"], "raw"),
    ("collabsim.py", ["--quick"], "ratio snakemake / in-process"),
    ("faults.py", ["--quick"], "run 1/1: passed"),
    ("order_replay.py", ["--quick"], "oldest-job"),
]


# Scripts that read results/cards and results/golden: run from a copy of the checkout that holds
# them (the test session's build of the task stages).
ON_BUILT_CARDS = [
    ("native_vs_harness.py", ["--quick"], "ratio ours/upstream per message"),
    ("episodes.py", ["--quick"], "harness per episode"),
    ("unbundled_arms.py", ["--quick"], "| social+map |"),
    ("participant_audit.py", ["--quick"], "| misreported_value |"),
]


@pytest.fixture(scope="module")
def built_cards(tmp_path_factory, task_stages):
    wf = copy_workflow(tmp_path_factory.mktemp("bench") / "wf")
    shutil.copytree(ROOT / "bench", wf / "bench")
    add_task_stages(wf, task_stages)
    return wf


def test_every_bench_script_has_a_quick_case():
    # compare_trees.py is tested apart; call_log.py and throughput_rows.py are throughput.py's modules
    # (tests/test_bench_throughput.py).
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")} - {
        "compare_trees.py",
        "call_log.py",
        "throughput_rows.py",
    }
    covered = {name for name, _, _ in QUICK} | {name for name, _, _ in ON_BUILT_CARDS} | {"throughput.py"}
    assert scripts <= covered, f"bench scripts without a quick run in tests/test_bench.py: {sorted(scripts - covered)}"


@pytest.mark.parametrize(("script", "args", "expected"), QUICK, ids=[q[0] for q in QUICK])
def test_quick_mode_runs_and_prints_its_table(script, args, expected):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"bench/{script} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    assert expected in proc.stdout, proc.stdout


@pytest.mark.parametrize(("script", "args", "expected"), ON_BUILT_CARDS, ids=[q[0] for q in ON_BUILT_CARDS])
def test_quick_mode_on_built_cards_runs_and_prints_its_table(built_cards, script, args, expected):
    proc = subprocess.run(
        [sys.executable, str(built_cards / "bench" / script), *args],
        cwd=built_cards,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"bench/{script} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    assert expected in proc.stdout, proc.stdout


def test_throughput_quick_mode_on_the_sessions_task_stages(task_stages, tmp_path):
    """Given built stages (--stages), the script copies them instead of building its own; the row
    writes the calls its server answered, and bench/order_replay.py replays them."""
    keep = tmp_path / "keep"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench/throughput.py"),
            "--quick",
            "--stages",
            str(task_stages),
            "--keep",
            str(keep),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"bench/throughput.py --quick failed:\n{proc.stdout}\n{proc.stderr}"
    assert "wall/ideal" in proc.stdout and "building the task stages" not in proc.stdout, proc.stdout
    # The row's answered calls, one chain (the one cell), replayed under the row's limits.
    calls = [json.loads(line) for line in (keep / "quick-600/calls.jsonl").read_text().splitlines()]
    assert (
        calls
        and {c["chain"] for c in calls} == {calls[0]["chain"]}
        and {c["job"] for c in calls} == {"episodes/surveyor/retail/59"}
    )
    replayed = subprocess.run(
        [sys.executable, str(ROOT / "bench/order_replay.py"), str(keep / "quick-600/calls.jsonl"), "--rpm", "600"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert replayed.returncode == 0 and f"1 chains, {len(calls)} calls" in replayed.stdout, replayed.stderr
    missing = subprocess.run(
        [sys.executable, str(ROOT / "bench/throughput.py"), "--quick", "--stages", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert missing.returncode != 0 and f"--stages {tmp_path}: not built" in missing.stderr


def test_the_replay_holds_each_model_to_its_limits_and_each_chain_to_its_order(tmp_path, monkeypatch):
    """rpm 2: of four one-call chains two go at once and two when the (2% longer) window has
    passed; a chain's second wave waits for both calls of its first; tokens per minute hold
    a call back as requests do."""
    spec = importlib.util.spec_from_file_location("order_replay", ROOT / "bench/order_replay.py")
    replay = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "order_replay", replay)  # its dataclasses look their module up
    spec.loader.exec_module(replay)
    lines = [
        {"chain": f"c{i}", "wave": [0], "job": "j", "arm": None, "model": "m", "tokens": 10, "latency": 1.0}
        for i in range(4)
    ]
    lines += [
        {"chain": "w", "wave": [0, "act"], "job": "k", "arm": None, "model": "n", "tokens": 10, "latency": 1.0},
        {"chain": "w", "wave": [0, "act"], "job": "k", "arm": None, "model": "n", "tokens": 10, "latency": 3.0},
        {"chain": "w", "wave": [1, "act"], "job": "k", "arm": None, "model": "n", "tokens": 10, "latency": 1.0},
    ]
    trace = tmp_path / "calls.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    chains = replay.load(trace)
    assert [len(c.waves) for c in chains] == [1, 1, 1, 1, 2]
    for order in replay.ORDERS:
        wall, served = replay.replay(chains[:4], 2, 1000, order, gap=0.0)
        assert wall == pytest.approx(61.2 + 1.0) and served["m"].calls == 4
        wall, _ = replay.replay(chains[:4], 100, 20, order, gap=0.0)  # tokens: two calls a window
        assert wall == pytest.approx(61.2 + 1.0)
    wall, served = replay.replay(chains[4:], 100, 1000, "oldest", gap=0.5)
    assert wall == pytest.approx(3.0 + 0.5 + 1.0) and served["n"].calls == 3
    # One request a window: the call that goes first is the order's; the other waits a window.
    pair = [
        replay.Chain("a", "j", "indirect", ((replay.Call("m", 10, 1.0),),)),
        replay.Chain("b", "j", "social", ((replay.Call("m", 10, 5.0),),)),
    ]
    assert replay.replay(pair, 1, 1000, "oldest")[0] == pytest.approx(61.2 + 5.0)  # a is older: it goes first
    assert replay.replay(pair, 1, 1000, "arms", arms_first=("social",))[0] == pytest.approx(61.2 + 1.0)
    assert replay.replay(pair, 1, 1000, "critical-first", critical="social")[0] == pytest.approx(61.2 + 1.0)
    # The line at three requests a window. At the start the window is empty (requests not the
    # scarcer budget): the fewest tokens first (10); then requests are: the most tokens (500, 400),
    # and 300 waits at the counter for the next window, where 20 comes after it. Oldest: 300, 500
    # and 20 first, 400 (the slow one) a window later.
    line = [
        replay.Chain(f"t{tokens}", "j", None, ((replay.Call("m", tokens, latency),),))
        for tokens, latency in ((300, 9.0), (500, 1.0), (20, 1.0), (10, 1.0), (400, 30.0))
    ]
    assert replay.replay(line, 3, 100_000, "line")[0] == pytest.approx(61.2 + 9.0)
    assert replay.replay(line, 3, 100_000, "oldest")[0] == pytest.approx(61.2 + 30.0)
    # The counter: 900 tokens wait there for room (tokens are scarcer: the fewest first, so 200 went
    # first); a call of 50 that arrives later would fit but waits behind it, and goes a window on.
    late = (replay.Call("n", 10, 1.0),)
    counter = [
        replay.Chain("t900", "j", None, ((replay.Call("m", 900, 1.0),),)),
        replay.Chain("t200", "j", None, ((replay.Call("m", 200, 1.0),),)),
        replay.Chain("t50", "j", None, (late, (replay.Call("m", 50, 30.0),))),
    ]
    assert replay.replay(counter, 100, 1_000, "line", gap=0.0)[0] == pytest.approx(61.2 + 30.0)
    assert replay.replay(counter, 100, 1_000, "oldest", gap=0.0)[0] == pytest.approx(61.2 + 1.0)
    # The reserve: after a critical call at 0, ten other calls go one per twelfth of the window and
    # the eleventh waits until the reserve is released, a minute after the critical call. Held only
    # while requests are not the scarcer budget (they are here: 10-token calls), all eleven go at once.
    calls = [replay.Chain("crit", "j", "social", ((replay.Call("m", 10, 1.0),),))]
    first = (replay.Call("n", 10, 0.5),)  # the others reach m after the critical call
    calls += [replay.Chain(f"o{i}", "j", "direct", (first, (replay.Call("m", 10, 1.0),))) for i in range(11)]
    held = replay.replay(calls, 12, 1_000_000, "oldest", reserve=1 / 6, critical="social", gap=0.0)[0]
    assert held == pytest.approx(60.0 + 1.0, abs=0.01)
    free = replay.replay(
        calls, 12, 1_000_000, "oldest", reserve=1 / 6, critical="social", gap=0.0, hold_unless_scarcer=True
    )
    assert free[0] == pytest.approx(0.5 + 1.0)
    big = [replay.Chain("big", "j", None, ((replay.Call("m", 5_000, 1.0),),))]
    assert replay.replay(big, 10, 1_000, "oldest")[0] == pytest.approx(1.0)  # larger than a window: it still goes
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"chain": "c"}\n')
    with pytest.raises(SystemExit, match="bad.jsonl:1: not a call record"):
        replay.load(bad)
