"""One shared pace per endpoint: requests and tokens per minute, calls in flight, backoff on 429.

Who uses it: `OpenAIBackend._call` wraps every network attempt in `Pacer.attempt()` and reports
how it ended (`ok`, `throttled(retry_after)`, `server_error()`). Cache hits never reach it.

The invariant: every process that calls one endpoint (the threads of a job, the jobs of a
workflow, SLURM jobs on one node) draws from the same budget, held in one SQLite file per
endpoint under `cache/pacing/` (`$INCOGNITA_PACING_DIR`). So `-j 8` jobs each running eight
episodes at once still send at most `rpm` requests and `tpm` tokens a minute and hold at most
`max_in_flight` calls open, together.

The mechanism, smallest first:
- requests and tokens per minute: two pyrate-limiter SQLite buckets (a sliding-window log with a
  file lock, built for several processes). Tokens are counted in units of tpm/2000 tokens so
  that a window holds at most ~2000 rows, whatever the limit; the fraction of a unit that a call
  leaves over is carried to the next call of the process, so rounding neither over-counts (a
  call of 2.2 units is not charged 3) nor under-counts;
- calls in flight: rows in a `flight` table, taken and given back inside SQLite transactions;
  a row whose process has died is reclaimed, so a killed job never leaks a slot;
- a share of the requests held back for the longest chains: a call marked `critical` (the harness
  marks the cells of the design's longest-expected arm) may use the whole budget; while critical
  calls have been made within the last window, any other call also takes its request from a
  second bucket that holds RESERVE less and releases it a twelfth of the window at a time. A
  burst of short episodes then cannot spend a whole window and stall the episode that decides
  when the run ends (at 60/min the sliding window let 60 calls go in 40 s, then none for 20 s).
  Tokens are not held back: a critical call's prompt is often small, and tokens held for it went
  unused where tokens bind (bench/throughput.py's smoke row at 60/min: 80% of tpm with tokens
  held back, 88% without). With no critical call in the window nothing is held back;
- adaptation (additive increase, multiplicative decrease, as inspect_ai adapts its connections):
  a 429 halves the shared in-flight cap and pauses every caller until its `Retry-After` has
  passed; each success adds 1/cap back until the configured cap; a 5xx holds growth for a
  minute. One caller's 429 slows all of them instead of each retrying on its own.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

from incognita.common.io import InputError

PACING_ENV = "INCOGNITA_PACING_DIR"
DEFAULT_DIR = "cache/pacing"
TOKEN_ROWS = 2000  # rows a full token window holds: tokens are counted in units of tpm / TOKEN_ROWS
# The buckets' window is this much longer than the provider's: a request is admitted here a little
# before the provider counts it, so with equal windows the first request after a full window can
# reach the provider while the one it replaces is still in the provider's window (a 429 that then
# pauses every caller). 2% keeps 98% of the limit.
WINDOW_MARGIN = 0.02
# The share of each limit that only critical calls may use (see the module's docstring).
RESERVE = 1 / 6
SPREAD = 12  # while the reserve is held back, other calls get at most 1/SPREAD of their part per 1/SPREAD window
POLL = 0.02  # seconds between looks at a full flight table or a pause (cheap: one SQLite read)
GROWTH_HOLD = 60.0  # seconds a 5xx holds the cap's growth


@dataclass(frozen=True)
class Limits:
    """An endpoint's budget; None leaves that dimension unlimited."""

    rpm: int | None = 500
    tpm: int | None = 1_000_000
    max_in_flight: int = 32

    def check(self, where: str) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value > 0):
                raise InputError(f"{where}: {name}: expected a positive integer or null, got {value!r}")
        if not (isinstance(self.max_in_flight, int) and self.max_in_flight > 0):
            raise InputError(f"{where}: max_in_flight: expected a positive integer, got {self.max_in_flight!r}")


def resolve_dir(configured: str | None = None) -> Path:
    return Path(configured or os.environ.get(PACING_ENV) or DEFAULT_DIR)


def endpoint_id(base_url: str | None, model: str) -> str:
    """Providers limit per organisation and model; one file per (endpoint, model) is that budget."""
    return hashlib.sha256(f"{base_url or 'default'}|{model}".encode()).hexdigest()[:16]


