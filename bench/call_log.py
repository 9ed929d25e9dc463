"""The call log of a throughput row: which calls waited for which, and the chain that follows.

Not a script: bench/throughput.py notes every call its servers answer here (`Dispatch`) and
writes the log to calls.jsonl; bench/order_replay.py plays it again. Each call is placed in
its chain (an episode, a native run, a CollabSim run), in a wave of that chain (the next wave
goes out when every call of the previous one is answered) and in a lane of its wave (a lane's
calls go one after another, the lanes at once, at most `workers` of them at a time).

The placement follows the order the run imposes, so that the chain's latency is what the run
had to wait for whatever the limits, and wall / ideal >= 1 holds:
- an episode's or a native run's calls go one after another: each its own wave;
- a CollabSim run (incognita.collabsim.engine): with simultaneous turns, a step's turns are one
  wave (an agent each), then its probes one wave in which each agent's probes go one after
  another (`Prober.answers` gives each agent one thread); with round-robin turns every turn and
  its probes go one after another, and only the probes of the `events` cadence, asked at the end
  of a step, go together. With one worker every call waits for the one before.
A wave lasts as long as its lanes take on the run's `workers` threads, handed out in the order
the lanes started (ThreadPoolExecutor's order): the longest lane when there are threads enough.
"""

from __future__ import annotations

import heapq
import json
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from incognita.access.taxonomy import NATIVE


@dataclass(frozen=True)
class RunOrder:
    """What decides how a CollabSim run's calls wait for each other (its experiment's protocol)."""

    turn_taking: str  # simultaneous | round_robin
    cadence: str  # the probe cadence (incognita.collabsim.world.probes.CADENCES)
    workers: int  # the run's calls in flight at most (its --workers)


def run_orders(root: Path, workers: int):
    """A function (task, condition) -> RunOrder, reading the condition files under `root` (the
    copy's config/collabsim) once each."""
    from incognita.collabsim.world.experiment import load_experiment

    cache: dict[tuple[str, str], RunOrder] = {}

    def order(task: str, condition: str) -> RunOrder:
        if (task, condition) not in cache:
            exp = load_experiment(root / task / f"{condition}.yaml")
            cadence = exp.probe.cadence if exp.probe_template is not None else "off"
            cache[(task, condition)] = RunOrder(exp.protocol.turn_taking, cadence, workers)
        return cache[(task, condition)]

    return order


class CollabSimPlaces:
    """Where a CollabSim run's calls go, in the order the server receives them. A step's probes are
    placed in the step the run is at (its latest turn), not the step their history ends in: an
    agent that did not act in a step is probed with an older history."""

    def __init__(self) -> None:
        self._step: dict[str, int] = {}  # run -> the step of its latest turn
        self._seq = 0

    def place(self, run: str, kind: str, step: int, agent: str, order: RunOrder) -> tuple[tuple, str | None]:
        """(wave, lane) of one call: kind act or probe, `step` the step its request's history ends in."""
        self._seq += 1
        if kind == "act":
            self._step[run] = max(self._step.get(run, step), step)
        at = self._step.get(run, step)
        if order.workers <= 1:
            return (at, 0, self._seq), None
        if order.turn_taking == "simultaneous":
            return ((at, 0, 0), agent) if kind == "act" else ((at, 1, 0), agent)
        if kind == "probe" and order.cadence == "events":
            return (at, 1, 0), agent
        return (at, 0, self._seq), None


def wave_seconds(lanes: list[list[float]], workers: int) -> float:
    """How long a wave takes: its lanes (each a list of latencies, one call after another) on
    `workers` threads, each lane to the first thread free, in the lanes' order."""
    free = [0.0] * max(1, min(workers, len(lanes)))
    for lane in lanes:
        start = heapq.heappop(free)
        heapq.heappush(free, start + sum(lane))
    return max(free, default=0.0)


