"""A third provider is one protocol module: a fake protocol defined here, registered with the
shared transport, gets the response cache, the retry on a 429, the pace and the cost without a
line of transport code of its own.

The fake speaks a wire of its own over plain httpx (its "SDK") to the loopback server's chat route:
one user message in, the assistant's text out; its errors are its own exception.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from incognita.common.backends import base, deadline
from incognita.common.backends.base import ModelRequest, Runtime, Turn, make_backend
from incognita.common.backends.entry import ModelEntry
from incognita.common.backends.settings import TransportSettings
from incognita.common.backends.transport import (
    Failure,
    MalformedResponse,
    Protocol,
    Transport,
    classify_status,
    register_protocol,
)
from incognita.common.cache import ResponseCache
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer
from incognita.common.prices import load_prices

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-test-THIRDPROTOCOL-0123456789"
PRICES = 'version: 3\nretrieved: "2026-12-06"\nmodels:\n  m3: {input: 2.0, output: 8.0}\n'


# --------------------------------------------------------------------------- the third protocol


@dataclass(frozen=True)
class EchoSettings(TransportSettings):
    base_url_env: str = "ECHO_BASE_URL"
    api_key_env: str = "ECHO_API_KEY"
    shout: bool = False  # a setting of its own, part of the request body


class EchoHTTPError(Exception):
    def __init__(self, response: httpx.Response):
        super().__init__(response.text)
        self.response = response


def body(settings: EchoSettings, request: ModelRequest) -> dict:
    text = "\n".join(t.content or "" for t in request.messages)
    return {
        "model": settings.model,
        "messages": [{"role": "user", "content": text.upper() if settings.shout else text}],
    }


def post(client: httpx.Client, body: dict, options: dict) -> dict:
    response = client.post("/chat/completions", json=body, timeout=options["timeout"], headers=options.get("headers"))
    if response.status_code != 200:
        raise EchoHTTPError(response)
    try:
        data = response.json()
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError) as exc:
        raise MalformedResponse(f"not an echo answer ({type(exc).__name__})") from None
    usage = data["usage"]
    return {
        "message": {"content": message["content"]},
        "finish_reason": data["choices"][0]["finish_reason"],
        "served_model": data["model"],
        "usage": {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "cached_tokens": 0,
            "reasoning_tokens": 0,
        },
    }


def classify(exc: Exception) -> Failure:
    if isinstance(exc, EchoHTTPError):
        return classify_status(exc.response.status_code, exc.response.text[:80], exc.response.headers)
    if isinstance(exc, MalformedResponse):
        return Failure("retry", str(exc), None, "malformed")
    return Failure("fail", f"{type(exc).__name__}: {exc}", None, "other")


ECHO = Protocol(
    family="echo3",
    settings=EchoSettings,
    connect=lambda key, base_url: httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {key}"}, transport=deadline.http_transport(httpx)
    ),
    body=body,
    post=post,
    classify=classify,
)


@pytest.fixture
def echo(monkeypatch, tmp_path):
    """The protocol registered for this test only; the server's answer counted."""
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    monkeypatch.setattr(base, "_SETTINGS_CHECKS", dict(base._SETTINGS_CHECKS))
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    (tmp_path / "prices.yaml").write_text(PRICES)
    register_protocol(ECHO)
    seen: list[dict] = []

    def responder(model, request):
        seen.append(request)
        return f"echo: {request['messages'][-1]['content']}"

    with LoopbackServer(responder, faults={1: "429", 3: "500"}) as server:
        yield server, seen


def test_a_third_protocol_gets_the_cache_the_retries_and_the_cost(echo, tmp_path, capsys):
    server, seen = echo
    entry = ModelEntry.parse(
        {"spec": "echo3:m3", "base_url": server.base_url, "shout": True, "backoff_base": 0.001, "backoff_max": 0.01}
    )
    runtime = Runtime(cache_dir=str(tmp_path / "cache"), prices=str(tmp_path / "prices.yaml"))
    backend = make_backend(entry, "agent", runtime=runtime)
    assert isinstance(backend, Transport) and backend.spec == "echo3:m3"
    request = ModelRequest(role="agent", system="", messages=(Turn("user", "hello"),))

    first = backend.respond(request)  # a 429 (Retry-After: 0) first: waited out in the pace, then answered
    assert first.text == "echo: HELLO" and server.requests == 2
    assert (first.usage.cache_misses, first.usage.cache_hits) == (1, 0)
    prices = load_prices(tmp_path / "prices.yaml")
    expected = prices.cost("m3", first.usage.prompt_tokens, first.usage.completion_tokens)
    assert first.usage.cost_usd == pytest.approx(expected) and expected > 0

    again = make_backend(entry, "agent", runtime=runtime).respond(request)  # another backend, the same cache
    assert server.requests == 2 and again.text == first.text
    assert (again.usage.cache_hits, again.usage.cost_usd) == (1, first.usage.cost_usd)

    other = backend.respond(ModelRequest(role="agent", system="", messages=(Turn("user", "bye"),)))
    assert other.text == "echo: BYE" and server.requests == 4  # a 500, retried with backoff
    assert backend.totals.calls == 2 and backend.totals.cost_usd == pytest.approx(
        first.usage.cost_usd + other.usage.cost_usd
    )
    assert [b["messages"][0]["content"] for b in seen] == ["HELLO", "BYE"]
    log = capsys.readouterr().err
    assert "HTTP 429" in log and "every call to the endpoint waits" in log and "retry 1/6" in log
    assert KEY not in log


