"""The transport every API family shares: cache, retries, pace, usage and cost, progress, timeouts.

Who uses it: each provider's protocol module (`openai.py`, `anthropic.py`) describes its wire
protocol as a `Protocol` and calls `register_protocol` once; `make` then builds a `Transport` for
every `<family>:<model>` entry (through `backends.base.make_backend`). A protocol only knows how to
turn a ModelRequest into its request body, send it with its official SDK, read the answer, its
usage and its errors; everything else is here, the same for every provider:

- every call goes through the response cache (incognita.common.cache), keyed by the body the
  protocol built (and the trial's seed unless the settings are deterministic); a hit is answered
  without a key, a client or the network;
- a miss claims its key (a lock per key across threads and processes), so that an identical
  request already in flight is answered first and becomes a hit; then it takes its place in the
  endpoint's shared pace (incognita.common.pacing), looks in the cache once more when admitted,
  and is sent with the SDK's client (its own retries off, so that one loop here owns them), each
  attempt bounded as a whole by `timeout` (incognita.common.backends.deadline): rate limits wait
  in the pace for Retry-After; server errors, timeouts, dropped connections and malformed bodies
  are retried with exponential backoff and jitter (timed-out attempts at most `timeout_retries`
  times); after the last attempt the call raises BackendError, which ends the episode as an
  error record; a configuration error (no key, bad key, unknown model, spent quota) raises
  BackendConfigError, which stops the command;
- the answer is cached in one shape for every protocol (`Reply` below: the message with OpenAI's
  `content` and `tool_calls`, the finish reason, the served model, the usage), priced once from
  the price table (incognita.common.prices) and counted per backend and in the progress log.

The invariant: the transport never writes a key anywhere (it is read from the environment at the
first miss and scrubbed from every error text), and nothing transport-only (timeouts, the cell
header) is ever part of a request body or its cache key.

A third provider is one protocol module: its settings class (a `settings.ChatSettings` or
`TransportSettings` subclass), the connect (on `deadline.http_transport`), body, post and
classify functions of its `Protocol`, a call to
`register_protocol`, and its name in `backends.base.FAMILIES` (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from incognita.common.backends import deadline
from incognita.common.backends.base import (
    BackendConfigError,
    BackendError,
    ModelRequest,
    ModelResponse,
    Runtime,
    ToolCall,
    Turn,
    register,
)
from incognita.common.backends.entry import ModelEntry
from incognita.common.backends.settings import TransportSettings
from incognita.common.cache import ResponseCache, request_key, resolve_dir
from incognita.common.pacing import estimate_tokens, pacer_for
from incognita.common.prices import DEFAULT_PRICES, PRICES_ENV, PriceTable, empty_table, load_prices
from incognita.common.progress import call_log
from incognita.common.usage import Usage

RETRY_STATUS = {408, 409, 425, 429}  # plus every 5xx
FATAL_STATUS = {401, 403, 404}
# A 429 does not spend the retry budget (the shared pacer waits it out), but an endpoint that answers
# nothing else is broken: give the episode up after this many.
RATE_LIMIT_ATTEMPTS = 50
CELL_HEADER = "X-Incognita-Cell"


class MalformedResponse(Exception):
    """A 2xx answer whose body is not the protocol's answer (retried like a server error)."""


class Failure(NamedTuple):
    """How a failed attempt is handled: `action` retry, fail (this episode) or fatal (the command);
    `kind` is what the progress log counts: 429, 5xx, timeout, connection, malformed, other."""

    action: str
    description: str
    retry_after: float | None
    kind: str


# A protocol's answer, as `Protocol.post` returns it and the cache keeps it:
#   {"message": {content?, refusal?, tool_calls? (OpenAI's shape)}, "finish_reason": ..., "served_model": ...,
#    "usage": {prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cache_write_tokens?}}
Reply = dict


