"""Scripted agents: the offline default, one policy per task.

A policy is a Backend: it reads the observation JSON from the last user turn (exactly what a
model is shown) and answers with JSON actions. Its behaviour knobs come from a profile in
`config/collabsim/scripted_agents.yaml` (`scripted:<profile>`); each knob moves a metric in a
direction known in advance, which is what the metric and statistics tests rely on. Its draws
use the agent's own seed, so a run replays exactly.
"""

from __future__ import annotations

import importlib
import random

from incognita.collabsim.world.agent_prompts import MODULE_TAG, read_observation
from incognita.collabsim.world.events import canonical
from incognita.collabsim.world.probes import PROBE_MARK, read_probe
from incognita.collabsim.world.task import TASKS
from incognita.common.backends.base import ModelRequest, ModelResponse

POLICY_MODULES = {name: f"incognita.collabsim.policies.{name}" for name in TASKS}


class Policy:
    """Base class: subclasses implement `decide(observation) -> actions` and `beliefs()`.

    Probes are answered from `beliefs()`, the policy's own picture of the run, with the profile's
    `probe_accuracy` (the chance each structured field is reported truly; otherwise it is
    distorted) and `overconfidence` (added to the confidence). Probes draw from their own
    generator, so answering them never changes what the policy does next.
    A profile's `theory:` block holds knob changes that apply when the system prompt carries the
    collaboration module (the theory design): the policy reads its instructions like a model would.
    """

    def __init__(self, name: str, role: str, knobs: dict, seed: int) -> None:
        self.spec = f"scripted:{name}"
        self.role = role
        self.knobs = {k: v for k, v in knobs.items() if k != "theory"}
        self.theory = dict(knobs.get("theory") or {})
        self.rng = random.Random(seed)
        self.probe_rng = random.Random(f"probe:{seed}")
        self.configured = False
        self.last_obs: dict = {}

    def knob(self, name: str, default: float) -> float:
        return float(self.knobs.get(name, default))

    def respond(self, request: ModelRequest) -> ModelResponse:
        if not self.configured:
            if f"<{MODULE_TAG}>" in request.system:
                self.knobs.update(self.theory)
            self.configured = True
        text = request.messages[-1].content or ""
        if text.startswith(PROBE_MARK):
            return ModelResponse(text=canonical(self.answer_probe(read_probe(text))))
        self.last_obs = read_observation(request)
        return ModelResponse(text=canonical({"actions": self.decide(self.last_obs)}))

    def decide(self, obs: dict) -> list[dict]:
        raise NotImplementedError

    def beliefs(self) -> dict:
        """{"situation", "partners", "plan": answer texts, "fields": {name: value}, "certainty": 0-1}."""
        raise NotImplementedError

    def answer_probe(self, spec: dict) -> dict:
        b = (
            self.beliefs()
            if self.last_obs
            else {
                "situation": "Nothing has happened yet.",
                "partners": "I cannot tell yet.",
                "plan": "I will read my materials.",
                "fields": {},
                "certainty": 0.3,
            }
        )
        accuracy, over = self.knob("probe_accuracy", 0.9), self.knob("overconfidence", 0.0)
        answers = []
        for qid in spec["questions"]:
            fields = {
                name: self.report(b["fields"].get(name), f, accuracy)
                for name, f in spec["fields"].items()
                if f["question"] == qid
            }
            confidence = b["certainty"] + over + self.probe_rng.uniform(-0.05, 0.05)
            answers.append(
                {"id": qid, "answer": b[qid], "confidence": round(min(max(confidence, 0.0), 1.0), 3), "fields": fields}
            )
        return {"answers": answers}

    def report(self, value: object, field: dict, accuracy: float) -> object:
        """The true value with chance `accuracy`, else a plausible wrong one."""
        if value is None or self.probe_rng.random() < accuracy:
            return value
        if field["type"] == "enum":
            others = [v for v in field["values"] if v != value]
            return self.probe_rng.choice(others) if others else value
        if field["type"] == "integer":
            return max(int(field.get("min", 0)), int(value) + self.probe_rng.choice((-1, 1)))
        if field["type"] == "number":
            lo, hi = field.get("min", float("-inf")), field.get("max", float("inf"))
            return round(min(max(float(value) + self.probe_rng.uniform(-0.3, 0.3), lo), hi), 3)
        return value


def make_scripted(name: str, role: str, context: dict) -> Policy:
    task = context["task"]
    knobs = context["profiles"].get(name)
    if knobs is None:
        raise ValueError(f"no scripted profile {name!r} for task {task}")
    cls = importlib.import_module(POLICY_MODULES[task]).POLICY
    return cls(name, role, knobs, context["seed"])


def said(events: list[dict], *words: str) -> list[dict]:
    """Messages among `events` whose text contains every one of `words` (case-insensitive)."""
    out = []
    for e in events:
        if e.get("kind") == "message":
            text = str(e.get("text", "")).lower()
            if all(w in text for w in words):
                out.append(e)
    return out
