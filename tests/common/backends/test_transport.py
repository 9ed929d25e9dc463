"""A third provider is one protocol module: a fake protocol defined here, registered with the
shared transport, gets the response cache, the retry on a 429, the pace and the cost without a
line of transport code of its own.

The fake speaks a wire of its own over plain httpx (its "SDK") to the loopback server's chat route:
one user message in, the assistant's text out; its errors are its own exception.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest

from incognita.common.backends import base
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
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer
from incognita.common.prices import load_prices

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
    connect=lambda key, base_url: httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}),
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
