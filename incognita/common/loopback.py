"""A small HTTP server on 127.0.0.1 that speaks OpenAI's and Anthropic's APIs, for tests and benchmarks.

It implements `POST /v1/chat/completions` (also without the `/v1` prefix), Anthropic's `POST
/v1/messages`, and `GET /v1/models`, counts every request it receives, and answers from a
responder callable `responder(model, request_json) -> reply`. A reply is one of:

- a string: the assistant's text;
- a complete body of the route's protocol (a chat.completion with `choices`, a Messages API
  `message`), sent as it is;
- a dict with `content` and/or `tool_calls` (each `{"id", "name", "arguments"}`, arguments
  a JSON string or any JSON value) and optionally `usage` and `finish_reason`.

The route's protocol (incognita.common.wire_shapes) wraps the reply and shapes error bodies.
Usage the responder does not give is counted deterministically from the text sizes (about
four characters a token), so costs are testable. Faults can be injected on a schedule:
`faults` maps a 1-based request number to a fault, or is a callable `(n, request_json) ->
fault | None`. Faults: a three-digit HTTP status ("429", "500", "529", "401", ...) answered
with the protocol's error body (429 and 529 carry `Retry-After: 0`; 401 echoes the caller's
credential, as some servers do, so that scrubbing can be tested), "timeout" (hold the request for
`delay` seconds, then drop it), "drip" (a whole answer, the fixed text "loopback echo", sent
one byte every `delay` seconds, status line and headers included: every read is answered in
time and the answer still takes minutes), "malformed" (status 200 with a body that is not JSON),
"incomplete" (200, JSON without `choices`), "disconnect" (close the connection at once). A
faulted request never reaches the responder, so a stateful responder sees each request
the client finally gets answered exactly once.

Two optional modes make the server behave like a real provider under load, for benchmarks:

- `latency=Latency(median, sigma, per_output_token)`: every answered call waits a
  log-normal time (plus a cost per completion token) before its reply is sent. The draw is
  seeded by `seed` and a hash of the request, so the same request always takes the same
  time, whatever order concurrent clients arrive in.
- `limits=RateLimits(rpm, tpm, max_concurrent)`: OpenAI-style rolling one-minute windows of
  requests and tokens (prompt estimate plus `max_tokens`, counted at admission) and a cap on
  requests being answered at once. A request over a limit gets a 429 with OpenAI's error
  body, `Retry-After`/`retry-after-ms` and `x-ratelimit-*` headers (successes carry the
  `x-ratelimit-*` headers too), is logged with `fault="rate_limit"`, and never reaches the
  responder. `server.stats()` reports what was answered and rejected.

With `with_headers=True` the responder is called as `responder(model, request_json, headers)`,
headers a dict with lower-cased names: a responder that answers with scripted twins reads the
cell a request belongs to from the `X-Incognita-Cell` header the openai backend sends with
`send_cell` (bench/throughput.py).

Faults are decided first: a faulted request is neither rate-limited nor delayed. Run
`python -m incognita.common.loopback --help` for a standalone server that answers every
request with a fixed text, for quick manual checks of a client against these modes.

The interface knows nothing about incognita's backends, so any OpenAI-compatible client
(the `openai` package, litellm) can be pointed at it; `incognita.common.backends.openai` has the
conversions that turn a request back into a ModelRequest for scripted responders.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from incognita.common.wire_shapes import OPENAI, WireProtocol, protocol_for

Responder = Callable[..., Any]  # (model, request_json) or, with_headers, (model, request_json, headers)
FaultPlan = dict[int, str] | Callable[[int, dict], str | None] | None
RATE_LIMIT = "rate_limit"  # the `fault` of a request the limits turned away
CONCURRENCY_RETRY = 1.0  # seconds to suggest when max_concurrent binds: no window tells when a slot frees
ECHO_TEXT = "loopback echo"


@dataclass
class RequestLog:
    """One chat request as the server saw it.

    `limit` names the limit that turned it away ("requests", "tokens", "concurrency"; its
    fault is then "rate_limit"); `latency` is the time its answer was held back, in seconds.
    """

    n: int
    model: str
    fault: str | None
    authorization: str = field(repr=False, default="")
    limit: str | None = None
    latency: float = 0.0


@dataclass(frozen=True)
class Latency:
    """A provider's response time: log-normal around `median` seconds, plus a cost per output token."""

    median: float = 2.0
    sigma: float = 0.5
    per_output_token: float = 0.0

    def __post_init__(self) -> None:
        if self.median <= 0 or self.sigma < 0 or self.per_output_token < 0:
            raise ValueError(f"bad latency {self}: median must be > 0, sigma and per_output_token >= 0")

    def draw(self, request: dict, completion_tokens: int, seed: int = 0) -> float:
        """Seconds to hold the answer to `request`: a function of the seed and the request alone."""
        # Seeding from the request's content (not a shared generator) keeps delays repeatable
        # when concurrent clients arrive in a different order from run to run.
        canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        rng = random.Random(f"{seed}:{hashlib.sha256(canonical.encode()).hexdigest()}")
        base = self.median if self.sigma == 0 else rng.lognormvariate(math.log(self.median), self.sigma)
        return base + self.per_output_token * completion_tokens


