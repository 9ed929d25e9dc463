"""Replay a throughput row's calls under its limits, with waiting calls taken in other orders.

Each row of bench/throughput.py writes calls.jsonl in its copy (kept with --keep DIR, as
DIR/<design>-<rpm>/calls.jsonl): a line per call its servers answered, with the chain it belongs
to (an episode, a native run, a CollabSim run), its wave in that chain and its lane in the wave
(bench/call_log.py: a wave's lanes go out together, a lane's calls one after another; a CollabSim
step's turns are a wave, its probes another with a lane per agent; an episode's calls are a wave
each), the
workflow job it came from, its cell's arm, the served model, the tokens the server counted against
tpm and the latency the server drew. This script plays those chains again under the same limits in
simulated time (no model, no network: a second or so per order for the 4,000-call row) and prints,
for each order of waiting calls, the busiest model's share of its binding limit and the wall time.

Why: a row at 60/min takes half an hour to measure, and whether some order of calls can reach the
target is a question about the chains and the limits, not about the code that paces them. The
replay answers it in seconds; an order it favours is then built and measured for real.

What it models: each model's requests and tokens per minute in a sliding window, the client's
window longer by the pace's margin (incognita.common.pacing.WINDOW_MARGIN); a call is admitted when
both fit and answered after its latency; a chain's next wave is ready --gap seconds after its
previous wave's last answer; waiting calls that fit are admitted in the order's sequence. In the
`line` order the first call that does not fit holds up the calls behind it; in the others
(threads racing for the buckets) it holds up no other. The pace's reserve (RESERVE of the
requests, the rest spread over SPREAD parts of the window while critical calls are made) applies
to the chains of --critical-arm (default: the arm with the longest chains in the trace, as the
harness picks the longest-expected arm); --reserve 0 holds none, as the workflow does where the
design's longest chain is a small part of its run (incognita.access.planning.cost_estimate.reserve_forecast);
with --hold-unless-scarcer it is held only while the window's requests are not the scarcer budget
(`requests_scarcer`; a variant measured and not kept). A call the reserve holds back
holds up no other. Not modelled: calls in flight (the benchmark's cap is far above what its
limits admit), 429s, the workflow's start-up, the machine's scheduling.

Orders (a conversation's age: the order of the chains' first calls in the trace):
  in-turn         waiting calls race: a random order at every admission, as threads polling a shared
                  bucket do (the pace before the line); the median of --seeds runs
  line            one line across jobs, one call at a time at its counter (`line_key`): while
                  requests are the scarcer budget the waiting call with the most tokens first,
                  otherwise the one with the fewest; a call passed over for OVERDUE windows
                  first (the pace since 2026-12-05, docs/models.md)
  foresight       the line, knowing every call's tokens in advance: while requests are the
                  scarcer budget, the call whose chain's calls still to come carry the most tokens
                  each first (its requests lead soonest to the large prompts tokens wait for)
  oldest-job      within each job the oldest conversation's calls first, the jobs racing (an order
                  one process can keep on its own); the median of --seeds runs
  oldest          the oldest conversation's calls first, across jobs (needs an order shared by
                  every process)
  critical-first  critical calls first, then the oldest, across jobs (a pace measured on
                  2026-12-05, docs/models.md)
  arms            with --arms-first A,B,..: those arms' calls first, in that order, then the
                  oldest, across jobs

The last line names the shortest replayed order and its wall time against bench/throughput.py's
ideal for the trace: where even the shortest is well above the ideal, the ideal cannot be reached
by ordering calls (the requests bind first and the tokens later), and the shortest replay is the
tighter bound a row is also judged against. It is a schedule found, not a proof: no order outside
those listed is tried.

Usage: python bench/order_replay.py CALLS.jsonl --rpm 60 --tpm 120000 [--arms-first A,B,..]
         [--margin M] [--reserve R] [--hold-unless-scarcer] [--critical-arm ARM] [--seeds 5] [--gap 0.05]
         [--minute 60]   (60 / F for a row of bench/throughput.py --time-scale F)
       python bench/order_replay.py --quick       (a synthetic trace of 24 chains; for CI)
"""

from __future__ import annotations

import argparse
import collections
import heapq
import itertools
import json
import math
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The line's ranking and its scarcity test are the pace's own, so the replay orders calls as it does.
from incognita.common.pacing import (  # noqa: E402 -- after the checkout is on the path
    RESERVE,
    SPREAD,
    WINDOW_MARGIN,
    Limits,
    line_key,
    requests_scarcer,
)

