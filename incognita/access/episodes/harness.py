"""Running cells of the design grid and writing their episode records.

A *block* is one (model, task, repetition): its arms take Latin-square positions (the arm
order rotates with the model, task and repetition), as the paper's schedule does, and each
cell writes one record at its episode record path (incognita.access.paths.episode_record). A
harness serves one domain (`DomainInputs`: its database, holder maps, policy vocabulary and
prompts); a task is named by its qualified id (`retail/46`).
A job runs every block of one model and task; with real models its cells run at once
(`run_blocks(workers=...)`), so the arms of a block share one time window, and the position
stays a recorded label (docs/episodes.md, "Concurrency"). Each cell's seed depends on (design
seed, model, task, repetition, arm): the arms of a block are paired, their draws independent.
The native anchor is the rotation's fourth arm: a block skips it here (it runs in the
upstream harness, incognita.access.native.native_run) but every record keeps its position in the full order.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from incognita.access.arm_registry import DEFAULT_PATH as ARM_REGISTRY
from incognita.access.arm_registry import arm_registry, registry_path
from incognita.access.cells import design_from_config
from incognita.access.domain import Domain, domain_files, get_domain, split_task
from incognita.access.episodes.loop.agent_plan import plan_from_golden
from incognita.access.episodes.loop.episode_loop import USER, Episode
from incognita.access.episodes.loop.prompts import PromptSet
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.episodes.loop.tool_gateway import Gateway
from incognita.access.episodes.scripted import Runtime, make_backend
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.paths import episode_record
from incognita.access.reference.partition import Partition, load_partition
from incognita.access.taxonomy import NATIVE
from incognita.common.backends.entry import ModelEntry
from incognita.common.environment import describe
from incognita.common.fan_out import run_in_order
from incognita.common.io import (
    InputError,
    read_json,
    read_yaml,
    sha256_file,
    write_json,
)

# Bump when a harness or scripted-backend change alters episodes: the workflow passes it as a
# param, so blocks re-run; plain code edits never invalidate cached episodes.
GENERATOR_VERSION = 9


@dataclass(frozen=True)
class HarnessSettings:
    """What the harness needs to run a block: the design's arms, seed, budget and the participants' entries.
    The entries are ModelEntry (incognita.common.backends.entry); a config value given here (a spec
    string or {spec, per-role settings}) is parsed once, when the settings are made."""

    arms: tuple[str, ...]
    models: dict[str, ModelEntry]
    repetitions: int
    seed: int
    budget: int
    customer: ModelEntry
    service: ModelEntry
    prompts_dir: str
    scripted_agents: str
    judge: ModelEntry | None = None
    cache_dir: str | None = None  # model response cache; None = $INCOGNITA_CACHE_DIR or cache/responses
    prices: str | None = None  # price table; None = $INCOGNITA_PRICES or config/prices.yaml
    information_channel: str = "substring"  # substring | judge (incognita.access.episodes.loop.evaluation)
    arm_registry: str = ARM_REGISTRY  # what each arm is (incognita.access.arm_registry)

    @classmethod
    def from_config(cls, cfg: dict) -> HarnessSettings:
        d, p = design_from_config(cfg), cfg["participants"]
        return cls(
            arms=d.rotation,
            models=dict(cfg["models"]),
            repetitions=d.repetitions,
            seed=d.seed,
            budget=d.budget,
            customer=p["customer"],
            service=p["service"],
            prompts_dir=cfg["prompts"],
            scripted_agents=cfg["scripted_agents"],
            judge=p.get("judge"),
            cache_dir=(cfg.get("cache") or {}).get("dir"),
            prices=cfg.get("prices"),
            information_channel=(cfg.get("evaluation") or {}).get("information_channel", "substring"),
            arm_registry=registry_path(cfg),
        )

    def __post_init__(self) -> None:
        from incognita.access.episodes.loop.evaluation import check_channel

        models = {name: ModelEntry.parse(e, f"models.{name}") for name, e in self.models.items()}
        object.__setattr__(self, "models", models)
        for role in ("customer", "service"):
            object.__setattr__(self, role, ModelEntry.parse(getattr(self, role), f"participants.{role}"))
        object.__setattr__(self, "judge", ModelEntry.optional(self.judge, "participants.judge"))

        try:
            check_channel(self.information_channel, self.judge)
        except ValueError as exc:
            raise InputError(str(exc)) from None


@dataclass(frozen=True)
class DomainInputs:
    """What a harness reads of the domain it serves: the database, the holder maps, the policy
    vocabulary scripted agents know and the domain's prompt folder (role and rule texts)."""

    domain: str
    db: str
    partition: str
    vocabulary: str
    prompts: str

    @classmethod
    def of(cls, domain: str, **paths: str | None) -> DomainInputs:
        """The domain's inputs at their usual places (incognita.access.domain.DomainFiles), any given path instead."""
        files = domain_files(domain)
        defaults = {
            "db": files.db,
            "partition": files.partition,
            "vocabulary": files.vocabulary,
            "prompts": files.prompts,
        }
        return cls(domain, **{k: str(paths.get(k) or v) for k, v in defaults.items()})


