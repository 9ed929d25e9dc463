"""The `openai` backend family: `openai:<model>` against any OpenAI-compatible endpoint.

Every role speaks the same chat.completions protocol: the system prompt, the role's
conversation (tool calls and their results included) and its tools as function schemas.
The evaluated agent gets the 15 retail tools in the direct arm and answers with the JSON
message protocol otherwise; the customer's only tool is `release_field` (the disclosure
gate); Vega and the desks call their tools, which the episode loop routes through the
gateway; the judge gets no tools.

Per-role settings come from the config entry (see docs/models.md): temperature,
reasoning_effort, max_tokens (sent under `max_tokens_param`), timeout, retries and backoff,
base_url / base_url_env and api_key_env. The key itself is read from the environment at the
first call that needs the network and is never written anywhere.

Every call goes through the response cache (incognita.common.cache). On a miss the request is
sent with the openai client (its own retries off, so that one loop here owns them):
rate limits, server errors, timeouts, dropped connections and malformed bodies are retried
with exponential backoff; after the last attempt the call raises BackendError, which ends
the episode as an error record. Authentication failures and unknown models are
configuration errors (BackendConfigError): the command stops instead of writing hundreds of
error records.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from incognita.common.backends.base import (
    BackendError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Turn,
    register,
)
from incognita.common.cache import ResponseCache, request_key, resolve_dir
from incognita.common.io import InputError
from incognita.common.pacing import Limits, estimate_tokens, pacer_for
from incognita.common.prices import (
    DEFAULT_PRICES,
    PRICES_ENV,
    PriceTable,
    empty_table,
    load_prices,
)
from incognita.common.progress import call_log
from incognita.common.usage import Usage

RETRY_STATUS = {408, 409, 425, 429}  # plus every 5xx
# How a request carries a role's answer schema (ModelRequest.output_schema), by server: OpenAI,
# vLLM and SGLang take `response_format` {type: json_schema, json_schema: {name, schema, strict}};
# llama.cpp's Python server (llama-cpp-python) takes {type: json_object, schema}, and gets the
# schema's `grammar_schema` form when it has one. None: not sent.
STRUCTURED_OUTPUT = ("json_schema", "json_object")
FATAL_STATUS = {401, 403, 404}
# A 429 does not spend the retry budget (the shared pacer waits it out), but an endpoint that answers
# nothing else is broken: give the episode up after this many.
RATE_LIMIT_ATTEMPTS = 50
CELL_HEADER = "X-Incognita-Cell"


class BackendConfigError(InputError):
    """The endpoint refuses the configuration itself (no key, bad key, unknown model)."""


class MalformedResponse(Exception):
    """A 2xx answer whose body is not a chat completion."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    model: str
    temperature: float | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = None
    max_tokens_param: str = "max_completion_tokens"
    timeout: float = 120.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    base_url: str | None = None
    base_url_env: str = "OPENAI_BASE_URL"
    api_key_env: str = "OPENAI_API_KEY"
    send_seed: bool = False
    extra_body: dict = field(default_factory=dict)
    # Constrain answers to the role's schema (STRUCTURED_OUTPUT); it changes the condition, so it is
    # part of the entry (records, manifests) and of the cache key. Unconstrained by default, as in the paper.
    structured_output: str | None = None
    # The endpoint's budget, shared by every job on the machine (incognita.common.pacing); null = no limit.
    rpm: int | None = Limits.rpm
    tpm: int | None = Limits.tpm
    max_in_flight: int = Limits.max_in_flight
    reserve: float = Limits.reserve  # the share of rpm kept for the longest chains' calls (pacing.Limits)
    # Send the cell's identity in an X-Incognita-Cell header, for a loopback that answers with scripted
    # twins (bench/throughput.py). A transport header: never part of the request body or its cache key.
    send_cell: bool = False

    # Fields a subclass's protocol has no use for: a config entry that sets one is refused.
    UNUSED: ClassVar[tuple[str, ...]] = ()
    STRUCTURED_OUTPUT: ClassVar[tuple[str, ...]] = STRUCTURED_OUTPUT
    OWNED_FIELDS: ClassVar[tuple[str, ...]] = ("response_format",)  # set by structured_output

    @classmethod
    def from_dict(cls, model: str, values: dict, where: str) -> Settings:
        known = {f for f in cls.__dataclass_fields__ if f != "model"} - set(cls.UNUSED)
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(f"{where}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        s = cls(model=model, **values)
        s._check(where)
        return s

    def _check(self, where: str) -> None:
        def bad(name: str, expected: str) -> InputError:
            return InputError(f"{where}: {name}: expected {expected}, got {getattr(self, name)!r}")

        if self.temperature is not None and not (isinstance(self.temperature, (int, float)) and self.temperature >= 0):
            raise bad("temperature", "a number >= 0 or null")
        if self.max_tokens is not None and not (isinstance(self.max_tokens, int) and self.max_tokens > 0):
            raise bad("max_tokens", "a positive integer or null")
        for name in ("timeout", "backoff_base", "backoff_max"):
            if not (isinstance(getattr(self, name), (int, float)) and getattr(self, name) > 0):
                raise bad(name, "a positive number of seconds")
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise bad("max_retries", "an integer >= 0")
        if not isinstance(self.extra_body, dict):
            raise bad("extra_body", "a mapping of extra request fields")
        if self.structured_output is not None and self.structured_output not in self.STRUCTURED_OUTPUT:
            raise bad("structured_output", f"one of {', '.join(self.STRUCTURED_OUTPUT)} or null")
        clash = sorted(set(self.extra_body) & {"model", "messages", "tools", "stream", "n", *self.OWNED_FIELDS})
        if clash:
            raise InputError(f"{where}: extra_body may not set {', '.join(clash)} (the harness owns them)")
        self.limits.check(where)
        if not isinstance(self.send_cell, bool):
            raise bad("send_cell", "true or false")
        if re.match(r"^(sk-|Bearer )", str(self.base_url_env)) or re.match(r"^(sk-|Bearer )", str(self.api_key_env)):
            raise InputError(f"{where}: base_url_env / api_key_env name an environment variable, not its value")

    @property
    def limits(self) -> Limits:
        return Limits(rpm=self.rpm, tpm=self.tpm, max_in_flight=self.max_in_flight, reserve=self.reserve)

    @property
    def deterministic(self) -> bool:
        """Greedy decoding: the trial's seed then stays out of the cache key."""
        return self.temperature == 0


def request_body(settings: Settings, request: ModelRequest) -> dict:
    """The chat.completions body: everything that can change the answer, nothing transport-only."""
    body: dict[str, Any] = {"model": settings.model, "messages": to_messages(request)}
    if request.tools:
        body["tools"] = list(request.tools)
    if settings.temperature is not None:
        body["temperature"] = float(settings.temperature)  # 1 and 1.0 are one request, and one cache key
    if settings.reasoning_effort is not None:
        body["reasoning_effort"] = settings.reasoning_effort
    if settings.max_tokens is not None:
        body[settings.max_tokens_param] = settings.max_tokens
    if settings.send_seed:
        body["seed"] = request.seed
    if settings.structured_output and request.output_schema:
        body["response_format"] = response_format(settings.structured_output, request.output_schema)
    body.update(settings.extra_body)
    return body


def response_format(kind: str, output_schema: dict) -> dict:
    """The `response_format` field of one server kind (STRUCTURED_OUTPUT) for an answer schema."""
    if kind == "json_schema":
        # strict: the schemas (incognita.collabsim.answer_schemas, the access agent's message
        # format) close every object and require every property, as strict mode asks.
        return {
            "type": "json_schema",
            "json_schema": {"name": output_schema["name"], "schema": output_schema["schema"], "strict": True},
        }
    # A grammar-compiling server can take rules strict modes cannot state (a root anyOf).
    return {"type": "json_object", "schema": output_schema.get("grammar_schema", output_schema["schema"])}


# --------------------------------------------------------------------------- conversions


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def to_messages(request: ModelRequest) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": request.system}]
    for turn in request.messages:
        if turn.role == "tool":
            messages.append({"role": "tool", "tool_call_id": turn.tool_call_id, "content": turn.content or ""})
        elif turn.role == "assistant" and turn.tool_calls:
            # An empty string, not null, for a call without text: OpenAI, vLLM and SGLang take
            # either, llama.cpp's Python server (0.3.36) answers null, or the key left out, with
            # HTTP 500 (its request model wants a string, its function-calling template reads it).
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.content or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": _arguments_text(c.arguments)},
                        }
                        for c in turn.tool_calls
                    ],
                }
            )
        else:
            messages.append({"role": turn.role, "content": turn.content or ""})
    return messages


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


