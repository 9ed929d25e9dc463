"""Scripted agents: the offline default, one policy per task.

A policy is a Backend: it reads the observation JSON from the last user turn (exactly what a
model is shown) and answers with JSON actions. Its behaviour knobs come from a profile in
`config/collabsim/scripted_agents.yaml` (`scripted:<profile>`); each knob moves a metric in a
direction known in advance, which is what the metric and statistics tests rely on. Its draws
use the agent's own seed, so a run replays exactly.
"""

from __future__ import annotations

import importlib
import json
import random

from incognita.collabsim.events import canonical
from incognita.common.backends.base import ModelRequest, ModelResponse

POLICY_MODULES = {
    "shape_factory": "incognita.collabsim.policies.shape_factory",
    "daytrader": "incognita.collabsim.policies.daytrader",
    "hidden_profile": "incognita.collabsim.policies.hidden_profile",
    "map_task": "incognita.collabsim.policies.map_task",
}


class Policy:
    """Base class: subclasses implement `decide(observation) -> actions`."""

    def __init__(self, name: str, role: str, knobs: dict, seed: int) -> None:
        self.spec = f"scripted:{name}"
        self.role = role
        self.knobs = knobs
        self.rng = random.Random(seed)

    def knob(self, name: str, default: float) -> float:
        return float(self.knobs.get(name, default))

    def respond(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=canonical({"actions": self.decide(read_observation(request))}))

    def decide(self, obs: dict) -> list[dict]:
        raise NotImplementedError


def read_observation(request: ModelRequest) -> dict:
    """The observation JSON of the last user turn (see agents.render)."""
    text = request.messages[-1].content or ""
    return json.loads(text[text.index("{"):])


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
