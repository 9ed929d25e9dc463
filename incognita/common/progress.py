"""What model calls a run has made so far: a per-process call log, and its summary.

A real-model run is many jobs (`python -m incognita ...` processes) making model calls in
parallel, each silent until it ends. Every process appends one JSON line per event to its own
file, `<dir>/<host>-<pid>-<start_ms>.jsonl`, where `<dir>` is `$INCOGNITA_PROGRESS_DIR` or
`logs/progress` (relative to the working directory, the repository root under the workflow):

    {"t": 1767000000.12, "kind": "call", "spec": "openai:gpt-5.5", "role": "agent", "hit": false,
     "prompt_tokens": 1200, "completion_tokens": 80, "cost_usd": 0.0031, "seconds": 2.4}
    {"t": 1767000003.50, "kind": "retry", "spec": "openai:gpt-5.5", "status": "429", "wait": 4.0}

`cost_usd` is what the call spent: 0 for a cache hit. Nothing else is written (no key, header,
prompt or response). One file per process means no lock between processes; each line is one
`os.write` of a whole line to a file opened for appending, so a reader sees whole lines, except
perhaps the last line of a file still being written, which `summarise` skips. The directory
is made on the first event: a process that makes no model call writes nothing.

While a process runs, its log also prints one summary line to stderr (which the workflow sends
to the job's log) at most every 30 s, from inside the event calls (no thread), and once more at
exit if it made a call.

`summarise` reads every file of the directory: calls, hits, tokens, dollars, retries, rates
and, given the expected number of calls, an ETA. By default it counts the current run only:
the events from the first one after the last gap of more than 30 minutes in which no process
wrote any event (a gap that long means the earlier events were another run). `incognita
progress` prints it, once or refreshed.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from incognita.common.io import InputError

PROGRESS_ENV = "INCOGNITA_PROGRESS_DIR"
DEFAULT_DIR = "logs/progress"
SUMMARY_EVERY = 30.0  # seconds between a process's summary lines on stderr
RECENT = 60.0  # seconds of the "last minute" rates
RUN_GAP = 30 * 60.0  # seconds without any event that separate one run from the next
RETRY_STATUSES = ("429", "5xx", "timeout", "connection", "malformed")


def resolve_dir(configured: str | os.PathLike | None = None) -> Path:
    return Path(configured or os.environ.get(PROGRESS_ENV) or DEFAULT_DIR)


# --------------------------------------------------------------------------- formatting


def fmt_tokens(n: float) -> str:
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    return f"{n / 1e3:.1f}k" if n >= 1e3 else f"{n:.0f}"


def fmt_duration(seconds: float) -> str:
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m:02d}m" if h else (f"{m}m {s:02d}s" if m else f"{s}s")


def _rate_window(now: float, start: float | None) -> float:
    # Early in a run the last minute is not a minute yet: divide by the time there was, so the
    # first readings are not low by the missing part (at least 1 s, so one event is no spike).
    span = RECENT if start is None else min(RECENT, now - start)
    return max(span, 1.0)


# --------------------------------------------------------------------------- writing


class CallLog:
    """One process's event log: thread-safe appends and the periodic stderr summary."""

    def __init__(
        self,
        directory: str | os.PathLike | None = None,
        *,
        clock=time.time,
        summary_every: float = SUMMARY_EVERY,
        summary_at_exit: bool = True,
    ):
        # Absolute now: a later chdir must not move the log.
        self.directory = resolve_dir(directory).absolute()
        self.clock = clock
        self.summary_every = summary_every
        self.summary_at_exit = summary_at_exit
        self._exit_registered = False  # survives _start: a forked child inherits the parent's atexit hooks
        self._start()

    def _start(self) -> None:
        """Fresh state: at construction, and in a forked child (its own pid, file and counts)."""
        self._lock = threading.Lock()
        if getattr(self, "_fd", None) is not None:  # the parent's file, inherited by a forked child
            os.close(self._fd)
        self.pid = os.getpid()
        self.path = self.directory / f"{socket.gethostname()}-{self.pid}-{int(self.clock() * 1000)}.jsonl"
        self._fd: int | None = None
        self._broken = False
        self.calls = self.hits = self.prompt_tokens = self.completion_tokens = 0
        self.cost_usd = 0.0
        self.throttled = self.other_retries = 0
        self._first: float | None = None
        self._next_summary: float | None = None
        self._recent: collections.deque[tuple[float, int]] = collections.deque()  # (t, tokens) of recent calls

    # The API the backends call, keyword-only. A log that cannot be written warns once and stops
    # logging: it must not fail the model call it describes.

    def call(
        self,
        *,
        spec: str,
        role: str,
        hit: bool,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float,
        seconds: float,
    ) -> None:
        """One finished model call; `hit`: served from the response cache (then nothing was spent)."""
        spent = 0.0 if hit else float(cost_usd)
        with self._lock:
            now = self._event(
                {
                    "kind": "call",
                    "spec": spec,
                    "role": role,
                    "hit": bool(hit),
                    "prompt_tokens": int(prompt_tokens),
                    "completion_tokens": int(completion_tokens),
                    "cost_usd": spent,
                    "seconds": round(float(seconds), 3),
                }
            )
            self.calls += 1
            self.hits += bool(hit)
            self.prompt_tokens += int(prompt_tokens)
            self.completion_tokens += int(completion_tokens)
            self.cost_usd += spent
            self._recent.append((now, int(prompt_tokens) + int(completion_tokens)))
            self._maybe_summary(now)

    def retry(self, *, spec: str, status: str, wait: float) -> None:
        """One failed attempt that will be retried after `wait` seconds; `status` is one of RETRY_STATUSES."""
        with self._lock:
            now = self._event({"kind": "retry", "spec": spec, "status": str(status), "wait": round(float(wait), 3)})
            if str(status) == "429":
                self.throttled += 1
            else:
                self.other_retries += 1
            self._maybe_summary(now)

    # ----------------------------------------------------------------- internals (lock held)

    def _event(self, fields: dict) -> float:
        if os.getpid() != self.pid:  # forked without the at-fork hook (a CallLog made by hand)
            self._start()
        now = self.clock()
        if self._first is None:
            self._first = now
            self._next_summary = now + self.summary_every
            if self.summary_at_exit and not self._exit_registered:
                atexit.register(self._at_exit)
                self._exit_registered = True
        self._write(json.dumps({"t": round(now, 3), **fields}, separators=(",", ":")) + "\n")
        return now

    def _write(self, line: str) -> None:
        if self._broken:
            return
        try:
            if self._fd is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            data = line.encode()
            while data:  # os.write may write less than asked (a full disk); finish the line or fail
                data = data[os.write(self._fd, data) :]
        except OSError as exc:
            self._broken = True
            print(f"warning: progress log {self.path}: {exc}; no more progress is logged", file=sys.stderr)

    def _maybe_summary(self, now: float) -> None:
        if self._next_summary is not None and now >= self._next_summary:
            self._next_summary = now + self.summary_every
            self._print_summary(now)

    def _print_summary(self, now: float) -> None:
        while self._recent and self._recent[0][0] <= now - RECENT:
            self._recent.popleft()
        window = _rate_window(now, self._first)
        recent_tokens = sum(tokens for _, tokens in self._recent)
        try:
            print(
                f"progress: {self.calls} calls ({self.hits} hits, {self.calls - self.hits} misses), "
                f"tokens {fmt_tokens(self.prompt_tokens)} in / {fmt_tokens(self.completion_tokens)} out, "
                f"${self.cost_usd:.4f} spent, {self.throttled} 429s, {self.other_retries} other retries; "
                f"last minute {len(self._recent) * 60 / window:.1f} calls/min, "
                f"{fmt_tokens(recent_tokens * 60 / window)} tokens/min",
                file=sys.stderr,
                flush=True,
            )
        except (OSError, ValueError):  # stderr closed or gone: the summary is not worth failing for
            pass

    def _at_exit(self) -> None:
        # A daemon thread may still hold the lock at exit: wait a little, never hang the exit.
        if not self._lock.acquire(timeout=1.0):
            return
        try:
            if self.calls and os.getpid() == self.pid:
                self._print_summary(self.clock())
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        finally:
            self._lock.release()


