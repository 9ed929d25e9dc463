"""The rows of bench/throughput.py: the conditions a row runs under, what it measured and how, its table.

Not a script. A condition is a provider as a row meets it: requests and tokens per minute, and
a log-normal latency (median, sigma) plus a time per output token. `--limits` gives rows at
fixed conditions; `--sweep N --seed S` draws N conditions over the range a user meets (`draw`).
With `--time-scale F` a row runs F times faster than the provider it stands for: its latencies
are divided by F and its windows are 60 / F seconds (the loopback's and the pace's alike), with
the same requests and tokens per window; every time in a row (ideal, wall) is then in those
faster seconds, and the ratios (share of the limit, wall / ideal) are the provider's. What does
not shrink is the machine's own time per call (Snakemake, the twins, the pace's SQLite), so a
faster row is a harsher test, not a kinder one.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import resource
import signal
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

RATE_TARGET, CHAIN_TARGET, MEMORY_TARGET = 0.85, 1.25, 4 * 1024**3

# The range a sweep draws from (issue #55): requests per minute log-uniform, tokens per request of
# the tpm limit log-uniform (tpm = rpm x this: request-heavy tiers at the low end, token-heavy ones
# at the high end), latency median and sigma uniform, a time per output token uniform.
RPM_RANGE = (30, 5000)
TOKENS_PER_REQUEST_RANGE = (500, 8000)
MEDIAN_RANGE = (0.5, 5.0)
SIGMA_RANGE = (0.3, 1.2)
PER_OUTPUT_TOKEN_RANGE = (0.0, 0.030)


@dataclass(frozen=True)
class Condition:
    rpm: int
    tokens_per_request: int  # tpm = rpm x this
    median: float  # seconds, at the provider's pace (before --time-scale)
    sigma: float
    per_output_token: float  # seconds per completion token, likewise
    seed: int = 0  # the latency draws' seed (the loopback's and the call log's)
    label: str = ""  # a row's name in its workflow copy's directory

    @property
    def tpm(self) -> int:
        return self.rpm * self.tokens_per_request


def draw(n: int, seed: int) -> list[Condition]:
    """`n` conditions drawn from the sweep's range; the same `seed` draws the same rows."""
    rng = random.Random(seed)

    def log_uniform(lo: float, hi: float) -> float:
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))

    rows = []
    for i in range(n):
        rows.append(
            Condition(
                rpm=round(log_uniform(*RPM_RANGE)),
                tokens_per_request=round(log_uniform(*TOKENS_PER_REQUEST_RANGE)),
                median=round(rng.uniform(*MEDIAN_RANGE), 2),
                sigma=round(rng.uniform(*SIGMA_RANGE), 2),
                per_output_token=round(rng.uniform(*PER_OUTPUT_TOKEN_RANGE), 4),
                seed=seed * 1000 + i,
                label=f"{seed}-{i}",  # seed-row
            )
        )
    return rows


@dataclass(frozen=True)
class Budget:
    """What one rate-limited server answered: one served model, or the whole endpoint (--shared)."""

    calls: int
    tokens: int
    span: float  # seconds from its first request to its last answer


@dataclass
class Row:
    design: str
    cells: int
    condition: Condition
    window: float = 60.0  # the limits' window in this row's seconds (60 / --time-scale)
    budgets: list[Budget] = field(default_factory=list)
    rejected: int = 0
    chain: int = 0
    chain_seconds: float = 0.0  # the chain's latency (bench/call_log.py: the order the run imposed)
    wall: float = 0.0
    lead: float = 0.0  # seconds from the row's start to its first request (the workflow's start-up)
    scale: float = 1.0  # --time-scale
    peak_rss: int = 0
    cpu: float = 0.0  # CPU seconds of the row: Snakemake and its jobs, and this process (server, twins)
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average at the start and the end
    # Where rpm or tpm binds: the shortest replay of the row's calls (bench/order_replay.py, orders that
    # know every call's tokens in advance among them): (order, its share of the binding limit, its wall).
    replayed: tuple[str, float, float] | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def rpm(self) -> int:
        return self.condition.rpm

    @property
    def tpm(self) -> int:
        return self.condition.tpm

    @property
    def calls(self) -> int:
        return sum(b.calls for b in self.budgets)

    @property
    def busiest(self) -> Budget:
        """The budget the binding limit applies to: the one with the most calls (tokens if tpm binds)."""
        key = (lambda b: b.tokens) if self.binds == "tpm" else (lambda b: b.calls)
        return max(self.budgets, key=key, default=Budget(0, 0, 0.0))

    @property
    def ideal_terms(self) -> dict[str, float]:
        return {
            "rpm": max((b.calls for b in self.budgets), default=0) / self.rpm * self.window,
            "tpm": max((b.tokens for b in self.budgets), default=0) / self.tpm * self.window,
            "chain": self.chain_seconds,
        }

    @property
    def ideal(self) -> float:
        return max(self.ideal_terms.values())

    @property
    def binds(self) -> str:
        terms = self.ideal_terms
        return max(terms, key=terms.get)

    def rate(self, b: Budget) -> float:
        """Calls a window (a minute at the provider's pace) from the first request to the last answer."""
        return b.calls * self.window / b.span if b.span > 0 else 0.0

    @property
    def share(self) -> float:
        """The achieved rate as a share of the binding limit (rpm or tpm)."""
        b = self.busiest
        if b.span <= 0:
            return 0.0
        if self.binds == "tpm":
            return b.tokens * self.window / b.span / self.tpm
        return self.rate(b) / self.rpm

    @property
    def ratio(self) -> float:
        """wall / ideal at the provider's pace: the start-up before the first request takes what it
        takes at any pace, the rest runs `scale` times faster (the same as wall / ideal unscaled)."""
        if not self.ideal:
            return float("nan")
        return (self.lead + self.scale * (self.wall - self.lead)) / (self.scale * self.ideal)

    @property
    def against_replay(self) -> float | None:
        """The achieved share as a share of the shortest replay's (the tighter bound)."""
        return self.share / self.replayed[1] if self.replayed and self.replayed[1] else None

    def verdict(self) -> str:
        missed = list(self.errors)
        if self.binds in ("rpm", "tpm") and self.share < RATE_TARGET:
            bound = (
                f" (the shortest replay, {self.replayed[0]}, reached {self.replayed[1]:.0%}: {self.against_replay:.0%} of it)"
                if self.replayed
                else ""
            )
            missed.append(f"rate {self.share:.0%} of the {self.binds} limit < {RATE_TARGET:.0%}{bound}")
        if self.binds == "chain" and self.ratio > CHAIN_TARGET:
            missed.append(f"wall {self.ratio:.2f} x ideal > {CHAIN_TARGET}")
        if self.peak_rss >= MEMORY_TARGET:
            missed.append(f"peak memory {self.peak_rss / 1024**3:.2f} GiB >= 4 GiB")
        return "ok" if not missed else "MISSED: " + "; ".join(missed)