ORDERS = ("in-turn", "line", "foresight", "oldest-job", "oldest", "critical-first", "arms")
LINES = ("line", "foresight")  # one line across jobs, one call at a time at its counter
RANDOM_ORDERS = ("in-turn", "oldest-job")  # shown as the median over --seeds


@dataclass(frozen=True)
class Call:
    model: str
    tokens: int
    latency: float
    lane: str | None = None  # a wave's calls of one lane go one after another (bench/call_log.py); None: alone


@dataclass(frozen=True)
class Chain:
    key: str  # the chain's identity in the trace
    job: str  # the workflow job (one process) its calls come from
    arm: str | None
    waves: tuple[tuple[Call, ...], ...]  # a wave's lanes go out together; the next wave waits for all


def load(path: Path) -> list[Chain]:
    """The trace's chains, in the order their first calls came (the order conversations began)."""
    rows: dict[str, list] = collections.defaultdict(list)
    meta: dict[str, tuple[str, str | None]] = {}
    with path.open() as fh:
        for n, line in enumerate(fh, 1):
            try:
                d = json.loads(line)
                lane = d.get("lane")
                call = Call(d["model"], int(d["tokens"]), float(d["latency"]), None if lane is None else str(lane))
                rows[d["chain"]].append((n, tuple(d["wave"]), call))
                meta.setdefault(d["chain"], (str(d["job"]), d.get("arm")))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise SystemExit(f"{path}:{n}: not a call record ({exc.__class__.__name__}: {exc})") from None
    chains = []
    for key in sorted(rows, key=lambda k: rows[k][0][0]):
        waves: dict[tuple, list[Call]] = collections.defaultdict(list)
        for _, wave, call in rows[key]:
            waves[wave].append(call)
        chains.append(Chain(key, *meta[key], tuple(tuple(waves[w]) for w in sorted(waves))))
    return chains


@dataclass
class Served:
    calls: int = 0
    tokens: int = 0
    first: float | None = None
    last: float = 0.0


