"""The `anthropic` backend family: `anthropic:<model>` through Anthropic's Messages API.

Who uses it: `backends.base.make_backend` imports this module for an `anthropic:` entry; it
registers its protocol with the shared transport (incognita.common.backends.transport: the
response cache, the retry loop, the shared pace of the endpoint, usage and cost accounting, and
the rule that the key is read from the environment at the first call that needs the network and
never written). What is here is the Messages API alone, sent with the official `anthropic` SDK:
the request body, the answer and its usage in the shape every protocol caches (transport.Reply),
the errors, and the inverse conversion the loopback's twins use. The invariant, as for every
protocol: the body holds everything that can change the answer and nothing transport-only.

What the protocol changes:
- The system prompt is a top-level `system` field; tool calls are `tool_use` content blocks of
  the assistant's message and their results `tool_result` blocks of the next user message;
  tools are `{name, description, input_schema}`. Consecutive turns of one side are merged into
  one message (the API alternates user and assistant).
- The conversation must open with a user message. A role whose conversation opens with its own
  turn (an agent greeting first) or is empty gets `OPENING_TURN` first, and an assistant turn
  with neither text nor tool calls is sent as `EMPTY_TURN` (the API refuses empty text).
  docs/models.md lists both.
- `max_tokens` is required (default 4096) and `temperature` lies in [0, 1]; there is no seed.
- The answer is cached in the same shape as the openai family's (text and OpenAI-style
  `tool_calls`), so one reader serves both; its usage counts cache reads as prompt tokens served
  from the provider's cache.
- Overloaded (529) is retried like any 5xx; a spent credit balance stops the job like a bad key.
- Anthropic caches a prompt's prefix only where a request marks it. `cache_prompt: true` marks
  the last block of every request (`cache_control`, the default five-minute cache), so each call
  reads the prefix the agent's previous call wrote and writes its own; the answer is the same,
  the price is not: reads at `cached_input`, writes at `cache_write_input` (config/prices.yaml).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from incognita.common.backends import deadline
from incognita.common.backends.base import ModelRequest, ToolCall, Turn
from incognita.common.backends.settings import ChatSettings
from incognita.common.backends.transport import (
    MalformedResponse,
    Protocol,
    classify_sdk_error,
    parse_arguments,
    register_protocol,
)
from incognita.common.io import InputError

OPENING_TURN = "(The conversation starts.)"
EMPTY_TURN = "(no text)"
DEFAULT_MAX_TOKENS = 4096
MESSAGES_PATH = "/v1/messages"


@dataclass(frozen=True)
class AnthropicSettings(ChatSettings):
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    base_url_env: str = "ANTHROPIC_BASE_URL"
    api_key_env: str = "ANTHROPIC_API_KEY"
    cache_prompt: bool = False  # mark each request's prefix for Anthropic's prompt cache (module docstring)
    # Anthropic's structured outputs: `output_config.format` {type: json_schema, schema}.
    STRUCTURED_OUTPUT: ClassVar[tuple[str, ...]] = ("json_schema",)
    OWNED_FIELDS: ClassVar[tuple[str, ...]] = ("output_config",)

    def _check(self, where: str) -> None:
        super()._check(where)
        if self.max_tokens is None:
            raise InputError(f"{where}: max_tokens: Anthropic's API requires it (a positive integer)")
        if not isinstance(self.cache_prompt, bool):
            raise InputError(f"{where}: cache_prompt: expected true or false, got {self.cache_prompt!r}")
        if self.temperature is not None and self.temperature > 1:
            raise InputError(f"{where}: temperature: expected a number in [0, 1] for Anthropic, got {self.temperature}")
        clash = sorted(set(self.extra_body) & {"system", "max_tokens"})
        if clash:
            raise InputError(f"{where}: extra_body may not set {', '.join(clash)} (the harness owns them)")


# --------------------------------------------------------------------------- conversions


def to_tools(tools: tuple[dict, ...]) -> list[dict]:
    """OpenAI function schemas -> Anthropic tool definitions."""
    out = []
    for t in tools:
        fn = t.get("function", t)
        tool = {"name": fn["name"], "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}}
        if fn.get("description"):
            tool["description"] = fn["description"]
        out.append(tool)
    return out


def _tool_input(arguments: Any) -> dict:
    # tool_use input must be an object; arguments a model wrote as malformed JSON keep their text.
    return arguments if isinstance(arguments, dict) else {"raw": arguments}


def to_messages(request: ModelRequest) -> list[dict]:
    """The role's conversation as alternating Messages API messages (content as blocks)."""
    messages: list[dict] = []

    def add(role: str, blocks: list[dict]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for turn in request.messages:
        if turn.role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": turn.tool_call_id, "content": turn.content or ""}])
        elif turn.role == "assistant":
            blocks = [{"type": "text", "text": turn.content}] if turn.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in turn.tool_calls
            ]
            add("assistant", blocks or [{"type": "text", "text": EMPTY_TURN}])
        else:
            add("user", [{"type": "text", "text": turn.content or EMPTY_TURN}])
    if not messages or messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING_TURN}]})
    return messages


