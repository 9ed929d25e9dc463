"""Serve a built site on a loopback port: a convenience, since the site opens from disk too."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Quiet(SimpleHTTPRequestHandler):
    """No line per request: the terminal is for the address and errors."""

    def log_message(self, format, *args):
        pass


def server(directory: str | Path, port: int = 0) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (port 0: any free one); call serve_forever() on it."""
    handler = functools.partial(_Quiet, directory=str(directory))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)