def replay(
    chains: list[Chain],
    rpm: int,
    tpm: int,
    order: str,
    *,
    margin: float = WINDOW_MARGIN,
    reserve: float = 0.0,
    hold_unless_scarcer: bool = False,
    spread: int = SPREAD,
    critical: str | None = None,
    arms_first: tuple[str, ...] = (),
    gap: float = 0.05,
    seed: int = 0,
    minute: float = 60.0,
) -> tuple[float, dict]:
    """Simulated wall time and, per model, what it served."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (known: {', '.join(ORDERS)})")
    # `minute`: the provider's window (shorter for a row of bench/throughput.py --time-scale).
    window, rng = minute * (1 + margin), random.Random(seed)
    age = {c.key: i for i, c in enumerate(chains)}
    jobs = sorted({c.job for c in chains})
    by_key = {c.key: c for c in chains}
    nxt = {c.key: 0 for c in chains}  # the chain's wave now going out
    out = {c.key: 0 for c in chains}  # its wave's lanes not yet done
    waiting: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)  # model -> (chain, call in wave)
    since: dict[tuple[str, int], float] = {}  # when a waiting call became ready
    counter: dict[str, tuple[str, int]] = {}  # model -> the call first in the pace's line, waiting for the budget
    admitted: dict[str, collections.deque] = collections.defaultdict(collections.deque)  # (time, tokens)
    general: dict[str, collections.deque] = collections.defaultdict(collections.deque)
    in_window: dict[str, int] = collections.defaultdict(int)
    critical_until: dict[str, float] = collections.defaultdict(float)
    served: dict[str, Served] = collections.defaultdict(Served)
    tick = itertools.count()
    events = [(0.0, next(tick), "ready", c.key) for c in chains]
    heapq.heapify(events)
    end = 0.0
    general_cap = math.floor(rpm * (1 - reserve))
    limits = Limits(rpm=rpm, tpm=tpm)

    following: dict[tuple[str, int], int] = {}  # a call -> the next call of its lane

    def ready(key: str, i: int, now: float) -> None:
        call = by_key[key].waves[nxt[key]][i]
        waiting[call.model].append((key, i))
        since[(key, i)] = now

    def call_of(q: tuple[str, int]) -> Call:
        return by_key[q[0]].waves[nxt[q[0]]][q[1]]

    # What each chain will still send from each of its waves on: (tokens, calls).
    ahead = {}
    for c in chains:
        tokens = calls = 0
        for w in range(len(c.waves) - 1, -1, -1):
            tokens, calls = tokens + sum(x.tokens for x in c.waves[w]), calls + len(c.waves[w])
            ahead[(c.key, w)] = (tokens, calls)

    def foresight_key(q: tuple[str, int], scarce: bool) -> tuple:
        """While requests are the scarcer budget, the call whose chain's calls still to come carry
        the most tokens each (its requests lead soonest to the large prompts tokens wait for);
        otherwise the fewest tokens first, as the line; equals by arrival."""
        tokens, calls = ahead[(q[0], nxt[q[0]])]
        return (-tokens / calls if scarce else call_of(q).tokens, since[q])

    def hold_now(model: str) -> bool:
        """Whether the reserve is held back at `model` now (while a critical call was made)."""
        return not (hold_unless_scarcer and requests_scarcer(len(admitted[model]), in_window[model], limits))

    while events:
        now = events[0][0]
        while events and events[0][0] == now:  # everything that happens at this instant, then admit
            _, _, kind, key = heapq.heappop(events)
            if kind == "ready":  # a chain's next wave: the first call of each of its lanes
                lanes = lanes_of(by_key[key].waves[nxt[key]])
                out[key] = len(lanes)
                for lane in lanes:
                    following.update(zip(((key, i) for i in lane), lane[1:]))
                    ready(key, lane[0], now)
            elif kind == "next":  # the next call of a lane
                ready(*key, now)
            elif kind == "answered":
                end = max(end, now)
                after = following.pop(key, None)
                if after is not None:
                    heapq.heappush(events, (now + gap, next(tick), "next", (key[0], after)))
                    continue
                key = key[0]
                out[key] -= 1
                if out[key] == 0:
                    nxt[key] += 1
                    if nxt[key] < len(by_key[key].waves):
                        heapq.heappush(events, (now + gap, next(tick), "ready", key))
        for model, queue in waiting.items():
            if not queue:
                continue
            log = admitted[model]
            while log and log[0][0] <= now - window:
                in_window[model] -= log.popleft()[1]
            while general[model] and general[model][0] <= now - window:
                general[model].popleft()
            held = critical_until[model] > now
            # Popped from the end: the next call to try last in the list.
            pending = (
                queue[::-1]
                if order in LINES
                else _in_order(queue, order, age, by_key, jobs, rng, critical, arms_first)[::-1]
            )
            left = []
            while pending:
                at_counter = counter.get(model)
                if at_counter is not None:  # the pace's line: the call that waits for the budget goes next
                    pending.remove(at_counter)
                    pending.append(at_counter)
                elif order == "line":  # ranked when the counter is free, as the pace's next call reads the window
                    scarce = requests_scarcer(len(log), in_window[model], limits)
                    pending.sort(key=lambda q: line_key(call_of(q).tokens, since[q], now, minute, scarce), reverse=True)
                elif order == "foresight":  # the line, knowing what each chain will still send
                    scarce = requests_scarcer(len(log), in_window[model], limits)
                    pending.sort(key=lambda q: foresight_key(q, scarce), reverse=True)
                key, i = pending.pop()
                call = call_of((key, i))
                need = min(call.tokens, tpm)  # as the pace charges a call larger than a whole window
                is_critical = critical is not None and by_key[key].arm == critical
                if at_counter is None and reserve and held and not is_critical and hold_now(model):
                    recent = sum(1 for t in general[model] if t > now - window / spread)
                    if not (len(general[model]) < general_cap and recent < math.ceil(general_cap / spread)):
                        left.append((key, i))  # held back before the line: holds up no other
                        continue
                if not (len(log) < rpm and in_window[model] + need <= tpm):
                    left.append((key, i))
                    if order in LINES:  # the line's first waits at the counter for the budget, the rest behind it
                        counter[model] = (key, i)
                        left.extend(pending)
                        break
                    continue
                counter.pop(model, None)
                log.append((now, need))
                in_window[model] += need
                if reserve and not is_critical:
                    general[model].append(now)
                if is_critical:
                    critical_until[model] = max(critical_until[model], now + minute)
                    heapq.heappush(events, (now + minute + 1e-6, next(tick), "tick", ""))
                s = served[model]
                s.calls, s.tokens = s.calls + 1, s.tokens + call.tokens
                s.first = now if s.first is None else s.first
                s.last = max(s.last, now + call.latency)
                heapq.heappush(events, (now + call.latency, next(tick), "answered", (key, i)))
                heapq.heappush(events, (now + window + 1e-6, next(tick), "tick", ""))
                if reserve:
                    heapq.heappush(events, (now + window / spread + 1e-6, next(tick), "tick", ""))
            waiting[model] = left
    unfinished = [c.key for c in chains if nxt[c.key] < len(c.waves)]
    if unfinished:  # a bug here, not in the trace: every call fits an empty window
        raise RuntimeError(f"replay stopped with {len(unfinished)} chain(s) unfinished, first {unfinished[0]}")
    return end, dict(served)


def lanes_of(wave: tuple[Call, ...]) -> list[list[int]]:
    """A wave's lanes as lists of its calls' indices, in order (a call without a lane alone)."""
    lanes: dict[object, list[int]] = {}
    for i, call in enumerate(wave):
        lanes.setdefault(("lane", call.lane) if call.lane is not None else ("call", i), []).append(i)
    return list(lanes.values())


def _in_order(queue: list, order: str, age: dict, by_key: dict, jobs: list, rng, critical, arms_first) -> list:
    """`queue`'s (chain, call in its wave) pairs in the order they may take what is free."""
    if order == "oldest":
        return sorted(queue, key=lambda q: (age[q[0]], q[1]))
    if order == "critical-first":
        return sorted(queue, key=lambda q: (by_key[q[0]].arm != critical, age[q[0]], q[1]))
    if order == "arms":
        rank = {arm: i for i, arm in enumerate(arms_first)}
        return sorted(queue, key=lambda q: (rank.get(by_key[q[0]].arm, len(rank)), age[q[0]], q[1]))
    shuffled = queue[:]
    rng.shuffle(shuffled)
    if order == "in-turn":
        return shuffled
    # oldest-job: the jobs' places in the race stay random; each job fills its places oldest first
    mine = {j: iter(sorted((q for q in queue if by_key[q[0]].job == j), key=lambda q: (age[q[0]], q[1]))) for j in jobs}
    return [next(mine[by_key[q[0]].job]) for q in shuffled]


