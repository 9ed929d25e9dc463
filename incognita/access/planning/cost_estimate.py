"""`incognita estimate`: the expected model calls, tokens and cost of a config, before any call.

The estimate multiplies a per-episode model of each arm by the design's size (tasks x
models x repetitions) and prices it with the versioned price table. The per-episode model
is a set of documented assumptions (`cost_assumptions.Assumptions`, docs/models.md), overridable from a YAML
file: how many turns the agent takes in each arm and how they split into messages to the
customer, messages to the service side and tool calls; how many backend steps a participant
takes per message; how fast each conversation grows; how many tokens each role writes,
reasoning included. Prompt sizes come from the config's prompt files. Conversations resend
their history on every call, so prompt tokens grow with the square of a conversation's
length; the model sums that exactly for the assumed lengths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incognita.access.cells import design_files, design_from_config
from incognita.access.cost_assumptions import Assumptions, assumed_like
from incognita.access.domain import split_task
from incognita.access.paths import CARDS_ROOT, card_file
from incognita.common.backends.entry import ModelEntry, calls_api
from incognita.common.io import InputError, read_json
from incognita.common.prices import PriceTable

CHARS_PER_TOKEN = 4


@dataclass
class Line:
    """Expected usage of one role, summed over the episodes it takes part in."""

    role: str
    model: str
    label: str = ""
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    cost_usd: float = 0.0
    offline: bool = False

    def add(self, calls: float, prompt: float, completion: float, cost: float) -> None:
        self.calls += calls
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cost_usd += cost


def conversation(calls: float, system: float, growth: float) -> float:
    """Prompt tokens of a conversation of `calls` calls that resends its growing history each time."""
    return calls * system + growth * calls * (calls + 1) / 2


@dataclass(frozen=True)
class Role:
    spec: str
    settings: dict

    @property
    def model(self) -> str:
        return self.spec.partition(":")[2]

    @property
    def offline(self) -> bool:
        return not calls_api([self.spec])

    def effort(self) -> str:
        return self.settings.get("reasoning_effort") or "default"


@dataclass(frozen=True)
class DomainSizes:
    """What an episode's size depends on in one domain: its holder maps, its system prompts in
    tokens (`_prompt_tokens`), and its tools' function schemas in tokens (characters / 4): all of
    them (the direct agent, a holder of every tool) and the mean over the social map's desks'
    holdings (retail: 2,976 and 496 for its 15 tools over six desks)."""

    partition: Any
    prompt_tokens: dict[str, float]
    tools_all: float
    tools_desk: float

    @classmethod
    def of(cls, domain: str, files, prompts_dir: str | None, arms) -> DomainSizes:
        from incognita.access.domain import get_domain
        from incognita.access.reference.partition import load_partition
        from incognita.access.taxonomy import SOCIAL

        partition = load_partition(files.partition)
        _, toolkit = get_domain(domain).upstream.classes()
        chars = {name: len(json.dumps(tool.openai_schema)) for name, tool in toolkit(None).get_tools().items()}
        if SOCIAL in partition.holders:  # the desks of the social map, as the paper's arm splits them
            held = [sum(chars[t] for t in partition.tools_of(d, SOCIAL)) for d in partition.desks(SOCIAL)]
        else:
            held = [sum(chars.values())]
        return cls(
            partition,
            _prompt_tokens(prompts_dir, files.prompts, arms, partition),
            round(sum(chars.values()) / CHARS_PER_TOKEN),
            round(sum(held) / len(held) / CHARS_PER_TOKEN),
        )


class Estimator:
    def __init__(self, cfg: dict, prices: PriceTable, assumptions: Assumptions, cards_root: str | None = None):
        self.cfg, self.prices, self.a = cfg, prices, assumptions
        from incognita.access.arm_registry import arm_registry, registry_path

        self.arms = arm_registry(registry_path(cfg))
        self.design = design_from_config(cfg)
        files = design_files(cfg)
        self.sizes = {d: DomainSizes.of(d, files[d], cfg.get("prompts"), self.arms) for d in self.design.domains}
        self.tasks = list(self.design.tasks)
        judged = (cfg.get("evaluation") or {}).get("information_channel", "substring") == "judge"
        share = _nl_share(self.tasks, cards_root, judged)
        self.nl_share_from_cards = share is not None
        self.nl_share = assumptions.nl_share if share is None else share

    def role(self, entry, where: str) -> Role:
        parsed = ModelEntry.parse(entry, where)
        return Role(parsed.spec, dict(parsed.settings))

    def _cost(self, role: Role, prompt: float, completion: float) -> float:
        if role.offline:
            return 0.0
        price = self.prices.lookup(role.model)
        if price is None:
            return 0.0
        cached = prompt * self.a.cached_share if price.cached_input is not None else 0
        return price.cost(round(prompt), round(completion), round(cached))

    def _add(self, line: Line, role: Role, calls: float, prompt: float, kind: str, episodes: float) -> None:
        completion = calls * (self.a.output[kind] + self.a.reasoning.get(role.effort(), 0))
        line.add(
            calls * episodes, prompt * episodes, completion * episodes, self._cost(role, prompt, completion) * episodes
        )

    def assumed_like(self, arm: str, domain: str) -> str:
        return assumed_like(arm, self.a, self.arms, self.sizes[domain].partition)

    def episode(
        self, arm: str, agent: Role, lines: dict[str, Line], episodes: float, agent_key: str, domain: str
    ) -> None:
        """Add `episodes` episodes of `arm` in `domain` with this agent to the lines."""
        sizes = self.sizes[domain]
        a, pt, like = self.a, sizes.prompt_tokens, self.assumed_like(arm, domain)
        turns = a.agent_turns(like)
        entry = self.arms.arm(arm)
        owners = entry.owners(sizes.partition)
        tools = sizes.tools_all if entry.agent_executes else 0
        growth = a.growth["agent_tool"] * a.tool_calls[like] + a.growth["agent_message"] * (turns - a.tool_calls[like])
        self._add(
            lines[agent_key],
            agent,
            turns,
            conversation(turns, pt["agent_" + arm] + tools, growth / turns),
            "agent",
            episodes,
        )
        customer = self.role(self.cfg["participants"]["customer"], "participants.customer")
        c_calls = a.customer_messages[like] * a.customer_steps
        self._add(
            lines["customer"],
            customer,
            c_calls,
            conversation(c_calls, pt["customer"] + a.customer_context, a.growth["customer"]),
            "customer",
            episodes,
        )
        if a.service_messages[like]:
            service = self.role(self.cfg["participants"]["service"], "participants.service")
            s_calls = a.service_messages[like] * a.service_steps[like]
            spread = a.desks_engaged if len(owners) > 1 else 1.0  # the task's desks share the messages
            holds_all = len(owners) == 1  # one holder of every tool sees all their schemas
            system = pt["service_" + arm] + (sizes.tools_all if holds_all else sizes.tools_desk)
            prompt = spread * conversation(s_calls / spread, system, a.growth["service"])
            self._add(lines["service"], service, s_calls, prompt, "service", episodes)
        judge_entry = self.cfg["participants"].get("judge")
        if judge_entry:
            judge = self.role(judge_entry, "participants.judge")
            self._add(
                lines["judge"],
                judge,
                self.nl_share,
                self.nl_share * (pt["judge"] + a.judge_transcript),
                "judge",
                episodes,
            )

    def run(self) -> tuple[list[Line], dict[str, Line]]:
        """Per-role lines for the whole design, and per-arm totals."""
        p = self.cfg["participants"]
        arms = self.design.episode_arms
        lines: dict[str, Line] = {}
        for key, entry, where in [
            ("customer", p["customer"], "participants.customer"),
            ("service", p["service"], "participants.service"),
            ("judge", p.get("judge"), "participants.judge"),
        ]:
            if entry:
                r = self.role(entry, where)
                lines[key] = Line(key, r.model, key, offline=r.offline)
        by_arm: dict[str, Line] = {arm: Line(arm, "") for arm in arms}
        # (arm, model) -> API calls of one episode: of its domain's, the most
        self.episode_calls: dict[tuple[str, str], float] = {}
        for name in self.design.models:
            agent = self.role(self.cfg["models"][name], f"models.{name}")
            key = f"agent {name}"
            lines[key] = Line("agent", agent.model, key, offline=agent.offline)
            for domain in self.design.domains:
                per_model = len(self.design.tasks_of(domain)) * self.design.repetitions
                for arm in arms:
                    one = {k: Line(v.role, v.model, k, offline=v.offline) for k, v in lines.items()}
                    self.episode(arm, agent, one, per_model, key, domain)
                    # Every episode of a cell (arm, model) of one domain has the same expected calls:
                    # `one` sums per_model of them.
                    calls = sum(v.calls for v in one.values() if not v.offline) / max(per_model, 1)
                    self.episode_calls[(arm, name)] = max(calls, self.episode_calls.get((arm, name), 0.0))
                    for k, v in one.items():
                        lines[k].add(v.calls, v.prompt_tokens, v.completion_tokens, v.cost_usd)
                        by_arm[arm].add(v.calls, v.prompt_tokens, v.completion_tokens, v.cost_usd)
        order = [k for k in lines if k.startswith("agent ")] + [
            k for k in ("customer", "service", "judge") if k in lines
        ]
        return [lines[k] for k in order], by_arm


def api_usage(lines: list[Line]) -> tuple[float, float]:
    """Calls and tokens (prompt + completion) that go to an API: the lines of roles that are not offline."""
    online = [ln for ln in lines if not ln.offline]
    return sum(ln.calls for ln in online), sum(ln.prompt_tokens + ln.completion_tokens for ln in online)


def expected_api_calls(config_path: str, cards_dir: str | None = CARDS_ROOT) -> float:
    """The calls a config's access design makes to an API, for `incognita progress`.

    Prices do not change the count, so none are read (a missing price table is no reason not to know).
    """
    from incognita.access.planning.workflow_config import load_config
    from incognita.common.prices import empty_table

    est = Estimator(load_config(config_path), empty_table(), Assumptions(), cards_dir)
    return api_usage(est.run()[0])[0]


# The pace's reserve for the longest chains (incognita.common.pacing.Limits.reserve) pays only where
# the longest chain, at this many seconds a call (the estimate's --latency default), takes at least
# CHAIN_SHARE of the run's ideal wall time (bench/throughput.py at 60/min: the smoke row, its chain
# 29% of its ideal, met its target with the reserve; the 72-cell row, 7%, met it only without).
FORECAST_LATENCY = 5.0
CHAIN_SHARE = 0.25


@dataclass(frozen=True)
class ReserveForecast:
    """Whether the design's longest chain is a good part of its run, at its API entries' limits."""

    chain_seconds: float  # the longest episode's expected calls at FORECAST_LATENCY each
    run_seconds: float  # the largest of every endpoint's calls / rpm and tokens / tpm
    entries: tuple[str, ...]  # the API entries' one-string forms without pacing (pacing_map's keys)

    @property
    def pays(self) -> bool:
        return self.chain_seconds >= CHAIN_SHARE * self.run_seconds

    def settings(self) -> dict[str, dict]:
        """The pacing settings the workflow adds to each entry that does not set them itself."""
        return {} if self.pays else {form: {"reserve": 0} for form in self.entries}


def reserve_forecast(cfg: dict, cards_dir: str | None = CARDS_ROOT) -> ReserveForecast:
    """The design's longest chain against its run: the run's ideal is the slowest endpoint's
    budget (roles whose entries name one endpoint, model and base URL, draw on one budget, so their
    usage is summed), with each entry's own limits or the defaults. Prices change nothing here, so
    none are read."""
    from incognita.common.pacing import Limits
    from incognita.common.prices import empty_table

    est = Estimator(cfg, empty_table(), Assumptions(), cards_dir)
    lines, _ = est.run()
    where = {role: f"participants.{role}" for role in ("customer", "service", "judge")}
    where |= {f"agent {name}": f"models.{name}" for name in est.design.models}
    usage: dict[tuple, list[float]] = {}  # endpoint -> [calls, tokens]
    limits: dict[tuple, Limits] = {}
    forms = []
    for ln in lines:
        if ln.offline:
            continue
        section, _, key = where[ln.label].partition(".")
        entry = ModelEntry.parse(cfg[section][key], where[ln.label])
        stripped, pacing = entry.without_pacing(), entry.pacing
        role = est.role(stripped, where[ln.label])
        endpoint = (role.model, role.settings.get("base_url") or role.settings.get("base_url_env"))
        calls_tokens = usage.setdefault(endpoint, [0.0, 0.0])
        calls_tokens[0] += ln.calls
        calls_tokens[1] += ln.prompt_tokens + ln.completion_tokens
        limits[endpoint] = Limits(**pacing)
        limits[endpoint].check(where[ln.label])
        forms.append(stripped.param)
    run = 0.0
    for endpoint, (calls, tokens) in usage.items():
        lim = limits[endpoint]
        run = max(run, calls / lim.rpm * 60 if lim.rpm else 0.0, tokens / lim.tpm * 60 if lim.tpm else 0.0)
    chain = max(est.episode_calls.values(), default=0.0) * FORECAST_LATENCY
    return ReserveForecast(chain, run, tuple(dict.fromkeys(forms)))


@dataclass(frozen=True)
class WallTime:
    """The shortest wall time of a design at given rate limits (for `incognita estimate --rpm/--tpm`).

    No schedule beats any of three bounds: all requests at `rpm` per minute, all tokens at `tpm`
    per minute, and the longest episode's calls one after another at `latency` seconds each
    (episodes are independent, but an episode's calls wait for each other). The ideal is the
    largest of them; the one that binds is the limit worth raising. Only calls to an API count.
    """

    calls: float
    tokens: float
    chain_calls: float  # expected calls of the episode with the most (a mean over its cell)
    chain_cell: tuple[str, str] | None  # (arm, model) of that episode
    latency: float
    rpm: float | None = None
    tpm: float | None = None

    @property
    def terms(self) -> dict[str, float]:
        """Seconds of each bound that applies: "requests", "tokens", "chain"."""
        out = {}
        if self.rpm:
            out["requests"] = self.calls / self.rpm * 60
        if self.tpm:
            out["tokens"] = self.tokens / self.tpm * 60
        out["chain"] = self.chain_calls * self.latency
        return out

    @property
    def seconds(self) -> float:
        return max(self.terms.values())

    @property
    def binding(self) -> str:
        terms = self.terms
        return max(terms, key=terms.__getitem__)

    @property
    def in_flight(self) -> float:
        """Calls in flight on average to finish in the ideal time (Little's law): with one call at a time
        per episode, the episodes that must run at once."""
        return self.calls * self.latency / self.seconds if self.seconds else 0.0


def wall_time(est: Estimator, lines: list[Line], *, rpm: float | None, tpm: float | None, latency: float) -> WallTime:
    """The wall-time bounds of the design `est.run()` returned `lines` for."""
    calls, tokens = api_usage(lines)
    cell = max(est.episode_calls, key=est.episode_calls.__getitem__, default=None)
    chain = est.episode_calls[cell] if cell else 0.0
    return WallTime(calls, tokens, chain, cell, latency, rpm, tpm)


# --------------------------------------------------------------------------- inputs


def _prompt_tokens(prompts_dir: str | None, domain_prompts: Path, arms, partition) -> dict[str, float]:
    """System-prompt sizes in tokens, from the config's prompt files and a domain's: per registered
    arm, the agent's (`agent_<arm>`) and the mean over its holders' (`service_<arm>`)."""
    from incognita.access.episodes.loop.prompts import PromptSet

    if not prompts_dir or not Path(prompts_dir).is_dir():
        raise InputError(f"prompts: {prompts_dir!r} is not a directory of prompt files")
    ps = PromptSet(Path(prompts_dir), Path(domain_prompts), partition)
    chars = {}
    for name, arm in arms.arms.items():
        owners = arm.owners(partition)
        recipients = ["USER"] if arm.agent_executes else ["USER", *owners]
        chars["agent_" + name] = len(ps.agent(arm, recipients))
        if not arm.agent_executes:
            sizes = [
                len(ps.service(arm, h, set(partition.tools) <= tools, list(owners))) for h, tools in owners.items()
            ]
            chars["service_" + name] = sum(sizes) / len(sizes)
    chars |= {
        "customer": len(ps.read("customer/behaviour.md")),
        "judge": len(ps.read("judge.md")),
    }
    return {k: v / CHARS_PER_TOKEN for k, v in chars.items()}


def _nl_share(tasks: list[str], cards_root: str | None, judged_channel: bool = False) -> float | None:
    """The share of the design's tasks the judge sees (None: no cards): those whose card carries
    natural-language assertions, and with the judged information channel also those with
    information items (communicate_info). `cards_root` holds a folder of cards per domain."""
    if not cards_root or not tasks:
        return None
    files = [card_file(*split_task(t), root=cards_root) for t in tasks]
    if not all(f.exists() for f in files):
        return None
    channels = [read_json(f)["information_channel"] for f in files]
    return sum(bool(c["nl_assertions"] or (judged_channel and c["communicate_info"])) for c in channels) / len(tasks)
