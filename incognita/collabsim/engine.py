"""The run loop: a simulated clock, turns, communication controls and visibility.

Each step is `step_seconds` of simulated time. In a step every agent the task lets act takes
one turn: it receives its observation (its task view plus the events it could see since its
last turn) and answers with JSON actions. Round-robin turns see the effects of earlier turns
in the same step; simultaneous turns all see the state at the start of the step. Nothing
reads the wall clock, so a run is a function of its config, its seed and its agents' answers.

With `workers` > 1 the calls that need no answer of each other go out together: a simultaneous
step's turns, and probes of several agents at one moment. Only the waiting overlaps: the engine
asks one participant at most one thing at a time, in the order of the sequential loop, and
records every answer in that order from the main thread, so the records do not depend on
`workers` or on which call finishes first.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

from incognita.collabsim.world.events import ALL, SYSTEM, EventLog, state_hash
from incognita.collabsim.world.experiment import Experiment
from incognita.collabsim.world.probes import Ask, Prober
from incognita.collabsim.world.replies import json_reply
from incognita.collabsim.world.task import MESSAGE, NOTHING, Task, task_class

T = TypeVar("T")


class Participant(Protocol):
    """With `workers` > 1 different participants are called from different threads at once, so a
    participant keeps its state to itself; one participant is never called twice at once."""

    def act(self, observation: dict) -> str:
        """The agent's raw answer to an observation."""

    def probe(self, prompt: str) -> str:
        """The agent's raw answer to a probe, which never joins its conversation."""


@dataclass
class Pace:
    """Per-agent message accounting for the bandwidth controls."""

    last_message_t: int | None = None
    actions_since_message: int = 0
    idle: bool = False


