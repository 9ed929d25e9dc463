"""An attempt ends at its `timeout` however the endpoint answers (issue #55, fault 5): an endpoint
that drips its answer one byte at a time answers every read in time, and the call must still give
up; and a silent endpoint costs `1 + timeout_retries` attempts, not `1 + max_retries`.

The loopback's "drip" fault sends a whole answer (status line, headers and body, about 400 bytes)
one byte every 0.05 s: about 20 s an answer, against a 1 s timeout. Without the whole-attempt
bound each attempt would wait for all of it and the call would succeed.
"""

from __future__ import annotations

import httpx
import pytest

from incognita.common.backends import deadline
from incognita.common.backends.base import BackendError, ModelRequest, Runtime, Turn, make_backend
from incognita.common.backends.entry import ModelEntry
from incognita.common.loopback import ECHO_TEXT, LoopbackServer

KEY = "sk-test-DEADLINE-0123456789abcdef"
DRIP = 0.05  # seconds between two bytes of a dripped answer
REQUEST = ModelRequest(role="agent", system="s", messages=(Turn("user", "hello"),))
FAMILIES = {"openai": ("OPENAI_API_KEY", "base_url"), "anthropic": ("ANTHROPIC_API_KEY", "root_url")}


def backend(family: str, server: LoopbackServer, monkeypatch, tmp_path, **settings):
    variable, url = FAMILIES[family]
    monkeypatch.setenv(variable, KEY)
    entry = ModelEntry(
        f"{family}:m", {"base_url": getattr(server, url), "backoff_base": 0.001, "backoff_max": 0.01, **settings}
    )
    return make_backend(entry, "agent", runtime=Runtime(cache_dir=str(tmp_path / "cache")))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_dripping_endpoint_is_given_up_at_the_attempts_timeout(family, monkeypatch, tmp_path, capsys):
    with LoopbackServer(lambda model, request: "unused", faults=lambda n, request: "drip", delay=DRIP) as server:
        b = backend(family, server, monkeypatch, tmp_path, timeout=1, max_retries=1)
        with pytest.raises(BackendError) as err:
            b.respond(REQUEST)
        assert server.requests == 2  # the first attempt and its one retry, each cut off
    assert "gave up after 2 attempts (2 timed out" in str(err.value) and "timed out (1 s" in str(err.value)
    assert KEY not in str(err.value) + capsys.readouterr().err
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]  # no entry, no lock file left


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_bound_leaves_a_prompt_answer_alone(family, monkeypatch, tmp_path):
    """The same client, a prompt endpoint: the answer arrives; the next call reuses the connection."""
    with LoopbackServer(lambda model, request: "prompt") as server:
        b = backend(family, server, monkeypatch, tmp_path, timeout=1)
        assert b.respond(REQUEST).text == "prompt"
        assert b.respond(ModelRequest(role="agent", system="s", messages=(Turn("user", "again"),))).text == "prompt"
        assert server.requests == 2


def test_a_silent_endpoint_costs_timeout_retries_attempts_not_max_retries(monkeypatch, tmp_path):
    """A held request (the loopback's "timeout" fault): each attempt ends at `timeout`, and after
    `timeout_retries` such retries the call gives up, whatever `max_retries` still allows."""
    with LoopbackServer(lambda model, request: "unused", faults=lambda n, request: "timeout", delay=3) as server:
        b = backend("openai", server, monkeypatch, tmp_path, timeout=0.5, max_retries=6, timeout_retries=1)
        with pytest.raises(BackendError, match=r"gave up after 2 attempts \(2 timed out; timeout_retries: 1\)"):
            b.respond(REQUEST)
        assert server.requests == 2


def test_other_failures_still_use_every_retry(monkeypatch, tmp_path):
    with LoopbackServer(lambda model, request: "ok", faults={1: "timeout", 2: "500", 3: "500", 4: "500"}, delay=2) as s:
        b = backend("openai", s, monkeypatch, tmp_path, timeout=0.5, max_retries=4, timeout_retries=1)
        assert b.respond(REQUEST).text == "ok" and s.requests == 5


def test_the_transport_of_either_http_library_bounds_a_drip():
    """`http_transport` on the legacy httpx (a third protocol may use it, tests/.../test_transport.py):
    inside an attempt the drip ends at the deadline with the library's own timeout error; outside
    one, the library's per-read timeout alone applies and the drip is read to its end."""
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    with LoopbackServer(lambda model, request: "unused", faults=lambda n, request: "drip", delay=0.002) as server:
        with httpx.Client(transport=deadline.http_transport(httpx), timeout=1) as client:
            answer = client.post(f"{server.base_url}/chat/completions", json=body)
            assert answer.json()["choices"][0]["message"]["content"] == ECHO_TEXT
            with pytest.raises(httpx.ReadTimeout), deadline.attempt(0.2):
                client.post(f"{server.base_url}/chat/completions", json=body)