@dataclass(frozen=True)
class Protocol:
    """What a provider's module supplies. `connect(key, base_url)` builds its SDK client (imported
    there: a cache replay never imports the SDK), with the SDK's own retries off and its HTTP
    client on `deadline.http_transport` (else `timeout` bounds each wait, not the attempt); `body(settings,
    request)` the request body, everything that can change the answer and nothing transport-only;
    `post(client, body, options)` sends it (`options`: timeout, headers) and returns the Reply;
    `classify(exc)` sorts what `post` raised into a Failure."""

    family: str
    settings: type[TransportSettings]
    connect: Callable[[str, str | None], Any]
    body: Callable[[Any, ModelRequest], dict]
    post: Callable[[Any, dict, dict], Reply]
    classify: Callable[[Exception], Failure]
    default_endpoint: str | None = None  # where the SDK goes when neither base_url nor its variable is set
    key_hint: str = ""  # added to the "variable is not set" message; {var} is the variable's name

    def endpoint(self, settings: TransportSettings) -> str | None:
        return settings.base_url or os.environ.get(settings.base_url_env) or self.default_endpoint


# --------------------------------------------------------------------------- the cached answer's shape


def parse_arguments(raw: Any) -> Any:
    """A dict when the model wrote a JSON object, else its raw text (the loop logs it as malformed)."""
    if not isinstance(raw, str):
        return raw if isinstance(raw, dict) else json.dumps(raw)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, dict) else raw


def from_message(message: dict) -> tuple[str | None, tuple[ToolCall, ...]]:
    """(text, tool calls) of a Reply's message (OpenAI's shape, whatever the protocol)."""
    calls = []
    for i, c in enumerate(message.get("tool_calls") or []):
        fn = c.get("function") or {}
        calls.append(
            ToolCall(
                id=c.get("id") or f"call_{i}",
                name=str(fn.get("name", "")),
                arguments=parse_arguments(fn.get("arguments", "")),
            )
        )
    text = message.get("content")
    if text is None and not calls and message.get("refusal"):
        text = message["refusal"]
    return text, tuple(calls)


# --------------------------------------------------------------------------- secrets and clients


def scrub(text: str, secret: str | None = None) -> str:
    """Remove a key (and anything shaped like one) from text that may end up in a record."""
    if secret:
        text = text.replace(secret, "***")
    text = re.sub(r"Bearer\s+\S+", "Bearer ***", text)
    return re.sub(r"sk-[A-Za-z0-9_\-*]{6,}", "sk-***", text)