def request_body(settings: AnthropicSettings, request: ModelRequest) -> dict:
    """The Messages API body: everything that can change the answer, nothing transport-only."""
    body: dict[str, Any] = {"model": settings.model, "max_tokens": settings.max_tokens}
    if request.system:
        body["system"] = request.system
    body["messages"] = to_messages(request)
    if settings.cache_prompt:
        # One breakpoint on the last block caches everything before it: tools, system, conversation.
        body["messages"][-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    if request.tools:
        body["tools"] = to_tools(request.tools)
    if settings.temperature is not None:
        body["temperature"] = float(settings.temperature)
    if settings.structured_output and request.output_schema:
        schema = supported_schema(request.output_schema["schema"])
        body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    body.update(settings.extra_body)
    return body


def supported_schema(schema: Any) -> Any:
    """An answer schema as Anthropic's structured outputs take it: an array's `minItems` is 0 or 1
    there and `maxItems` is not taken, so a longer minimum becomes 1 and a maximum goes (the
    parser still checks the count: a probe with a missing answer records the question as missing)."""
    if isinstance(schema, list):
        return [supported_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: supported_schema(v) for k, v in schema.items() if k != "maxItems"}
    if out.get("minItems", 0) > 1:
        out["minItems"] = 1
    return out


def parse_message(text: str) -> dict:
    """A Messages API answer in the shape `parse_completion` gives for the openai family."""
    try:
        data = json.loads(text)
        blocks = data["content"]
        if not isinstance(blocks, list):
            raise TypeError("content is not a list")
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise MalformedResponse(f"malformed response body ({type(exc).__name__}): {text[:120]!r}") from None
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    calls = [
        {
            "id": b.get("id") or f"toolu_{i}",
            "type": "function",
            "function": {"name": str(b.get("name", "")), "arguments": json.dumps(b.get("input"), ensure_ascii=False)},
        }
        for i, b in enumerate(blocks)
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    message: dict[str, Any] = {}
    if texts:
        message["content"] = "".join(texts)
    if calls:
        message["tool_calls"] = calls
    usage = data.get("usage") or {}
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cache_read + int(usage.get("cache_creation_input_tokens") or 0)
    return {
        "message": message,
        "finish_reason": data.get("stop_reason"),
        "served_model": data.get("model"),
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": int(usage.get("output_tokens") or 0),
            "cached_tokens": cache_read,
            "cache_write_tokens": int(usage.get("cache_creation_input_tokens") or 0),
            "reasoning_tokens": 0,
        },
    }


def to_request(body: dict, role: str, seed: int = 0) -> ModelRequest:
    """The inverse of request_body, for loopback responders that answer with a scripted backend."""
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "".join(b.get("text", "") for b in system)
    turns: list[Turn] = []
    for i, m in enumerate(body.get("messages", [])):
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if i == 0 and blocks == [{"type": "text", "text": OPENING_TURN}]:
            continue
        if m["role"] == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = tuple(
                ToolCall(id=b["id"], name=b["name"], arguments=parse_arguments(b.get("input")))
                for b in blocks
                if b.get("type") == "tool_use"
            )
            turns.append(Turn("assistant", None if text in ("", EMPTY_TURN) else text, tool_calls=calls))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                result = b.get("content")
                if isinstance(result, list):
                    result = "".join(x.get("text", "") for x in result)
                turns.append(Turn("tool", result, tool_call_id=b.get("tool_use_id")))
            elif b.get("type") == "text":
                turns.append(Turn("user", b.get("text")))
    tools = tuple(
        {
            "type": "function",
            "function": {"name": t["name"], "description": t.get("description", ""), "parameters": t["input_schema"]},
        }
        for t in body.get("tools") or ()
    )
    return ModelRequest(role=role, system=system, messages=tuple(turns), tools=tools, seed=seed)


# --------------------------------------------------------------------------- the wire


def connect(key: str, base_url: str | None) -> Any:
    import anthropic  # imported on the first miss only: cache replays never pay for it

    # Its HTTP client bounds each attempt as a whole (deadline.py), not each wait for a byte.
    return anthropic.Anthropic(
        api_key=key, base_url=base_url, max_retries=0, http_client=deadline.sdk_http_client(anthropic)
    )


def post(client: Any, body: dict, options: dict) -> dict:
    # The SDK's generic post, as in the openai protocol (the body is already in the API's shape),
    # asking for the body's text: its errors, retries off, headers and timeouts stay the SDK's.
    return parse_message(client.post(MESSAGES_PATH, cast_to=str, body=body, options=options))


def classify(exc: Exception):
    import anthropic

    # The SDK names its exceptions as the openai package does; overloaded (529) is a 5xx.
    return classify_sdk_error(exc, anthropic)


PROTOCOL = Protocol(
    family="anthropic",
    settings=AnthropicSettings,
    connect=connect,
    body=request_body,
    post=post,
    classify=classify,
    default_endpoint="https://api.anthropic.com",
)
make_anthropic = register_protocol(PROTOCOL)