@dataclass
class Engine:
    exp: Experiment
    seed: int
    participants: dict[str, Participant]
    log: EventLog = field(default_factory=EventLog)
    step: int = 0
    t: int = 0
    workers: int = 1  # model calls in flight at most; 1 = one after another, without threads

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers: at least 1, got {self.workers}")
        self.pool: ThreadPoolExecutor | None = None
        # A simultaneous step's events while its probe calls are out (None: events go to the log).
        self.held: list[tuple | Ask] | None = None
        self.task: Task = task_class(self.exp.task)(
            self.exp.params, self.exp.agents, task_rng(self.exp.task, self.seed)
        )
        self.pace = {a.id: Pace() for a in self.exp.agents}
        self.seen = {a.id: 0 for a in self.exp.agents}  # first event id not yet shown to each agent
        # Every observation an agent was given, in the order given (the run's observations.jsonl.gz):
        # the log records what happened, this what each agent was shown of it.
        self.observations: list[dict] = []
        self.observers: dict[str, set[str]] = {a.id: set() for a in self.exp.agents}
        for watcher, watched in self.exp.observes.items():
            for agent in watched:
                self.observers[agent].add(watcher)
        self.prober = Prober(self.exp.probe, self.exp.probe_template, self)

    # --- Context (what tasks call) -----------------------------------------------------------
    @property
    def step_seconds(self) -> int:
        return self.exp.protocol.step_seconds

    def emit(self, kind: str, actor: str, payload: dict, audience: str | list[str] = ALL) -> None:
        # Observers see an agent's actions and their consequences, never its private materials.
        if audience != ALL and kind != "private":
            audience = sorted(set(audience) | self.observers.get(actor, set()))
        self._record(self.step, self.t, kind, actor, payload, audience)

    def _record(self, *event) -> None:
        if self.held is None:
            self.log.emit(*event)
        else:
            self.held.append(event)

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> list[dict]:
        if self.workers == 1:
            return self._run()
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="collabsim")
        try:
            return self._run()
        finally:
            # After a failed call the run stops; calls already out finish (their answers reach
            # the response cache, so a rerun does not pay for them again), queued ones are dropped.
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

    def _run(self) -> list[dict]:
        p = self.exp.protocol
        self.log.emit(
            0,
            0,
            "run_start",
            SYSTEM,
            {
                "task": self.exp.task,
                "condition": self.exp.condition,
                "seed": self.seed,
                "config_hash": self.exp.config_hash,
                "agents": [{"id": a.id, "role": a.role} for a in self.exp.agents],
                "max_steps": p.max_steps,
                "step_seconds": p.step_seconds,
            },
        )
        self.task.start(self)
        idle_steps = 0
        for step in range(p.max_steps):
            self.step, self.t = step, step * p.step_seconds
            acting = [a.id for a in self.exp.agents if self.task.acts(a.id)]
            if p.turn_taking == "simultaneous":
                self._simultaneous(acting)
            else:
                for agent in acting:
                    self._turn(agent, self._ask(agent))
            self.task.end_step(self)
            self.prober.after_step()
            idle_steps = idle_steps + 1 if all(self.pace[a].idle for a in acting) else 0
            if self.task.done():
                break
            if p.stop_after_idle_steps and idle_steps >= p.stop_after_idle_steps:
                self.emit("phase", SYSTEM, {"phase": "stopped", "reason": f"{idle_steps} steps without an action"})
                break
        final = self.task.final_state()
        self.step, self.t = self.step, self.t + p.step_seconds
        self.log.emit(
            self.step,
            self.t,
            "run_end",
            SYSTEM,
            {"steps": self.step + 1, "final_state": final, "state_hash": state_hash(final)},
        )
        return self.log.dicts()

    def observation(self, agent: str) -> dict:
        spec = self.exp.agent(agent)
        news = self.log.since(self.seen[agent], agent)
        self.seen[agent] = len(self.log.events)
        shown = {
            "you": agent,
            "role": spec.role,
            "step": self.step,
            "t": self.t,
            "steps_left": self.exp.protocol.max_steps - self.step,
            "phase": self.task.phase,
            "allowed_actions": sorted(self.allowed(agent)),
            "team": [{"id": a.id, "role": a.role} for a in self.exp.agents if a.id != agent],
            "state": self.task.observation(agent, self.exp.observes.get(agent, ())),
            "events": [{"t": e.t, "kind": e.kind, "actor": e.actor, **e.payload} for e in news],
        }
        # `before_event`: the id the log's next event gets, so the observation sits between events.
        self.observations.append({"agent": agent, "step": self.step, "before_event": self.seen[agent], "shown": shown})
        return shown

    def role_actions(self, agent: str) -> tuple[str, ...]:
        """The role's task actions the config enables, plus message and do_nothing."""
        return (*self.exp.action_space[self.exp.agent(agent).role], MESSAGE, NOTHING)

    def allowed(self, agent: str) -> set[str]:
        return self.task.allowed(agent) & set(self.role_actions(agent))

    def _ask(self, agent: str) -> str:
        return self.participants[agent].act(self.observation(agent))

    def _simultaneous(self, acting: list[str]) -> None:
        """Every turn sees the state at the start of the step, so all the calls go out at once;
        the answers are applied in agent order, as the sequential loop applies them."""
        observations = [self.observation(a) for a in acting]  # in agent order: each advances `seen`
        raws = self.gather([partial(self.participants[a].act, obs) for a, obs in zip(acting, observations)])
        if self.pool is None or not self.prober.on:
            for agent, raw in zip(acting, raws):
                self._turn(agent, raw)
            return
        # The turns' probes depend only on what each agent was asked so far, never on the turns
        # applied after its own, so they are held as placeholders while the turns are applied,
        # then sent together and recorded in their places. The turns' events wait with them:
        # nothing reads the log meanwhile (a task sees only `emit`).
        self.held = []
        try:
            for agent, raw in zip(acting, raws):
                self._turn(agent, raw)
            held = self.held
        finally:
            self.held = None
        answers = iter(self.prober.answers([item for item in held if isinstance(item, Ask)]))
        for item in held:
            if isinstance(item, Ask):
                self.prober.record(item, next(answers))
            else:
                self.log.emit(*item)

    def gather(self, calls: list[Callable[[], T]]) -> list[T]:
        """Make the calls, up to `workers` at once; the answers come back in the calls' order,
        whatever order they finish in. Callers never pass two calls to one participant."""
        if self.pool is None or len(calls) < 2:
            return [call() for call in calls]
        futures = [self.pool.submit(call) for call in calls]
        return [f.result() for f in futures]

    # --- one turn ---------------------------------------------------------------------------
    def _turn(self, agent: str, raw: str) -> None:
        self._handle(agent, raw)
        self.prober.after_turn(agent)

    def _handle(self, agent: str, raw: str) -> None:
        self.pace[agent].idle = True
        actions, error = parse_actions(raw)
        if error:
            self._invalid(agent, None, {}, error, raw=raw)
            return
        messages = moves = 0
        for item in actions:
            name, args = item.get("action"), {k: v for k, v in item.items() if k != "action"}
            if not isinstance(name, str):
                self._invalid(agent, None, args, "each action needs an 'action' name")
                continue
            reason = self._check(agent, name, args, messages, moves)
            if reason:
                self._invalid(agent, name, args, reason)
                continue
            if name == MESSAGE:
                if self._message(agent, args):
                    messages += 1
                    self.prober.after_action(agent, name)
                continue
            moves += 1
            self.pace[agent].actions_since_message += 1
            if name != NOTHING:
                self.pace[agent].idle = False
            self.emit("action", agent, {"action": name, "args": args}, self.task.audience(agent, name, args))
            self.task.apply(self, agent, name, args)
            self.prober.after_action(agent, name)

    def _check(self, agent: str, name: str, args: dict, messages: int, moves: int) -> str | None:
        if name not in self.role_actions(agent):
            return (
                f"unknown action {name!r} for role {self.exp.agent(agent).role} "
                f"(actions: {', '.join(self.role_actions(agent))})"
            )
        if name == MESSAGE and messages >= self.exp.communication.max_messages_per_turn:
            return f"at most {self.exp.communication.max_messages_per_turn} message(s) per turn"
        if name != MESSAGE and moves >= self.exp.protocol.actions_per_turn:
            return f"at most {self.exp.protocol.actions_per_turn} action(s) besides messages per turn"
        if name not in self.allowed(agent):
            return (
                f"{name} is not allowed in phase {self.task.phase} (allowed: {', '.join(sorted(self.allowed(agent)))})"
            )
        return None if name in (MESSAGE, NOTHING) else self.task.validate(agent, name, args)

    def _message(self, agent: str, args: dict) -> bool:
        """Deliver or reject; a rejected message is never shortened, and only its sender is told."""
        text, to = args.get("text"), args.get("to", ALL)
        reason = self._message_problem(agent, text, to)
        if reason:
            self.emit("message_rejected", agent, {"to": to, "text": text, "reason": reason}, [agent])
            return False
        pace = self.pace[agent]
        pace.last_message_t, pace.actions_since_message, pace.idle = self.t, 0, False
        audience = ALL if to == ALL else [agent, to]
        self._record(
            self.step, self.t, "message", agent, {"to": to, "text": text, "words": len(text.split())}, audience
        )
        return True

    def _message_problem(self, agent: str, text: object, to: object) -> str | None:
        c = self.exp.communication
        mode = self.task.messaging() or c.mode
        if not isinstance(text, str) or not text.strip():
            return "a message needs non-empty 'text'"
        if mode == "broadcast" and to != ALL:
            return f'messages go to everyone in this {"phase" if self.task.messaging() else "condition"} (to: "all")'
        if mode == "direct" and (not isinstance(to, str) or to == ALL or to == agent or to not in self.pace):
            return f"unknown recipient {to!r}: name one teammate ({', '.join(a for a in self.pace if a != agent)})"
        words = len(text.split())
        if c.max_words is not None and words > c.max_words:
            return f"{words} words is over the limit of {c.max_words} words per message"
        pace = self.pace[agent]
        if pace.last_message_t is not None:
            if pace.actions_since_message < c.min_actions_between:
                return (
                    f"{c.min_actions_between} actions must come between two messages "
                    f"({pace.actions_since_message} so far)"
                )
            wait = pace.last_message_t + c.min_seconds_between - self.t
            if wait > 0:
                return f"the next message is allowed in {wait} simulated seconds"
        return None

    def _invalid(self, agent: str, name: str | None, args: dict, reason: str, raw: str | None = None) -> None:
        payload = {"action": name, "args": args, "reason": reason}
        if raw is not None:
            payload["raw"] = raw
        self.emit("invalid_action", agent, payload, [agent])


def parse_actions(raw: str) -> tuple[list[dict], str | None]:
    """`{"actions": [...]}`, a single action object, or a list of them -> (actions, error)."""
    doc, error = json_reply(raw)
    if error:
        return [], error
    if isinstance(doc, dict) and "actions" in doc:
        doc = doc["actions"]
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list) or not all(isinstance(a, dict) for a in doc):
        return [], 'expected {"actions": [{"action": ..., ...}, ...]}'
    if not doc:
        return [], "no action (send do_nothing to pass)"
    return doc, None


def task_rng(task: str, seed: int) -> random.Random:
    """The task's draws (materials, routes) depend on the task and seed only, so every condition
    of a task meets the same materials under the same seed (the design pairs by seed)."""
    return random.Random(f"collabsim:{task}:{seed}")


def agent_seed(seed: int, agent: str) -> int:
    return random.Random(f"collabsim-agent:{seed}:{agent}").randrange(2**31)