@dataclass(frozen=True)
class RateLimits:
    """OpenAI-style limits. `window` is the rolling window in seconds: a minute, shorter in tests."""

    rpm: int | None = None
    tpm: int | None = None
    max_concurrent: int | None = None
    window: float = 60.0

    def __post_init__(self) -> None:
        if any(v is not None and v < 1 for v in (self.rpm, self.tpm, self.max_concurrent)) or self.window <= 0:
            raise ValueError(f"bad rate limits {self}: limits must be >= 1 and the window > 0")


@dataclass(frozen=True)
class LoopbackStats:
    """What the server did, for a benchmark's report. Times are `time.time()` values."""

    answered: int  # chat requests answered with status 200
    rejected: dict[str, int]  # 429s from the limits, by limit: "requests", "tokens", "concurrency"
    peak_concurrent: int  # most requests being answered at once (responder and latency included)
    tokens_admitted: int  # tokens counted against tpm: prompt estimate plus max_tokens
    first_request: float | None
    first_answer: float | None
    last_answer: float | None

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    @property
    def calls_per_minute(self) -> float | None:
        """Answered calls per minute, from the first request to the last answer."""
        if not self.answered or self.first_request is None or self.last_answer is None:
            return None
        span = self.last_answer - self.first_request
        return self.answered * 60.0 / span if span > 0 else None


@dataclass
class _Admission:
    """The server's decision on one chat request."""

    entry: RequestLog
    fault: str | None
    headers: dict[str, str]  # x-ratelimit-* (and, for a rejection, Retry-After) headers
    rejection: str | None = None  # the 429 message when a limit turned the request away


def admission_tokens(request: dict) -> int:
    """Tokens a request counts against tpm when admitted: its prompt estimate plus its output cap,
    as the client's pace estimates them (incognita.common.pacing.estimate_tokens)."""
    from incognita.common.pacing import estimate_tokens

    return estimate_tokens(request)


