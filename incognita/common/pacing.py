"""One shared pace per endpoint: requests and tokens per minute, calls in flight, backoff on 429.

Who uses it: the backends' transport (`incognita.common.backends.transport.Transport._call`) wraps
every network attempt in `Pacer.attempt()` and reports how it ended (`ok`,
`throttled(retry_after)`, `server_error()`). Cache hits never reach it.

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
- one line of waiting calls: a call takes its request and tokens only when it is first in the
  endpoint's line, across processes, and one call at a time (`line_key`). While the window's
  requests are a larger share of rpm than its tokens of tpm (`requests_scarcer`, from the
  admissions of the window up to the latest one, in an `admitted` table; short prompts early in a
  run), the
  call with the most tokens goes first, so each scarce request carries as much as any waiting
  call could; otherwise the call with the fewest, so the first in line fits the token window
  soonest. A call passed over for OVERDUE windows goes ahead of all others. Each process's first
  waiting call stands in a `line` table for the others (its threads wait on a condition, so there
  is one poller per process);
- a share of the requests held back for the longest chains: a call marked `critical` (the harness
  marks the cells of the design's longest-expected arm) may use the whole budget; while critical
  calls have been made within the last window, any other call also takes its request from a
  second bucket that holds the reserve (Limits.reserve, a sixth by default) less and releases it
  a twelfth of the window at a time. A burst of short episodes then cannot spend a whole window
  and stall the episode that decides when the run ends (at 60/min the sliding window let 60
  calls go in 40 s, then none for 20 s). That only pays where the longest chain is a good part of
  the run: where the run is many times longer, the requests held for its chains are lost to the
  calls that carry the budget the run waits for, so the workflow sets the reserve to 0 there
  (incognita.access.planning.cost_estimate.reserve_forecast; bench/throughput.py at 60/min: the 72-cell
  row reached 85-87% of tpm without it, 84% with it; docs/models.md). Tokens are never held back:
  a critical call's prompt is often small, and tokens held for it went unused where tokens
  bind (bench/throughput.py's smoke row at 60/min: 80% of tpm with tokens held back, 88%
  without). With no critical call in the window nothing is held back;
- adaptation (additive increase, multiplicative decrease, as inspect_ai adapts its connections):
  a 429 halves the shared in-flight cap and pauses every caller until its `Retry-After` has
  passed; each success adds 1/cap back until the configured cap; a 5xx holds growth for a
  minute. One caller's 429 slows all of them instead of each retrying on its own.
"""

from __future__ import annotations

import hashlib
import itertools
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
# The length of the pace's "minute" in seconds, for a benchmark that runs a provider's limits and
# latencies faster (bench/throughput.py --time-scale: its loopback's windows shortened alike); unset
# in any real run, where the provider's window is a minute.
WINDOW_ENV = "INCOGNITA_PACING_WINDOW"
DEFAULT_DIR = "cache/pacing"
TOKEN_ROWS = 2000  # rows a full token window holds: tokens are counted in units of tpm / TOKEN_ROWS
# The buckets' window is this much longer than the provider's: a request is admitted here a little
# before the provider counts it, so with equal windows the first request after a full window can
# reach the provider while the one it replaces is still in the provider's window (a 429 that then
# pauses every caller). 2% keeps 98% of the limit.
WINDOW_MARGIN = 0.02
# The share of the requests that only critical calls may use, unless a model entry sets its own
# (Limits.reserve; see the module's docstring).
RESERVE = 1 / 6
SPREAD = 12  # while the reserve is held back, other calls get at most 1/SPREAD of their part per 1/SPREAD window
# Windows a waiting call may be passed over by calls with more tokens before it goes first
# (bench/order_replay.py on the 72-cell row at 60/min: 89% of tpm with 2, 87% with 1).
OVERDUE = 2
POLL = 0.02  # seconds between looks at a full flight table or a pause (cheap: one SQLite read)
LINE_POLL_MAX = 0.2  # seconds between looks at the shared line, at most (see Pacer._wait_turn)
GROWTH_HOLD = 60.0  # seconds a 5xx holds the cap's growth


