"""The whole-attempt bound: an attempt ends at its deadline, however slowly the endpoint answers.

Why it exists: the HTTP library under both SDKs (httpx) bounds each wait on the network -- to
connect, for each read, for each write -- and not the attempt. An endpoint that sends a byte now
and then satisfies every read in time and keeps the call open for as long as it likes (issue #55:
257 s into the first attempt with `timeout: 5`). Its `Timeout` has no total, so the bound is
placed one level lower, where every wait happens: the connection pool's network backend.

Who uses it: the transport (transport.Transport._call) opens `attempt(seconds)` around each
attempt; a protocol's `connect` builds its client on `http_transport(...)` (the SDKs' documented
route: `http_client=sdk.DefaultHttpxClient(transport=...)`, `sdk_http_client` below). Every
socket operation of that transport then waits at most until the deadline of the attempt running
on the calling thread (the SDK clients are synchronous: the attempt's I/O runs on its caller's
thread), and once it has passed the next one fails at once with the HTTP library's own timeout
error, which the SDK reports as its APITimeoutError and the transport retries like any timeout.
The connection is closed by the library, as after any timeout: nothing keeps reading.

The invariant: outside an `attempt` (no deadline on this thread), the transport is the
library's own, wait for wait.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any

# The deadline (time.monotonic()) of the attempt running on this thread, or None. A ContextVar is
# per thread for plain threads, which is all the synchronous SDK clients use.
_DEADLINE: ContextVar[float | None] = ContextVar("incognita_attempt_deadline", default=None)

# The connection pool of the SDKs' own clients (both set 1000 connections, 100 kept alive); the
# endpoint's pace (incognita.common.pacing) is what limits the calls in flight.
MAX_CONNECTIONS, MAX_KEEPALIVE = 1000, 100

# The HTTP library an SDK is built on -> its connection layer.
_CORE = {"httpx": "httpcore", "httpx2": "httpcore2"}


@contextmanager
def attempt(seconds: float) -> Iterator[None]:
    """Bound the network waits of the code inside (on this thread) to `seconds` in all."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` for one wait, cut to what is left of the attempt; `expired` once nothing is."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the attempt's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """A connection whose every wait ends by the attempt's deadline (the library's NetworkStream)."""

    def __init__(self, inner: Any, core: ModuleType):
        self._inner, self._core = inner, core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, timeout=_bounded(timeout, self._core.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout=_bounded(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        bounded = _bounded(timeout, self._core.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname=server_hostname, timeout=bounded), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """The library's synchronous network backend, its connections bounded (the NetworkBackend interface)."""

    def __init__(self, core: ModuleType):
        self._inner, self._core = core.SyncBackend(), core

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> _Stream:
        timeout = _bounded(timeout, self._core.ConnectTimeout)
        inner = self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return _Stream(inner, self._core)

    def connect_unix_socket(self, path, timeout=None, socket_options=None) -> _Stream:
        timeout = _bounded(timeout, self._core.ConnectTimeout)
        return _Stream(
            self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options), self._core
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def http_transport(httpx: ModuleType) -> Any:
    """An `httpx.HTTPTransport` (or httpx2's: pass the module the client is built on) whose
    connections end every wait by the attempt's deadline."""
    core = importlib.import_module(_CORE[httpx.__name__])
    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE)
    transport = httpx.HTTPTransport(limits=limits)
    # HTTPTransport takes no network backend; the pool it builds is rebuilt with one (the pool's
    # own documented argument), with the same settings.
    transport._pool = core.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend(core),
    )
    return transport


def sdk_http_client(sdk: ModuleType) -> Any:
    """The HTTP client for an SDK's client (`openai`, `anthropic`): its own default client class
    (`DefaultHttpxClient`: its timeouts, redirects) over `http_transport`, on the HTTP library the
    class is built on."""
    client_class = sdk.DefaultHttpxClient
    library = next(c.__module__.partition(".")[0] for c in client_class.__mro__ if c.__name__ == "Client")
    return client_class(transport=http_transport(importlib.import_module(library)))