def test_its_settings_are_checked_like_any_family(echo):
    base.check_settings(ModelEntry("echo3:m3", {"shout": True}), "models.e")
    with pytest.raises(InputError, match="models.e: unknown setting\\(s\\) temperature"):
        base.check_settings(ModelEntry("echo3:m3", {"temperature": 0}), "models.e")
    with pytest.raises(InputError, match="models.e: timeout: expected a positive number"):
        base.check_settings(ModelEntry("echo3:m3", {"timeout": 0}), "models.e")


# --------------------------------------------------------------------------- one request, one payment

# A caller in another process: builds the backend (the SDK imported before it says it is ready),
# waits for the go file, sends REQUEST once, prints (text, cache hits).
CHILD = """
import json, sys, time
from pathlib import Path
import openai
from incognita.common.backends.base import ModelRequest, Runtime, Turn, make_backend
from incognita.common.backends.entry import ModelEntry
entry, cache, ready, go = json.loads(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
backend = make_backend(ModelEntry.parse(entry), "agent", runtime=Runtime(cache_dir=cache))
ready.touch()
while not go.exists():
    time.sleep(0.01)
answer = backend.respond(ModelRequest(role="agent", system="s", messages=(Turn("user", "the same"),)))
print(json.dumps([answer.text, answer.usage.cache_hits]))
"""
SAME = ModelRequest(role="agent", system="s", messages=(Turn("user", "the same"),))


class HeldAnswers:
    """A counting responder that holds each answer until `expected` requests have arrived or
    `grace` seconds have passed: identical requests that are all sent overlap for sure."""

    def __init__(self, expected: int, grace: float = 3.0):
        self.expected, self.grace = expected, grace
        self.count = 0
        self.lock = threading.Lock()
        self.all_here = threading.Event()

    def __call__(self, model, request):
        with self.lock:
            self.count += 1
            if self.count >= self.expected:
                self.all_here.set()
        self.all_here.wait(self.grace)
        return f"answer {self.count}"


def test_identical_requests_in_flight_are_paid_once_across_threads_and_processes(tmp_path, monkeypatch):
    """Two threads of this process and two other processes send one request at once: one of them
    is sent, the three others wait for its answer and read it from the cache."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    held = HeldAnswers(expected=4)
    with LoopbackServer(held) as server:
        settings = {"spec": "openai:m", "base_url": server.base_url, "temperature": 0}
        cache = tmp_path / "cache"
        go = tmp_path / "go"
        children = []
        for i in range(2):
            ready = tmp_path / f"ready{i}"
            args = [sys.executable, "-c", CHILD, json.dumps(settings), str(cache), str(ready), str(go)]
            children.append((subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True), ready))
        for child, ready in children:
            while not ready.exists():
                assert child.poll() is None, "a caller process ended before it was ready"
                time.sleep(0.01)
        backend = make_backend(ModelEntry.parse(settings), "agent", runtime=Runtime(cache_dir=str(cache)))
        start = threading.Barrier(3)
        answers: list = []

        def call() -> None:
            start.wait()
            answer = backend.respond(SAME)
            answers.append([answer.text, answer.usage.cache_hits])

        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        go.touch()
        start.wait()
        for t in threads:
            t.join()
        for child, _ in children:
            out, _ = child.communicate(timeout=60)
            assert child.returncode == 0
            answers.append(json.loads(out))
        assert server.requests == 1 and held.count == 1  # one paid call
    assert sorted(answers) == [["answer 1", 0]] + [["answer 1", 1]] * 3
    assert not list(cache.rglob("*.lock"))  # a key's lock file lives only while it is claimed


def test_the_cache_is_consulted_again_when_the_pace_admits_the_call(tmp_path, monkeypatch):
    """Without the key's claim (as on a file system whose locks do nothing), two identical calls
    both miss and queue in the pace (one call in flight at a time); the second, admitted once the
    first's answer is written, finds it there and sends nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(ResponseCache, "claim", lambda self, key: contextlib.nullcontext())
    held = HeldAnswers(expected=2, grace=0.5)
    with LoopbackServer(held) as server:
        settings = {"spec": "openai:m", "base_url": server.base_url, "temperature": 0, "max_in_flight": 1}
        backend = make_backend(ModelEntry.parse(settings), "agent", runtime=Runtime(cache_dir=str(tmp_path)))
        start = threading.Barrier(2)
        hits: list[int] = []

        def call() -> None:
            start.wait()
            hits.append(backend.respond(SAME).usage.cache_hits)

        threads = [threading.Thread(target=call) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert server.requests == 1 and sorted(hits) == [0, 1]


def test_a_claim_holds_off_other_threads_and_leaves_no_file(tmp_path):
    cache = ResponseCache(tmp_path)
    key = "ab" + "0" * 62
    order: list[str] = []
    started = threading.Event()

    def second() -> None:
        started.set()
        with cache.claim(key):
            order.append("second")

    with cache.claim(key):
        other = threading.Thread(target=second)
        other.start()
        started.wait()
        other.join(0.3)  # it waits for the claim
        order.append("first")
    other.join()
    assert order == ["first", "second"] and not list(tmp_path.rglob("*.lock"))
