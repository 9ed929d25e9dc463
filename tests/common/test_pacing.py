"""The shared pace of an endpoint (incognita.common.pacing): limits held across processes,
Retry-After honoured, a 429 storm slows every caller and the pace recovers.

Windows are shortened to a second or two (Pacer's `window`) so that a "minute" passes in a test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from incognita.common.io import InputError
from incognita.common.pacing import Limits, Pacer, endpoint_id, estimate_tokens, line_key, requests_scarcer

WORKER = """
import json, sys, threading, time
from pathlib import Path
from incognita.common.pacing import Limits, Pacer

directory, rpm, in_flight, calls, hold, window, out = sys.argv[1:]
pacer = Pacer("shared", Limits(rpm=int(rpm) or None, tpm=None, max_in_flight=int(in_flight)), Path(directory),
              window=float(window))
spans, lock = [], threading.Lock()

def one():
    with pacer.attempt(10):
        start = time.time()
        time.sleep(float(hold))
        with lock:
            spans.append((start, time.time()))

threads = [threading.Thread(target=one) for _ in range(int(calls))]
for t in threads: t.start()
for t in threads: t.join()
Path(out).write_text(json.dumps(spans))
"""


def run_workers(tmp_path: Path, processes: int, *, rpm: int, in_flight: int, calls: int, hold: float, window: float):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(tmp_path / "pace"),
                str(rpm),
                str(in_flight),
                str(calls),
                str(hold),
                str(window),
                str(tmp_path / f"spans{i}.json"),
            ]
        )
        for i in range(processes)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    return [tuple(s) for i in range(processes) for s in json.loads((tmp_path / f"spans{i}.json").read_text())]


def test_two_processes_never_hold_more_calls_in_flight_than_the_cap_together(tmp_path):
    spans = run_workers(tmp_path, 2, rpm=0, in_flight=3, calls=6, hold=0.15, window=60)
    assert len(spans) == 12
    moments = sorted({t for span in spans for t in span})
    peak = max(sum(1 for a, b in spans if a <= m < b) for m in moments)
    assert peak == 3  # reached, never passed


def test_two_processes_never_send_more_requests_per_window_than_the_limit_together(tmp_path):
    window, rpm = 1.5, 5
    spans = run_workers(tmp_path, 2, rpm=rpm, in_flight=32, calls=6, hold=0.0, window=window)
    starts = sorted(a for a, _ in spans)
    assert len(starts) == 12
    # Any window's worth of time holds at most `rpm` starts (a little slack for the clocks' milliseconds).
    for i, t in enumerate(starts):
        assert sum(1 for s in starts[i:] if s < t + window - 0.02) <= rpm
    assert starts[-1] - starts[0] >= 2 * window - 0.1  # 12 requests at 5 a window need three windows


def test_a_429_pauses_every_caller_for_retry_after_and_halves_the_cap(tmp_path):
    pacer = Pacer("e", Limits(rpm=None, tpm=None, max_in_flight=8), tmp_path)
    pacer.throttled(0.4)
    other = Pacer("e", Limits(rpm=None, tpm=None, max_in_flight=8), tmp_path)  # another process's view
    assert other.state()["cap"] == 4
    start = time.monotonic()
    with other.attempt(1):
        pass
    assert time.monotonic() - start >= 0.38


def test_a_429_storm_brings_the_cap_to_one_and_successes_bring_it_back(tmp_path):
    pacer = Pacer("e", Limits(rpm=None, tpm=None, max_in_flight=16), tmp_path)
    for _ in range(10):
        pacer.throttled(0)
    assert pacer.state()["cap"] == 1 and pacer.state()["throttled"] == 10
    caps = []
    for _ in range(200):
        pacer.ok()
        caps.append(pacer.state()["cap"])
    assert caps == sorted(caps)  # additive increase: never down without a 429
    assert caps[-1] == 16  # back to the configured cap, never above
    assert caps[20] < 8  # and gradually: one more call per cap's worth of successes


def test_a_server_error_holds_growth(tmp_path):
    pacer = Pacer("e", Limits(rpm=None, tpm=None, max_in_flight=16), tmp_path)
    pacer.throttled(0)
    pacer.server_error()
    for _ in range(50):
        pacer.ok()
    assert pacer.state()["cap"] == 8


def test_a_killed_process_gives_its_slots_back(tmp_path):
    script = (
        "import sys, time\nfrom pathlib import Path\nfrom incognita.common.pacing import Limits, Pacer\n"
        "p = Pacer('e', Limits(rpm=None, tpm=None, max_in_flight=1), Path(sys.argv[1]))\n"
        "with p.attempt(1):\n    print('holding', flush=True)\n    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    pacer = Pacer("e", Limits(rpm=None, tpm=None, max_in_flight=1), tmp_path)
    assert pacer.state()["in_flight"] == 1
    proc.kill()
    proc.wait()
    start = time.monotonic()
    with pacer.attempt(1):
        assert time.monotonic() - start < 2


def test_limits_and_helpers():
    with pytest.raises(InputError, match="x: rpm: expected a positive integer or null"):
        Limits(rpm=0).check("x")
    with pytest.raises(InputError, match="max_in_flight"):
        Limits(max_in_flight=0).check("x")
    for bad in (1, -0.1, True, "a sixth"):
        with pytest.raises(InputError, match=f"x: reserve: expected a share of rpm from 0 up to .* got {bad!r}"):
            Limits(reserve=bad).check("x")
    Limits(reserve=0).check("x")
    assert endpoint_id("http://a/v1", "m") != endpoint_id("http://b/v1", "m")
    body = {"messages": [{"role": "user", "content": "x" * 400}]}
    assert estimate_tokens(body) == len(json.dumps(body["messages"])) // 4 == 108
    assert (
        estimate_tokens({**body, "max_tokens": 100}) == estimate_tokens({**body, "max_completion_tokens": 100}) == 208
    )


def test_tokens_are_charged_in_whole_units_with_the_fraction_carried(tmp_path):
    """tpm 200,000 makes a unit of 100 tokens: ten calls of 150 tokens take 15 units, not 20
    (rounding each up) nor 10 (rounding each down); no call takes more than a whole window."""
    pacer = Pacer("carry", Limits(rpm=None, tpm=200_000, max_in_flight=4), tmp_path)
    weights = [pacer._token_weight(150) for _ in range(10)]
    assert weights == [1, 2] * 5
    assert pacer._token_weight(10_000_000) == 2000  # a call larger than the window: the whole window
    unlimited = Pacer("none", Limits(rpm=None, tpm=None, max_in_flight=4), tmp_path)
    assert unlimited._token_weight(150) == 0


def test_pacing_settings_travel_apart_from_the_entry_and_come_back_whole():
    """The workflow hands a job each entry without rpm/tpm/max_in_flight (a compared param) and
    those in one --pacing map (not compared); the command puts them back into the same entry."""
    from incognita.common.backends.entry import ModelEntry, entry_param, pacing_map

    paced = {"spec": "openai:gpt-x", "temperature": 0, "rpm": 600, "tpm": 1_200_000}
    plain = {"spec": "openai:gpt-y", "temperature": 1}
    entries = [paced, plain, "scripted:desk"]
    pacing = json.loads(pacing_map([*entries, None]))
    assert pacing == {'{"spec":"openai:gpt-x","temperature":0}': {"rpm": 600, "tpm": 1_200_000}}
    for entry in entries:
        received = ModelEntry.parse(entry).without_pacing().param  # what the job's compared param holds
        assert "rpm" not in received
        assert ModelEntry.parse(received).with_pacing(pacing).param == entry_param(entry)
    assert pacing_map([plain, "scripted:desk"]) == "{}"


def test_the_workflow_s_forecast_joins_the_pacing_map_unless_the_entry_sets_it():
    from incognita.common.backends.entry import ModelEntry, pacing_map
    from incognita.common.backends.openai import Settings

    paced = {"spec": "openai:gpt-x", "rpm": 600, "tpm": 1_200_000}
    plain = {"spec": "openai:gpt-y", "temperature": 1}
    chosen = {"spec": "openai:gpt-z", "rpm": 60, "reserve": 0.25}
    forms = [ModelEntry.parse(e).without_pacing().param for e in (paced, plain, chosen)]
    forecast = dict.fromkeys(forms, {"reserve": 0})
    pacing = json.loads(pacing_map([paced, plain, chosen, "scripted:desk"], forecast))
    assert pacing == {
        forms[0]: {"rpm": 600, "tpm": 1_200_000, "reserve": 0},
        forms[1]: {"reserve": 0},  # the default limits apply to it, and so does the forecast
        forms[2]: {"rpm": 60, "reserve": 0.25},  # set in the entry: kept
    }
    received = [ModelEntry.parse(f).with_pacing(pacing) for f in forms]  # as a job's backend reads them
    limits = [Settings.from_dict(e.name, dict(e.settings), "x").limits for e in received]
    assert [lim.reserve for lim in limits] == [0, 0, 0.25]
    assert limits[0].rpm == 600 and limits[1].rpm == Limits.rpm
    assert Settings.from_dict("m", {}, "x").limits.reserve == Limits.reserve > 0


def test_other_calls_leave_the_reserve_to_critical_calls_only_while_critical_calls_are_made(tmp_path):
    """rpm 12 in a window of 2.4 s: a call that is not critical may take 10 requests (RESERVE holds
    back a sixth), one per twelfth of the window, while a critical call has been made within the
    window; with none, it may take all 12 at once. Tokens are not held back."""
    window, limits = 2.4, Limits(rpm=12, tpm=None, max_in_flight=32)

    def timed(pacer, critical=False):
        start = time.monotonic()
        with pacer.attempt(1, critical=critical):
            pass
        return time.monotonic() - start

    free = Pacer("free", limits, tmp_path, window=window)
    assert sum(timed(free) for _ in range(12)) < window / 4  # nothing held back: one burst

    held = Pacer("held", limits, tmp_path, window=window)
    assert timed(held, critical=True) < 0.1
    spread = [timed(held) for _ in range(10)]
    # The general part goes out a twelfth of the window at a time, not in one burst ...
    assert sum(spread) >= 8 * window / 12
    # ... and once it is spent, a critical call still goes at once while another call waits.
    assert timed(held, critical=True) < 0.1
    assert timed(held) >= window / 12 - 0.05

    # Tokens are never held back: after a critical call, another takes the rest of the window at once.
    tokens = Pacer("tokens", Limits(rpm=None, tpm=12_000, max_in_flight=32), tmp_path, window=window)
    assert timed(tokens, critical=True) < 0.1
    start = time.monotonic()
    with tokens.attempt(11_000):
        assert time.monotonic() - start < 0.1


@pytest.mark.parametrize("rpm", [1, 2])
def test_a_limit_of_one_or_two_requests_a_minute_is_held(tmp_path, rpm):
    """At 1 or 2 a minute the general part cannot be spread over twelfths (a twelfth rounds up to
    the whole part); the pace still holds the limit and the reserve, where it used to fail when made."""
    window = 0.6
    pacer = Pacer("slow", Limits(rpm=rpm, tpm=None, max_in_flight=4), tmp_path, window=window)
    with pacer.attempt(1, critical=True):
        pass
    start = time.monotonic()
    for _ in range(rpm):
        with pacer.attempt(1):
            pass
    assert time.monotonic() - start >= window * 0.9  # the window's requests were spent: the next waited


def test_a_reserve_of_zero_holds_nothing_back(tmp_path):
    """With critical calls being made, a reserve of 0 lets another call's ten requests go in one
    burst; the default reserve sends the same ten a twelfth of the window at a time."""
    window = 2.4

    def burst(pacer):
        with pacer.attempt(10, critical=True):
            pass
        start = time.monotonic()
        for _ in range(10):
            with pacer.attempt(1):
                pass
        return time.monotonic() - start

    assert burst(Pacer("none", Limits(rpm=12, tpm=None, reserve=0), tmp_path, window=window)) < window / 4
    assert burst(Pacer("held", Limits(rpm=12, tpm=None), tmp_path, window=window)) >= 8 * window / 12


def test_line_key_and_requests_scarcer():
    now, window = 1_000.0, 60.0
    calls = [(500, now - 5), (2_000, now - 1), (2_000, now - 3), (100, now - 119)]

    def order(calls, scarce):
        return [c[0] for c in sorted(calls, key=lambda c: line_key(*c, now, window, scarce))]

    # Requests scarcer: the most tokens first; tokens scarcer: the fewest first; equals by arrival.
    assert sorted(calls, key=lambda c: line_key(*c, now, window, True))[:2] == [(2_000, now - 3), (2_000, now - 1)]
    assert order(calls, True) == [2_000, 2_000, 500, 100]
    assert order(calls, False) == [100, 500, 2_000, 2_000]
    # Passed over for two windows: first, either way, the longest-waiting first.
    overdue = [(100, now - 121), (50, now - 130), (9_000, now), (10, now)]
    assert order(overdue, True) == [50, 100, 9_000, 10]
    assert order(overdue, False) == [50, 100, 10, 9_000]

    both = Limits(rpm=60, tpm=120_000)
    assert requests_scarcer(30, 1_000, both) and not requests_scarcer(30, 60_000, both)
    assert not requests_scarcer(0, 0, both)
    assert not requests_scarcer(30, 1_000, Limits(rpm=60, tpm=None))
    assert not requests_scarcer(30, 1_000, Limits(rpm=None, tpm=120_000))


def test_the_scarcer_budget_is_read_from_the_latest_window_of_admissions(tmp_path):
    """A line that has waited longer than a window (every call waiting for its budget, or a poller
    stalled on a loaded machine) still reads the scarcer budget from the admissions it last saw:
    one request of few tokens each is requests scarcer, however long ago."""
    pacer = Pacer("e", Limits(rpm=1, tpm=1_000_000, max_in_flight=8), tmp_path, window=0.5)
    long_ago = time.time() - 10
    with pacer._db() as db:
        db.execute("INSERT INTO admitted VALUES (?, ?)", (long_ago - 5, 900_000))  # an older window's
        db.execute("INSERT INTO admitted VALUES (?, ?)", (long_ago, 50))
    with pacer._db() as db:
        assert pacer._requests_scarcer(db)


LINE_WORKER = """
import json, sys, threading, time
from pathlib import Path
from incognita.common import pacing