def share(served: dict, rpm: int, tpm: int, minute: float = 60.0) -> tuple[str, float, str]:
    """The busiest model (by tokens against tpm, or calls against rpm), its binding limit and share."""
    model, s = max(served.items(), key=lambda kv: max(kv[1].tokens / tpm, kv[1].calls / rpm))
    span = s.last - (s.first or 0.0)
    if s.tokens / tpm >= s.calls / rpm:
        return model, s.tokens * minute / span / tpm, "tpm"
    return model, s.calls * minute / span / rpm, "rpm"


def ideal_seconds(chains: list[Chain], rpm: int, tpm: int, minute: float = 60.0) -> float:
    """bench/throughput.py's ideal for the trace: the busiest model's calls / rpm and tokens / tpm,
    and the longest chain's latency (bench/call_log.py; each chain's threads taken as enough)."""
    calls: dict[str, int] = collections.Counter()
    tokens: dict[str, int] = collections.Counter()
    chain = 0.0
    for c in chains:
        seconds = 0.0
        for wave in c.waves:
            for x in wave:
                calls[x.model] += 1
                tokens[x.model] += x.tokens
            seconds += max(sum(wave[i].latency for i in lane) for lane in lanes_of(wave))
        chain = max(chain, seconds)
    return max(max(calls.values(), default=0) * minute / rpm, max(tokens.values(), default=0) * minute / tpm, chain)


def longest_arm(chains: list[Chain]) -> str | None:
    lengths: dict[str, list[int]] = collections.defaultdict(list)
    for c in chains:
        if c.arm:
            lengths[c.arm].append(len(c.waves))
    return max(lengths, key=lambda a: statistics.mean(lengths[a]), default=None)