def to_request(body: dict, role: str, seed: int = 0) -> ModelRequest:
    """The inverse of request_body, for responders that answer with a scripted backend."""
    system, turns = "", []
    for m in body.get("messages", []):
        if m["role"] in ("system", "developer"):
            system = m.get("content") or ""
        elif m["role"] == "tool":
            turns.append(Turn("tool", m.get("content"), tool_call_id=m.get("tool_call_id")))
        else:
            text, calls = from_message(m)
            if calls and text == "":
                text = None  # to_messages writes a call without text as ""
            turns.append(Turn(m["role"], text, tool_calls=calls))
    return ModelRequest(
        role=role,
        system=system,
        messages=tuple(turns),
        tools=tuple(body.get("tools") or ()),
        seed=body.get("seed", seed),
    )


def to_reply(response: ModelResponse) -> dict:
    """A ModelResponse as a loopback reply (incognita.common.loopback)."""
    return {
        "content": response.text,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": _arguments_text(c.arguments)} for c in response.tool_calls
        ],
    }


def parse_completion(text: str) -> dict:
    """The parts of a chat.completion body we keep; MalformedResponse when it is not one."""
    try:
        data = json.loads(text)
        message = data["choices"][0]["message"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise MalformedResponse(f"malformed response body ({type(exc).__name__}): {text[:120]!r}") from None
    if not isinstance(message, dict):
        raise MalformedResponse(f"malformed response body (message is {type(message).__name__})")
    slim = {k: message[k] for k in ("content", "refusal", "tool_calls") if message.get(k) is not None}
    usage = data.get("usage") or {}
    return {
        "message": slim,
        "finish_reason": data["choices"][0].get("finish_reason"),
        "served_model": data.get("model"),
        "usage": {
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
            "cached_tokens": int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
            "reasoning_tokens": int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0),
        },
    }