_instance: CallLog | None = None
_instance_lock = threading.Lock()


def call_log() -> CallLog:
    """The process's CallLog, made on first use (its directory is read from the environment then)."""
    global _instance
    if _instance is None:
        with _instance_lock:
            if _instance is None:
                _instance = CallLog()
    return _instance


def _after_fork_in_child() -> None:
    # A child of fork() is another process: its own file and counts, and a lock no thread holds.
    if _instance is not None:
        _instance._start()


os.register_at_fork(after_in_child=_after_fork_in_child)


# --------------------------------------------------------------------------- reading


@dataclass
class Summary:
    """The events of one run, as `summarise` counts them."""

    directory: Path
    now: float
    since: float | None  # the window's start (None: no events)
    since_rule: str  # how `since` was chosen: "given" or "gap"
    files: int = 0  # files with at least one event in the window
    first: float | None = None  # first and last event in the window
    last: float | None = None
    calls: int = 0
    hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    throttled: int = 0  # retries after a 429
    other_retries: int = 0
    recent_calls: int = 0  # calls in the last RECENT seconds before `now`
    recent_tokens: int = 0
    expected_calls: float | None = None
    problems: list[str] = field(default_factory=list)  # malformed lines, "file:line: what"

    @property
    def misses(self) -> int:
        return self.calls - self.hits

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def recent_window(self) -> float:
        return _rate_window(self.now, self.first)

    @property
    def recent_calls_per_min(self) -> float:
        return self.recent_calls * 60 / self.recent_window

    @property
    def recent_tokens_per_min(self) -> float:
        return self.recent_tokens * 60 / self.recent_window

    @property
    def span(self) -> float | None:
        """Seconds from the first to the last event (None: fewer than two distinct times)."""
        if self.first is None or self.last is None or self.last <= self.first:
            return None
        return self.last - self.first

    @property
    def calls_per_min(self) -> float | None:
        return None if self.span is None else self.calls * 60 / self.span

    @property
    def tokens_per_min(self) -> float | None:
        return None if self.span is None else self.tokens * 60 / self.span

    @property
    def eta_seconds(self) -> float | None:
        """Seconds to the expected number of calls at the last minute's rate (None: unknown)."""
        if self.expected_calls is None:
            return None
        left = self.expected_calls - self.calls
        if left <= 0:
            return 0.0
        rate = self.recent_calls_per_min
        return left / rate * 60 if rate > 0 else None


