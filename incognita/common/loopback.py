"""A small OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It implements `POST /v1/chat/completions` (also without the `/v1` prefix) and `GET
/v1/models`, counts every chat request it receives, and answers from a responder callable
`responder(model, request_json) -> reply`. A reply is one of:

- a string: the assistant's text;
- a dict with `choices`: a complete chat.completion body, sent as it is;
- a dict with `content` and/or `tool_calls` (each `{"id", "name", "arguments"}`, arguments
  a JSON string or any JSON value) and optionally `usage` and `finish_reason`.

Usage the responder does not give is counted deterministically from the text sizes (about
four characters a token), so costs are testable. Faults can be injected on a schedule:
`faults` maps a 1-based request number to a fault, or is a callable `(n, request_json) ->
fault | None`. Faults: a three-digit HTTP status ("429", "500", "401", ...) answered with an
OpenAI-shaped error body (429 carries `Retry-After: 0`; 401 echoes the caller's credential,
as some servers do, so that scrubbing can be tested), "timeout" (hold the request for
`delay` seconds, then drop it), "malformed" (status 200 with a body that is not JSON),
"incomplete" (200, JSON without `choices`), "disconnect" (close the connection at once). A
faulted request never reaches the responder, so a stateful responder sees each request
the client finally gets answered exactly once.

The interface knows nothing about incognita's backends, so any OpenAI-compatible client
(the `openai` package, litellm) can be pointed at it; `incognita.common.backends.openai` has the
conversions that turn a request back into a ModelRequest for scripted responders.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Responder = Callable[[str, dict], Any]
FaultPlan = dict[int, str] | Callable[[int, dict], str | None] | None
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class RequestLog:
    """One chat request as the server saw it."""

    n: int
    model: str
    fault: str | None
    authorization: str = field(repr=False, default="")


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def completion_body(model: str, request: dict, reply: Any, n: int) -> dict:
    """Wrap a responder's reply into a chat.completion body."""
    if isinstance(reply, dict) and "choices" in reply:
        return reply
    if isinstance(reply, str):
        reply = {"content": reply}
    if not isinstance(reply, dict):
        raise TypeError(f"responder returned {type(reply).__name__}; expected str or dict")
    message: dict = {"role": "assistant", "content": reply.get("content")}
    calls = reply.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]),
                },
            }
            for c in calls
        ]
    produced = (message["content"] or "") + "".join(c["function"]["arguments"] for c in message.get("tool_calls", []))
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


class LoopbackServer:
    """Start with `with LoopbackServer(responder) as server:`; `server.base_url` ends in /v1."""

    def __init__(self, responder: Responder, faults: FaultPlan = None, delay: float = 1.0):
        self.responder = responder
        self.faults = faults
        self.delay = delay
        self.log: list[RequestLog] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback", daemon=True
        )

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> int:
        """Chat requests received so far, faulted ones included."""
        with self._lock:
            return len(self.log)

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
    def _admit(self, request: dict, authorization: str) -> tuple[int, str | None]:
        with self._lock:
            n = len(self.log) + 1
            plan = self.faults
            fault = plan(n, request) if callable(plan) else (plan or {}).get(n)
            self.log.append(RequestLog(n, str(request.get("model", "")), fault, authorization))
        return n, fault

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
                    self._send(404, _error_body(404, f"no route {self.path}"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path not in CHAT_PATHS:
                    self._send(404, _error_body(404, f"no route {self.path}"))
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, _error_body(400, "request body is not JSON"))
                    return
                n, fault = server._admit(request, self.headers.get("Authorization", ""))
                if fault and self._fault(fault):
                    return
                try:
                    body = completion_body(
                        str(request.get("model", "")),
                        request,
                        server.responder(str(request.get("model", "")), request),
                        n,
                    )
                except Exception as exc:  # noqa: BLE001 -- a broken responder is a server error, not a hung client
                    self._send(500, _error_body(500, f"responder failed: {type(exc).__name__}: {exc}"))
                    return
                self._send(200, body)

            def _fault(self, fault: str) -> bool:
                """Act out a fault; True when the request is finished."""
                if re.fullmatch(r"\d{3}", fault):
                    status = int(fault)
                    message = f"injected {status}"
                    if status == 401:  # echo the credential the way some servers do, to test scrubbing
                        message = f"Incorrect API key provided: {self.headers.get('Authorization', '')}"
                    headers = {"Retry-After": "0"} if status == 429 else {}
                    self._send(status, _error_body(status, message), headers)
                    return True
                if fault == "timeout":
                    # Hold the request past the client's timeout, then drop it: the responder never sees
                    # it, so a stateful scripted responder stays in step with the client's retries.
                    time.sleep(server.delay)
                    self.close_connection = True
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


def _error_body(status: int, message: str) -> dict:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": str(status)}}