def chain_of(calls: list[dict], workers: dict[str, int] | None = None) -> tuple[int, float]:
    """The longest chain of a call log: (its waves, its seconds). A wave's lanes are the calls'
    `lane` (calls without one are each a lane of their own); `workers` maps a chain to its threads
    (default: as many as its widest wave needs)."""
    waves: dict[str, dict[tuple, dict]] = defaultdict(dict)
    for n, c in enumerate(calls):
        lanes = waves[c["chain"]].setdefault(tuple(_key(c["wave"])), {})
        lane = c.get("lane")
        lanes.setdefault(("lane", lane) if lane is not None else ("call", n), []).append(float(c["latency"]))
    best = (0, 0.0)
    for chain, by_wave in waves.items():
        threads = (workers or {}).get(chain, 1 << 30)
        seconds = sum(wave_seconds(list(lanes.values()), threads) for lanes in by_wave.values())
        if seconds > best[1]:
            best = (len(by_wave), seconds)
    return best


def _key(wave) -> tuple:
    return tuple(wave) if isinstance(wave, (list, tuple)) else (wave,)


class Dispatch:
    """The servers' responder: each request goes to its family's twins (the cell header's `family`).

    It also notes, per request, its chain, wave and lane (above), the workflow job it came from,
    the tokens the server counts against tpm and the latency the server holds it for (a function
    of the request alone, so it can be drawn here again): the row's calls.jsonl. `orders` gives a
    CollabSim run's RunOrder from its task and condition."""

    def __init__(self, families: dict, latency, seed: int = 0, orders=None):
        self.families, self.latency, self.seed, self.orders = families, latency, seed, orders
        self.calls: list[dict] = []  # chain, wave, lane, job, arm, model, tokens, latency
        self.workers: dict[str, int] = {}  # a CollabSim run's threads (chain -> workers)
        self._places = CollabSimPlaces()
        self._lock = threading.Lock()

    def __call__(self, model: str, body: dict, headers: dict):
        from incognita.common.loopback import admission_tokens
        from incognita.common.wire_shapes import completion_body

        raw = headers.get("x-incognita-cell")
        try:
            cell = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            cell = {}
        family = cell.get("family") if isinstance(cell, dict) else None
        twins = self.families.get(family)
        if twins is None:
            raise ValueError(f"no twins for family {family!r} (X-Incognita-Cell: {raw!r})")
        reply = twins(model, body, headers)
        tokens = 0
        if self.latency.per_output_token:
            tokens = completion_body(model, body, reply, 0)["usage"]["completion_tokens"]
        wait = self.latency.draw(body, tokens, self.seed)
        with self._lock:
            chain, wave, lane, job = self._place(family, cell, body)
            self.calls.append(
                {
                    "chain": chain,
                    "wave": wave,
                    "lane": lane,
                    "job": job,
                    "arm": cell.get("arm"),
                    "model": model,
                    "tokens": admission_tokens(body),
                    "latency": wait,
                }
            )
        return reply

    def _place(self, family: str, cell: dict, body: dict) -> tuple[str, tuple, str | None, str]:
        """(chain, wave, lane, job). An access cell's chain is its run without the role names (the
        overlay version keeps a repaired task's run and its archived unrepaired run apart); its job
        the `episodes` block (model, task) or the `native` job (model). A CollabSim run is its own
        chain and job (rules/*.smk)."""
        if family == "access":
            chain = json.dumps({k: v for k, v in cell.items() if k != "role"}, sort_keys=True)
            job = (
                f"native/{cell.get('model')}"
                if cell.get("arm") == NATIVE
                else f"episodes/{cell.get('model')}/{cell.get('task')}"
            )
            return chain, (len(self.calls),), None, job
        from incognita.collabsim.loopback_twins import step_of

        if self.orders is None:
            raise ValueError("a CollabSim call, but the Dispatch was given no run orders")
        run = json.dumps({k: v for k, v in cell.items() if k not in ("role", "agent", "agent_seed")}, sort_keys=True)
        order = self.orders(cell["task"], cell["condition"])
        self.workers[run] = order.workers
        kind, step = step_of(body)
        wave, lane = self._places.place(run, kind, step, str(cell["agent"]), order)
        return run, wave, lane, run

    def chain(self) -> tuple[int, float]:
        """The longest chain: (its waves, its seconds; chain_of)."""
        return chain_of(self.calls, self.workers)