def _read_events(path: Path, problems: list[str]) -> list[dict]:
    events = []
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    # The text after the last newline is a line still being written (or nothing): skip it.
    for number, raw in enumerate(lines[:-1], start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
            if not isinstance(event, dict) or event.get("kind") not in ("call", "retry"):
                raise ValueError("not a call or retry event")
            event["t"] = float(event["t"])
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path}:{number}: malformed line skipped ({exc})")
            continue
        events.append(event)
    return events


def run_start(times: list[float], gap: float = RUN_GAP) -> float | None:
    """The first event time after the last gap longer than `gap` seconds (None: no events)."""
    times = sorted(times)
    if not times:
        return None
    start = times[0]
    for before, after in zip(times, times[1:]):
        if after - before > gap:
            start = after
    return start


def summarise(
    directory: str | os.PathLike,
    since: float | None = None,
    expected_calls: float | None = None,
    now: float | None = None,
) -> Summary:
    """Count the events of every `*.jsonl` in `directory` from `since` (default: the current run's start)."""
    directory = Path(directory)
    now = time.time() if now is None else now
    by_file, problems = _read_directory(directory)
    rule = "given"
    if since is None:
        since = run_start([e["t"] for events in by_file.values() for e in events])
        rule = "gap"
    s = Summary(directory, now, since, rule, expected_calls=expected_calls, problems=problems)
    if since is None:
        return s
    for events in by_file.values():
        window = [e for e in events if e["t"] >= since]
        s.files += bool(window)
        for e in window:
            t = e["t"]
            s.first = t if s.first is None else min(s.first, t)
            s.last = t if s.last is None else max(s.last, t)
            if e["kind"] == "retry":
                if str(e.get("status")) == "429":
                    s.throttled += 1
                else:
                    s.other_retries += 1
                continue
            tokens = int(e.get("prompt_tokens") or 0) + int(e.get("completion_tokens") or 0)
            s.calls += 1
            s.prompt_tokens += int(e.get("prompt_tokens") or 0)
            s.completion_tokens += int(e.get("completion_tokens") or 0)
            if e.get("hit"):
                s.hits += 1
            else:  # a hit spent nothing, whatever its line says
                s.cost_usd += float(e.get("cost_usd") or 0.0)
            if now - RECENT < t <= now:
                s.recent_calls += 1
                s.recent_tokens += tokens
    return s


def _read_directory(directory: Path) -> tuple[dict[Path, list[dict]], list[str]]:
    """Every process file's events, and the problems met reading them (lines skipped, files gone)."""
    if not directory.is_dir():
        raise InputError(
            f"{directory}: no such progress directory (model calls write their log there; "
            f"set {PROGRESS_ENV} or pass --dir)"
        )
    problems: list[str] = []
    by_file: dict[Path, list[dict]] = {}
    for path in sorted(directory.glob("*.jsonl")):
        try:
            by_file[path] = _read_events(path, problems)
        except OSError as exc:  # removed between the listing and the read
            problems.append(f"{path}: not read ({exc})")
    return by_file, problems


@dataclass
class Minutes:
    """Calls that reached a model (cache misses) and their tokens, per minute of a run and model
    spec. Where a run lost time at a rate limit shows here: which model was at its requests or
    tokens per minute, and when."""

    since: float | None  # the first minute's start
    counts: dict[str, list[list[int]]]  # spec -> [[calls, tokens] for each minute]
    problems: list[str]  # lines skipped, as summarise reports them


