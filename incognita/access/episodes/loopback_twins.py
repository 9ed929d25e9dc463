"""Scripted twins behind a loopback endpoint: access-family requests answered as offline.

A loopback server (incognita.common.loopback, `with_headers=True`) hands every request to
`AccessTwins(model, body, headers)`. The openai backend's `send_cell` names the cell and role in
the `X-Incognita-Cell` header ({"family": "access", "arm", "model", "task", "rep", "role"}), and
the served model names the scripted participant: `scripted-<profile>` for the evaluated agent,
`scripted-customer`, `scripted-desk` (Vega and the six desks) and `scripted-judge`. For each
(cell, role) the twins build, once, the scripted backend that an offline run of that cell builds,
with the same context (`Harness._agent_context`, the card, `Harness.desk_context`), and
answer each request with it. So a workflow run through the loopback writes the records an
offline run writes, while the endpoint's latency and rate limits are a real provider's
(bench/throughput.py).

Native runs (the cell's arm is `native`) go to the `native` responder given to AccessTwins (the
native stage's twins, incognita.access.native.native_twins, which answer as the offline native
run's scripted agent and user); it is passed in so that this stage does not import a later one.

A scripted participant keeps state between calls, so it must see every call of its cell: a call
the response cache answers never reaches it. Entries therefore send the cell's seed
(`send_seed: true`), which keeps identical requests of different cells (the customer's first
reply in every repetition) apart in the cache.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from incognita.access.arm_registry import registry_path
from incognita.access.domain import CONFIG_ROOT, SOURCE_ROOT, split_task
from incognita.access.episodes.harness import Harness, HarnessSettings, cell_seed
from incognita.access.episodes.scripted import make_backend
from incognita.access.paths import CARDS_ROOT, GOLDEN_ROOT, card_file, golden_file
from incognita.access.taxonomy import NATIVE
from incognita.common.backends.base import Backend
from incognita.common.backends.openai import to_reply, to_request
from incognita.common.backends.transport import CELL_HEADER, read_cell
from incognita.common.io import read_json, read_yaml

FAMILY = "access"
SERVED_PREFIX = "scripted-"  # the served model of a twin: scripted-<profile>
# The role's served model when it is not the evaluated agent.
FIXED_PROFILES = {"USER": "customer", "judge": "judge"}
DESK_PROFILE = "desk"


def served_profile(model: str) -> str:
    if not model.startswith(SERVED_PREFIX) or len(model) == len(SERVED_PREFIX):
        raise ValueError(f"model {model!r}: twins serve models named {SERVED_PREFIX}<profile>")
    return model[len(SERVED_PREFIX) :]


def merged_config(paths: list[str | Path]) -> dict:
    """The workflow's config: each file updates the one before key by key, as Snakemake's
    `--configfile` updates the Snakefile's `configfile`."""

    def update(base: dict, new: dict) -> dict:
        out = dict(base)
        for key, value in new.items():
            out[key] = update(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        return out

    config: dict = {}
    for path in paths:
        config = update(config, read_yaml(path) or {})
    return config


class AccessTwins:
    """The responder: `(model, body, headers) -> reply`, safe to call from the server's threads.

    `harnesses` holds one harness per domain whose cells it answers (a cell's task is its qualified
    id); `cards_root` and `golden_root` the built task stages (one folder per domain under each)."""

    def __init__(
        self,
        harnesses: Harness | dict[str, Harness],
        cards_root: str | Path,
        golden_root: str | Path,
        native: Callable[[dict, str, dict], dict] | None = None,
    ):
        if isinstance(harnesses, Harness):
            harnesses = {harnesses.domain.name: harnesses}
        self.harnesses = dict(harnesses)
        self.cards_root, self.golden_root = Path(cards_root), Path(golden_root)
        self._twins: dict[tuple[str, str], tuple[threading.Lock, Backend]] = {}
        self._inputs: dict[str, tuple[dict, dict]] = {}
        self._lock = threading.RLock()  # guards the two dicts above and `calls`; _build reads inputs under it
        self.native = native  # (cell, served profile, body) -> reply, for native runs
        # Requests answered per cell (its header without the role), for tests and benchmarks.
        self.calls: Counter[str] = Counter()

    @classmethod
    def from_workflow(cls, workdir: str | Path, configfiles: list[str | Path] = ()) -> AccessTwins:
        """Twins for a workflow directory and its config (config/config.yaml, then each of
        `configfiles`), reading the inputs the `episodes` rule reads: the source database, the
        partition, the prompts, the scripted profiles, the vocabulary, the cards and golden files."""
        from incognita.access.domain import domain_files
        from incognita.access.episodes.harness import DomainInputs

        root = Path(workdir)
        cfg = merged_config([root / "config/config.yaml", *configfiles])
        d, p = cfg["design"], cfg["participants"]
        design = HarnessSettings(
            arms=tuple(d["arms"]),
            models=dict(cfg["models"]),
            repetitions=int(d["repetitions"]),
            seed=int(d["seed"]),  # what matters here: each cell's seed derives from it
            budget=int(d["budget"]),
            customer=p["customer"],
            service=p["service"],
            prompts_dir=str(root / cfg["prompts"]),
            scripted_agents=str(root / cfg["scripted_agents"]),
            arm_registry=str(root / registry_path(cfg)),
        )
        harnesses = {}
        for domain in cfg["domains"]:
            files = domain_files(domain, root / CONFIG_ROOT, root / SOURCE_ROOT)
            inputs = DomainInputs(
                domain, str(files.db), str(files.partition), str(files.vocabulary), str(files.prompts)
            )
            harnesses[domain] = Harness(design, inputs)
        return cls(harnesses, root / CARDS_ROOT, root / GOLDEN_ROOT)

    def __call__(self, model: str, body: dict, headers: Mapping[str, str]) -> dict:
        cell = read_cell(headers, FAMILY)
        role = str(cell["role"])
        key = json.dumps({k: v for k, v in cell.items() if k != "role"}, sort_keys=True)
        if cell.get("arm") == NATIVE:
            if self.native is None:
                raise ValueError(f"cell {key}: a native run, and these twins were given no native responder")
            reply = self.native(cell, served_profile(model), body)
        else:
            lock, twin = self._twin(key, cell, role, model)
            with lock:  # a scripted participant answers one call at a time, in order
                reply = to_reply(twin.respond(to_request(body, role)))
        with self._lock:
            self.calls[key] += 1
        return reply

    def _twin(self, key: str, cell: dict, role: str, model: str) -> tuple[threading.Lock, Backend]:
        with self._lock:
            found = self._twins.get((key, role))
            if found is None:
                found = self._twins[(key, role)] = (threading.Lock(), self._build(cell, role, model))
        expected = found[1].spec.partition(":")[2]
        if served_profile(model) != expected:
            raise ValueError(f"cell {key} role {role}: served as {model!r}, its twin is scripted:{expected}")
        return found

    def _build(self, cell: dict, role: str, model: str) -> Backend:
        """The scripted backend an offline run of this cell builds for `role` (Harness.run_cell)."""
        try:
            arm, name, task, rep = str(cell["arm"]), str(cell["model"]), str(cell["task"]), int(cell["rep"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{CELL_HEADER} {cell}: needs arm, model, task and rep") from None
        profile = served_profile(model)
        domain = split_task(task, f"{CELL_HEADER} task")[0]
        if domain not in self.harnesses:
            raise ValueError(
                f"{CELL_HEADER} {cell}: these twins answer {', '.join(self.harnesses)} cells, not {domain}"
            )
        h = self.harnesses[domain]
        card, golden = self._task(task)
        if role == "agent":
            spec = f"scripted:{profile}"
            seed = cell_seed(h.design.seed, name, task, rep, arm)
            return make_backend(spec, role, h._agent_context(spec, arm, golden, seed))
        if role in FIXED_PROFILES:
            _expect(profile, FIXED_PROFILES[role], role, model)
            return make_backend(f"scripted:{profile}", role, {"card": card} if role == "USER" else {})
        owners = h._owners(arm)
        if role not in owners or role == "agent":
            raise ValueError(f"arm {arm} has no service participant {role!r} (holders: {', '.join(owners)})")
        _expect(profile, DESK_PROFILE, role, model)
        return make_backend(f"scripted:{DESK_PROFILE}", role, h.desk_context(arm, role, owners[role]))

    def _task(self, task: str) -> tuple[dict, dict]:
        with self._lock:
            if task not in self._inputs:
                domain, local = split_task(task)
                card_path = card_file(domain, local, root=self.cards_root)
                golden_path = golden_file(domain, local, root=self.golden_root)
                for path in (card_path, golden_path):
                    if not path.exists():
                        raise ValueError(f"{path}: not found (task {task} of a twin's cell)")
                self._inputs[task] = (read_json(card_path), read_json(golden_path))
            return self._inputs[task]


def _expect(profile: str, expected: str, role: str, model: str) -> None:
    if profile != expected:
        raise ValueError(f"role {role} is served as {SERVED_PREFIX}{expected}, not {model!r}")