directory, window, overdue, rpm, tpm, ready, go, plan, out = sys.argv[1:]
pacing.OVERDUE = float(overdue)
limits = pacing.Limits(rpm=int(rpm), tpm=int(tpm), max_in_flight=32)
pacer = pacing.Pacer("line", limits, Path(directory), window=float(window))
admitted, lock = [], threading.Lock()
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.01)
start_at = Path(go).read_text()

def one(delay, tokens):
    time.sleep(max(0.0, float(start_at) + delay - time.time()))
    with pacer.attempt(tokens):
        with lock:
            admitted.append((time.time(), tokens))

threads = [threading.Thread(target=one, args=tuple(c)) for c in json.loads(plan)]
for t in threads: t.start()
for t in threads: t.join()
Path(out).write_text(json.dumps(admitted))
"""


def run_line(
    tmp_path: Path, plans: list[list[tuple[float, int]]], *, window: float, overdue: float, rpm: int, tpm: int
):
    """Each plan is one process's calls, (seconds after a common start, tokens). The limits let one
    call in a window (rpm 1, or calls of more than half of tpm), so each admission comes a window
    after the last and the admitted order is the line's order."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "line_worker.py"
    script.write_text(LINE_WORKER)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(tmp_path / "pace"),
                str(window),
                str(overdue),
                str(rpm),
                str(tpm),
                str(tmp_path / f"ready{i}"),
                str(go),
                json.dumps(plan),
                str(tmp_path / f"admitted{i}.json"),
            ]
        )
        for i, plan in enumerate(plans)
    ]
    # The common start comes once both interpreters have imported the pacer (slow on a loaded
    # machine), so that the plans' times hold between the processes.
    deadline = time.time() + 60
    while not all((tmp_path / f"ready{i}").exists() for i in range(len(plans))):
        assert time.time() < deadline and all(p.poll() is None for p in procs), "a line worker did not start"
        time.sleep(0.01)
    (tmp_path / "go.tmp").write_text(str(time.time() + 0.3))
    (tmp_path / "go.tmp").rename(go)
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    admitted = sorted(
        tuple(a) for i in range(len(plans)) for a in json.loads((tmp_path / f"admitted{i}.json").read_text())
    )
    return [tokens for _, tokens in admitted]


