"""A deterministic OpenAI-compatible model endpoint for the fault tests, run in its own process
so that a test can kill it like a real server.

    python tests/stub_openai.py --log LOG --port-file PORTFILE [--port N] [--key KEY]
                                [--hold-after N --release FILE] [--die-after N] [--delay S] [--status N]

It answers `POST /v1/chat/completions` at once and the same way every time:
- model `stub-agent` (the evaluated agent) asks the customer AGENT_QUESTIONS questions, one a
  turn, then ends the episode with FINAL (the JSON message protocol of every arm);
- any other model (the customer) answers with one fixed sentence.
A cell therefore costs 2 * AGENT_QUESTIONS + 1 calls. The log gets one JSON line per
event: `answered` as the response goes out (with the sha256 of the request body, so a
body answered twice is a call paid twice), `held`, `dropped` and `refused` (a wrong key).

Faults: `--hold-after N` keeps every request after the N-th waiting until the file `--release`
exists, then drops it unanswered (a call in flight when its client was killed is never paid
here); `--die-after N` SIGKILLs the server right after its N-th answer (the endpoint going away);
`--status 500` fails every call with that status (logged as `failed`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

AGENT_QUESTIONS = 2
CUSTOMER_REPLY = "I am not sure about that, sorry."


def reply_text(model: str, body: dict) -> str:
    if model != "stub-agent":
        return CUSTOMER_REPLY
    asked = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    if asked < AGENT_QUESTIONS:
        return json.dumps(
            {
                "recipient": "USER",
                "message": f"Question {asked + 1}: could you confirm your order?",
                "message_type": "MESSAGE",
            }
        )
    return json.dumps({"recipient": "ENVIRONMENT", "message": "Done.", "message_type": "FINAL"})


def completion(model: str, body: dict, text: str, n: int) -> dict:
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    return {
        "id": f"chatcmpl-stub-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": prompt + max(1, len(text) // 4),
        },
    }


def body_sha(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Stub:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.lock = threading.Lock()
        self.answering = threading.Lock()
        self.admitted = 0
        self.answered = 0
        self.log = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 -- open for the server's life

    def write(self, event: dict) -> None:
        with self.lock:
            self.log.write(json.dumps(event) + "\n")
            self.log.flush()

    def admit(self) -> int:
        with self.lock:
            self.admitted += 1
            return self.admitted

    def held(self, n: int) -> bool:
        a = self.args
        return a.hold_after is not None and n > a.hold_after and not Path(a.release).exists()


def handler(stub: Stub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": []})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw)
            model = str(body.get("model", ""))
            n = stub.admit()
            if stub.args.key and self.headers.get("Authorization") != f"Bearer {stub.args.key}":
                stub.write({"event": "refused", "n": n})  # the header itself is never logged
                self._send(401, {"error": {"message": "bad key", "type": "authentication_error"}})
                return
            if stub.args.status != 200:  # a server failing every call
                stub.write({"event": "failed", "n": n, "model": model, "status": stub.args.status})
                self._send(stub.args.status, {"error": {"message": "internal error", "type": "server_error"}})
                return
            if stub.held(n):
                stub.write({"event": "held", "n": n, "model": model})
                while not Path(stub.args.release).exists():
                    time.sleep(0.05)
                stub.write({"event": "dropped", "n": n, "model": model})
                self.close_connection = True
                self.connection.close()
                return
            time.sleep(stub.args.delay)
            # One answer at a time, logged before it is sent (the client may read the log as soon
            # as it has the answer): when the server dies after its N-th answer, no other answer
            # has gone out, whole or in part.
            with stub.answering:
                stub.answered += 1
                stub.write({"event": "answered", "n": n, "model": model, "sha256": body_sha(body)})
                self._send(200, completion(model, body, reply_text(model, body), n))
                if stub.args.die_after is not None and stub.answered >= stub.args.die_after:
                    os.kill(os.getpid(), signal.SIGKILL)

        def _send(self, status: int, doc: dict) -> None:
            data = json.dumps(doc).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--key", default=None)
    ap.add_argument("--hold-after", type=int, default=None)
    ap.add_argument("--release", default=None)
    ap.add_argument("--die-after", type=int, default=None)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--status", type=int, default=200, help="answer every call with this HTTP status")
    args = ap.parse_args()
    stub = Stub(args)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), handler(stub))
    httpd.daemon_threads = True
    tmp = Path(args.port_file + ".tmp")
    tmp.write_text(str(httpd.server_address[1]))
    tmp.replace(args.port_file)  # whole or absent: the test polls for it
    httpd.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
