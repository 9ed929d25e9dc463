"""The openai backend against a rate-limited loopback (issue #26): it waits out Retry-After
instead of retrying on its own timer, a burst of callers that overshoots the server's limit
slows down together and still gets every answer, and each answer is paid for once."""

from __future__ import annotations

import threading
import time

from incognita.common.backends.base import ModelRequest, Runtime, Turn
from incognita.common.backends.entry import ModelEntry
from incognita.common.backends.openai import make_openai
from incognita.common.loopback import LoopbackServer, RateLimits

PRICES = 'version: 1\nretrieved: "2026-12-03"\nmodels:\n  m: {input: 1.0, output: 1.0}\n'


def backend(server, tmp_path, critical=False, **settings):
    (tmp_path / "prices.yaml").write_text(PRICES)
    return make_openai(
        ModelEntry(
            "openai:m", {"base_url": server.base_url, "api_key_env": "LOOPBACK_KEY", "temperature": 0, **settings}
        ),
        "agent",
        Runtime(cache_dir=str(tmp_path / "cache"), prices=str(tmp_path / "prices.yaml"), critical=critical),
    )


def request(i: int) -> ModelRequest:
    return ModelRequest(role="agent", system="s", messages=(Turn("user", f"question {i}"),))


def test_retry_after_is_waited_out_before_the_next_request(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPBACK_KEY", "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    arrivals: list[float] = []

    def note(n, body):  # a fault plan that only notes when each request arrived
        arrivals.append(time.monotonic())

    window = 1.5
    with LoopbackServer(lambda model, body: "ok", faults=note, limits=RateLimits(rpm=2, window=window)) as server:
        b = backend(server, tmp_path)
        for i in range(3):
            assert b.respond(request(i)).text == "ok"
        rejected = [r.n for r in server.log if r.fault == "rate_limit"]
    assert rejected == [3]  # the third request of the window was turned away, and only once:
    # its Retry-After (when the first request leaves the window) was waited out before asking again.
    assert arrivals[3] - arrivals[2] >= (arrivals[0] + window - arrivals[2]) - 0.05
    assert b.totals.cache_misses == 3 and b.totals.calls == 3


def test_a_burst_over_the_servers_limit_slows_down_together_and_every_call_is_answered_once(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPBACK_KEY", "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    answered: list[str] = []
    lock = threading.Lock()

    def responder(model, body):
        with lock:
            answered.append(body["messages"][-1]["content"])
        return "ok"

    # The client believes it may send 8 at once with no rate limit; the server allows 4 a second.
    with LoopbackServer(responder, limits=RateLimits(rpm=4, window=1.0)) as server:
        b = backend(server, tmp_path, rpm=None, tpm=None, max_in_flight=8)
        threads = [threading.Thread(target=b.respond, args=(request(i),)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        stats = server.stats()
    from incognita.common.pacing import pacer_for

    state = pacer_for(server.base_url, "m", b.settings.limits).state()
    assert sorted(answered) == sorted(f"question {i}" for i in range(12))  # each answer asked for once
    # (The server counts an answer after sending it, so its `answered` may trail the clients by one.)
    assert stats.rejected_total > 0
    assert state["throttled"] == stats.rejected_total  # every 429 slowed the shared pace
    assert state["cap"] < 8
    assert b.totals.calls == 12 and b.totals.cache_misses == 12


def test_a_critical_backends_calls_hold_the_reserve_back_from_other_calls(tmp_path, monkeypatch):
    """The harness builds the longest-expected cells' backends with `critical`; their calls make the
    shared pace hold its reserve back from every other caller for a window."""
    from incognita.common.pacing import pacer_for

    monkeypatch.setenv("LOOPBACK_KEY", "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    with LoopbackServer(lambda model, body: "ok") as server:
        other = backend(server, tmp_path)
        other.respond(request(0))
        pace = pacer_for(server.base_url, "m", other.settings.limits)
        assert pace.state()["reserve_held_for"] == 0
        backend(server, tmp_path, critical=True).respond(request(1))
        assert 55 < pace.state()["reserve_held_for"] <= 60
