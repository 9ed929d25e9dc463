"""The task interface the four paradigms implement, and their registry.

Who reads it: the paradigms (`tasks/<name>.py`, each a Task subclass exported as TASK), the
experiment (a config's parameters, roles and actions are checked against its task class), the
engine, the metrics and the analysis (`task_class`), the scripted policies and the workflow
(TASKS). The invariant: a paradigm module is imported by name, on first use, through
`task_class`, so nothing on the ground floor (`world/`) imports `tasks/`.

A task owns its state and rules. The engine asks it which actions an agent may take now,
has it validate and apply them, tells it when a step ends (where time-driven things happen:
production completes, a round settles, a phase changes), and asks whether the run is over.
Everything a task does that matters is emitted as an event through the Context, so metrics
can be computed from events alone (`metrics(events)`).
"""

from __future__ import annotations

import random
from typing import ClassVar, Protocol

from incognita.collabsim.world.roster import AgentSpec
from incognita.common.io import InputError

# Actions every role has, handled by the engine itself.
MESSAGE, NOTHING = "message", "do_nothing"
LISTED_RANGE = 200  # whole-number arguments with at most this many values are listed in their schema


def whole_number(lo: int, hi: int | None = None) -> dict:
    """A whole-number argument of `Task.argument_schemas`: its values listed when the range is short
    (every server's schema dialect takes an enum, not every one takes bounds), else any integer."""
    if hi is not None and hi - lo < LISTED_RANGE:
        return {"type": "integer", "enum": list(range(lo, hi + 1))}
    return {"type": "integer"}


class Context(Protocol):
    """What a task sees of the engine."""

    step: int
    t: int  # simulated seconds at the start of this step (step x step_seconds)
    step_seconds: int

    def emit(self, kind: str, actor: str, payload: dict, audience: str | list[str] = "all") -> None:
        """Record an event; `audience` ("all" or agent ids) is widened by the observers of `actor`."""


class Task:
    """Base class. Subclasses set `name`, `title` and `actions` and implement the hooks."""

    name: ClassVar[str]
    title: ClassVar[str]  # how figures and tables name the task
    actions: ClassVar[dict[str, tuple[str, ...]]]  # role -> its task actions (message, do_nothing implied)
    METRICS: ClassVar[tuple[str, ...]] = ()  # the names `metrics` returns, in report order
    DEFAULTS: ClassVar[dict] = {}  # task parameters with their default values
    REQUIRED: ClassVar[tuple[str, ...]] = ()  # task parameters without a default

    def __init__(self, params: dict, agents: tuple[AgentSpec, ...], rng: random.Random) -> None:
        self.params = {**self.DEFAULTS, **params}
        self.agents = agents
        self.rng = rng
        self.role = {a.id: a.role for a in agents}

    # --- configuration ----------------------------------------------------------------------
    @classmethod
    def check_params(cls, params: dict, agents: tuple[AgentSpec, ...], where: str) -> None:
        """Raise InputError naming `where` and the key when the parameters cannot run."""
        roles = {a.role for a in agents}
        unknown = sorted(roles - set(cls.actions))
        if unknown:
            raise InputError(
                f"{where}: {cls.name} has no role {', '.join(unknown)} (roles: {', '.join(sorted(cls.actions))})"
            )
        known = [*cls.DEFAULTS, *cls.REQUIRED]
        extra = sorted(set(params) - set(known))
        if extra:
            raise InputError(f"{where}: unknown key(s) {', '.join(extra)} (known: {', '.join(known)})")
        missing = [k for k in cls.REQUIRED if k not in params]
        if missing:
            raise InputError(f"{where}: missing key(s) {', '.join(missing)}")

    @classmethod
    def argument_schemas(cls, params: dict, agent_ids: tuple[str, ...]) -> dict[str, dict[str, dict]]:
        """Each task action's arguments as JSON schemas (action -> name -> schema), for the answer
        schema of a model entry with `structured_output` (incognita.collabsim.answer_schemas).
        Names and types only, as the prompt states them; whether a value is allowed now stays
        `validate`'s call. `params` has the defaults filled in. Default: no arguments."""
        return {action: {} for actions in cls.actions.values() for action in actions}

    def role_actions(self, agent: str) -> tuple[str, ...]:
        return (*self.actions[self.role[agent]], MESSAGE, NOTHING)

    # --- the run ----------------------------------------------------------------------------
    def start(self, ctx: Context) -> None:
        """Emit each agent's private materials and the first phase."""

    def acts(self, agent: str) -> bool:
        """Whether the agent gets a turn this step (for example, not after it has voted)."""
        return True

    def allowed(self, agent: str) -> set[str]:
        """The actions the agent may take now (the phase may narrow its role's actions)."""
        return set(self.role_actions(agent))

    def messaging(self) -> str | None:
        """The message mode this phase forces ("broadcast"), or None to use the configured one."""
        return None

    def validate(self, agent: str, action: str, args: dict) -> str | None:
        """Why the action cannot be taken now, or None. Never changes state."""
        return None

    def audience(self, agent: str, action: str, args: dict) -> str | list[str]:
        """Who sees the action event (before observers are added); by default the actor only."""
        return [agent]

    def apply(self, ctx: Context, agent: str, action: str, args: dict) -> None:
        """Apply a validated action, emitting its consequences as `state` events."""

    def end_step(self, ctx: Context) -> None:
        """Time-driven changes at the end of a step."""

    def done(self) -> bool:
        return False

    @property
    def phase(self) -> str:
        return "play"

    def observation(self, agent: str, observed: tuple[str, ...]) -> dict:
        """The agent's view of the task: its private state, the public state, and the state of
        the agents it observes (`observed`, from the visibility settings)."""
        raise NotImplementedError

    def probe_truth(self, agent: str) -> dict | None:
        """What a probe answer can be checked against at this moment (None: nothing), for
        calibration; it goes into the probe event, which no agent sees."""
        return None

    def final_state(self) -> dict:
        """Everything needed to compare two runs' outcomes; hashed into run_end."""
        raise NotImplementedError

    @staticmethod
    def metrics(events: list[dict]) -> dict[str, float]:
        """The task's metrics from a run's events alone."""
        raise NotImplementedError


# The one list of CollabSim tasks. A task named here has its mechanics and metrics in
# tasks/<name>.py (TASK) and its scripted policy in policies/<name>.py (POLICY); both are
# imported by name, on first use.
TASKS = ("shape_factory", "daytrader", "hidden_profile", "map_task")
TASK_MODULES = {name: f"incognita.collabsim.tasks.{name}" for name in TASKS}


def task_class(name: str, where: str = "task") -> type[Task]:
    import importlib

    if name not in TASK_MODULES:
        raise InputError(f"{where}: unknown CollabSim task {name!r} (expected one of {', '.join(TASK_MODULES)})")
    return importlib.import_module(TASK_MODULES[name]).TASK