def estimate_tokens(body: dict) -> int:
    """What a provider charges against tokens per minute when it admits a request body: the prompt
    (about four characters a token, of the messages as JSON, and of Anthropic's top-level
    `system` when there is one) plus the output cap when one is set (`max_completion_tokens` or
    `max_tokens`). The loopback's provider mode charges the same."""
    cap = body.get("max_completion_tokens") or body.get("max_tokens") or 0
    system = json.dumps(body["system"]) if body.get("system") else ""
    prompt = max(1, (len(system) + len(json.dumps(body.get("messages", [])))) // 4)
    return prompt + (cap if isinstance(cap, int) else 0)


class Pacer:
    """The shared pace of one endpoint, as seen from this process (thread-safe)."""

    def __init__(self, key: str, limits: Limits, directory: Path, window: float = 60.0):
        # `window`: the length of a "minute"; only tests shorten it (rpm then counts per window).
        self.limits, self.window = limits, window
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{key}.sqlite"
        self._owner = f"{socket.gethostname()}:{os.getpid()}"
        self._local = threading.local()
        self._requests = self._bucket(key, "requests", limits.rpm)
        self._token_unit = max(1, math.ceil(limits.tpm / TOKEN_ROWS)) if limits.tpm else 1
        token_units = limits.tpm and math.ceil(limits.tpm / self._token_unit)
        self._tokens = self._bucket(key, "tokens", token_units)
        # The requests every call may use: RESERVE less (critical calls skip this bucket).
        general = limits.rpm and max(1, math.floor(limits.rpm * (1 - RESERVE)))
        self._general_requests = self._bucket(key, "requests_general", general, SPREAD)
        self._carry, self._carry_lock = 0.0, threading.Lock()  # units owed by this process's earlier calls
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS flight (owner TEXT, pid INTEGER, host TEXT, since REAL)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS adapt (id INTEGER PRIMARY KEY CHECK (id = 0), cap REAL, "
                "pause_until REAL, hold_until REAL, throttled INTEGER)"
            )
            # Until when critical calls have a share held back for them (a table of its own, so
            # pacing files made before it still open).
            db.execute("CREATE TABLE IF NOT EXISTS critical (id INTEGER PRIMARY KEY CHECK (id = 0), until REAL)")
            db.execute("INSERT OR IGNORE INTO critical VALUES (0, 0)")
            db.execute(
                "INSERT OR IGNORE INTO adapt VALUES (0, ?, 0, 0, 0)",
                (float(limits.max_in_flight),),
            )
            # The configured cap may have changed since the file was made: never above it.
            db.execute("UPDATE adapt SET cap = MIN(cap, ?)", (float(limits.max_in_flight),))

    # ------------------------------------------------------------------ storage
    def _bucket(self, key: str, table: str, per_minute: int | None, spread: int = 1):
        """A shared sliding-window bucket of `per_minute` units; with `spread` > 1 also at most its
        share in each 1/spread of the window (when that share is less than the whole), so that its
        units cannot go out in one burst."""
        if not per_minute:
            return None
        from pyrate_limiter import Limiter, Rate, SQLiteBucket

        window_ms = int(self.window * (1 + WINDOW_MARGIN) * 1000)
        rates = [Rate(per_minute, window_ms)]
        part = math.ceil(per_minute / spread)
        if part < per_minute:  # at 1 or 2 a minute a part is the whole (pyrate-limiter refuses two equal limits)
            rates.insert(0, Rate(part, window_ms // spread))
        path = self.path.with_name(f"{key}-{table}.sqlite")
        bucket = SQLiteBucket.init_from_file(rates, table=table, db_path=str(path), use_file_lock=True)
        return Limiter(bucket, buffer_ms=10)

    @contextmanager
    def _db(self):
        """A transaction that holds the write lock from its first statement (BEGIN IMMEDIATE), so
        a check-then-take of a flight slot is atomic across processes."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # A rollback journal kept between transactions (PERSIST) and no fsync per commit: creating
            # and deleting the journal file cost ~1.5 ms a call, and the state is a minute's worth of
            # pacing (a dead process's slots are reclaimed). Not WAL: switching a shared file to WAL
            # races its other openers ("database is locked" without a wait).
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA journal_mode=PERSIST")
            self._local.conn = conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # ------------------------------------------------------------------ the caller's side
    @contextmanager
    def attempt(self, tokens: int, critical: bool = False):
        """Hold one call's place: wait out a pause, take a flight slot, then the request and its
        tokens from the minute's budget (a call that is not critical takes its request from the
        general part first). The slot is given back however the call ends."""
        waited, held_back = self._take_slot(critical)
        self._local.attempting = True
        try:
            weight = self._token_weight(tokens)
            if not critical and self._general_requests is not None:
                # Counted in the general part whenever there is room, so that the part is right when
                # a critical call arrives; waited for only while the reserve is held back
                # (pyrate-limiter: -1 waits for room, 0 only takes what is free).
                self._general_requests.try_acquire("requests_general", timeout=-1 if held_back else 0)
            if self._requests is not None:
                self._requests.try_acquire("requests")
            if weight:
                self._tokens.try_acquire("tokens", weight=weight)
            yield waited
        finally:
            self._local.attempting = False
            self._give_slot()

    def _token_weight(self, tokens: int) -> int:
        """Whole units to take for a call of `tokens`: its share plus what earlier calls left over,
        rounded down, the rest carried. Never more than a whole window (a larger call still goes)."""
        if self._tokens is None:
            return 0
        with self._carry_lock:
            owed = self._carry + tokens / self._token_unit
            weight = int(owed)
            self._carry = owed - weight
        return min(weight, math.ceil(self.limits.tpm / self._token_unit))

    def _take_slot(self, critical: bool) -> tuple[float, bool]:
        """Wait for a flight slot: (seconds waited, whether this call must leave the reserve alone)."""
        start = time.monotonic()
        me = threading.get_ident()
        while True:
            now = time.time()
            with self._db() as db:
                cap, pause_until = db.execute("SELECT cap, pause_until FROM adapt").fetchone()
                if now >= pause_until:
                    self._reclaim(db)
                    (taken,) = db.execute("SELECT COUNT(*) FROM flight").fetchone()
                    if taken < max(1, int(cap)):
                        db.execute(
                            "INSERT INTO flight VALUES (?, ?, ?, ?)",
                            (f"{self._owner}:{me}", os.getpid(), socket.gethostname(), now),
                        )
                        if critical:
                            db.execute("UPDATE critical SET until = MAX(until, ?)", (now + self.window,))
                            return time.monotonic() - start, False
                        (until,) = db.execute("SELECT until FROM critical").fetchone()
                        return time.monotonic() - start, until > now
            time.sleep(max(POLL, min(pause_until - now, 1.0)) if now < pause_until else POLL)

    def _give_slot(self) -> None:
        owner = f"{self._owner}:{threading.get_ident()}"
        succeeded, self._local.succeeded = getattr(self._local, "succeeded", False), False
        with self._db() as db:
            db.execute("DELETE FROM flight WHERE rowid = (SELECT MIN(rowid) FROM flight WHERE owner = ?)", (owner,))
            if succeeded:
                self._grow(db)

    def _reclaim(self, db) -> None:
        """Drop the slots of processes on this host that no longer exist (a job killed mid-call)."""
        host = socket.gethostname()
        for (pid,) in db.execute("SELECT DISTINCT pid FROM flight WHERE host = ?", (host,)).fetchall():
            if not _alive(pid):
                db.execute("DELETE FROM flight WHERE host = ? AND pid = ?", (host, pid))

    # ------------------------------------------------------------------ how it went
    def ok(self) -> None:
        """A success: inside an attempt it is counted when the slot is given back (one transaction)."""
        if getattr(self._local, "attempting", False):
            self._local.succeeded = True
            return
        with self._db() as db:
            self._grow(db)

    def _grow(self, db) -> None:
        db.execute(
            "UPDATE adapt SET cap = MIN(?, cap + 1.0 / MAX(cap, 1.0)) WHERE hold_until <= ?",
            (float(self.limits.max_in_flight), time.time()),
        )

    def throttled(self, retry_after: float | None) -> None:
        """A 429: halve the shared cap (never below one call) and pause everyone for Retry-After."""
        now = time.time()
        with self._db() as db:
            db.execute(
                "UPDATE adapt SET cap = MAX(1.0, cap / 2), pause_until = MAX(pause_until, ?), "
                "throttled = throttled + 1",
                (now + (1.0 if retry_after is None else retry_after),),
            )

    def server_error(self) -> None:
        with self._db() as db:
            db.execute("UPDATE adapt SET hold_until = ?", (time.time() + GROWTH_HOLD,))

    def state(self) -> dict:
        """The shared state, for progress output and tests."""
        with self._db() as db:
            self._reclaim(db)
            cap, pause_until, hold_until, throttled = db.execute(
                "SELECT cap, pause_until, hold_until, throttled FROM adapt"
            ).fetchone()
            (flying,) = db.execute("SELECT COUNT(*) FROM flight").fetchone()
            (critical_until,) = db.execute("SELECT until FROM critical").fetchone()
        return {
            "cap": cap,
            "in_flight": flying,
            "paused_for": max(0.0, pause_until - time.time()),
            "growth_held_for": max(0.0, hold_until - time.time()),
            "throttled": throttled,
            "reserve_held_for": max(0.0, critical_until - time.time()),
        }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_PACERS: dict[tuple, Pacer] = {}
_PACERS_LOCK = threading.Lock()


def pacer_for(base_url: str | None, model: str, limits: Limits, directory: str | None = None) -> Pacer:
    """One Pacer per (endpoint, model, limits, directory) and process."""
    where = resolve_dir(directory)
    ident = (endpoint_id(base_url, model), limits, str(where))
    with _PACERS_LOCK:
        if ident not in _PACERS:
            _PACERS[ident] = Pacer(ident[0], limits, where)
        return _PACERS[ident]


# ---------------------------------------------------------------------- pacing apart from results
# An entry's pacing settings change how fast its calls go, never what they return, so editing them
# must not re-run a job. The workflow therefore hands a job its entries without them (a compared
# param) and the settings in one `--pacing` map beside them (a param Snakemake does not compare:
# rules/common.smk, get_pacing); the commands put them back before building a backend.
PACING_KEYS = tuple(f.name for f in fields(Limits))  # rpm, tpm, max_in_flight: the model entry's names too


def without_pacing(entry):
    """(the entry without its pacing settings, those settings) for a config entry: a spec string,
    a mapping, or None."""
    if not isinstance(entry, dict):
        return entry, {}
    return {k: v for k, v in entry.items() if k not in PACING_KEYS}, {k: entry[k] for k in PACING_KEYS if k in entry}


def pacing_map(entries) -> str:
    """The `--pacing` value for these config entries: compact JSON mapping each paced entry's
    one-string form (without pacing, as the job receives it) to its settings; "{}" when none is."""
    from incognita.common.backends.base import entry_param

    out = {}
    for entry in entries:
        stripped, pacing = without_pacing(entry)
        if pacing:
            out[entry_param(stripped)] = pacing
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def with_pacing(param: str, pacing: dict) -> str:
    """A one-string entry as the command received it, with its settings from the `--pacing` map."""
    extra = pacing.get(param)
    if not extra:
        return param
    from incognita.common.backends.base import split_entry

    spec, settings = split_entry(param)
    return json.dumps({"spec": spec, **settings, **extra}, sort_keys=True, separators=(",", ":"))


def pacing_option():
    """The commands' --pacing (the workflow passes it; by hand, put rpm/tpm/max_in_flight in the entry)."""
    import click

    def parse(ctx, param, value):
        try:
            doc = json.loads(value)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"not JSON ({exc.msg}): {value[:120]!r}") from None
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise click.BadParameter(f"expected a mapping of entries to their pacing settings, got {value[:120]!r}")
        return doc

    return click.option(
        "--pacing",
        default="{}",
        callback=parse,
        help="JSON: model entry (as given to this command) -> its rpm/tpm/max_in_flight; what the workflow "
        "passes so that editing a rate limit re-runs nothing",
    )