def test_two_processes_admit_their_waiting_calls_in_the_line_s_order(tmp_path):
    """The first call takes the window's budget and the second waits for the next window; the
    others arrive while it waits, in two processes, and go in the line's order whichever process
    holds them (the second, already waiting for its budget, is passed by none). At one request a
    window, requests are the scarcer budget: the most tokens first. With requests plentiful and
    each call more than half of tpm, tokens are: the fewest first."""
    plans = [[(0.0, 1), (0.05, 50), (0.15, 100), (0.15, 500)], [(0.15, 400), (0.15, 200)]]
    order = run_line(tmp_path / "requests", plans, window=0.5, overdue=100, rpm=1, tpm=1_000_000)
    assert order == [1, 50, 500, 400, 200, 100]
    plans = [[(0.0, 1_000), (0.05, 600), (0.15, 800), (0.15, 510)], [(0.15, 900), (0.15, 700)]]
    order = run_line(tmp_path / "tokens", plans, window=0.5, overdue=100, rpm=1_000, tpm=1_000)
    assert order == [1_000, 600, 510, 700, 800, 900]


def test_a_call_passed_over_for_overdue_windows_goes_first(tmp_path):
    """While the second call waits for the next window, a small call has waited more than OVERDUE
    windows when a larger one arrives: it goes first. With a longer bound the larger passes it."""
    plans = [[(0.0, 1), (0.02, 5), (0.05, 10)], [(0.45, 9_000)]]
    kw = {"window": 0.6, "rpm": 1, "tpm": 1_000_000}
    assert run_line(tmp_path / "short", plans, overdue=0.5, **kw) == [1, 5, 10, 9_000]
    assert run_line(tmp_path / "long", plans, overdue=100, **kw) == [1, 5, 9_000, 10]


def test_a_benchmark_may_shorten_the_window_through_the_environment(tmp_path, monkeypatch):
    """$INCOGNITA_PACING_WINDOW is the pace's minute (bench/throughput.py --time-scale shortens its
    loopback's windows and the pace's alike); unset it is a minute, and a bad value is named."""
    from incognita.common import pacing

    limits = Limits(rpm=7, tpm=None, max_in_flight=3)
    monkeypatch.delenv(pacing.WINDOW_ENV, raising=False)
    assert pacing.pacer_for("http://a", "m", limits, str(tmp_path)).window == 60.0
    monkeypatch.setenv(pacing.WINDOW_ENV, "1.5")
    assert pacing.pacer_for("http://a", "m", limits, str(tmp_path)).window == 1.5
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv(pacing.WINDOW_ENV, bad)
        with pytest.raises(
            InputError, match=f"INCOGNITA_PACING_WINDOW: expected a positive number of seconds, got '{bad}'"
        ):
            pacing.pacer_for("http://a", "m", limits, str(tmp_path))
