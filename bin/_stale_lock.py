"""Called by bin/run when .snakemake/locks is not empty: is that lock stale?

Snakemake writes its lock when it starts and removes it when it ends, even on an error; only a
run that is killed outright (kill -9, a closed session, a power cut) leaves it behind, and every
later run then refuses to start until someone runs `snakemake --unlock`. Removing a lock that a
live run holds would let two runs write the same files, so the lock counts as stale only when
no Snakemake process is working in this directory.

Exit status: 0 stale (bin/run unlocks), 1 held by a live run (left alone), 2 cannot tell
without /proc (the one-line fix is printed instead).
"""

from __future__ import annotations

import os
import sys
from itertools import pairwise
from pathlib import Path


def snakemake_processes(workdir: str) -> list[int]:
    """Processes running Snakemake (its script, or `python -m snakemake`) with `workdir` as their
    working directory; bin/run and this script are not among them."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in (os.getpid(), os.getppid()):
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to inspect
            continue
        if cwd != workdir:
            continue
        names = [os.path.basename(a.decode(errors="replace")) for a in argv]
        if "snakemake" in names or any(a == "-m" and b == "snakemake" for a, b in pairwise(names)):
            found.append(int(proc.name))
    return found


def main() -> int:
    workdir = os.path.realpath(os.getcwd())
    if not Path("/proc/self/cwd").exists():
        print(
            f"[run] {workdir}/.snakemake/locks is not empty. If no other Snakemake run is working here, "
            f"remove the stale lock with: (cd {workdir} && .venv/bin/snakemake --unlock)",
            file=sys.stderr,
        )
        return 2
    live = snakemake_processes(workdir)
    if live:
        print(
            f"[run] Snakemake is running in {workdir} (pid {', '.join(map(str, live))}); its lock stays",
            file=sys.stderr,
        )
        return 1
    print(
        f"[run] removing the lock of a Snakemake run that was killed (no Snakemake process is running in {workdir})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
