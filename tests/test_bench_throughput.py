"""bench/throughput.py's mechanics: the chain of a call log, the sweep's rows and their summary,
the replay's lanes. Nothing here measures a time (tests/test_bench.py runs the scripts)."""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys

import pytest
from workflow_helpers import ROOT


@pytest.fixture
def bench(monkeypatch):
    """bench/'s modules, imported from the checkout (they are scripts' helpers, not a package)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    for name in ("call_log", "throughput_rows", "order_replay"):
        sys.modules.pop(name, None)
    return {name: importlib.import_module(name) for name in ("call_log", "throughput_rows", "order_replay")}


class TableLatency:
    """The server's latency as the Dispatch draws it again: here read off the request (`#lat=S`)."""

    per_output_token = 0.0

    def draw(self, body: dict, tokens: int, seed: int = 0) -> float:
        return float(body["messages"][-1]["content"].split("#lat=")[1])


def send(dispatch, agent: str, kind: str, step: int, latency: float) -> None:
    """One request of a CollabSim agent as its engine sends it: its history ends in the step's
    observation (`Step N, ...`), a probe's in a PROBE turn."""
    messages = [{"role": "user", "content": f"Step {step}, t={10 * step}s #lat={latency}"}]
    if kind == "probe":
        messages += [{"role": "assistant", "content": "{}"}, {"role": "user", "content": f"PROBE #lat={latency}"}]
    cell = {"family": "collabsim", "task": "t", "condition": "c", "design": "persona", "seed": 1}
    headers = {"x-incognita-cell": json.dumps({**cell, "agent": agent, "agent_seed": 5, "role": "trader"})}
    dispatch("scripted-default", {"messages": messages}, headers)


# Two steps of three agents: step 0's turns (a1 1 s, a2 3 s, a3 2 s), then its probes (a1 twice,
# 2 s each; a2 1 s; a3 3 s), then step 1's turns (1, 1, 5 s) with no probe.
TURNS = {0: [("a1", 1.0), ("a2", 3.0), ("a3", 2.0)], 1: [("a1", 1.0), ("a2", 1.0), ("a3", 5.0)]}
PROBES = {0: [("a1", 2.0), ("a2", 1.0), ("a3", 3.0), ("a1", 2.0)], 1: []}


def run_log(bench, turn_taking: str, cadence: str, workers: int, probes=PROBES):
    log = bench["call_log"]
    order = log.RunOrder(turn_taking, cadence, workers)
    dispatch = log.Dispatch({"collabsim": lambda model, body, headers: {}}, TableLatency(), orders=lambda t, c: order)
    for step in (0, 1):
        if turn_taking == "simultaneous" or cadence == "events":
            for agent, latency in TURNS[step]:
                send(dispatch, agent, "act", step, latency)
            for agent, latency in probes[step]:
                send(dispatch, agent, "probe", step, latency)
        else:  # round-robin: a turn, then its agent's probes, then the next agent's turn
            for agent, latency in TURNS[step]:
                send(dispatch, agent, "act", step, latency)
                for probed, probe_latency in probes[step]:
                    if probed == agent:
                        send(dispatch, agent, "probe", step, probe_latency)
    return dispatch


def test_the_chain_follows_the_order_the_run_imposed(bench):
    """Hand-derived. Simultaneous turns: step 0's turns take their slowest (3 s); its probes go an
    agent to a thread, a1's two one after another (4 s), so the probe wave takes 4 s, not the
    k-th probes' slowest summed (3 + 2); step 1's turns 5 s: 12 s in 3 waves (the old count, 13 s,
    exceeded what the run waited for). On 2 threads the lanes queue: step 0's turns 3 s (a3 after
    a1), probes 4 s (a3 after a2), step 1's turns 6 s (a3 after a1): 13 s. Round-robin: every call
    after the one before, 21 s; with the `events` cadence a step's probes (one per agent here:
    2, 1 and 3 s) go together at its end: 6 + 3 + 7 = 16 s."""
    assert run_log(bench, "simultaneous", "action", 16).chain() == (3, pytest.approx(12.0))
    assert run_log(bench, "simultaneous", "action", 2).chain() == (3, pytest.approx(13.0))
    assert run_log(bench, "round_robin", "action", 16).chain() == (10, pytest.approx(21.0))
    assert run_log(bench, "simultaneous", "action", 1).chain() == (10, pytest.approx(21.0))
    once = {0: PROBES[0][:3], 1: []}  # the events cadence probes each agent once
    assert run_log(bench, "round_robin", "events", 16, once).chain() == (7, pytest.approx(16.0))


