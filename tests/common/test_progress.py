"""The per-process call log and its summary (`incognita progress`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.cli import main
from incognita.common import progress
from incognita.common.io import InputError
from incognita.common.progress import CallLog, call_log, run_start, summarise

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_800_000_000.0  # a fixed "now" for the synthetic logs


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _call(log: CallLog, *, hit=False, prompt=100, completion=10, cost=0.01, spec="openai:m", role="agent"):
    log.call(
        spec=spec,
        role=role,
        hit=hit,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=cost,
        seconds=1.0,
    )


def _write(path: Path, events: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")


def _calls(times, **fields) -> list[dict]:
    base = {"kind": "call", "spec": "openai:m", "role": "agent", "hit": False}
    base |= {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.01, "seconds": 1.0}
    return [{**base, **fields, "t": t} for t in times]


@pytest.fixture
def logdir(tmp_path, monkeypatch):
    d = tmp_path / "progress"
    monkeypatch.setenv(progress.PROGRESS_ENV, str(d))
    monkeypatch.setattr(progress, "_instance", None)  # a fresh process-wide log that reads the variable
    return d


# --------------------------------------------------------------------------- writing


def test_the_singleton_writes_nothing_until_a_call_then_one_file_per_process(logdir):
    log = call_log()
    log.summary_at_exit = False
    assert call_log() is log and not logdir.exists()  # no call, no directory
    _call(log)
    (path,) = logdir.glob("*.jsonl")
    host, pid, start_ms = path.stem.rsplit("-", 2)
    assert host and int(pid) == os.getpid() and int(start_ms) > 0


def test_eight_threads_append_whole_lines(logdir):
    log = CallLog(summary_at_exit=False)

    def work(i: int) -> None:
        for j in range(50):
            _call(log, hit=(j % 2 == 0), role=f"thread{i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = log.path.read_text().splitlines()
    assert len(lines) == 400
    events = [json.loads(line) for line in lines]
    assert all(e["kind"] == "call" for e in events) and log.calls == 400 and log.hits == 200
    # What a line holds, and only that: no prompt, response, key or header.
    assert set(events[0]) == {
        "t",
        "kind",
        "spec",
        "role",
        "hit",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "seconds",
    }


def test_summarise_counts_hits_misses_tokens_dollars_and_retries(tmp_path):
    clock = Clock()
    log = CallLog(tmp_path, clock=clock, summary_at_exit=False)
    _call(log, hit=False, prompt=1000, completion=100, cost=0.25)
    _call(log, hit=False, prompt=2000, completion=200, cost=0.50)
    _call(log, hit=True, prompt=500, completion=50, cost=0.125)  # a hit spends nothing
    log.retry(spec="openai:m", status="429", wait=2.0)
    log.retry(spec="openai:m", status="429", wait=4.0)
    log.retry(spec="openai:m", status="5xx", wait=1.0)
    log.retry(spec="openai:m", status="timeout", wait=1.0)
    s = summarise(tmp_path, now=T0)
    assert (s.calls, s.hits, s.misses) == (3, 1, 2)
    assert (s.prompt_tokens, s.completion_tokens) == (3500, 350)
    assert s.cost_usd == pytest.approx(0.75)
    assert (s.throttled, s.other_retries, s.files) == (2, 2, 1)
    hit_line = json.loads(log.path.read_text().splitlines()[2])
    assert hit_line["hit"] is True and hit_line["cost_usd"] == 0.0


def test_a_process_summary_line_at_most_every_30_s_and_at_exit(tmp_path, capsys):
    clock = Clock()
    log = CallLog(tmp_path, clock=clock, summary_at_exit=False)
    for _ in range(30):  # one call a second for 30 s, 1000 + 100 tokens each
        _call(log, prompt=1000, completion=100, cost=0.01)
        clock.t += 1
    log.retry(spec="openai:m", status="429", wait=1.0)  # t0 + 30: the first summary is due
    _call(log)  # and the next one is not
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "progress: 30 calls (0 hits, 30 misses), tokens 30.0k in / 3.0k out, $0.3000 spent, 1 429s, "
        "0 other retries; last minute 60.0 calls/min, 66.0k tokens/min"
    ]
    log._at_exit()
    assert capsys.readouterr().err.startswith("progress: 31 calls")


# --------------------------------------------------------------------------- reading


def test_eta_from_the_last_minute_rate(tmp_path):
    # 40 calls over the first 10 minutes, then 30 in the last minute (one every 2 s).
    old = [T0 - 660 + 15 * i for i in range(40)]
    recent = [T0 - 58 + 2 * i for i in range(30)]
    _write(tmp_path / "a.jsonl", _calls(old[::2] + recent[::2]))
    _write(tmp_path / "b.jsonl", _calls(old[1::2] + recent[1::2]))
    s = summarise(tmp_path, expected_calls=160, now=T0)
    assert s.calls == 70 and s.recent_calls == 30 and s.files == 2
    assert s.recent_calls_per_min == pytest.approx(30) and s.recent_tokens_per_min == pytest.approx(30 * 110)
    assert s.eta_seconds == pytest.approx((160 - 70) / 30 * 60)  # 3 minutes
    # Over the whole run: 70 calls from the first event (T0 - 660) to the last (T0 - 0).
    assert s.calls_per_min == pytest.approx(70 / 660 * 60)
    # No calls in the last minute: no ETA; all done: 0.
    assert summarise(tmp_path, expected_calls=160, now=T0 + 120).eta_seconds is None
    assert summarise(tmp_path, expected_calls=50, now=T0).eta_seconds == 0
    assert summarise(tmp_path, now=T0).eta_seconds is None


def test_the_first_seconds_of_a_run_rate_over_the_time_there_was(tmp_path):
    _write(tmp_path / "a.jsonl", _calls([T0 - 10 + i for i in range(10)]))  # 10 calls in the first 10 s
    assert summarise(tmp_path, now=T0).recent_calls_per_min == pytest.approx(60)


def test_a_partial_last_line_is_skipped_and_a_bad_middle_line_named(tmp_path):
    path = tmp_path / "a.jsonl"
    _write(path, _calls([T0 - 3, T0 - 2]))
    with open(path, "a") as f:
        f.write('{"t": oops}\n')
        f.write(json.dumps(_calls([T0 - 1])[0]) + "\n")
        f.write('{"t": 1800000000.0, "kind": "ca')  # still being written
    s = summarise(tmp_path, now=T0)
    assert s.calls == 3
    assert len(s.problems) == 1 and s.problems[0].startswith(f"{path}:3: malformed line skipped")


def test_the_run_starts_after_the_last_gap_of_over_30_minutes(tmp_path):
    assert run_start([]) is None
    assert run_start([5.0, 1.0, 3.0]) == 1.0
    assert run_start([0, 100, 100 + 1800, 100 + 1800 + 1801, 100 + 1800 + 1802]) == 3701  # 1800 s is no gap
    # Yesterday's run in one file, today's in two: only today's counts by default.
    _write(tmp_path / "old.jsonl", _calls([T0 - 86400 + i for i in range(5)]))
    _write(tmp_path / "new1.jsonl", _calls([T0 - 100, T0 - 50]))
    _write(tmp_path / "new2.jsonl", _calls([T0 - 2000 + 1000, T0 - 10]))
    s = summarise(tmp_path, now=T0)
    assert (s.calls, s.files, s.since, s.since_rule) == (4, 2, T0 - 1000, "gap")
    given = summarise(tmp_path, since=T0 - 86400 + 3, now=T0)
    assert (given.calls, given.files, given.since_rule) == (6, 3, "given")


def test_a_missing_directory_is_named(tmp_path):
    with pytest.raises(InputError, match=f"{tmp_path / 'nope'}: no such progress directory"):
        summarise(tmp_path / "nope")


WRITER = """
import os, sys, time
from pathlib import Path
from incognita.common.progress import call_log