@dataclass(frozen=True)
class Limits:
    """An endpoint's budget; None leaves that dimension unlimited."""

    rpm: int | None = 500
    tpm: int | None = 1_000_000
    max_in_flight: int = 32
    # The share of rpm only critical calls may use (see the module's docstring); 0 holds nothing
    # back. The workflow sets 0 where the design's estimate expects the longest chain to be a
    # small part of the run (incognita.access.planning.cost_estimate.reserve_forecast).
    reserve: float = RESERVE

    def check(self, where: str) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value > 0):
                raise InputError(f"{where}: {name}: expected a positive integer or null, got {value!r}")
        if not (isinstance(self.max_in_flight, int) and self.max_in_flight > 0):
            raise InputError(f"{where}: max_in_flight: expected a positive integer, got {self.max_in_flight!r}")
        if isinstance(self.reserve, bool) or not (isinstance(self.reserve, (int, float)) and 0 <= self.reserve < 1):
            raise InputError(
                f"{where}: reserve: expected a share of rpm from 0 up to (not including) 1, got {self.reserve!r}"
            )


def line_key(tokens: int, since: float, now: float, window: float, scarce_requests: bool) -> tuple:
    """A waiting call's place in its endpoint's line (the smallest key goes first): a call that has
    waited more than OVERDUE windows first, the longest-waiting of those first; then, while
    requests are the scarcer budget, the call with the most tokens (each request carries as much as
    any waiting call could), otherwise the call with the fewest (the first in line fits the token
    window soonest, so no token room idles while a large call waits for more); equals by arrival."""
    if now - since > OVERDUE * window:
        return (0, 0, since)
    return (1, -tokens if scarce_requests else tokens, since)


def requests_scarcer(calls: int, tokens: int, limits: Limits) -> bool:
    """Whether a window's `calls` are a larger share of rpm than its `tokens` are of tpm (False
    unless both limits are set: with requests alone limited, holding some back costs no tokens)."""
    return bool(limits.rpm and limits.tpm) and calls * limits.tpm > tokens * limits.rpm


def resolve_dir(configured: str | None = None) -> Path:
    return Path(configured or os.environ.get(PACING_ENV) or DEFAULT_DIR)