def test_the_chain_of_a_log_and_a_wave_on_few_threads(bench):
    log = bench["call_log"]
    calls = [
        {"chain": "e", "wave": [0], "latency": 2.0},  # an episode: a wave a call
        {"chain": "e", "wave": [1], "latency": 1.0},
        {"chain": "r", "wave": [0, 1, 0], "lane": "x", "latency": 1.0},
        {"chain": "r", "wave": [0, 1, 0], "lane": "x", "latency": 1.0},
        {"chain": "r", "wave": [0, 1, 0], "lane": "y", "latency": 1.5},
        {"chain": "r", "wave": [0, 1, 0], "latency": 0.5},  # no lane: a lane of its own
    ]
    assert log.chain_of(calls) == (2, pytest.approx(3.0))  # r's wave: its longest lane, x (2 s)
    assert log.chain_of(calls, {"r": 1}) == (1, pytest.approx(4.0))  # one thread: every lane in turn
    assert log.wave_seconds([[1.0, 1.0], [1.5], [0.5]], 2) == pytest.approx(2.0)  # 0.5 after 1.5
    assert log.chain_of([]) == (0, 0.0)


def test_the_sweep_draws_repeatable_rows_over_the_range(bench):
    rows = bench["throughput_rows"]
    drawn = rows.draw(200, 3)
    assert drawn == rows.draw(200, 3) and drawn != rows.draw(200, 4)
    for c in drawn:
        assert rows.RPM_RANGE[0] <= c.rpm <= rows.RPM_RANGE[1]
        assert rows.TOKENS_PER_REQUEST_RANGE[0] <= c.tokens_per_request <= rows.TOKENS_PER_REQUEST_RANGE[1]
        assert rows.MEDIAN_RANGE[0] <= c.median <= rows.MEDIAN_RANGE[1]
        assert rows.SIGMA_RANGE[0] <= c.sigma <= rows.SIGMA_RANGE[1]
        assert rows.PER_OUTPUT_TOKEN_RANGE[0] <= c.per_output_token <= rows.PER_OUTPUT_TOKEN_RANGE[1]
        assert c.tpm == c.rpm * c.tokens_per_request
    # Log-uniform: as many rows below the geometric middle as above, of both limits.
    middle = math.sqrt(rows.RPM_RANGE[0] * rows.RPM_RANGE[1])
    assert 70 <= sum(c.rpm < middle for c in drawn) <= 130
    middle = math.sqrt(rows.TOKENS_PER_REQUEST_RANGE[0] * rows.TOKENS_PER_REQUEST_RANGE[1])
    assert 70 <= sum(c.tokens_per_request < middle for c in drawn) <= 130
    assert len({c.label for c in drawn}) == len({c.seed for c in drawn}) == 200


def test_a_row_s_share_ideal_and_summary_in_its_own_window(bench):
    """A row run 4 times faster (window 15 s): 100 calls of the busiest model in 30 s at 100 a
    window is 50% of rpm; the ideal's rpm term is 15 s, tokens 3 s, the chain 20 s."""
    rows = bench["throughput_rows"]
    c = rows.Condition(rpm=100, tokens_per_request=1000, median=1.0, sigma=0.5, per_output_token=0.0)
    chain_bound = rows.Row("d", 1, c, window=15.0, budgets=[rows.Budget(100, 20_000, 30.0)], chain_seconds=20.0)
    assert chain_bound.ideal_terms == {"rpm": 15.0, "tpm": 3.0, "chain": 20.0}
    chain_bound.wall = 30.0
    assert chain_bound.binds == "chain" and chain_bound.ratio == 1.5 and chain_bound.verdict().startswith("MISSED")
    rate_bound = rows.Row("d", 1, c, window=15.0, budgets=[rows.Budget(400, 20_000, 64.0)], chain_seconds=20.0)
    rate_bound.wall = 66.0
    assert rate_bound.binds == "rpm" and rate_bound.share == pytest.approx(400 * 15 / 64 / 100)
    assert rate_bound.verdict() == "ok"
    lines = rows.summary([chain_bound, rate_bound, rows.Row("e", 1, c, budgets=[rows.Budget(1, 1, 1.0)])])
    assert lines[0].startswith("d: share of the binding limit worst 0.94, median 0.94 (1 rows)")
    assert "wall/ideal where the chain binds worst 1.50" in lines[0] and "1 of 2 rows met their target" in lines[0]
    assert lines[-1].startswith("all: ") and len(lines) == 3
    assert all(str(c.rpm) in rows.table_line(r) for r in (chain_bound, rate_bound))
    # At the provider's pace: the 10 s of start-up before the first request stay 10 s, the other
    # 10 s of the row were 40; against an ideal of 4 x 5 s that is 2.5.
    faster = rows.Row("d", 1, c, window=15.0, scale=4.0, lead=10.0, wall=20.0, chain_seconds=5.0)
    faster.budgets = [rows.Budget(1, 1, 1.0)]
    assert faster.ratio == pytest.approx(2.5)