def calls(n):
    for _ in range(n):
        call_log().call(spec="openai:m", role="agent", hit=False, prompt_tokens=10, completion_tokens=1,
                        cost_usd=0.001, seconds=0.1)

def wait_for(name):
    while not Path(sys.argv[1], name).exists():
        time.sleep(0.02)

calls(5)
wait_for("go")
calls(5)
wait_for("stop")
"""


def test_progress_read_while_a_writer_process_appends(tmp_path):
    logdir = tmp_path / "progress"
    env = {**os.environ, progress.PROGRESS_ENV: str(logdir), "PYTHONDONTWRITEBYTECODE": "1"}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env, cwd=ROOT, stderr=subprocess.PIPE)

    def calls_reach(n: int) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if logdir.is_dir() and summarise(logdir).calls >= n:
                return summarise(logdir).calls
            assert writer.poll() is None, writer.stderr.read().decode()
            time.sleep(0.05)
        raise AssertionError(f"the writer did not reach {n} calls")

    try:
        assert calls_reach(5) == 5
        (tmp_path / "go").touch()
        assert calls_reach(10) == 10
        assert writer.poll() is None  # still running: the file is still open for appending
    finally:
        (tmp_path / "stop").touch()
        writer.wait(timeout=60)
    # At exit the writer's log printed its summary to stderr (the job's log under the workflow).
    assert writer.stderr.read().decode().startswith("progress: 10 calls (0 hits, 10 misses)")


# --------------------------------------------------------------------------- command


def test_progress_command_plain_output(tmp_path):
    now = time.time()
    _write(tmp_path / "a.jsonl", _calls([now - 30 + i for i in range(20)]))
    _write(tmp_path / "a.jsonl", [{"t": now - 5, "kind": "retry", "spec": "openai:m", "status": "429", "wait": 1}])
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "calls: 20 done (expected: unknown); 0 cache hits, 20 misses" in out.output
    assert "$0.2000 spent on misses" in out.output and "retries: 1 rate-limited (429), 0 other" in out.output
    assert "ETA" not in out.output
    # --since after every event: nothing counted.
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--since", str(now + 1)])
    assert "no model calls logged since" in out.output
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--since", "yesterday"])
    assert out.exit_code == 2 and "expected unix seconds or an ISO date/time" in out.output


def test_progress_command_expected_calls_from_the_config(tmp_path, monkeypatch):
    from incognita.access.planning.cost_estimate import expected_api_calls

    monkeypatch.chdir(ROOT)
    now = time.time()
    _write(tmp_path / "a.jsonl", _calls([now - 30 + i for i in range(30)]))
    expected = expected_api_calls("config/paper.yaml")
    assert expected > 0
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--config", "config/paper.yaml"])
    assert out.exit_code == 0, out.output
    assert f"calls: 30 done of {expected:,.0f} expected (" in out.output and "ETA: " in out.output
    # Not an access config: the expected calls are unknown, the summary still prints.
    not_access = tmp_path / "other.yaml"
    not_access.write_text("experiments: {}\n")
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--config", str(not_access)])
    assert out.exit_code == 0, out.output
    assert "expected: unknown" in out.output and "calls: 30 done" in out.output


def test_progress_command_on_a_missing_directory_fails_naming_it(tmp_path):
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path / "nope")])
    assert out.exit_code == 2 and f"{tmp_path / 'nope'}: no such progress directory" in out.output


def test_progress_watch_prints_plain_lines_until_interrupted(tmp_path, monkeypatch):
    _write(tmp_path / "a.jsonl", _calls([time.time() - 1]))
    sleeps = []

    def fake_sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", fake_sleep)
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--watch", "7"])
    assert out.exit_code == 0, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 2 and all(" calls 1 (0 hits)" in ln for ln in lines) and sleeps == [7, 7]


def test_per_minute_counts_the_calls_that_reached_each_model(tmp_path):
    """Misses only (a hit never reached the model), by minute of the current run and by spec; the
    calls of an earlier run (before a 30-minute gap) and retries are not counted."""
    start = T0
    _write(tmp_path / "old.jsonl", _calls([start - 3 * 3600]))  # another run
    _write(tmp_path / "a.jsonl", _calls([start, start + 30, start + 125], spec="openai:desk", prompt_tokens=1000))
    _write(tmp_path / "b.jsonl", _calls([start + 61], spec="openai:customer"))
    _write(tmp_path / "b.jsonl", _calls([start + 62], spec="openai:customer", hit=True))
    _write(
        tmp_path / "b.jsonl", [{"t": start + 63, "kind": "retry", "spec": "openai:desk", "status": "429", "wait": 1}]
    )
    (tmp_path / "c.jsonl").write_text("not json\n")
    minutes = progress.by_minute(tmp_path)
    assert minutes.since == start
    assert minutes.problems == [
        f"{tmp_path / 'c.jsonl'}:1: malformed line skipped (Expecting value: line 1 column 1 (char 0))"
    ]
    assert minutes.counts == {
        "openai:customer": [[0, 0], [1, 110], [0, 0]],
        "openai:desk": [[2, 2020], [0, 0], [1, 1010]],
    }
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--per-minute"])
    assert out.exit_code == 0, out.output
    rows = [r for r in out.output.splitlines() if "malformed" not in r]  # CliRunner mixes in stderr
    assert any("c.jsonl:1: malformed line skipped" in r for r in out.output.splitlines())
    assert rows[1].split() == ["minute", "openai:customer", "openai:desk"]
    assert rows[2].split() == ["1", "0", "/", "0", "2", "/", "2.0k"]
    assert rows[4].split() == ["3", "0", "/", "0", "1", "/", "1.0k"]
    # --since after every call: nothing reached a model.
    out = CliRunner().invoke(main, ["progress", "--dir", str(tmp_path), "--per-minute", "--since", str(start + 200)])
    assert "no model calls that reached a model" in out.output