# --------------------------------------------------------------------------- secrets


def scrub(text: str, secret: str | None = None) -> str:
    """Remove a key (and anything shaped like one) from text that may end up in a record."""
    if secret:
        text = text.replace(secret, "***")
    text = re.sub(r"Bearer\s+\S+", "Bearer ***", text)
    return re.sub(r"sk-[A-Za-z0-9_\-*]{6,}", "sk-***", text)


# --------------------------------------------------------------------------- the client

_CLIENTS: dict[tuple, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _base_url(settings: Settings) -> str | None:
    return settings.base_url or os.environ.get(settings.base_url_env) or None


def _client(settings: Settings, where: str, family: str = "openai", base_url: str | None = None) -> tuple[Any, str]:
    """One SDK client per (family, endpoint, key) and process; returns it with the key for scrubbing.
    `family` names the SDK module and its client class (openai.OpenAI, anthropic.Anthropic)."""
    base_url = base_url or _base_url(settings)
    key = os.environ.get(settings.api_key_env)
    if not key:
        hint = (
            ""
            if family != "openai"
            else (f"; a local server such as vLLM or Ollama accepts any value, e.g. {settings.api_key_env}=local")
        )
        raise BackendConfigError(
            f"{where}: environment variable {settings.api_key_env} is not set (set it to your key{hint})"
        )
    ident = (family, base_url, settings.api_key_env, hashlib.sha256(key.encode()).hexdigest())
    with _CLIENTS_LOCK:
        if ident not in _CLIENTS:
            import importlib  # the SDK is imported on the first miss only: cache replays never pay for it

            sdk = importlib.import_module(family)
            client_class = {"openai": "OpenAI", "anthropic": "Anthropic"}[family]
            _CLIENTS[ident] = getattr(sdk, client_class)(api_key=key, base_url=base_url, max_retries=0)
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


def _classify(exc: Exception, sdk: Any = None) -> tuple[str, str, float | None, str]:
    """(action, description, retry-after seconds, kind): action is retry, fail (this episode) or
    fatal; kind is what the progress log counts (429, 5xx, timeout, connection, malformed, other).
    `sdk` is the client library whose exceptions these are (default `openai`; the anthropic
    family passes `anthropic`, whose SDK names its exceptions the same way)."""
    if sdk is None:
        import openai as sdk

    if isinstance(exc, MalformedResponse):
        return "retry", str(exc), None, "malformed"
    if isinstance(exc, sdk.APITimeoutError):
        return "retry", "request timed out", None, "timeout"
    if isinstance(exc, sdk.APIConnectionError):
        return "retry", f"connection error ({type(exc.__cause__ or exc).__name__})", None, "connection"
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        detail = f"HTTP {status}: {exc.message}"
        # No amount of waiting refills a spent quota (OpenAI's 429) or credit balance (Anthropic's 400).
        if (status == 429 and getattr(exc, "code", None) == "insufficient_quota") or (
            status == 400 and "credit balance" in str(exc.message).lower()
        ):
            return "fatal", detail, None, "429" if status == 429 else "other"
        if status in RETRY_STATUS or status >= 500:  # Anthropic's 529 "overloaded" among them
            kind = "429" if status == 429 else "5xx" if status >= 500 else "other"
            return "retry", detail, _retry_after(exc.response.headers), kind
        return ("fatal" if status in FATAL_STATUS else "fail"), detail, None, "other"
    return "fail", f"{type(exc).__name__}: {exc}", None, "other"


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                return None
    return None


# --------------------------------------------------------------------------- the backend


class OpenAIBackend:
    FAMILY = "openai"

    def __init__(
        self,
        settings: Settings,
        role: str,
        cache: ResponseCache | None,
        prices: PriceTable,
        cell: dict | None = None,
        critical: bool = False,
    ):
        self.settings, self.role, self.cache, self.prices = settings, role, cache, prices
        self.spec = f"{self.FAMILY}:{settings.model}"
        self.where = f"{self.spec} ({role})"
        self.cell = cell  # the cell this backend serves, sent only with send_cell (a loopback's twins)
        self.critical = critical  # its calls may use the pace's reserve (incognita.common.pacing.RESERVE)
        self.totals = Usage()  # this backend's calls, for roles the episode loop does not count (the judge)
        self._totals_lock = threading.Lock()  # the native harness shares a backend between its threads
        self._jitter = random.Random()

    # The protocol's parts, which the anthropic family overrides; the cache, retries, pacing,
    # usage and cost accounting below are shared.
    def _body(self, request: ModelRequest) -> dict:
        return request_body(self.settings, request)

    def _endpoint(self) -> str | None:
        return _base_url(self.settings)

    def _client(self) -> tuple[Any, str]:
        return _client(self.settings, self.where)

    def _post(self, client: Any, body: dict, options: dict) -> dict:
        import httpx

        # The client's generic post (its documented route for raw requests): typed create() walks
        # every message through its TypedDict transform, ~20 ms a call on a 40-turn conversation.
        raw = client.post("/chat/completions", cast_to=httpx.Response, body=body, options=options)
        return parse_completion(raw.text)

    def _classify(self, exc: Exception) -> tuple[str, str, float | None, str]:
        return _classify(exc)

    def respond(self, request: ModelRequest, cell: dict | None = None) -> ModelResponse:
        """`cell`, when given, is the cell this call serves in place of the backend's own: the native
        stage shares one backend between runs on several threads, so its cell travels with each call."""
        started = time.monotonic()
        body = self._body(request)
        key = request_key(body, None if self.settings.deterministic else request.seed)
        entry = self.cache.get(key) if self.cache else None
        hit = entry is not None
        if entry is None:
            entry = self._fetch(body, self.cell if cell is None else cell)
            if self.cache:
                self.cache.put(key, entry)  # once per answer: a retried call never pays twice
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

    def _fetch(self, body: dict, cell: dict | None = None) -> dict:
        parsed = self._call(body, cell)
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

    def _call(self, body: dict, cell: dict | None = None) -> dict:
        client, key = self._client()
        s = self.settings
        pacer = pacer_for(self._endpoint(), s.model, s.limits)
        tokens = estimate_tokens(body)
        options: dict[str, Any] = {"timeout": s.timeout}
        if s.send_cell and cell is not None:
            options["headers"] = {CELL_HEADER: json.dumps({**cell, "role": self.role}, sort_keys=True)}
        last, failures, throttles = "", 0, 0
        while True:
            with pacer.attempt(tokens, self.critical):
                try:
                    parsed = self._post(client, body, options)
                except Exception as exc:  # noqa: BLE001 -- sorted by _classify; anything unexpected fails this episode
                    action, last, retry_after, kind = self._classify(exc)
                    last = scrub(last, key)
                else:
                    pacer.ok()
                    return parsed
            if action == "fatal":
                raise BackendConfigError(f"{self.where}: {last}")
            if action == "fail":
                raise BackendError(f"{self.where}: {last}")
            if kind == "429":
                # The shared pacer pauses every caller of the endpoint for Retry-After and halves the
                # calls in flight; this caller waits in the pacer like the others, not on a timer of its own.
                throttles += 1
                pacer.throttled(retry_after)
                if throttles > RATE_LIMIT_ATTEMPTS:
                    raise BackendError(f"{self.where}: still rate limited after {throttles} attempts; last: {last}")
                wait = 1.0 if retry_after is None else retry_after
                call_log().retry(spec=self.spec, status=kind, wait=wait)
                print(f"{self.where}: {last}; every call to the endpoint waits {wait:.2f} s", file=sys.stderr)
                continue
            if kind == "5xx":
                pacer.server_error()
            if failures >= s.max_retries:
                raise BackendError(f"{self.where}: gave up after {failures + 1} attempts; last error: {last}")
            delay = self._backoff(failures, retry_after)
            call_log().retry(spec=self.spec, status=kind, wait=delay)
            print(f"{self.where}: {last}; retry {failures + 1}/{s.max_retries} in {delay:.2f} s", file=sys.stderr)
            failures += 1
            time.sleep(delay)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        s = self.settings
        delay = min(s.backoff_max, s.backoff_base * 2**attempt) * (0.5 + self._jitter.random() / 2)
        if retry_after is not None:
            delay = min(s.backoff_max, max(delay, retry_after))
        return delay


def _prices(configured: str | None) -> PriceTable:
    explicit = configured or os.environ.get(PRICES_ENV)
    if explicit or Path(DEFAULT_PRICES).exists():
        return load_prices(explicit or DEFAULT_PRICES)
    print(f"warning: no price table at {DEFAULT_PRICES} (set {PRICES_ENV}); costs are recorded as 0", file=sys.stderr)
    return empty_table()


@register("openai", settings_check=Settings.from_dict)
def make_openai(name: str, role: str, context: dict) -> OpenAIBackend:
    """Context keys: settings (the role's config entry minus spec), cache_dir (None = default;
    False = no cache), prices (path of the price table), cell (what the backend serves, for send_cell),
    critical (its calls belong to the design's longest chains: they may use the pace's reserve)."""
    settings = Settings.from_dict(name, dict(context.get("settings") or {}), f"openai:{name} ({role})")
    cache_dir = context.get("cache_dir")
    cache = None if cache_dir is False else ResponseCache(resolve_dir(cache_dir))
    return OpenAIBackend(
        settings, role, cache, _prices(context.get("prices")), context.get("cell"), bool(context.get("critical"))
    )
