"""The `openai` protocol: `openai:<model>` against any OpenAI-compatible chat.completions endpoint.

Who uses it: `backends.base.make_backend` imports this module for an `openai:` entry; it registers
the protocol with the shared transport (incognita.common.backends.transport: the response cache,
retries, the endpoint's pace, usage, cost and progress), so all it knows is the wire protocol:
how a ModelRequest becomes a chat.completions body, how the `openai` SDK sends it, and how the
answer, its usage and its errors read. The invariant: the body holds everything that can change
the answer and nothing transport-only, so it is the cache key; the cached answer is in the shape
every protocol writes (transport.Reply). The loopback's twins use the inverse conversions
(`to_request`, `to_reply`).

Every role speaks the same protocol: the system prompt, the role's conversation (tool calls and
their results included) and its tools as function schemas. The evaluated agent gets the 15
retail tools in the direct arm and answers with the JSON message protocol otherwise; the
customer's only tool is `release_field` (the disclosure gate); Vega and the desks call their
tools, which the episode loop routes through the gateway; the judge gets no tools.

Per-role settings come from the config entry (see docs/models.md): temperature,
reasoning_effort, max_tokens (sent under `max_tokens_param`), timeout, retries and backoff,
base_url / base_url_env and api_key_env. The key itself is read from the environment at the
first call that needs the network and is never written anywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from incognita.common.backends import deadline
from incognita.common.backends.base import ModelRequest, ModelResponse, Turn
from incognita.common.backends.settings import ChatSettings
from incognita.common.backends.transport import (
    MalformedResponse,
    Protocol,
    classify_sdk_error,
    from_message,
    register_protocol,
)

# How a request carries a role's answer schema (ModelRequest.output_schema), by server: OpenAI,
# vLLM and SGLang take `response_format` {type: json_schema, json_schema: {name, schema, strict}};
# llama.cpp's Python server (llama-cpp-python) takes {type: json_object, schema}, and gets the
# schema's `grammar_schema` form when it has one. None: not sent.
STRUCTURED_OUTPUT = ("json_schema", "json_object")


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings(ChatSettings):
    reasoning_effort: str | None = None
    max_tokens_param: str = "max_completion_tokens"
    base_url_env: str = "OPENAI_BASE_URL"
    api_key_env: str = "OPENAI_API_KEY"
    send_seed: bool = False

    STRUCTURED_OUTPUT: ClassVar[tuple[str, ...]] = STRUCTURED_OUTPUT
    OWNED_FIELDS: ClassVar[tuple[str, ...]] = ("response_format",)  # set by structured_output


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


# --------------------------------------------------------------------------- the wire


def parse_completion(text: str) -> dict:
    """The parts of a chat.completion body we keep (transport.Reply); MalformedResponse when it is not one."""
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


def connect(key: str, base_url: str | None) -> Any:
    import openai  # imported on the first miss only: cache replays never pay for it

    # Its HTTP client bounds each attempt as a whole (deadline.py), not each wait for a byte.
    return openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, http_client=deadline.sdk_http_client(openai))


def post(client: Any, body: dict, options: dict) -> dict:
    import httpx

    # The client's generic post (its documented route for raw requests): typed create() walks
    # every message through its TypedDict transform, ~20 ms a call on a 40-turn conversation.
    raw = client.post("/chat/completions", cast_to=httpx.Response, body=body, options=options)
    return parse_completion(raw.text)


def classify(exc: Exception):
    import openai

    return classify_sdk_error(exc, openai)


PROTOCOL = Protocol(
    family="openai",
    settings=Settings,
    connect=connect,
    body=request_body,
    post=post,
    classify=classify,
    key_hint="; a local server such as vLLM or Ollama accepts any value, e.g. {var}=local",
)
make_openai = register_protocol(PROTOCOL)
