"""Which environment produced a result: the package version and the hash of the lock file.

`requirements/lock.txt` pins every dependency to an exact version (refreshed with `bin/lock`);
bin/run, bin/test and CI install through it. Its sha256 goes into the source manifest, every
episode record, native result and CollabSim run manifest, so a result says which environment
made it. Outside a checkout (a plain `pip install`) there is no lock and the hash is "unlocked".
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

LOCK_FILE = Path(__file__).resolve().parents[2] / "requirements" / "lock.txt"
UNLOCKED = "unlocked"


@functools.cache
def lock_hash() -> str:
    try:
        return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()
    except OSError:
        return UNLOCKED


def describe() -> str:
    from incognita import __version__

    lock = lock_hash()
    return f"incognita {__version__} (lock {lock[:12] if lock != UNLOCKED else UNLOCKED})"
