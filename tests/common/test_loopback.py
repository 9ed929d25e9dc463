"""The loopback server's provider-like modes: seeded latency and OpenAI-style rate limits."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import openai
import pytest

from incognita.common.loopback import Latency, LoopbackServer, RateLimits, admission_tokens, format_duration

MESSAGES = [{"role": "user", "content": "hello there"}]
RATE_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-tokens",
)


def post(server: LoopbackServer, body: dict | None = None) -> tuple[int, dict, dict]:
    """One chat request with the standard library: (status, headers, body)."""
    data = json.dumps(body or {"model": "m", "messages": MESSAGES}).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, dict(exc.headers), json.loads(exc.read())


class Counting:
    """A responder that counts its calls."""

    def __init__(self, reply="ok"):
        self.reply = reply
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, model, request):
        with self.lock:
            self.calls += 1
        return self.reply


# ---------------------------------------------------------------------- latency
def test_latency_draw_is_a_function_of_seed_and_request():
    latency = Latency(median=2.0, sigma=0.5)
    a = {"model": "m", "messages": MESSAGES, "temperature": 0}
    reordered = {"temperature": 0, "messages": MESSAGES, "model": "m"}  # same request, other key order
    other = {"model": "m", "messages": [{"role": "user", "content": "something else"}]}
    assert latency.draw(a, 0, seed=1) == latency.draw(reordered, 0, seed=1)
    assert latency.draw(a, 0, seed=1) != latency.draw(a, 0, seed=2)
    assert latency.draw(a, 0, seed=1) != latency.draw(other, 0, seed=1)
    assert Latency(median=0.7, sigma=0).draw(a, 0) == 0.7
    assert Latency(median=0.7, sigma=0, per_output_token=0.01).draw(a, 30) == pytest.approx(1.0)
    draws = sorted(latency.draw({"n": i}, 0) for i in range(401))
    assert 1.6 < draws[200] < 2.5  # the median of many draws is near the median asked for


def test_latency_is_repeatable_across_servers_and_arrival_orders():
    bodies = [{"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]} for i in range(4)]
    latency = Latency(median=0.02, sigma=0.5)
    delays = []
    for order in (bodies, bodies[::-1]):
        with LoopbackServer(Counting(), latency=latency, seed=7) as server:
            for body in order:
                assert post(server, body)[0] == 200
            delays.append({entry.n: entry.latency for entry in server.log})
    forward, backward = delays
    assert all(d > 0 for d in forward.values())
    assert [forward[i + 1] for i in range(4)] == [backward[4 - i] for i in range(4)]


def test_sigma_zero_holds_the_answer_for_the_median_plus_output_tokens():
    reply = "x" * 400  # 100 completion tokens at four characters a token
    with LoopbackServer(Counting(reply), latency=Latency(median=0.05, sigma=0)) as server:
        started = time.monotonic()
        status, _, body = post(server)
        plain = time.monotonic() - started
    assert status == 200 and body["usage"]["completion_tokens"] == 100
    assert server.log[0].latency == 0.05
    assert 0.05 <= plain < 0.5
    with LoopbackServer(Counting(reply), latency=Latency(median=0.05, sigma=0, per_output_token=0.002)) as server:
        started = time.monotonic()
        post(server)
        slow = time.monotonic() - started
    assert server.log[0].latency == pytest.approx(0.25)
    assert 0.25 <= slow < 0.7


# ---------------------------------------------------------------------- rate limits
def test_rpm_rejects_the_request_over_the_limit_without_asking_the_responder():
    responder = Counting()
    with LoopbackServer(responder, limits=RateLimits(rpm=3, tpm=10_000)) as server:
        answers = [post(server) for _ in range(4)]
    assert [status for status, _, _ in answers[:3]] == [200, 200, 200]
    assert [h["x-ratelimit-remaining-requests"] for _, h, _ in answers[:3]] == ["2", "1", "0"]
    assert all(h["x-ratelimit-limit-requests"] == "3" for _, h, _ in answers)
    status, headers, body = answers[3]
    assert status == 429 and responder.calls == 3
    assert int(headers["Retry-After"]) >= 1 and 59 <= int(headers["Retry-After"]) <= 60
    assert 0 < int(headers["retry-after-ms"]) <= 60_000
    assert all(name in headers for name in RATE_HEADERS)
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert body["error"]["type"] == "rate_limit_error" and body["error"]["code"] == "rate_limit_exceeded"
    assert "requests per min" in body["error"]["message"]
    assert [(e.fault, e.limit) for e in server.log] == [(None, None)] * 3 + [("rate_limit", "requests")]
    stats = server.stats()
    assert stats.answered == 3 and stats.rejected["requests"] == 1 and stats.rejected_total == 1
    assert stats.first_answer is not None and stats.last_answer >= stats.first_answer


def test_the_window_rolls():
    with LoopbackServer(Counting(), limits=RateLimits(rpm=1, window=0.2)) as server:
        assert post(server)[0] == 200
        status, headers, _ = post(server)
        assert status == 429 and headers["Retry-After"] == "1"  # at least a second, though the window is shorter
        assert int(headers["retry-after-ms"]) <= 200
        time.sleep(0.25)
        assert post(server)[0] == 200


def test_tpm_counts_the_prompt_and_the_output_cap():
    body = {"model": "m", "messages": MESSAGES, "max_tokens": 60}
    need = admission_tokens(body)
    assert need == 60 + len(json.dumps(MESSAGES)) // 4
    responder = Counting()
    with LoopbackServer(responder, limits=RateLimits(tpm=100)) as server:
        status, headers, _ = post(server, body)
        assert status == 200 and headers["x-ratelimit-remaining-tokens"] == str(100 - need)
        status, headers, reply = post(server, body)
        assert status == 429 and responder.calls == 1
        assert "tokens per min" in reply["error"]["message"] and reply["error"]["code"] == "rate_limit_exceeded"
        assert int(headers["Retry-After"]) >= 1 and headers["x-ratelimit-limit-tokens"] == "100"
        # Without the cap the same prompt fits in what is left.
        assert post(server, {"model": "m", "messages": MESSAGES})[0] == 200
    assert server.log[1].limit == "tokens"
    assert server.stats().tokens_admitted == need + admission_tokens({"messages": MESSAGES})


def test_max_concurrent_rejects_requests_beyond_those_being_answered():
    responder = Counting()
    limits = RateLimits(max_concurrent=2)
    with LoopbackServer(responder, latency=Latency(median=0.3, sigma=0), limits=limits) as server:
        barrier = threading.Barrier(4)
        statuses: list[int] = []

        def call(i):
            barrier.wait()
            statuses.append(post(server, {"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]})[0])

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(statuses) == [200, 200, 429, 429]
    assert responder.calls == 2
    stats = server.stats()
    assert stats.answered == 2 and stats.rejected == {"requests": 0, "tokens": 0, "concurrency": 2}
    assert stats.peak_concurrent == 2


def test_the_openai_client_sees_a_rate_limit_error():
    with LoopbackServer(Counting(), limits=RateLimits(rpm=1)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        first = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
        assert first.headers["x-ratelimit-remaining-requests"] == "0"
        assert first.parse().choices[0].message.content == "ok"
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="m", messages=MESSAGES)
    assert int(caught.value.response.headers["retry-after"]) >= 1
    assert caught.value.code == "rate_limit_exceeded"


def test_faults_come_before_the_limits():
    with LoopbackServer(Counting(), faults={1: "500"}, limits=RateLimits(rpm=1)) as server:
        assert post(server)[0] == 500
        assert post(server)[0] == 200  # the faulted request took no room in the window
    assert [e.fault for e in server.log] == ["500", None]


def test_format_duration():
    assert [format_duration(s) for s in (0, 0.02, 1, 8.64, 360, 3725.5)] == [
        "0s",
        "20ms",
        "1s",
        "8.64s",
        "6m0s",
        "1h2m5.5s",
    ]


def test_standalone_server_prints_its_url_and_echoes():
    command = [sys.executable, "-m", "incognita.common.loopback", "--port", "0", "--median", "0.01", "--rpm", "5"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
            client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
            reply = client.chat.completions.create(model="m", messages=MESSAGES)
            assert reply.choices[0].message.content
        finally:
            proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert json.loads(err.strip().splitlines()[-1])["answered"] == 1


def test_with_headers_hands_the_callers_headers_to_the_responder():
    seen = []

    def responder(model, request, headers):
        seen.append(headers.get("x-incognita-cell"))
        return "ok"

    with LoopbackServer(responder, with_headers=True) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], extra_headers={"X-Incognita-Cell": '{"a": 1}'}
        )
    assert seen == ['{"a": 1}']
