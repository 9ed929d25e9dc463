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
input price, for the families in PROVIDER_CACHES).

This project's response cache answers a request identical to one made before, and the run then
neither sends nor pays it. Within a design that happens when an agent is probed twice with
nothing new between the probes (after a message and after an action of one turn; at the ends of
two steps in which it did not act) and its entry keys the cache without the seed (temperature 0,
no seed sent: `Transport.seed_keyed`). The estimate finds those repeats as the run will: by the
request's content (system prompt, conversation, answer schema) and, where the key holds it, its
seed, per model entry over the whole design, and bills each distinct request once, from an empty
cache. A cache left by an earlier build is not read (a rerun of the same design is then free).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

from incognita.collabsim.agents import make_participants
from incognita.collabsim.design import Design
from incognita.collabsim.engine import Engine
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.probes import PROBE_MARK
from incognita.common.backends.base import ModelRequest, ModelResponse, Runtime, Turn, make_backend
from incognita.common.backends.entry import ModelEntry
from incognita.common.io import InputError
from incognita.common.pacing import estimate_tokens
from incognita.common.prices import PriceTable

# Families whose provider caches repeated prompt prefixes without being asked (OpenAI does for
# prompts of 1,024 tokens and more, which nearly every CollabSim call is). Anthropic caches only
# what a request marks: an anthropic entry with `cache_prompt: true` reads the prefix its agent's
# previous call wrote and writes the rest of its prompt, at the table's write price.
PROVIDER_CACHES = ("openai",)


@dataclass(frozen=True)
class Call:
    """One request a stand-in received."""

    probe: bool
    prompt_tokens: int
    prefix_tokens: int  # prompt tokens an earlier call of the same agent already sent (a cacheable prefix)
    output_tokens: int
    content: str  # sha256 of what the request asks: system prompt, conversation, tools, answer schema
    seed: int


@dataclass
class Tally:
    """The requests of one role in one task, over the design's runs, in the order they were made."""

    runs: set = field(default_factory=set)
    calls: list[Call] = field(default_factory=list)


@dataclass
class Bill:
    """What one label's runs send for a set of requests: the calls that reach the model and the
    calls the response cache answers (repeats of an earlier request of the design)."""

    turn_calls: int = 0
    probe_calls: int = 0
    turn_hits: int = 0
    probe_hits: int = 0
    prompt_tokens: int = 0
    prefix_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Bill) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass(frozen=True)
class Line:
    """One label and task: what its runs would send and cost."""

    label: str
    task: str
    models: tuple[str, ...]  # the served models of the label's entries in this task, or ("scripted",)
    runs: int
    turn_calls: int  # calls that reach the model (a provider, a server, or a scripted agent)
    probe_calls: int
    cache_hits: int  # calls the response cache answers: repeats of an earlier request, neither sent nor paid
    prompt_tokens: int
    output_tokens: int
    cost_usd: float  # every prompt token at the input price (cold)
    cached_cost_usd: float  # repeated prefixes at the cached-input price where the provider caches on its own
    offline: bool  # the label's own agents are scripted: nothing is paid
    unpriced: tuple[str, ...]  # served models the price table does not list (counted at $0)


