"""Network guard for tests: records and refuses every outbound connection of a Python process.

Put this directory first on PYTHONPATH and set INCOGNITA_NETGUARD_LOG to a file: every Python
process started with that environment (Snakemake, its jobs, their children) then imports this
module at start-up and installs an audit hook. A name lookup or a connection to anything but
the loopback interface is written to the log (pid, program, event, host) and fails with
OSError, so an attempt cannot go unnoticed and cannot reach the network either.
"""

import os
import sys

_LOG = os.environ.get("INCOGNITA_NETGUARD_LOG")
_LOCAL = {"", "localhost", "::1", "0.0.0.0", "ip6-localhost"}


def _is_local(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host)
    return host in _LOCAL or host.startswith("127.")


def _hook(event: str, args: tuple) -> None:
    if event == "socket.getaddrinfo":
        host = args[0]
    elif event == "socket.connect":
        address = args[1]
        if not isinstance(address, tuple):  # a Unix socket path: not the network
            return
        host = address[0]
    else:
        return
    if _is_local(host):
        return
    with open(_LOG, "a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()}\t{' '.join(sys.argv[:3])}\t{event}\t{host}\n")
    raise OSError(f"network guard: outbound {event} to {host!r} refused (see {_LOG})")


if _LOG:
    sys.addaudithook(_hook)
