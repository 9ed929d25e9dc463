"""Scripted twins behind a loopback endpoint: CollabSim requests answered as offline.

A loopback server (incognita.common.loopback, `with_headers=True`) hands every request to
`CollabSimTwins(model, body, headers)`. The openai backend's `send_cell` names the run and the
agent in the `X-Incognita-Cell` header (`agents.run_cell`: task, condition, design, config hash,
run seed, agent id and seed, plus the agent's role), and the served model `scripted-<profile>`
names the scripted profile. For each agent of each run the twins build, once, the policy
`make_scripted` builds offline for it and answer each of its requests with it, so a run through
the loopback writes the events an offline run writes while the endpoint's latency and rate
limits are a real provider's (bench/throughput.py).

A policy keeps state between calls, so it must see every call: a call the response cache
answers never reaches it. Entries therefore send the agent's seed (`send_seed: true`), which
keeps the same request of two runs apart in the cache.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from incognita.collabsim.policies import Policy, make_scripted
from incognita.collabsim.world.experiment import PROFILES_DIR
from incognita.collabsim.world.probes import PROBE_MARK
from incognita.common.backends.openai import to_reply, to_request
from incognita.common.backends.transport import read_cell
from incognita.common.io import read_yaml_cached

FAMILY = "collabsim"
SERVED_PREFIX = "scripted-"  # the served model of a twin: scripted-<profile>
_STEP = re.compile(r"^Step (\d+),")  # world.agent_prompts.render's first line


@dataclass(frozen=True)
class Call:
    """One answered request: which run, agent and step it served (what tests and benchmarks count)."""

    run: str  # the run's cell header without agent and role
    agent: str
    kind: str  # act | probe
    step: int  # the step of the agent's latest observation (-1 before the first)


def step_of(body: dict) -> tuple[str, int]:
    """(act or probe, the step of the latest observation the request carries)."""
    users = [m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"]
    kind = "probe" if users and users[-1].startswith(PROBE_MARK) else "act"
    for text in reversed(users):
        m = _STEP.match(text)
        if m:
            return kind, int(m.group(1))
    return kind, -1


class CollabSimTwins:
    """The responder: `(model, body, headers) -> reply`, safe to call from the server's threads.
    `root` is the CollabSim config folder, whose `scripted/<task>.yaml` holds the profiles."""

    def __init__(self, root: str | Path = "config/collabsim"):
        self.root = Path(root)
        self._twins: dict[str, tuple[threading.Lock, Policy]] = {}
        self._lock = threading.Lock()  # guards the twins and `calls`
        self.calls: list[Call] = []

    def __call__(self, model: str, body: dict, headers: Mapping[str, str]) -> dict:
        cell = read_cell(headers, FAMILY, ("task", "agent", "agent_seed", "role"), what=f"{FAMILY} agent")
        key = json.dumps({k: v for k, v in cell.items() if k != "role"}, sort_keys=True)
        lock, twin = self._twin(key, cell, model)
        with lock:  # a policy answers one call at a time, in order
            reply = to_reply(twin.respond(to_request(body, str(cell["agent"]))))
        run = json.dumps({k: v for k, v in cell.items() if k not in ("role", "agent", "agent_seed")}, sort_keys=True)
        kind, step = step_of(body)
        with self._lock:
            self.calls.append(Call(run, str(cell["agent"]), kind, step))
        return reply

    def _twin(self, key: str, cell: dict, model: str) -> tuple[threading.Lock, Policy]:
        if not model.startswith(SERVED_PREFIX) or len(model) == len(SERVED_PREFIX):
            raise ValueError(f"model {model!r}: twins serve models named {SERVED_PREFIX}<profile>")
        profile = model[len(SERVED_PREFIX) :]
        with self._lock:
            found = self._twins.get(key)
            if found is None:
                task = str(cell["task"])
                path = self.root / PROFILES_DIR / f"{task}.yaml"
                profiles = read_yaml_cached(path) if path.exists() else {}
                context = {"task": task, "profiles": profiles, "seed": int(cell["agent_seed"])}
                found = self._twins[key] = (threading.Lock(), make_scripted(profile, str(cell["role"]), context))
        if found[1].spec != f"scripted:{profile}":
            raise ValueError(f"agent {key}: served as {model!r}, its twin is {found[1].spec}")
        return found