def test_the_replay_runs_a_wave_s_lanes_one_call_after_another(bench):
    replay = bench["order_replay"]
    lanes = replay.Chain(
        "r",
        "j",
        None,
        (
            (replay.Call("m", 10, 1.0, "a"), replay.Call("m", 10, 2.0, "a"), replay.Call("m", 10, 2.0, "b")),
            (replay.Call("m", 10, 1.0, "a"),),
        ),
    )
    for order in replay.ORDERS:
        wall, served = replay.replay([lanes], 100, 10_000, order, gap=0.0)
        assert wall == pytest.approx(3.0 + 1.0) and served["m"].calls == 4
    # A shorter window (a row run faster): 2 requests a 6 s window, the third waits for it.
    three = [replay.Chain(f"c{i}", "j", None, ((replay.Call("m", 10, 1.0),),)) for i in range(3)]
    assert replay.replay(three, 2, 10_000, "line", gap=0.0, minute=6.0)[0] == pytest.approx(6.12 + 1.0)
    assert replay.ideal_seconds([lanes], 100, 10_000) == pytest.approx(4.0)
    assert replay.ideal_seconds(three, 2, 10_000, minute=6.0) == pytest.approx(9.0)


def test_the_smoke_row_covers_both_domains_and_each_row_runs_its_tasks_domains(bench):
    """The smoke row is config/smoke.yaml's design, a task of each default domain (the loopback twins
    answer both); each row's overlay names its tasks' domains, so a retail-only row (quick, access72)
    plans no airline cell, and the copies need every default domain's task stages."""
    sys.modules.pop("throughput", None)
    throughput = importlib.import_module("throughput")
    rows = throughput.designs(quick=False)
    smoke, access72 = rows["smoke"], rows["access72"]
    assert {t.split("/")[0] for t in smoke.tasks} == {"retail", "airline"}
    urls = {p: "http://127.0.0.1:1/v1" for d in (smoke, access72) for p in throughput.profiles(d)}
    cfg, targets = throughput.overlay(smoke, urls, 600, 1_200_000)
    assert cfg["domains"] == ["retail", "airline"] and cfg["design"]["tasks"] == smoke.tasks
    assert any("/airline/" in t for t in targets) and any("/retail/" in t for t in targets)  # native runs
    assert throughput.overlay(access72, urls, 600, 1_200_000)[0]["domains"] == ["retail"]
    quick = throughput.designs(quick=True)["quick"]
    assert throughput.overlay(quick, urls, 600, 1_200_000)[0]["domains"] == ["retail"]
    assert throughput.locks_checks() == [
        "results/reference/retail/locks_verified.txt",
        "results/reference/airline/locks_verified.txt",
    ]


def test_the_sweep_runs_end_to_end_on_the_sessions_task_stages(task_stages, tmp_path):
    """`--quick --sweep 2`: the one access cell at two drawn rows, 60 times faster; each row's calls
    are kept and the summary printed. No time is checked."""
    keep = tmp_path / "keep"
    cmd = [sys.executable, str(ROOT / "bench/throughput.py"), "--quick", "--sweep", "2", "--seed", "5"]
    proc = subprocess.run(
        [*cmd, "--stages", str(task_stages), "--keep", str(keep)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"bench/throughput.py --quick --sweep 2 failed:\n{proc.stdout}\n{proc.stderr}"
    assert "2 rows drawn with seed 5" in proc.stdout and "time scale 60" in proc.stdout, proc.stdout
    assert "quick: share of the binding limit" in proc.stdout, proc.stdout
    for i in range(2):
        calls = [json.loads(line) for line in (keep / f"quick-5-{i}/calls.jsonl").read_text().splitlines()]
        assert calls and all(c["job"] == "episodes/surveyor/retail/59" for c in calls)
    bad = subprocess.run([*cmd, "--rows", "2"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode != 0 and "--rows: [2] not among the sweep's rows 0-1" in bad.stderr
