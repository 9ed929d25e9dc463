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
from incognita.common.pacing import Limits, Pacer, endpoint_id, estimate_tokens

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
    from incognita.common.backends.base import entry_param
    from incognita.common.pacing import pacing_map, with_pacing, without_pacing

    paced = {"spec": "openai:gpt-x", "temperature": 0, "rpm": 600, "tpm": 1_200_000}
    plain = {"spec": "openai:gpt-y", "temperature": 1}
    entries = [paced, plain, "scripted:desk", None]
    pacing = json.loads(pacing_map(entries))
    assert pacing == {'{"spec":"openai:gpt-x","temperature":0}': {"rpm": 600, "tpm": 1_200_000}}
    for entry in entries:
        received = entry_param(without_pacing(entry)[0])  # what the job's compared param holds
        assert "rpm" not in received
        assert with_pacing(received, pacing) == entry_param(entry)
    assert pacing_map([plain, "scripted:desk"]) == "{}"


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
