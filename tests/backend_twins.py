"""Whole episodes through a real API client against the loopback server, every role played by its
scripted twin (tests/common/backends/test_openai.py and test_anthropic.py).

The responder turns each HTTP request back into a ModelRequest with the family's own inverse
conversion and asks the twin of the role that sent it. An episode run this way must therefore
reproduce the purely scripted episode event for event, which checks both conversions on every
path the episode loop uses.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from incognita.access.cards.card import build_card
from incognita.access.cards.repairs import apply_overlay, load_overlay
from incognita.access.domain import get_domain, split_task
from incognita.access.episodes.harness import Harness
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.episodes.scripted import make_backend
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.common.backends.openai import to_reply
from incognita.common.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("direct", "indirect", "social")
# A task the surveyor solves in the direct arm (the judge test needs a success). Task 11 was used
# until the agent had to choose payment methods itself: its card says nothing that picks one.
TASK = "retail/59"
MODEL = "surveyor"  # the model name keys the cell seed: the scripted and the API runs share it
VOLATILE = ("wall_time_s", "usage", "models", "ground_truth")
JUDGE = "judge"


class Twins:
    """The scripted stand-ins behind the server, one per role of the cell being run.

    `to_request(body, role)` is the family's inverse conversion; `role_of(model, body, desks)`
    names the role a request came from (`desks` maps a desk's system prompt to its name)."""

    def __init__(self, harness: Harness, to_request: Callable, role_of: Callable):
        self.harness, self.to_request, self.role_of = harness, to_request, role_of
        self.by_role: dict[str, object] = {}
        self.keep = False  # True: reuse the twins of the previous run (resuming an interrupted cell)
        self.desks = {}  # every holder's system prompt, in the design's arms with holders -> its name
        for arm in map(harness.arms.arm, (a for a in harness.design.arms if a != "native")):
            if not arm.agent_executes:
                for holder, tools in arm.owners(harness.partition).items():
                    holds_all = set(harness.partition.tools) <= tools
                    self.desks[harness.prompts.service(arm, holder, holds_all, list(arm.owners(harness.partition)))] = (
                        holder
                    )
        self.verdicts: list[bool] = []
        self.bodies: list[dict] = []

    def wrap(self, real):
        """The harness's backend maker (`Harness._make`), making each role's twin from the private
        knowledge the harness gives that role (a model's backend itself never receives it)."""

        def make(entry, role, knowledge, cell=None):
            if not (self.keep and role in self.by_role):
                self.by_role[role] = self._twin(role, knowledge)
            return real(entry, role, knowledge, cell)

        return make

    def _twin(self, role: str, context: dict):
        if role == "agent":
            arm = self.harness.arms.arm(context["arm"])
            holders = {} if arm.agent_executes else arm.holder_of(self.harness.partition)
            return make_backend(
                f"scripted:{MODEL}",
                role,
                {
                    **context,
                    "profile": {"name": MODEL, **self.harness.profiles[MODEL]},
                    "holders": holders,
                    "tools": self.harness.tools,
                    "vocabulary": self.harness.vocabulary,
                },
            )
        if role == "USER":
            return make_backend("scripted:customer", role, context)
        if role == JUDGE:
            return None
        return make_backend("scripted:desk", role, context)

    def __call__(self, model: str, body: dict):
        self.bodies.append(body)
        role = self.role_of(model, body, self.desks)
        if role == JUDGE:
            return json.dumps({"verdicts": self.verdicts})
        return to_reply(self.by_role[role].respond(self.to_request(body, role)))


def task_inputs(harness: Harness, tasks, db, meta) -> tuple[dict, dict]:
    """TASK's repaired card and its golden trajectory (`tasks`: the retail source tasks by upstream id)."""
    domain, local = split_task(TASK)
    config = ROOT / "config/domains" / domain
    card = build_card(tasks[local], db, meta, get_domain(domain))
    overlay = config / "repairs" / f"{local}.yaml"
    if overlay.exists():
        card = apply_overlay(card, load_overlay(overlay), overlay)
    return card, build_golden(card, harness.world, load_vocabulary(str(config / "vocabulary.yaml")))


def scripted_episodes(harness: Harness, inputs) -> dict[str, EpisodeRecord]:
    """The reference: each arm's episode with the scripted backends called in-process."""
    card, golden = inputs
    return {arm: harness.run_cell(arm, MODEL, TASK, 0, card, "-", golden, "-") for arm in ARMS}


class Rig:
    """A harness switched to API entries, a loopback server and twins; one per test."""

    def __init__(self, harness: Harness, inputs, tmp: Path, twins: Twins, entries: dict, prices: str, faults=None):
        self.harness, (self.card, self.golden), self.tmp = harness, inputs, tmp
        (tmp / "prices.yaml").write_text(prices)
        self.design = harness.design
        harness.design = dataclasses.replace(
            harness.design, **entries, cache_dir=str(tmp / "cache"), prices=str(tmp / "prices.yaml")
        )
        self.twins = twins
        self.server = LoopbackServer(twins, faults=faults, delay=0.8).start()

    def run(self, arm: str, card: dict | None = None) -> EpisodeRecord:
        return self.harness.run_cell(arm, MODEL, TASK, 0, card or self.card, "-", self.golden, "-")

    def close(self) -> None:
        self.server.stop()
        self.harness.design = self.design


def stable(record: EpisodeRecord) -> dict:
    return {k: v for k, v in record.to_dict().items() if k not in VOLATILE}


def totals(record: EpisodeRecord, field: str) -> int:
    return sum(getattr(u, field) for u in record.usage.values())


def all_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())