def by_minute(directory: str | os.PathLike, since: float | None = None) -> Minutes:
    """The current run's (or, given `since`, from then) calls per minute and model."""
    by_file, problems = _read_directory(Path(directory))
    events = [e for file_events in by_file.values() for e in file_events]
    if since is None:
        since = run_start([e["t"] for e in events])
    calls = [e for e in events if e["kind"] == "call" and not e.get("hit") and e["t"] >= (since or 0)]
    if not calls:
        return Minutes(since, {}, problems)
    minutes = int((max(e["t"] for e in calls) - since) // 60) + 1
    out: dict[str, list[list[int]]] = {}
    for e in calls:
        row = out.setdefault(str(e.get("spec")), [[0, 0] for _ in range(minutes)])[int((e["t"] - since) // 60)]
        row[0] += 1
        row[1] += int(e.get("prompt_tokens") or 0) + int(e.get("completion_tokens") or 0)
    return Minutes(since, dict(sorted(out.items())), problems)


def minute_lines(m: Minutes) -> list[str]:
    """`by_minute` as a plain table: a row per minute, "calls / tokens" per model."""
    since, counts = m.since, m.counts
    if not counts:
        return ["no model calls that reached a model (cache misses) logged"]
    specs = list(counts)
    width = max(16, *(len(s) for s in specs))
    lines = [
        f"calls / tokens that reached each model, per minute from {_when(since)} (a call counts when it ended)",
        "minute " + "".join(f"{s:>{width + 2}}" for s in specs),
    ]
    for minute in range(len(next(iter(counts.values())))):
        cells = (f"{counts[s][minute][0]} / {fmt_tokens(counts[s][minute][1])}" for s in specs)
        lines.append(f"{minute + 1:>6} " + "".join(f"{c:>{width + 2}}" for c in cells))
    return lines


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def describe(s: Summary) -> list[str]:
    """The summary as plain lines, for `incognita progress`."""
    if s.first is None:
        lines = [
            f"{s.directory}: no model calls logged" + ("" if s.since_rule == "gap" else f" since {_when(s.since)}")
        ]
    else:
        rule = "the run's start: the first event after the last 30-min gap" if s.since_rule == "gap" else "as given"
        lines = [f"{s.directory}: {s.files} process log(s) since {_when(s.since)} ({rule}); last event {_when(s.last)}"]
    if s.expected_calls is None:
        expected = "(expected: unknown)"
    else:
        share = f" ({s.calls / s.expected_calls:.1%})" if s.expected_calls else ""
        expected = f"of {s.expected_calls:,.0f} expected{share}"
    lines.append(f"calls: {s.calls:,} done {expected}; {s.hits:,} cache hits, {s.misses:,} misses")
    lines.append(
        f"tokens: {fmt_tokens(s.prompt_tokens)} prompt, {fmt_tokens(s.completion_tokens)} completion; "
        f"${s.cost_usd:.4f} spent on misses"
    )
    lines.append(f"retries: {s.throttled} rate-limited (429), {s.other_retries} other")
    overall = (
        "-"
        if s.calls_per_min is None
        else f"{s.calls_per_min:.1f} calls/min, {fmt_tokens(s.tokens_per_min or 0)} tokens/min"
    )
    lines.append(
        f"rate: last minute {s.recent_calls_per_min:.1f} calls/min, {fmt_tokens(s.recent_tokens_per_min)} tokens/min; "
        f"whole run {overall}"
    )
    eta = s.eta_seconds
    if eta is not None:
        lines.append(f"ETA: {fmt_duration(eta)} at the last minute's rate")
    elif s.expected_calls is not None:
        lines.append("ETA: unknown (no calls in the last minute)")
    return lines


def one_line(s: Summary) -> str:
    """The summary in one line, for `--watch` when the output is not a terminal."""
    done = f"{s.calls:,}" + ("" if s.expected_calls is None else f"/{s.expected_calls:,.0f}")
    eta = "-" if s.eta_seconds is None else fmt_duration(s.eta_seconds)
    return (
        f"{_when(s.now)} calls {done} ({s.hits:,} hits), tokens {fmt_tokens(s.tokens)}, ${s.cost_usd:.4f}, "
        f"429s {s.throttled}, other retries {s.other_retries}, {s.recent_calls_per_min:.1f} calls/min, "
        f"{fmt_tokens(s.recent_tokens_per_min)} tokens/min, ETA {eta}"
    )


def rich_view(s: Summary):
    """A rich renderable for `--watch` on a terminal: a bar of done/expected, rate and ETA, then the details."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    head = Table.grid(padding=(0, 2))
    done = f"{s.calls:,}" + ("" if s.expected_calls is None else f"/{s.expected_calls:,.0f}")
    # No expected count: rich's bar pulses instead of filling.
    head.add_row(
        ProgressBar(total=s.expected_calls or None, completed=s.calls, width=40),
        f"{done} calls",
        f"{s.recent_calls_per_min:.1f} calls/min",
        f"ETA {'-' if s.eta_seconds is None else fmt_duration(s.eta_seconds)}",
    )
    return Group(head, Text("\n".join(describe(s)[1:])))
