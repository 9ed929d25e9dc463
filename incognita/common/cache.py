"""The content-addressed response cache for model calls.

One JSON file per canonical request, at `<dir>/<key[:2]>/<key>.json`, where the key is the
sha256 of the request's canonical JSON: model, messages, tools, sampling settings and every
other option that can change the answer, plus the trial's seed when sampling is not
deterministic (temperature above zero or left to the provider). Transport-only settings
(base URL, API key, timeout, retries) are not part of it, so the same request to another
mirror of a model is a hit.

Entries are written via a temp file and a rename in the same directory, so concurrent jobs
(`snakemake -j 8`) never see half an entry; two jobs writing the same key write the same
answer and the last rename wins. An entry holds the response, its token usage and the cost
computed when the call was made, never a key or a header.

Two identical requests in flight are one paid call: the transport holds `claim(key)` (a lock
file per key, across the threads and processes of every job) from the miss to the written
answer, and a second caller of the key waits there and then reads the first one's answer
(incognita.common.backends.transport.Transport).

An entry carries `digest`, the sha256 of its canonical JSON without the digest, so that an
entry altered by hand or by bit rot is told from an intact one. A damaged entry (unreadable,
not JSON, holding another key, missing the parts of a response, or not matching its digest)
is reported on stderr as damaged, reads as a miss, and is overwritten by the next answer: it
is never returned. Entries written before entries carried a digest (issue #55) have none:
they are kept and served as they are (they are a user's paid answers, and nothing can tell an
altered one from an intact one), noted once per process on stderr and counted by
`incognita cache stats`; the next answer to the same key is written with its digest.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from incognita.common.io import InputError, WriteError, atomic_write_text

CACHE_FORMAT = 1
DEFAULT_DIR = "cache/responses"
CACHE_ENV = "INCOGNITA_CACHE_DIR"


def resolve_dir(configured: str | None = None) -> Path:
    """The configured directory, else $INCOGNITA_CACHE_DIR, else cache/responses (relative to the
    working directory, which is the repository root under the workflow)."""
    return Path(configured or os.environ.get(CACHE_ENV) or DEFAULT_DIR)


def request_key(request: dict, seed: int | None) -> str:
    """sha256 of the canonical request; `seed` is None when sampling is deterministic."""
    canonical = json.dumps(
        {"format": CACHE_FORMAT, "request": request, "seed": seed},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# Entries without a digest are noted once per process (the first one's path), not once per read.
_LEGACY_NOTED = threading.Event()
# flock's answers on a file system that keeps no locks; said once per process.
NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS}
_NO_LOCKS_NOTED = threading.Event()


def digest(doc: dict) -> str:
    """sha256 of an entry's canonical JSON, its `digest` left out."""
    content = {k: v for k, v in doc.items() if k != "digest"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The entry stored under `key`, or None: a miss, or a damaged entry (reported on stderr)."""
        entry, problem = self.read(key)
        if problem:
            print(
                f"warning: cache entry {self.path(key)} is damaged ({problem}); treating it as a miss, "
                "the next answer overwrites it",
                file=sys.stderr,
            )
        elif entry is not None and "digest" not in entry and not _LEGACY_NOTED.is_set():
            _LEGACY_NOTED.set()
            print(
                f"note: cache entry {self.path(key)} (and any other written before entries carried a digest) "
                "has no digest to check it against; it is served as it is (`incognita cache stats` counts them)",
                file=sys.stderr,
            )
        return entry

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold `key` against every other claim of it, by this process's threads and by other
        processes: an exclusive lock on `<dir>/<key[:2]>/<key>.lock` (flock: the kernel frees it if
        its holder dies). The file exists only while claimed: its holder removes it before letting
        go, and a waiter that then holds a lock on a removed file takes the path's new one."""
        path = self.path(key).with_suffix(".lock")
        while True:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise WriteError(exc.errno, f"{path}: cannot write ({exc.strerror or exc})") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    current = os.path.samestat(os.fstat(fd), os.stat(path))
                except FileNotFoundError:
                    current = False
            except OSError as exc:
                os.close(fd)
                if exc.errno not in NO_LOCKS:
                    raise
                self._without_locks(path, exc)
                yield
                return
            except BaseException:
                os.close(fd)
                raise
            if current:
                break
            os.close(fd)
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # before the lock is let go: no waiter can take a stale file
            os.close(fd)

    def _without_locks(self, path: Path, exc: OSError) -> None:
        """A file system that takes no locks (some NFS mounts): the claim holds nothing back,
        said once per process; the transport's second look after the pace is then the only guard."""
        path.unlink(missing_ok=True)
        if not _NO_LOCKS_NOTED.is_set():
            _NO_LOCKS_NOTED.set()
            print(
                f"warning: {path.parent}: the file system takes no locks ({exc.strerror}); identical requests "
                "in flight at the same moment may each be paid",
                file=sys.stderr,
            )

    def read(self, key: str) -> tuple[dict | None, str | None]:
        """(entry, None) for a usable entry, (None, None) for none, (None, why) for a damaged one."""
        path = self.path(key)
        try:
            with path.open(encoding="utf-8") as fh:
                entry = json.load(fh)
        except FileNotFoundError:
            return None, None
        # UnicodeDecodeError (binary garbage) is a ValueError like JSONDecodeError, not an OSError.
        except (OSError, ValueError) as exc:
            return None, f"unreadable: {exc}"
        problem = entry_problem(entry, key)
        return (None, problem) if problem else (entry, None)

    def put(self, key: str, entry: dict) -> Path:
        path = self.path(key)
        doc = {"format": CACHE_FORMAT, "key": key, "created": time.time(), **entry}
        doc = json.loads(json.dumps(doc))  # the digest of what a reader will parse (tuples are lists there)
        doc["digest"] = digest(doc)
        atomic_write_text(path, json.dumps(doc, sort_keys=True, ensure_ascii=False) + "\n")
        return path

    def entries(self) -> Iterator[tuple[Path, dict]]:
        """Every usable entry; temp files, foreign files and damaged entries (see scan) are skipped."""
        for path, entry, _ in self.scan():
            if entry is not None:
                yield path, entry

    def scan(self) -> Iterator[tuple[Path, dict | None, str | None]]:
        """(path, entry, None) for each usable entry and (path, None, why) for each damaged one."""
        if not self.root.is_dir():
            return
        for shard in sorted(p for p in self.root.iterdir() if p.is_dir() and len(p.name) == 2):
            for path in sorted(shard.glob("*.json")):
                entry, problem = self.read(path.stem)
                if problem or entry is not None:
                    yield path, entry, problem


def entry_problem(entry, key: str) -> str | None:
    """Why a parsed entry cannot be used as the answer to `key` (None when it can). Checked on
    every read, so a damaged entry never reaches the episode loop as a model's response."""
    if not isinstance(entry, dict):
        return f"not a cache entry (a JSON {type(entry).__name__})"
    if entry.get("format") != CACHE_FORMAT:
        return f"format {entry.get('format')!r}, expected {CACHE_FORMAT}"
    if entry.get("key") != key:
        return f"holds the entry of key {str(entry.get('key'))[:16]}..., not of its file name"
    response, usage = entry.get("response"), entry.get("usage")
    if not isinstance(response, dict) or not isinstance(response.get("message"), dict):
        return "no response message"
    if not isinstance(usage, dict) or not all(
        isinstance(usage.get(k), int) for k in ("prompt_tokens", "completion_tokens")
    ):
        return "no token usage"
    if not isinstance(entry.get("cost_usd"), (int, float)):
        return "no cost"
    if "digest" in entry and entry["digest"] != digest(entry):
        return "its content does not match its digest: altered by hand or damaged on disk"
    return None


# --------------------------------------------------------------------------- inspection


@dataclass
class CacheStats:
    root: str
    entries: int = 0
    bytes: int = 0
    models: Counter = field(default_factory=Counter)
    roles: Counter = field(default_factory=Counter)
    cost_usd: float = 0.0
    oldest: float | None = None
    newest: float | None = None
    damaged: list[tuple[Path, str]] = field(default_factory=list)  # misses until the next answer rewrites them
    legacy: int = 0  # usable entries written before entries carried a digest

    def add(self, path: Path, entry: dict) -> None:
        self.entries += 1
        self.legacy += "digest" not in entry
        self.bytes += path.stat().st_size
        self.models[entry.get("model", "?")] += 1
        self.roles[entry.get("role", "?")] += 1
        self.cost_usd += float(entry.get("cost_usd") or 0.0)
        created = float(entry.get("created") or 0.0)
        self.oldest = created if self.oldest is None else min(self.oldest, created)
        self.newest = created if self.newest is None else max(self.newest, created)


def stats(cache: ResponseCache) -> CacheStats:
    out = CacheStats(root=str(cache.root))
    for path, entry, problem in cache.scan():
        if problem:
            out.damaged.append((path, problem))
        else:
            out.add(path, entry)
    return out


def select(
    cache: ResponseCache, older_than_days: float | None = None, model: str | None = None, now: float | None = None
) -> list[tuple[Path, dict]]:
    """Entries older than the age AND of the model (each criterion only when given)."""
    now = time.time() if now is None else now
    chosen = []
    for path, entry in cache.entries():
        if older_than_days is not None and now - float(entry.get("created") or 0.0) < older_than_days * 86400:
            continue
        if model is not None and entry.get("model") != model:
            continue
        chosen.append((path, entry))
    return chosen


def prune(
    cache: ResponseCache,
    older_than_days: float | None = None,
    model: str | None = None,
    dry_run: bool = False,
    now: float | None = None,
) -> list[Path]:
    if older_than_days is None and model is None:
        raise InputError("prune needs --older-than and/or --model (to empty the cache, delete its directory)")
    chosen = [path for path, _ in select(cache, older_than_days, model, now)]
    if not dry_run:
        for path in chosen:
            path.unlink(missing_ok=True)
    return chosen


# --------------------------------------------------------------------------- CLI