def cell_seed(design_seed: int, model: str, task: str, rep: int, arm: str) -> int:
    """One seed per cell, `task` its qualified id. The arm is part of it: the arms of a block are
    paired by (model, task, repetition), as the paper pairs them, and each draws its own
    randomness, so a scripted profile's slips and injections are independent across arms
    instead of recurring in all. The task enters as its domain's seed namespace and upstream id
    (incognita.access.domain.Domain.seed_namespace)."""
    domain, local = split_task(task)
    namespace = get_domain(domain).seed_namespace
    key = f"{namespace}/{local}" if namespace else local
    digest = hashlib.sha256(f"{design_seed}/{model}/{key}/{rep}/{arm}".encode()).hexdigest()
    return int(digest[:12], 16)


def arm_order(arms: tuple[str, ...], models: list[str], model: str, task_position: int, rep: int) -> list[str]:
    """Latin-square rotation: each arm takes each position equally often across blocks."""
    shift = (models.index(model) + task_position + rep) % len(arms)
    return list(arms[shift:] + arms[:shift])


class Harness:
    """Everything loaded once per process: the domain's database, partition, prompts and vocabulary, and the profiles."""

    def __init__(self, design: HarnessSettings, inputs: DomainInputs):
        from incognita.access.golden.upstream_replay import World

        self.design = design
        self.inputs = inputs
        self.domain: Domain = get_domain(inputs.domain)
        self.world = World(self.domain, inputs.db)
        gc.freeze()  # the loaded database never changes; keep it out of the collector's way
        self.partition: Partition = load_partition(inputs.partition)
        self.arms = arm_registry(design.arm_registry)
        self.prompts = PromptSet(Path(design.prompts_dir), Path(inputs.prompts), self.partition)
        self.profiles = read_yaml(design.scripted_agents) or {}
        # What any agent of the domain knows: the tools' names, descriptions and parameters,
        # and the public policy vocabulary. Never who holds which tool.
        # Imported here: the workflow imports this module at parse time for GENERATOR_VERSION,
        # and the scripted agent's modules would double the cost of that import.
        from incognita.access.episodes.scripted.scripted_agent import tool_catalog

        schemas = self.world.openai_schemas()
        self.tools = tool_catalog(
            list(schemas.values()), {t for t in schemas if self.world.tool_types.get(t) == "write"}
        )
        self.vocabulary = load_vocabulary(inputs.vocabulary)
        # The domain's plain words for its changes, which its desks restate a change in (a domain
        # without a scripted part has none: a desk then says "make this change").
        self.change_words = self.domain.part("scripted").CHANGE_WORDS if "scripted" in self.domain.parts else {}
        from incognita.access.cost_assumptions import longest_arms

        # Cells of these arms are expected to run longest: their calls may use the pace's reserve, so
        # that a burst of shorter episodes never stalls the chain that decides when a job ends.
        ours = [arm for arm in design.arms if arm != NATIVE]
        self.critical_arms = longest_arms(ours, self.arms, self.partition)

    def _owners(self, arm: str) -> dict[str, frozenset[str]]:
        return self.arms.arm(arm).owners(self.partition)

    def recipients(self, arm: str) -> list[str]:
        """Whom the agent may write to under `arm`: the customer, then the tools' holders."""
        return [USER, *(h for h in self._owners(arm) if not self.arms.arm(arm).agent_executes)]

    def _make(self, entry: ModelEntry, role: str, knowledge: dict, cell: dict | None = None):
        """The backend for an entry: a scripted participant gets its private knowledge; a model's
        transport gets the run's settings (cache, price table, the cell it serves and whether its
        calls may use the pace's reserve), and never the knowledge."""
        runtime = Runtime(
            cache_dir=self.design.cache_dir,
            prices=self.design.prices,
            cell=cell,
            critical=cell is not None and cell["arm"] in self.critical_arms,
        )
        return make_backend(entry, role, knowledge, runtime)

    def desk_context(self, arm: str, desk: str, tools: frozenset[str]) -> dict:
        """What a service participant's backend is built with: its tools, its remit, and which of
        its tools write (the gateway asks for confirmation of those); where the arm's holders
        refer, who holds every other tool (its prompt's directory says the same in role words).
        The access twins build the same (loopback_twins)."""
        entry = self.arms.arm(arm)
        holds_all = set(tools) == set(self.partition.tools)
        context = {
            "tools": sorted(tools),
            "remit": self.prompts.holder_parts(desk, holds_all, entry)["role"],
            "confirm_writes": True,
            "write_tools": sorted(t for t in tools if self.world.tool_types.get(t) == "write"),  # Gateway.is_write
            "change_words": self.change_words,
        }
        if entry.referral:
            context["refer"] = {t: h for t, h in entry.holder_of(self.partition).items() if h != desk}
        return context

    def _agent_context(self, spec: str, arm: str, golden: dict, seed: int) -> dict:
        entry = self.arms.arm(arm)
        context = {
            "arm": arm,
            "domain": self.domain,
            "seed": seed,
            "plan": plan_from_golden(golden),
            "recipients": self.recipients(arm),
            "agent_executes": entry.agent_executes,
            "holders_declared": entry.declared,
        }
        holders = context["recipients"][1:]
        if entry.declared and len(holders) > 1:  # what its prompt's capability map says, in role words
            context["declared_roles"] = {h: self.prompts.holder_parts(h, False, entry)["role"] for h in holders}
        family, _, name = spec.partition(":")
        if family == "scripted":
            if name not in self.profiles:
                raise InputError(
                    f"{self.design.scripted_agents}: no scripted agent profile {name!r} (model spec {spec})"
                )
            context["profile"] = {"name": name, **self.profiles[name]}
            context["tools"], context["vocabulary"] = self.tools, self.vocabulary
            context["holders"] = {} if entry.agent_executes else entry.holder_of(self.partition)
        return context

    def run_cell(
        self,
        arm: str,
        model: str,
        task: str,
        rep: int,
        card: dict,
        card_sha: str,
        golden: dict,
        golden_sha: str,
        position: int = 0,
    ) -> EpisodeRecord:
        self.arms.arm(arm)  # an unregistered arm: an error naming the registry
        if split_task(task)[0] != self.domain.name:
            raise InputError(f"task {task}: this harness serves the {self.domain.name} domain")
        entry = self.design.models.get(model)
        if entry is None:
            raise InputError(f"model {model!r} is not in the config's models ({', '.join(self.design.models)})")
        seed = cell_seed(self.design.seed, model, task, rep, arm)
        owners = self._owners(arm)
        gateway = Gateway(self.world, owners, card.get("initial_state"))
        cell = {"family": "access", "arm": arm, "model": model, "task": task, "rep": rep}
        agent = self._make(entry, "agent", self._agent_context(entry.spec, arm, golden, seed), cell)
        # The cell's seed and domain reach the participants for the faults a scripted one may be set
        # to inject (participant_faults: the domain's identifiers).
        domain = self.domain.name
        customer = self._make(self.design.customer, "USER", {"card": card, "seed": seed, "domain": domain}, cell)
        service = {}
        for name, tools in owners.items():
            if name == "agent":
                continue
            context = {**self.desk_context(arm, name, tools), "seed": seed, "domain": domain}
            service[name] = self._make(self.design.service, name, context, cell)
        judge = self._make(self.design.judge, "judge", {}, cell) if self.design.judge else None
        record = EpisodeRecord(
            cell={"arm": arm, "model": model, "task": task, "rep": rep, "schedule_position": position},
            # Each role's spec with its settings (temperature, reasoning effort, ...), as configured.
            seed=seed,
            models={
                "agent": entry.param,
                "customer": self.design.customer.param,
                "service": self.design.service.param if service else None,
                "judge": self.design.judge.param if judge else None,
            },
            code_version=describe(),
            card={"version": card["card_version"], "sha256": card_sha},
            reference={"golden_sha256": golden_sha, "gold_hash": golden["replay"]["upstream_hash"]},
        )
        episode = Episode(
            card=card,
            gold_hash=golden["replay"]["upstream_hash"],
            gateway=gateway,
            prompts=self.prompts,
            agent=agent,
            customer=customer,
            service=service,
            arm_entry=self.arms.arm(arm),
            recipients=self.recipients(arm),
            seed=seed,
            budget=self.design.budget,
            record=record,
            judge=judge,
            information_channel=self.design.information_channel,
        )
        record = episode.run()
        record.ground_truth = dict(getattr(agent, "ground_truth", {}) or {})
        dice = [getattr(p, "dice", None) for p in (customer, *service.values())]
        if any(dice):  # only where faults were set: a faithful design's records are unchanged
            record.ground_truth["participant_faults"] = [i for d in dice if d for i in d.injected]
        if getattr(judge, "totals", None) is not None and judge.totals.calls:
            record.usage["judge"] = judge.totals  # the judge is called outside the loop's own accounting
        return record

    def run_blocks(
        self,
        model: str,
        task: str,
        reps: int,
        card_path: str,
        golden_path: str,
        out_dir: str,
        task_position: int,
        models_order: list[str] | None = None,
        workers: int = 1,
        on_record: Callable[[Path, EpisodeRecord], None] | None = None,
    ) -> list[Path]:
        """Run the blocks (model, task, repetition) of one model and task: every cell of every
        repetition, `workers` at a time, and write one record per cell as it ends. Cells are
        independent (each has its own seed, backends and gateway), so running them at once
        changes no record; a cell's Latin-square position is the label `schedule_position`.
        `models_order` is the design's model list, which the rotation depends on (default: the
        design's models). Paths come back in schedule order, whatever order the cells ended in."""
        card, golden = read_json(card_path), read_json(golden_path)
        local = split_task(task)[1]
        if golden["task_id"] != local or card["task_id"] != local:
            raise InputError(f"{card_path} / {golden_path}: not task {task}")
        card_sha, golden_sha = sha256_file(card_path), sha256_file(golden_path)
        if golden["card"]["sha256"] != card_sha:
            raise InputError(f"{golden_path} was built from another version of {card_path}; rebuild the golden stage")
        order = models_order or list(self.design.models)
        cells = [
            (rep, position, arm)
            for rep in range(reps)
            for position, arm in enumerate(arm_order(self.design.arms, order, model, task_position, rep))
            # The native arm keeps its place in the rotation; the upstream harness runs it (incognita.access.native).
            if arm != NATIVE
        ]

        def run(rep: int, position: int, arm: str) -> Path:
            record = self.run_cell(arm, model, task, rep, card, card_sha, golden, golden_sha, position)
            path = episode_record(arm, model, task, rep, out_dir)
            write_json(path, record.to_dict())
            if on_record is not None:
                on_record(path, record)
            return path

        # A configuration error (bad key, unknown model) stops the job, as it does one cell at a time.
        return run_in_order([partial(run, *cell) for cell in cells], workers, "cell")