_CLIENTS: dict[tuple, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(protocol: Protocol, settings: TransportSettings, where: str) -> tuple[Any, str]:
    """One SDK client per (family, endpoint, key) and process; returned with the key, for scrubbing."""
    base_url = protocol.endpoint(settings)
    key = os.environ.get(settings.api_key_env)
    if not key:
        hint = protocol.key_hint.format(var=settings.api_key_env)
        raise BackendConfigError(
            f"{where}: environment variable {settings.api_key_env} is not set (set it to your key{hint})"
        )
    ident = (protocol.family, base_url, settings.api_key_env, hashlib.sha256(key.encode()).hexdigest())
    with _CLIENTS_LOCK:
        if ident not in _CLIENTS:
            _CLIENTS[ident] = protocol.connect(key, base_url)
        return _CLIENTS[ident], key


def read_cell(headers: Any, family: str, needed: tuple[str, ...] = ("role",), what: str = "") -> dict:
    """The receiving end of `send_cell`: the cell in a request's headers (names lower-cased),
    checked to belong to `family` and to hold the `needed` keys; ValueError says what is wrong."""
    raw = headers.get(CELL_HEADER.lower())
    if raw is None:
        raise ValueError(f"no {CELL_HEADER} header: the model entry needs send_cell: true to be answered by twins")
    try:
        cell = json.loads(raw)
    except json.JSONDecodeError:
        raise ValueError(f"{CELL_HEADER} header is not JSON: {raw[:120]!r}") from None
    if not isinstance(cell, dict) or cell.get("family") != family or any(k not in cell for k in needed):
        what = what or f"cell of the {family} family"
        raise ValueError(f"{CELL_HEADER} header {raw[:160]!r}: not a {what} ({', '.join(needed)})")
    return cell


# --------------------------------------------------------------------------- failures


def classify_sdk_error(exc: Exception, sdk: Any) -> Failure:
    """A Failure for an SDK whose exceptions carry the `openai` package's names (APITimeoutError,
    APIConnectionError, APIStatusError with status_code, message and response): the `openai` and
    `anthropic` SDKs both do. MalformedResponse is retried; anything else fails this episode."""
    if isinstance(exc, MalformedResponse):
        return Failure("retry", str(exc), None, "malformed")
    if isinstance(exc, sdk.APITimeoutError):
        return Failure("retry", "request timed out", None, "timeout")
    if isinstance(exc, sdk.APIConnectionError):
        return Failure("retry", f"connection error ({type(exc.__cause__ or exc).__name__})", None, "connection")
    if isinstance(exc, sdk.APIStatusError):
        return classify_status(exc.status_code, exc.message, exc.response.headers, getattr(exc, "code", None))
    return Failure("fail", f"{type(exc).__name__}: {exc}", None, "other")


def classify_status(status: int, message: str, headers: Any, code: str | None = None) -> Failure:
    """A Failure for an HTTP error status, whatever the client library."""
    detail = f"HTTP {status}: {message}"
    # No amount of waiting refills a spent quota (OpenAI's 429) or credit balance (Anthropic's 400).
    if (status == 429 and code == "insufficient_quota") or (status == 400 and "credit balance" in str(message).lower()):
        return Failure("fatal", detail, None, "429" if status == 429 else "other")
    if status in RETRY_STATUS or status >= 500:  # Anthropic's 529 "overloaded" among them
        kind = "429" if status == 429 else "5xx" if status >= 500 else "other"
        return Failure("retry", detail, retry_after(headers), kind)
    return Failure("fatal" if status in FATAL_STATUS else "fail", detail, None, "other")


def retry_after(headers: Any) -> float | None:
    """Seconds a response asks the caller to wait (`retry-after-ms`, else `retry-after`), if any."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                return None
    return None


# --------------------------------------------------------------------------- the backend


class Transport:
    """One role's backend for one entry of a shared family: `respond` through the cache, the pace
    and the retry loop to the protocol, with usage, cost and progress counted."""

    def __init__(
        self,
        protocol: Protocol,
        settings: TransportSettings,
        role: str,
        cache: ResponseCache | None,
        prices: PriceTable,
        cell: dict | None = None,
        critical: bool = False,
    ):
        self.protocol = protocol
        self.settings, self.role, self.cache, self.prices = settings, role, cache, prices
        self.spec = f"{protocol.family}:{settings.model}"
        self.where = f"{self.spec} ({role})"
        self.cell = cell  # the cell this backend serves, sent only with send_cell (a loopback's twins)
        self.critical = critical  # its calls may use the pace's reserve (incognita.common.pacing.RESERVE)
        self.totals = Usage()  # this backend's calls, for roles the episode loop does not count (the judge)
        self._totals_lock = threading.Lock()  # the native harness shares a backend between its threads
        self._jitter = random.Random()

    def respond(self, request: ModelRequest, cell: dict | None = None) -> ModelResponse:
        """`cell`, when given, is the cell this call serves in place of the backend's own: the native
        stage shares one backend between runs on several threads, so its cell travels with each call."""
        started = time.monotonic()
        body = self.protocol.body(self.settings, request)
        key = request_key(body, None if self.settings.deterministic else request.seed)
        entry = self.cache.get(key) if self.cache else None
        hit = entry is not None
        if entry is None:
            entry, hit = self._answer(body, key, self.cell if cell is None else cell)
        text, calls = from_message(entry["response"]["message"])
        u = entry["usage"]
        usage = Usage(
            prompt_tokens=u["prompt_tokens"],
            completion_tokens=u["completion_tokens"],
            cost_usd=entry["cost_usd"],
            cache_hits=int(hit),
            cache_misses=int(not hit),
        )
        with self._totals_lock:
            self.totals.add(usage)
            self.totals.calls += 1
        call_log().call(
            spec=self.spec,
            role=self.role,
            hit=hit,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=0.0 if hit else usage.cost_usd,
            seconds=time.monotonic() - started,
        )
        return ModelResponse(text=text, tool_calls=calls, usage=usage)

    def seed_keyed(self) -> bool:
        """Whether two requests that differ in their seed alone are two cache entries: when the
        answer is sampled (the seed is then part of the key) or the seed is sent in the body.
        Otherwise (temperature 0, no seed sent) a repeated request is a cache hit, as an agent's
        second probe with nothing new since the first is (incognita.collabsim.call_estimate)."""
        if not self.settings.deterministic:
            return True
        one, two = (ModelRequest(self.role, "", (Turn("user", "?"),), seed=s) for s in (1, 2))
        return self.protocol.body(self.settings, one) != self.protocol.body(self.settings, two)

    def _answer(self, body: dict, key: str, cell: dict | None) -> tuple[dict, bool]:
        """(entry, whether it came from the cache) for a request the cache did not hold. With a
        cache, the key is claimed first (ResponseCache.claim): an identical request in flight, in
        this process or another, is answered before this one goes on, and its answer is then a hit."""
        if self.cache is None:
            return self._call(body, cell, None)
        with self.cache.claim(key):
            entry, _ = self.cache.read(key)  # quietly: a damaged entry was reported by the first read
            if entry is not None:
                return entry, True
            return self._call(body, cell, key)

    def _entry(self, parsed: Reply) -> dict:
        """The cache entry of one answer from the network, priced."""
        u = parsed["usage"]
        cost = self.prices.cost(
            self.settings.model,
            u["prompt_tokens"],
            u["completion_tokens"],
            u["cached_tokens"],
            u.get("cache_write_tokens", 0),
        )
        return {
            "model": self.settings.model,
            "role": self.role,
            "response": {
                "message": parsed["message"],
                "finish_reason": parsed["finish_reason"],
                "served_model": parsed["served_model"],
            },
            "usage": u,
            "cost_usd": cost,
            "prices_version": self.prices.version,
        }

    def _call(self, body: dict, cell: dict | None, cache_key: str | None) -> tuple[dict, bool]:
        """(entry, hit): the answer from the network, written to the cache under `cache_key` as it
        arrives (once per answer: a retried call never pays twice); or, when the cache holds the
        key by the time the pace admits the call, that entry (a hit, nothing sent)."""
        client, key = client_for(self.protocol, self.settings, self.where)
        s = self.settings
        pacer = pacer_for(self.protocol.endpoint(s), s.model, s.limits)
        tokens = estimate_tokens(body)
        options: dict[str, Any] = {"timeout": s.timeout}
        if s.send_cell and cell is not None:
            options["headers"] = {CELL_HEADER: json.dumps({**cell, "role": self.role}, sort_keys=True)}
        last, failures, throttles, timeouts = "", 0, 0, 0
        where = self._where_at(key)
        while True:
            with pacer.attempt(tokens, self.critical):
                # Consulted again once the pace admits the call: the wait may have been long, and a
                # writer the key's claim did not hold back (a file system without locks) may have answered.
                cached = self.cache.read(cache_key)[0] if cache_key is not None and self.cache else None
                if cached is not None:
                    return cached, True
                try:
                    with deadline.attempt(s.timeout):  # the whole attempt, however slowly bytes arrive
                        parsed = self.protocol.post(client, body, options)
                except Exception as exc:  # noqa: BLE001 -- sorted by classify; anything unexpected fails this episode
                    action, last, wait_for, kind = self.protocol.classify(exc)
                    last = scrub(last, key)
                else:
                    pacer.ok()
                    entry = self._entry(parsed)
                    if cache_key is not None and self.cache:
                        self.cache.put(cache_key, entry)
                    return entry, False
            if action == "fatal":
                raise BackendConfigError(f"{where}: {last}")
            if action == "fail":
                raise BackendError(f"{where}: {last}")
            if kind == "429":
                # The shared pacer pauses every caller of the endpoint for Retry-After and halves the
                # calls in flight; this caller waits in the pacer like the others, not on a timer of its own.
                throttles += 1
                pacer.throttled(wait_for)
                if throttles > RATE_LIMIT_ATTEMPTS:
                    raise BackendError(f"{where}: still rate limited after {throttles} attempts; last: {last}")
                wait = 1.0 if wait_for is None else wait_for
                call_log().retry(spec=self.spec, status=kind, wait=wait)
                print(f"{self.where}: {last}; every call to the endpoint waits {wait:.2f} s", file=sys.stderr)
                continue
            if kind == "5xx":
                pacer.server_error()
            if kind == "timeout":
                timeouts += 1
                last = f"{last} ({s.timeout:g} s, the attempt's timeout)"
            if failures >= s.max_retries or timeouts > s.timeout_retries:
                spent = f" ({timeouts} timed out; timeout_retries: {s.timeout_retries})" if timeouts else ""
                raise BackendError(f"{where}: gave up after {failures + 1} attempts{spent}; last error: {last}")
            delay = self._backoff(failures, wait_for)
            call_log().retry(spec=self.spec, status=kind, wait=delay)
            print(f"{self.where}: {last}; retry {failures + 1}/{s.max_retries} in {delay:.2f} s", file=sys.stderr)
            failures += 1
            time.sleep(delay)

    def _where_at(self, key: str) -> str:
        """The backend and the endpoint it calls, for the errors that end a call: `<spec> (<role>)
        at <base URL>` (the URL without credentials; the SDK's default endpoint is not named)."""
        endpoint = self.protocol.endpoint(self.settings)
        if not endpoint:
            return self.where
        parts = urlsplit(endpoint)
        bare = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        return f"{self.where} at {scrub(bare, key)}"

    def _backoff(self, attempt: int, wait_for: float | None) -> float:
        s = self.settings
        delay = min(s.backoff_max, s.backoff_base * 2**attempt) * (0.5 + self._jitter.random() / 2)
        if wait_for is not None:
            delay = min(s.backoff_max, max(delay, wait_for))
        return delay


# --------------------------------------------------------------------------- building and registering


def price_table(configured: str | None) -> PriceTable:
    explicit = configured or os.environ.get(PRICES_ENV)
    if explicit or Path(DEFAULT_PRICES).exists():
        return load_prices(explicit or DEFAULT_PRICES)
    print(f"warning: no price table at {DEFAULT_PRICES} (set {PRICES_ENV}); costs are recorded as 0", file=sys.stderr)
    return empty_table()


def make(protocol: Protocol, entry: ModelEntry, role: str, runtime: Runtime) -> Transport:
    """The backend of `entry` for `role`, with what the run adds (base.Runtime)."""
    settings = protocol.settings.from_dict(entry.name, dict(entry.settings), f"{entry.spec} ({role})")
    cache = None if runtime.cache_dir is False else ResponseCache(resolve_dir(runtime.cache_dir))
    return Transport(protocol, settings, role, cache, price_table(runtime.prices), runtime.cell, runtime.critical)


def register_protocol(protocol: Protocol) -> Callable[[ModelEntry, str, Runtime], Transport]:
    """Make `<protocol.family>:<model>` entries buildable (backends.base.make_backend) and their
    settings checkable (backends.base.check_settings); returns the family's factory."""

    def factory(entry: ModelEntry, role: str, runtime: Runtime) -> Transport:
        return make(protocol, entry, role, runtime)

    factory.__name__ = f"make_{protocol.family}"
    return register(protocol.family, settings_check=protocol.settings.from_dict)(factory)