def synthetic(seed: int = 0) -> list[Chain]:
    """24 chains of 20 calls on two models whose prompts grow along the chain (for --quick)."""
    rng = random.Random(seed)
    chains = []
    for i in range(24):
        waves = tuple(
            (Call("agent" if j % 2 == 0 else "desk", 300 + 250 * j, rng.lognormvariate(math.log(2.0), 0.5)),)
            for j in range(20)
        )
        chains.append(Chain(f"c{i}", f"job{i % 4}", "social" if i % 3 == 0 else "direct", waves))
    return chains


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("calls", nargs="?", type=Path, help="a kept row's calls.jsonl")
    ap.add_argument("--rpm", type=int, default=60)
    ap.add_argument("--tpm", type=int, default=120_000)
    ap.add_argument("--arms-first", default="", help="comma-separated arms whose calls go first (the `arms` order)")
    ap.add_argument("--margin", type=float, default=WINDOW_MARGIN, help="the client's window is this much longer")
    ap.add_argument("--reserve", type=float, default=RESERVE, help="share of the requests held for critical calls")
    ap.add_argument(
        "--hold-unless-scarcer",
        action="store_true",
        help="hold the reserve back only while requests are not the scarcer budget (a variant measured with `line`)",
    )
    ap.add_argument("--critical-arm", help="whose calls are critical (default: the arm with the longest chains)")
    ap.add_argument("--seeds", type=int, default=5, help="runs of the random orders (their median is shown)")
    ap.add_argument(
        "--minute",
        type=float,
        default=60.0,
        help="the limits' window in the trace's seconds (60 / F for a row of bench/throughput.py --time-scale F)",
    )
    ap.add_argument("--gap", type=float, default=0.05, help="seconds from a wave's last answer to the next wave")
    ap.add_argument("--quick", action="store_true", help="a synthetic trace (CI)")
    args = ap.parse_args()
    if args.quick:
        chains, args.rpm, args.tpm, args.arms_first = synthetic(), 30, 40_000, "social"
    elif args.calls is None:
        ap.error("give a calls.jsonl (bench/throughput.py --keep DIR writes DIR/<design>-<rpm>/calls.jsonl) or --quick")
    else:
        chains = load(args.calls)
    arms_first = tuple(a for a in args.arms_first.split(",") if a)
    known = {c.arm for c in chains}
    if set(arms_first) - known:
        ap.error(
            f"--arms-first: no chains of {', '.join(sorted(set(arms_first) - known))} (the trace has {sorted(map(str, known))})"
        )
    critical = args.critical_arm or longest_arm(chains)
    calls = sum(len(w) for c in chains for w in c.waves)
    print(
        f"{len(chains)} chains, {calls} calls; rpm {args.rpm}, tpm {args.tpm}, window margin {args.margin:.1%}, "
        f"reserve {args.reserve:.3f} for {critical or 'no arm'}, held {'unless requests are scarcer' if args.hold_unless_scarcer else 'always'}"
    )
    print(f"{'order':<22}{'busiest model':<26}{'binds':>6}{'share':>8}{'wall s':>9}  share per seed")
    best = None
    for order in ORDERS:
        if order == "arms" and not arms_first:
            continue
        runs = []
        for seed in range(args.seeds) if order in RANDOM_ORDERS else range(1):
            wall, served = replay(
                chains,
                args.rpm,
                args.tpm,
                order,
                margin=args.margin,
                reserve=args.reserve,
                hold_unless_scarcer=args.hold_unless_scarcer,
                critical=critical,
                arms_first=arms_first,
                gap=args.gap,
                seed=seed,
                minute=args.minute,
            )
            runs.append((share(served, args.rpm, args.tpm, args.minute), wall))
        (model, _, binds), _ = runs[0]
        shares, walls = [r[0][1] for r in runs], [r[1] for r in runs]
        each = " ".join(f"{x:.3f}" for x in shares) if len(shares) > 1 else ""
        name = f"arms {','.join(arms_first)}" if order == "arms" else order
        print(
            f"{name:<22}{model:<26}{binds:>6}{statistics.median(shares):>8.1%}{statistics.median(walls):>9.1f}  {each}"
        )
        for (_, run_share, _), run_wall in runs:
            if best is None or run_wall < best[2]:
                best = (name, run_share, run_wall)
    ideal = ideal_seconds(chains, args.rpm, args.tpm, args.minute)
    print(
        f"shortest replayed: {best[0]}, {best[2]:.1f} s, {best[1]:.1%} of the binding limit; the ideal "
        f"max(calls/rpm, tokens/tpm, chain) {ideal:.1f} s: shortest replayed / ideal {best[2] / ideal:.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