def format_duration(seconds: float) -> str:
    """A duration the way OpenAI's x-ratelimit-reset-* headers write it: "20ms", "1s", "8.64s", "6m0s"."""
    ms = max(0, math.ceil(seconds * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


class LoopbackServer:
    """Start with `with LoopbackServer(responder) as server:`; `server.base_url` ends in /v1 (what
    OpenAI clients take), `server.root_url` does not (what Anthropic's client takes)."""

    def __init__(
        self,
        responder: Responder,
        faults: FaultPlan = None,
        delay: float = 1.0,
        *,
        latency: Latency | None = None,
        limits: RateLimits | None = None,
        seed: int = 0,
        port: int = 0,
        with_headers: bool = False,
    ):
        self.responder = responder
        self.with_headers = with_headers
        self.faults = faults
        self.delay = delay
        self.latency = latency
        self.limits = limits
        self.seed = seed
        self.log: list[RequestLog] = []
        # One lock guards the log, the windows and the counters.
        self._lock = threading.Lock()
        self._clock = time.monotonic  # the windows' clock: immune to wall-clock jumps
        self._request_times: deque[float] = deque()
        self._token_times: deque[tuple[float, int]] = deque()
        self._tokens_in_window = 0
        self._in_flight = 0
        self._peak = 0
        self._answered = 0
        self._rejected = {"requests": 0, "tokens": 0, "concurrency": 0}
        self._tokens_admitted = 0
        self._first_request: float | None = None
        self._first_answer: float | None = None
        self._last_answer: float | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback", daemon=True
        )

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> int:
        """Chat requests received so far, faulted ones included."""
        with self._lock:
            return len(self.log)

    def stats(self) -> LoopbackStats:
        with self._lock:
            return LoopbackStats(
                answered=self._answered,
                rejected=dict(self._rejected),
                peak_concurrent=self._peak,
                tokens_admitted=self._tokens_admitted,
                first_request=self._first_request,
                first_answer=self._first_answer,
                last_answer=self._last_answer,
            )

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ requests
    def _admit(self, request: dict, authorization: str) -> _Admission:
        with self._lock:
            n = len(self.log) + 1
            if self._first_request is None:
                self._first_request = time.time()
            plan = self.faults
            fault = plan(n, request) if callable(plan) else (plan or {}).get(n)
            entry = RequestLog(n, str(request.get("model", "")), fault, authorization)
            self.log.append(entry)
            admission = _Admission(entry, fault, {})
            if fault is None:
                self._limit(admission, request)
            if admission.rejection is None and fault is None:
                self._in_flight += 1
                self._peak = max(self._peak, self._in_flight)
        return admission

    def _limit(self, admission: _Admission, request: dict) -> None:
        """Apply the rate limits to a request (lock held): admit it into the windows, or reject it."""
        limits = self.limits
        if limits is None:
            return
        now = self._clock()
        horizon = now - limits.window
        while self._request_times and self._request_times[0] <= horizon:
            self._request_times.popleft()
        while self._token_times and self._token_times[0][0] <= horizon:
            self._tokens_in_window -= self._token_times.popleft()[1]
        need = admission_tokens(request)
        model = admission.entry.model
        limit, retry, message = None, 0.0, ""
        if limits.rpm is not None and len(self._request_times) >= limits.rpm:
            limit, retry = "requests", self._request_times[0] + limits.window - now
            message = (
                f"Rate limit reached for {model} on requests per min (RPM): Limit {limits.rpm}, "
                f"Used {len(self._request_times)}, Requested 1."
            )
        elif limits.tpm is not None and self._tokens_in_window + need > limits.tpm:
            limit, retry = "tokens", self._token_retry(need, now)
            message = (
                f"Rate limit reached for {model} on tokens per min (TPM): Limit {limits.tpm}, "
                f"Used {self._tokens_in_window}, Requested {need}."
            )
            if need > limits.tpm:
                message = (
                    f"Request too large for {model} on tokens per min (TPM): Limit {limits.tpm}, Requested {need}."
                )
        elif limits.max_concurrent is not None and self._in_flight >= limits.max_concurrent:
            limit, retry = "concurrency", CONCURRENCY_RETRY
            message = (
                f"Rate limit reached for {model} on concurrent requests: Limit {limits.max_concurrent}, "
                f"Used {self._in_flight}, Requested 1."
            )
        if limit is None:
            self._request_times.append(now)
            self._token_times.append((now, need))
            self._tokens_in_window += need
            self._tokens_admitted += need
        else:
            self._rejected[limit] += 1
            admission.entry.fault, admission.entry.limit = RATE_LIMIT, limit
            admission.rejection = f"{message} Please try again in {format_duration(retry)}."
            admission.headers.update(
                {"Retry-After": str(max(1, math.ceil(retry))), "retry-after-ms": str(max(1, math.ceil(retry * 1000)))}
            )
        admission.headers.update(self._limit_headers(now))

    def _token_retry(self, need: int, now: float) -> float:
        """Seconds until enough admitted tokens leave the window for `need` more to fit (lock held)."""
        assert self.limits is not None and self.limits.tpm is not None
        excess = self._tokens_in_window + need - self.limits.tpm
        freed, leaves = 0, now
        for t, tokens in self._token_times:
            freed, leaves = freed + tokens, t + self.limits.window
            if freed >= excess:
                break
        # A request larger than the whole limit never fits; the window emptying is the best hint.
        return max(0.0, leaves - now)

    def _limit_headers(self, now: float) -> dict[str, str]:
        """OpenAI's x-ratelimit-* headers for the windows as they stand (lock held)."""
        limits = self.limits
        assert limits is not None
        headers: dict[str, str] = {}
        # reset-*: when the oldest entry leaves the window, i.e. when the remaining count next rises.
        if limits.rpm is not None:
            reset = self._request_times[0] + limits.window - now if self._request_times else 0.0
            headers["x-ratelimit-limit-requests"] = str(limits.rpm)
            headers["x-ratelimit-remaining-requests"] = str(max(0, limits.rpm - len(self._request_times)))
            headers["x-ratelimit-reset-requests"] = format_duration(reset)
        if limits.tpm is not None:
            reset = self._token_times[0][0] + limits.window - now if self._token_times else 0.0
            headers["x-ratelimit-limit-tokens"] = str(limits.tpm)
            headers["x-ratelimit-remaining-tokens"] = str(max(0, limits.tpm - self._tokens_in_window))
            headers["x-ratelimit-reset-tokens"] = format_duration(reset)
        return headers

    def _finish(self, answered: bool) -> None:
        with self._lock:
            self._in_flight -= 1
            if answered:
                self._answered += 1
                self._last_answer = time.time()
                if self._first_answer is None:
                    self._first_answer = self._last_answer

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in one segment, without Nagle: otherwise delayed ACKs add ~40 ms a call.
            disable_nagle_algorithm = True
            wbufsize = 1 << 16

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(200, {"object": "list", "data": []})
                else:
                    self._send(404, OPENAI.error(404, f"no route {self.path}"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                protocol = protocol_for(self.path)
                if protocol is None:
                    self._send(404, OPENAI.error(404, f"no route {self.path}"))
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, protocol.error(400, "request body is not JSON"))
                    return
                credential = self.headers.get("Authorization") or self.headers.get("X-Api-Key") or ""
                admission = server._admit(request, credential)
                if admission.fault and self._fault(admission.fault, protocol, request, admission.entry.n):
                    return
                if admission.rejection is not None:
                    self._send(429, protocol.rate_limited(admission.rejection), admission.headers)
                    return
                answered = False
                try:
                    answered = self._answer(request, admission, protocol)
                finally:
                    server._finish(answered)

            def _answer(self, request: dict, admission: _Admission, protocol: WireProtocol) -> bool:
                """Ask the responder, hold the reply for the drawn latency, send it; True when it was a 200."""
                model = str(request.get("model", ""))
                try:
                    if server.with_headers:  # the caller's headers, names lower-cased (an X-Incognita-Cell, say)
                        headers = {k.lower(): v for k, v in self.headers.items()}
                        reply = server.responder(model, request, headers)
                    else:
                        reply = server.responder(model, request)
                    body = protocol.success(model, request, reply, admission.entry.n)
                except Exception as exc:  # noqa: BLE001 -- a broken responder is a server error, not a hung client
                    self._send(500, protocol.error(500, f"responder failed: {type(exc).__name__}: {exc}"))
                    return False
                if server.latency is not None:
                    wait = server.latency.draw(request, protocol.output_tokens(body), server.seed)
                    admission.entry.latency = wait
                    time.sleep(wait)  # only this request's thread waits: concurrent calls overlap
                self._send(200, body, admission.headers)
                return True

            def _fault(self, fault: str, protocol: WireProtocol, request: dict, n: int) -> bool:
                """Act out a fault; True when the request is finished."""
                if re.fullmatch(r"\d{3}", fault):
                    status = int(fault)
                    message = f"injected {status}"
                    if status == 401:  # echo the credential the way some servers do, to test scrubbing
                        credential = self.headers.get("Authorization") or self.headers.get("X-Api-Key") or ""
                        message = f"Incorrect API key provided: {credential}"
                    headers = {"Retry-After": "0"} if status in (429, 529) else {}
                    self._send(status, protocol.error(status, message), headers)
                    return True
                if fault == "timeout":
                    # Hold the request past the client's timeout, then drop it: the responder never sees
                    # it, so a stateful scripted responder stays in step with the client's retries.
                    time.sleep(server.delay)
                    self.close_connection = True
                    return True
                if fault == "drip":
                    body = protocol.success(str(request.get("model", "")), request, ECHO_TEXT, n)
                    self._drip(json.dumps(body).encode())
                    return True
                if fault == "malformed":
                    self._send_raw(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ')
                    return True
                if fault == "incomplete":
                    self._send(200, {"id": "chatcmpl-incomplete", "object": "chat.completion"})
                    return True
                if fault == "disconnect":
                    self.close_connection = True
                    self.connection.close()
                    return True
                raise ValueError(f"unknown fault {fault!r}")

            def _drip(self, data: bytes) -> None:
                """A 200 with `data`, written one byte every `delay` seconds until done or the client leaves."""
                head = f"{self.protocol_version} 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                raw = (head + f"Content-Length: {len(data)}\r\n\r\n").encode() + data
                self.close_connection = True
                try:
                    for i in range(len(raw)):
                        self.connection.sendall(raw[i : i + 1])  # past the buffered wfile: nothing left to flush
                        time.sleep(server.delay)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the answer

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                self._send_raw(status, json.dumps(body).encode(), headers)

            def _send_raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left; nothing to answer

        return Handler


# ---------------------------------------------------------------------- standalone
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m incognita.common.loopback",
        description="Serve the loopback on 127.0.0.1 until killed; the first stdout line is its base URL.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free one)")
    parser.add_argument(
        "--median", type=float, help="median latency of an answer, seconds (default 2 if any latency option is given)"
    )
    parser.add_argument("--sigma", type=float, help="log-normal sigma of the latency (default 0.5)")
    parser.add_argument("--per-output-token", type=float, help="extra seconds per completion token (default 0)")
    parser.add_argument("--rpm", type=int, help="requests per window")
    parser.add_argument("--tpm", type=int, help="tokens per window (prompt estimate + max_tokens)")
    parser.add_argument("--max-concurrent", type=int, help="requests answered at once")
    parser.add_argument("--window", type=float, default=60.0, help="rate-limit window, seconds (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="latency seed")
    parser.add_argument(
        "--fault", help="inject this fault into every request (e.g. drip, timeout, 500; see the module's help)"
    )
    parser.add_argument(
        "--delay", type=float, default=1.0, help="seconds a timeout fault holds, or between two bytes of a drip"
    )
    parser.add_argument(
        "--echo", action="store_true", help=f"answer every request with {ECHO_TEXT!r} (the only responder, the default)"
    )
    args = parser.parse_args(argv)
    latency = None
    if any(v is not None for v in (args.median, args.sigma, args.per_output_token)):
        default = Latency()
        latency = Latency(
            median=default.median if args.median is None else args.median,
            sigma=default.sigma if args.sigma is None else args.sigma,
            per_output_token=default.per_output_token if args.per_output_token is None else args.per_output_token,
        )
    limits = None
    if any(v is not None for v in (args.rpm, args.tpm, args.max_concurrent)):
        limits = RateLimits(rpm=args.rpm, tpm=args.tpm, max_concurrent=args.max_concurrent, window=args.window)

    server = LoopbackServer(
        lambda model, request: ECHO_TEXT,
        faults=(lambda n, request: args.fault) if args.fault else None,
        delay=args.delay,
        latency=latency,
        limits=limits,
        seed=args.seed,
        port=args.port,
    )
    stop = threading.Event()
    # SIGTERM as well as Ctrl-C: shut down cleanly and leave the stats on stderr.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(server.base_url, flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    stats = server.stats()
    print(json.dumps({**stats.__dict__, "calls_per_minute": stats.calls_per_minute}), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