def resolve_window() -> float:
    """The window's length: a minute, unless $INCOGNITA_PACING_WINDOW shortens it (benchmarks only)."""
    raw = os.environ.get(WINDOW_ENV)
    if not raw:
        return 60.0
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"${WINDOW_ENV}: expected a positive number of seconds, got {raw!r}")
    return value


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
        # `window`: the length of a "minute"; only tests and benchmarks (resolve_window) shorten it
        # (rpm then counts per window).
        self.limits, self.window = limits, window
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{key}.sqlite"
        self._owner = f"{socket.gethostname()}:{os.getpid()}"
        self._local = threading.local()
        self._requests = self._bucket(key, "requests", limits.rpm)
        self._token_unit = max(1, math.ceil(limits.tpm / TOKEN_ROWS)) if limits.tpm else 1
        token_units = limits.tpm and math.ceil(limits.tpm / self._token_unit)
        self._tokens = self._bucket(key, "tokens", token_units)
        # The requests every call may use: the reserve less (critical calls skip this bucket).
        general = limits.rpm and limits.reserve and max(1, math.floor(limits.rpm * (1 - limits.reserve)))
        self._general_requests = self._bucket(key, "requests_general", general, SPREAD)
        self._carry, self._carry_lock = 0.0, threading.Lock()  # units owed by this process's earlier calls
        # This process's waiting calls (ticket -> (tokens, since)); the first of them stands in the
        # shared line for the process (`_standing`), the others wait on the condition.
        self._line, self._waiting, self._standing = threading.Condition(), {}, None
        self._scarce_requests = False  # as last read from the window's admissions
        self._tickets = itertools.count()
        self._stand_as = f"{self._owner}:{id(self)}"  # this Pacer's row in the line
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS flight (owner TEXT, pid INTEGER, host TEXT, since REAL)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS line (owner TEXT PRIMARY KEY, pid INTEGER, host TEXT, tokens INTEGER, since REAL, "
                "admitting INTEGER)"
            )
            db.execute("CREATE TABLE IF NOT EXISTS admitted (at REAL, tokens INTEGER)")
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
        """Hold one call's place: take its request from the general part if it is not critical, wait
        for its turn in the endpoint's line, then (first in line) wait out a pause, take a flight
        slot, and take the request and its tokens from the minute's budget. Yields the seconds
        waited. The slot is given back however the call ends."""
        start = time.monotonic()
        held_back = self._enter(critical)
        if not critical and self._general_requests is not None:
            # Counted in the general part whenever there is room, so that the part is right when
            # a critical call arrives; waited for only while the reserve is held back
            # (pyrate-limiter: -1 waits for room, 0 only takes what is free). Before the line, so
            # that a call waiting here holds up no critical call behind it.
            self._general_requests.try_acquire("requests_general", timeout=-1 if held_back else 0)
        with self._turn(tokens):
            self._take_slot()
            try:
                weight = self._token_weight(tokens)
                if self._requests is not None:
                    self._requests.try_acquire("requests")
                if weight:
                    self._tokens.try_acquire("tokens", weight=weight)
            except BaseException:
                self._give_slot()
                raise
        self._local.attempting = True
        try:
            yield time.monotonic() - start
        finally:
            self._local.attempting = False
            self._give_slot()

    def _enter(self, critical: bool) -> bool:
        """A critical call holds the reserve back for a window; for another call: whether the
        reserve is held back now (a critical call within the window)."""
        now = time.time()
        with self._db() as db:
            if critical:
                db.execute("UPDATE critical SET until = MAX(until, ?)", (now + self.window,))
                return False
            (until,) = db.execute("SELECT until FROM critical").fetchone()
            return until > now

    def _requests_scarcer(self, db) -> bool:
        # The window up to the latest admission, not up to now: a line that has waited a window
        # (each call waiting for its budget, or a poller stalled on a loaded machine) would find
        # no admissions and read the scarcer budget as tokens whatever the calls are.
        calls, tokens = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM admitted WHERE at > (SELECT MAX(at) FROM admitted) - ?",
            (self.window,),
        ).fetchone()
        self._scarce_requests = requests_scarcer(calls, tokens, self.limits)
        return self._scarce_requests

    # ------------------------------------------------------------------ the line
    @contextmanager
    def _turn(self, tokens: int):
        """Wait until this call is first in the endpoint's line; leave it when the block ends (an
        admitted call is logged in `admitted`, for `requests_scarcer`)."""
        ticket, since = next(self._tickets), time.time()
        with self._line:
            self._waiting[ticket] = (tokens, since)
        admitted = False
        try:
            self._wait_turn(ticket, tokens, since)
            yield
            admitted = True
        finally:
            with self._line:
                del self._waiting[ticket]
                stood, self._standing = self._standing == ticket, (None if self._standing == ticket else self._standing)
                now = time.time()
                # The process's next call in its own line: it stands from here, so that no call of
                # another process slips into the gap before that call's thread wakes.
                after = min(
                    self._waiting.values(),
                    key=lambda w: line_key(*w, now, self.window, self._scarce_requests),
                    default=None,
                )
                self._line.notify_all()
            if stood:
                with self._db() as db:
                    if after is None:
                        db.execute("DELETE FROM line WHERE owner = ?", (self._stand_as,))
                    else:
                        db.execute(
                            "UPDATE line SET tokens = ?, since = ?, admitting = 0 WHERE owner = ?",
                            (*after, self._stand_as),
                        )
                    if admitted:
                        db.execute("INSERT INTO admitted VALUES (?, ?)", (now, tokens))
                        db.execute("DELETE FROM admitted WHERE at <= ?", (now - self.window,))

    def _wait_turn(self, ticket: int, tokens: int, since: float) -> None:
        looks = 0
        while True:
            with self._line:
                while True:
                    now = time.time()
                    scarce = self._scarce_requests
                    first = min(self._waiting, key=lambda t: line_key(*self._waiting[t], now, self.window, scarce))
                    if first == ticket and self._standing in (None, ticket):
                        self._standing = ticket
                        break
                    if self._standing == ticket:  # passed over by a call of this process: it stands now
                        self._standing = None
                        self._line.notify_all()
                    # Woken when a call leaves or arrives; the timeout lets an overdue call move up.
                    self._line.wait(0.25)
            now = time.time()
            with self._db() as db:
                self._reclaim(db)
                db.execute(
                    "INSERT OR REPLACE INTO line VALUES (?, ?, ?, ?, ?, 0)",
                    (self._stand_as, os.getpid(), socket.gethostname(), tokens, since),
                )
                rows = db.execute("SELECT owner, tokens, since, admitting FROM line").fetchall()
                scarce = self._requests_scarcer(db)
                # One call at a time takes its budget (`admitting`): a call already waiting for it
                # is not passed by one that arrives later.
                first = min(rows, key=lambda r: line_key(r[1], r[2], now, self.window, scarce))[0]
                if first == self._stand_as and not any(r[3] for r in rows):
                    db.execute("UPDATE line SET admitting = 1 WHERE owner = ?", (self._stand_as,))
                    return
            # Another process's call is first: it leaves within milliseconds when its budget is free,
            # and waits out the window when it is not, so look again soon, then less often.
            time.sleep(min(LINE_POLL_MAX, POLL * 2**looks))
            looks += 1

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

    def _take_slot(self) -> None:
        """Wait out a pause and for a flight slot, and take it."""
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
                        return
            time.sleep(max(POLL, min(pause_until - now, 1.0)) if now < pause_until else POLL)

    def _give_slot(self) -> None:
        owner = f"{self._owner}:{threading.get_ident()}"
        succeeded, self._local.succeeded = getattr(self._local, "succeeded", False), False
        with self._db() as db:
            db.execute("DELETE FROM flight WHERE rowid = (SELECT MIN(rowid) FROM flight WHERE owner = ?)", (owner,))
            if succeeded:
                self._grow(db)

    def _reclaim(self, db) -> None:
        """Drop the slots and places in line of processes on this host that no longer exist (a job
        killed mid-call)."""
        host = socket.gethostname()
        for table in ("flight", "line"):
            for (pid,) in db.execute(f"SELECT DISTINCT pid FROM {table} WHERE host = ?", (host,)).fetchall():
                if not _alive(pid):
                    db.execute(f"DELETE FROM {table} WHERE host = ? AND pid = ?", (host, pid))

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
            (standing,) = db.execute("SELECT COUNT(*) FROM line").fetchone()
        return {
            "cap": cap,
            "in_flight": flying,
            "paused_for": max(0.0, pause_until - time.time()),
            "growth_held_for": max(0.0, hold_until - time.time()),
            "throttled": throttled,
            "reserve_held_for": max(0.0, critical_until - time.time()),
            "processes_waiting": standing,  # processes with a call in the line
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
    """One Pacer per (endpoint, model, limits, directory, window) and process."""
    where, window = resolve_dir(directory), resolve_window()
    ident = (endpoint_id(base_url, model), limits, str(where), window)
    with _PACERS_LOCK:
        if ident not in _PACERS:
            _PACERS[ident] = Pacer(ident[0], limits, where, window=window)
        return _PACERS[ident]


# ---------------------------------------------------------------------- pacing apart from results
# An entry's pacing settings change how fast its calls go, never what they return, so editing them
# must not re-run a job. The workflow therefore hands a job its entries without them (a compared
# param) and the settings in one `--pacing` map beside them (a param Snakemake does not compare:
# rules/common.smk, get_pacing); the commands put them back before building a backend
# (incognita.common.backends.entry: ModelEntry.without_pacing, with_pacing, pacing_map).
PACING_KEYS = tuple(f.name for f in fields(Limits))  # rpm, tpm, max_in_flight, reserve: the model entry's names too


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
