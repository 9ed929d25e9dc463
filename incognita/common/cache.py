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
computed when the call was made, never a key or a header. A damaged entry (unreadable, not
JSON, holding another key, or missing the parts of a response) is reported on stderr as
damaged, reads as a miss, and is overwritten by the next answer: it is never returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from incognita.common.io import InputError, atomic_write_text

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
        return entry

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

    def add(self, path: Path, entry: dict) -> None:
        self.entries += 1
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