HEADER = (
    f"{'design':<10}{'cells':>6}{'rpm':>6}{'tpm':>9}{'med s':>6}{'sigma':>6}{'ms/tok':>7}{'calls':>7}{'429s':>6}"
    f"{'calls/min':>10}{'% limit':>8}{'chain':>6}{'ideal s':>9}{'wall s':>8}{'lead s':>7}{'wall/ideal':>11}{'binds':>6}"
    f"{'peak MiB':>9}{'cores':>6}{'load':>10}{'replay':>7}  target"
)


def table_line(r: Row) -> str:
    c = r.condition
    return (
        f"{r.design:<10}{r.cells:>6}{r.rpm:>6}{r.tpm:>9}{c.median:>6.2f}{c.sigma:>6.2f}{c.per_output_token * 1000:>7.1f}"
        f"{r.calls:>7}{r.rejected:>6}{r.rate(r.busiest):>10.1f}{r.share:>8.0%}{r.chain:>6}{r.ideal:>9.1f}"
        f"{r.wall:>8.1f}{r.lead:>7.1f}{r.ratio:>11.2f}{r.binds:>6}{r.peak_rss / 1024**2:>9.0f}{r.cpu / r.wall if r.wall else 0:>6.2f}"
        f"{f'{r.load[0]:.1f}-{r.load[1]:.1f}':>10}{f'{r.replayed[1]:.0%}' if r.replayed else '-':>7}  {r.verdict()}"
    )


def summary(rows: list[Row]) -> list[str]:
    """The distribution over rows, per design and over all: the worst and the median share of the
    binding limit (rows where rpm or tpm binds) and of wall / ideal (rows where the chain binds;
    and every row), with how many rows met their target."""

    def spread(values: list[float], worst) -> str:
        if not values:
            return "-"
        return f"worst {worst(values):.2f}, median {statistics.median(values):.2f} ({len(values)} rows)"

    lines = []
    groups = {d: [r for r in rows if r.design == d] for d in dict.fromkeys(r.design for r in rows)}
    for name, group in [*groups.items(), *([("all", rows)] if len(groups) > 1 else [])]:
        rate = [r.share for r in group if r.binds in ("rpm", "tpm")]
        replayed = [r.against_replay for r in group if r.binds in ("rpm", "tpm") and r.against_replay]
        chain = [r.ratio for r in group if r.binds == "chain"]
        met = sum(r.verdict() == "ok" for r in group)
        lines.append(
            f"{name}: share of the binding limit {spread(rate, min)}; of the shortest replay's share "
            f"{spread(replayed, min)}; wall/ideal where the chain binds "
            f"{spread(chain, max)}; wall/ideal, every row {spread([r.ratio for r in group], max)}; "
            f"{met} of {len(group)} rows met their target"
        )
    return lines


# --------------------------------------------------------------------------- measuring a row


def stop_group(proc: subprocess.Popen) -> None:
    """End a row's Snakemake and its jobs if they still run (the bench stopped mid-row)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def cpu_seconds() -> float:
    """CPU seconds used so far by this process (the servers, the twins) and its waited-for
    descendants (Snakemake and its jobs, once they end)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def tree_rss(pid: int) -> int:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


REPLAYED = ("line", "foresight", "oldest", "critical-first")  # bench/order_replay.py's orders kept across jobs


def shortest_replay(calls: Path, row: Row) -> tuple[str, float, float]:
    """The shortest of the row's calls replayed under its limits with no reserve, in the orders that
    one shared line can keep (the pace's own and ones that know every call's tokens in advance):
    (order, share of the binding limit, wall), the tighter bound a rate-bound row is judged against."""
    import order_replay

    chains = order_replay.load(calls)
    critical = order_replay.longest_arm(chains)
    best = None
    for order in REPLAYED:
        wall, served = order_replay.replay(
            chains, row.rpm, row.tpm, order, reserve=0.0, critical=critical, minute=row.window
        )
        _, share, _ = order_replay.share(served, row.rpm, row.tpm, row.window)
        if best is None or wall < best[2]:
            best = (order, share, wall)
    return best