def profile_episodes(
    profile: str,
    check: str,
    tasks: list[str],
    cards_dir: str | Path,
    golden_dir: str | Path,
    *,
    arms: tuple[str, ...],
    inputs: DomainInputs,
    prompts_dir: str,
    scripted_agents: str,
    seed: int = 0,
    budget: int = 300,
) -> Iterator[tuple[str, str, dict, dict]]:
    """(task, arm, golden, record) of one episode of a scripted agent profile per task (upstream
    ids of the domain of `inputs`) and arm, against the scripted customer and desks: the checks
    that run one profile on every task (the do-nothing check, incognita.access.selection.idle; the
    oracle check, incognita.access.selection.oracle). `check` names the check in errors. A missing
    card or golden file, or an episode that broke, stops it with an InputError naming the file or
    the cell."""
    from incognita.access.domain import qualify

    design = HarnessSettings(
        arms=tuple(arms),
        models={profile: f"scripted:{profile}"},
        repetitions=1,
        seed=seed,
        budget=budget,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
    )
    harness = Harness(design, inputs)
    for task in tasks:
        card_path, golden_path = Path(cards_dir) / f"{task}.json", Path(golden_dir) / f"{task}.json"
        for path in (card_path, golden_path):
            if not path.exists():
                raise InputError(f"{path}: file not found ({check} of task {task})")
        card, golden = read_json(card_path), read_json(golden_path)
        for arm in arms:
            record = harness.run_cell(
                arm,
                profile,
                qualify(inputs.domain, task),
                0,
                card,
                sha256_file(card_path),
                golden,
                sha256_file(golden_path),
            ).to_dict()
            if record["error"]:
                raise InputError(f"task {task}, arm {arm}: the {check} episode broke: {record['error']}")
            yield task, arm, golden, record
