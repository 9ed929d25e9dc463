"""Which code and environment produced a result: the package version, a hash of the package
source, the git commit when there is one, and the hash of the lock file.

Who writes: every stage that writes a result stamps it with `describe()` (episode records and
native results, as `code_version`) or `code_identity()` (CollabSim run manifests, as `code`);
the source manifest and CollabSim manifests also carry `lock_hash()`. Who reads: people, the
viewer, and `incognita collabsim replay`, which says when a run was made by other code.

The invariant: the source hash names the code that ran, in a checkout or not, committed or not.
It covers every file of the `incognita` package except bytecode, so a copy of the package (a
test's workflow copy, a SLURM node's checkout) hashes the same. The commit is added when the
package lies in a git checkout, with `+dirty` when its package files differ from that commit.

`requirements/lock.txt` pins every dependency to an exact version (refreshed with `bin/lock`);
bin/run, bin/test and CI install through it. Outside a checkout (a plain `pip install`) there is
no lock and the hash is "unlocked".
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
LOCK_FILE = PACKAGE_DIR.parent / "requirements" / "lock.txt"
UNLOCKED = "unlocked"


@functools.cache
def lock_hash() -> str:
    try:
        return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()
    except OSError:
        return UNLOCKED


@functools.cache
def source_hash() -> str:
    """sha256 over the package's files (relative path and bytes, in path order), bytecode excluded."""
    files = []
    for folder, subfolders, names in os.walk(PACKAGE_DIR):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        files += [Path(folder, n) for n in names if not n.endswith((".pyc", ".pyo"))]
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(PACKAGE_DIR).as_posix()):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def git_commit() -> str | None:
    """HEAD of the checkout holding the package (`+dirty` when the package differs from it), or None."""
    root = PACKAGE_DIR.parent
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None
        changed = git("status", "--porcelain", "--untracked-files=normal", "--", PACKAGE_DIR.name)
    except (OSError, subprocess.TimeoutExpired):  # no git on this machine
        return None
    return head.stdout.strip() + ("+dirty" if changed.stdout.strip() else "")


def code_identity() -> dict:
    """What a manifest records about the code: version, source hash, commit (None outside git)."""
    from incognita import __version__

    return {"version": __version__, "source_sha256": source_hash(), "git_commit": git_commit()}


def describe() -> str:
    from incognita import __version__

    lock = lock_hash()
    commit = git_commit()
    return (
        f"incognita {__version__} (source {source_hash()[:12]}"
        + (f", commit {commit[:12]}{'+dirty' if commit.endswith('+dirty') else ''}" if commit else "")
        + f", lock {lock[:12] if lock != UNLOCKED else UNLOCKED})"
    )