class _Counting:
    """A stand-in's backend that records each request before answering it."""

    def __init__(self, inner, tally: Tally) -> None:
        self.inner, self.tally, self.spec = inner, tally, inner.spec
        self.calls = 0
        # Each turn's digest, computed once: a request resends its agent's whole conversation, so
        # hashing every request's text would cost more than the simulation itself.
        self.digests: dict[Turn, bytes] = {}

    def digest(self, turn: Turn) -> bytes:
        found = self.digests.get(turn)
        if found is None:
            text = json.dumps([turn.role, turn.content, repr(turn.tool_calls), turn.tool_call_id], ensure_ascii=False)
            found = self.digests[turn] = hashlib.sha256(text.encode()).digest()
        return found

    def respond(self, request: ModelRequest) -> ModelResponse:
        response = self.inner.respond(request)
        messages = [{"role": t.role, "content": t.content} for t in request.messages]
        asked = {"system": request.system, "messages": messages, "tools": request.tools}
        content = hashlib.sha256(
            json.dumps([request.system, request.tools, request.output_schema], sort_keys=True).encode()
        )
        for turn in request.messages:
            content.update(self.digest(turn))
        self.tally.calls.append(
            Call(
                probe=(request.messages[-1].content or "").startswith(PROBE_MARK),
                prompt_tokens=estimate_tokens(asked),
                # all but the newest turn went out before (the reply just before it is a few tokens)
                prefix_tokens=estimate_tokens({**asked, "messages": messages[:-1]}) if self.calls else 0,
                output_tokens=max(1, len(response.text or "") // 4),
                content=content.hexdigest(),
                seed=request.seed,
            )
        )
        self.calls += 1
        return response


def simulate_stand_ins(design: Design) -> dict[tuple[str, str], Tally]:
    """(task, role) -> the stand-ins' requests over every run of the design (one label)."""
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


def bill(calls: list[Call], seen: set | None) -> Bill:
    """The calls as a run sends them. `seen` holds the cache keys of the label's entry so far
    (updated here), None when the calls do not go through the response cache (a scripted agent)."""
    out = Bill()
    for c in calls:
        if seen is not None:
            if (c.content, c.seed) in seen:
                out.probe_hits += c.probe
                out.turn_hits += not c.probe
                continue
            seen.add((c.content, c.seed))
        out.probe_calls += c.probe
        out.turn_calls += not c.probe
        out.prompt_tokens += c.prompt_tokens
        out.prefix_tokens += c.prefix_tokens
        out.output_tokens += c.output_tokens
    return out


def keyed(calls: list[Call], by_seed: bool) -> list[Call]:
    """The calls with the seed the cache key holds: none (0) when the entry keys without it."""
    return calls if by_seed else [replace(c, seed=0) for c in calls]


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
        # One response cache serves the whole design: a request repeats one of any run, task or
        # role of the label, as long as the entry (model and settings, hence the body) is the same.
        seen: dict[str, set] = defaultdict(set)
        for task in design.conditions:
            roles = {role: t for (t_task, role), t in tallies.items() if t_task == task}
            total, runs, cost, cached_cost, served, unpriced = Bill(), set(), 0.0, 0.0, [], []
            for role, tally in roles.items():
                runs |= tally.runs
                entry = ModelEntry.optional(entry_for(entries, role), f"collabsim.models.{label}.{role}")
                if entry is None or not entry.calls_api:
                    total.add(bill(tally.calls, None))
                    continue
                backend = make_backend(entry, role, runtime=Runtime(cache_dir=False, prices=prices.path or None))
                ident = json.dumps([entry.spec, dict(entry.settings)], sort_keys=True, default=str)
                sent = bill(keyed(tally.calls, backend.seed_keyed()), seen[ident])
                total.add(sent)
                model = entry.name
                served.append(model)
                if prices.lookup(model) is None:
                    unpriced.append(model)
                    continue
                cost += prices.cost(model, sent.prompt_tokens, sent.output_tokens)
                family, settings = entry.family, entry.settings
                marked = family == "anthropic" and settings.get("cache_prompt") is True
                cached = sent.prefix_tokens if family in PROVIDER_CACHES or marked else 0
                written = sent.prompt_tokens - sent.prefix_tokens if marked else 0
                cached_cost += prices.cost(model, sent.prompt_tokens, sent.output_tokens, cached, written)
            lines.append(
                Line(
                    label,
                    task,
                    tuple(dict.fromkeys(served)) or ("scripted",),
                    len(runs),
                    total.turn_calls,
                    total.probe_calls,
                    total.turn_hits + total.probe_hits,
                    total.prompt_tokens,
                    total.output_tokens,
                    cost,
                    cached_cost,
                    offline=not served,
                    unpriced=tuple(dict.fromkeys(unpriced)),
                )
            )
    return lines, elapsed
