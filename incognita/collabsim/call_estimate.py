"""What a CollabSim design will cost before anything is paid: model calls, tokens and dollars
per model label and task (`incognita collabsim estimate`).

How it counts: every run of the design is simulated once with the scripted stand-ins that the
experiment files name, through the same engine, prompts and observations a model would get,
and every request a stand-in receives is billed as a provider would bill it: the prompt at about
four characters a token (`incognita.common.pacing.estimate_tokens`, the rate the pacer charges)
and the answer, the stand-in's own, at the same rate. Turns and probes are counted apart. The
stand-ins play every label alike, so each (task, condition, design, seed) is simulated once and
priced for each label with that label's entries and `config/prices.yaml`.

What it cannot know: a real model's runs can be shorter or longer than the stand-ins' (a task
that ends early, an idle stop, a model that writes more), and a self-hosted model has no API
price. Two costs are given: cold (every prompt token at the input price) and with the provider's
own prefix caching (a prompt's part that the agent's previous call already sent, at the cached
input price, for the families in PROVIDER_CACHES); the response cache of this project, which
makes a rerun free, is not counted.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

from incognita.collabsim.agents import make_participants
from incognita.collabsim.design import Design
from incognita.collabsim.engine import Engine
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.probes import PROBE_MARK
from incognita.common.backends.base import ModelRequest, ModelResponse
from incognita.common.backends.entry import ModelEntry
from incognita.common.io import InputError
from incognita.common.pacing import estimate_tokens
from incognita.common.prices import PriceTable

# Families whose provider caches repeated prompt prefixes without being asked (OpenAI does for
# prompts of 1,024 tokens and more, which nearly every CollabSim call is). Anthropic caches only
# what a request marks: an anthropic entry with `cache_prompt: true` reads the prefix its agent's
# previous call wrote and writes the rest of its prompt, at the table's write price.
PROVIDER_CACHES = ("openai",)


@dataclass
class Tally:
    """Calls and tokens of one role in one task, summed over the design's runs."""

    runs: set = field(default_factory=set)
    turn_calls: int = 0
    probe_calls: int = 0
    prompt_tokens: int = 0
    prefix_tokens: int = 0  # prompt tokens an earlier call of the same agent already sent (a cacheable prefix)
    output_tokens: int = 0

    def add(self, other: Tally) -> None:
        self.runs |= other.runs
        self.turn_calls += other.turn_calls
        self.probe_calls += other.probe_calls
        self.prompt_tokens += other.prompt_tokens
        self.prefix_tokens += other.prefix_tokens
        self.output_tokens += other.output_tokens


@dataclass(frozen=True)
class Line:
    """One label and task: what its runs would send and cost."""

    label: str
    task: str
    models: tuple[str, ...]  # the served models of the label's entries in this task, or ("scripted",)
    runs: int
    turn_calls: int
    probe_calls: int
    prompt_tokens: int
    output_tokens: int
    cost_usd: float  # every prompt token at the input price (cold)
    cached_cost_usd: float  # repeated prefixes at the cached-input price where the provider caches on its own
    offline: bool  # the label's own agents are scripted: nothing is paid
    unpriced: tuple[str, ...]  # served models the price table does not list (counted at $0)


class _Counting:
    """A stand-in's backend that tallies each request before answering it."""

    def __init__(self, inner, tally: Tally) -> None:
        self.inner, self.tally, self.spec = inner, tally, inner.spec
        self.calls = 0

    def respond(self, request: ModelRequest) -> ModelResponse:
        response = self.inner.respond(request)
        messages = [{"role": t.role, "content": t.content} for t in request.messages]
        probe = (request.messages[-1].content or "").startswith(PROBE_MARK)
        self.tally.probe_calls += probe
        self.tally.turn_calls += not probe
        self.tally.prompt_tokens += estimate_tokens({"system": request.system, "messages": messages})
        if self.calls:  # all but the newest turn went out before (the reply just before it is a few tokens)
            self.tally.prefix_tokens += estimate_tokens({"system": request.system, "messages": messages[:-1]})
        self.tally.output_tokens += max(1, len(response.text or "") // 4)
        self.calls += 1
        return response


def simulate_stand_ins(design: Design) -> dict[tuple[str, str], Tally]:
    """(task, role) -> the stand-ins' calls and tokens over every run of the design (one label)."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    label = next(iter(design.models))
    for cell in design.cells():
        if cell.model != label:
            continue  # stand-ins play every label alike
        exp = load_experiment(design.experiment_file(cell.task, cell.condition), None, cell.design)
        live = [a.id for a in exp.agents if a.model.calls_api]
        if live:
            raise InputError(
                f"{exp.source}: agents {', '.join(live)} call a model in the file itself; the estimate "
                "simulates the design with the files' scripted agents"
            )
        for seed in design.seeds:
            participants = make_participants(exp, seed, None, None)
            for p in participants.values():
                tally = tallies[(exp.task, p.agent.role)]
                tally.runs.add((cell, seed))
                p.backend = _Counting(p.backend, tally)
            Engine(exp, seed, participants).run()
    return tallies


def entry_for(entries: dict | None, role: str) -> str | dict | None:
    """The label's entry for a role: the role's own, else `*`; None = the files' scripted agents."""
    if not entries:
        return None
    return entries.get(role, entries.get("*"))


def estimate(design: Design, prices: PriceTable) -> tuple[list[Line], float]:
    """Lines per label and task, and the seconds the stand-in simulation took."""
    start = time.perf_counter()
    tallies = simulate_stand_ins(design)
    elapsed = time.perf_counter() - start
    lines = []
    for label, entries in design.models.items():
        for task in design.conditions:
            roles = {role: t for (t_task, role), t in tallies.items() if t_task == task}
            total, cost, cached_cost, served, unpriced = Tally(), 0.0, 0.0, [], []
            for role, tally in roles.items():
                total.add(tally)
                entry = ModelEntry.optional(entry_for(entries, role), f"collabsim.models.{label}.{role}")
                if entry is None or not entry.calls_api:
                    continue
                model = entry.name
                served.append(model)
                if prices.lookup(model) is None:
                    unpriced.append(model)
                    continue
                cost += prices.cost(model, tally.prompt_tokens, tally.output_tokens)
                family, settings = entry.family, entry.settings
                marked = family == "anthropic" and settings.get("cache_prompt") is True
                cached = tally.prefix_tokens if family in PROVIDER_CACHES or marked else 0
                written = tally.prompt_tokens - tally.prefix_tokens if marked else 0
                cached_cost += prices.cost(model, tally.prompt_tokens, tally.output_tokens, cached, written)
            lines.append(
                Line(
                    label,
                    task,
                    tuple(dict.fromkeys(served)) or ("scripted",),
                    len(total.runs),
                    total.turn_calls,
                    total.probe_calls,
                    total.prompt_tokens,
                    total.output_tokens,
                    cost,
                    cached_cost,
                    offline=not served,
                    unpriced=tuple(dict.fromkeys(unpriced)),
                )
            )
    return lines, elapsed
