"""The bodies the loopback server (incognita.common.loopback) answers in, one set per protocol.

A responder's reply is protocol-neutral (a string, or `content` and `tool_calls` with optional
`usage` and `finish_reason`); the protocol of the route a request came in on wraps it into that
protocol's success body, and gives the error and rate-limit bodies its clients expect:

- `openai`: `POST /v1/chat/completions` answered with a chat.completion; errors as
  `{"error": {"message", "type", "code"}}`.
- `anthropic`: `POST /v1/messages` answered with a Messages API message (text and `tool_use`
  content blocks); errors as `{"type": "error", "error": {"type", "message"}}`, 529 being
  Anthropic's "overloaded".

Usage a reply does not give is counted from the text sizes (about four characters a token), so
costs are testable. Nothing here knows incognita's backends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _reply_parts(reply: Any) -> tuple[str | None, list[dict], dict]:
    """(text, tool calls as {id, name, arguments-as-JSON-text}, the reply) of a neutral reply."""
    if isinstance(reply, str):
        reply = {"content": reply}
    if not isinstance(reply, dict):
        raise TypeError(f"responder returned {type(reply).__name__}; expected str or dict")
    calls = [
        {
            "id": c["id"],
            "name": c["name"],
            "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]),
        }
        for c in reply.get("tool_calls") or []
    ]
    return reply.get("content"), calls, reply


# ---------------------------------------------------------------------- openai


def completion_body(model: str, request: dict, reply: Any, n: int) -> dict:
    """A reply as a chat.completion body (a reply that already is one is sent as it is)."""
    if isinstance(reply, dict) and "choices" in reply:
        return reply
    text, calls, reply = _reply_parts(reply)
    message: dict = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    produced = (text or "") + "".join(c["arguments"] for c in calls)
    usage = reply.get("usage") or {
        "prompt_tokens": _tokens(json.dumps(request.get("messages", []))),
        "completion_tokens": _tokens(produced),
    }
    usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {
        "id": f"chatcmpl-loopback-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def openai_error_body(status: int, message: str) -> dict:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": str(status)}}


def openai_rate_limit_body(message: str) -> dict:
    """The body OpenAI sends with a 429 from its rate limits."""
    return {"error": {"message": message, "type": "rate_limit_error", "param": None, "code": "rate_limit_exceeded"}}


def _completion_tokens(body: dict) -> int:
    return int((body.get("usage") or {}).get("completion_tokens") or 0)


# ---------------------------------------------------------------------- anthropic


def message_body(model: str, request: dict, reply: Any, n: int) -> dict:
    """A reply as an Anthropic Messages API message (a reply that already is one is sent as it is)."""
    if isinstance(reply, dict) and reply.get("type") == "message":
        return reply
    text, calls, reply = _reply_parts(reply)
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    for c in calls:
        try:
            arguments = json.loads(c["arguments"])
        except json.JSONDecodeError:
            arguments = None
        # The API's tool_use input is always an object; a reply's malformed arguments keep their text.
        content.append(
            {
                "type": "tool_use",
                "id": c["id"],
                "name": c["name"],
                "input": arguments if isinstance(arguments, dict) else {"raw": c["arguments"]},
            }
        )
    produced = (text or "") + "".join(c["arguments"] for c in calls)
    usage = reply.get("usage") or {
        "input_tokens": _tokens(json.dumps(request.get("system") or "") + json.dumps(request.get("messages", []))),
        "output_tokens": _tokens(produced),
    }
    return {
        "id": f"msg_loopback_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.get("finish_reason") or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_error_body(status: int, message: str) -> dict:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def anthropic_rate_limit_body(message: str) -> dict:
    return anthropic_error_body(429, message)


def _output_tokens(body: dict) -> int:
    return int((body.get("usage") or {}).get("output_tokens") or 0)


# ---------------------------------------------------------------------- the protocols


@dataclass(frozen=True)
class WireProtocol:
    name: str
    paths: tuple[str, ...]
    success: Callable[[str, dict, Any, int], dict]  # (model, request, reply, n) -> 200 body
    error: Callable[[int, str], dict]  # (status, message) -> error body
    rate_limited: Callable[[str], dict]  # message -> the body of a limit's 429
    output_tokens: Callable[[dict], int]  # a success body -> its completion tokens


OPENAI = WireProtocol(
    "openai",
    ("/v1/chat/completions", "/chat/completions"),
    completion_body,
    openai_error_body,
    openai_rate_limit_body,
    _completion_tokens,
)
ANTHROPIC = WireProtocol(
    "anthropic",
    ("/v1/messages",),
    message_body,
    anthropic_error_body,
    anthropic_rate_limit_body,
    _output_tokens,
)
PROTOCOLS = (OPENAI, ANTHROPIC)


def protocol_for(path: str) -> WireProtocol | None:
    """The protocol whose route `path` is, if any."""
    return next((p for p in PROTOCOLS if path in p.paths), None)
