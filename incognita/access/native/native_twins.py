"""Loopback twins of native runs: the native anchor's calls answered as its offline run answers them.

With `openai:` entries the native stage runs the harness's own `llm_agent` and `user_simulator`,
whose calls reach our backend (incognita.access.native.native_models). With `send_cell` each call
names its run in the `X-Incognita-Cell` header (`native_run.twin_cell`: family access, arm native,
model, task, rep, overlay) and its role, `agent` or `user`. For each (run, role) the twins build
what the offline run's registered classes build (incognita.access.native.native_scripted):

- `agent`, served as `scripted-<profile>`: `NativeAgentLogic` with the offline run's inputs (the
  profile, the task's golden trajectory, the run's seed, the tools the harness offers, the
  vocabulary);
- `user`, served as `scripted-customer`: `NativeUserLogic` on the run's card (the current card, or
  the rule-built `v1/` card for the archived unrepaired run, told apart by the overlay version),
  which answers the harness's greeting with the card's opening line and our agent's closing line
  with the harness's stop token.

Each call carries the harness's whole history. The twin takes the messages after its last reply
as the new input. A call the response cache answered never reaches it: a repaired task's run and
its archived unrepaired run share model, task, repetition and seed, so their agents' first
requests are the same and one run's answers serve the other. So a twin first replays, from the
history, the replies it did not give, checking each against the one the history records; its
state is then the offline run's.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from incognita.access.domain import split_task
from incognita.access.native.native_run import overlay_version
from incognita.access.native.native_scripted import NativeAgentLogic, NativeUserLogic
from incognita.access.paths import card_file, golden_file
from incognita.access.taxonomy import NATIVE
from incognita.common.backends.base import ModelResponse, Turn
from incognita.common.backends.openai import to_reply, to_request
from incognita.common.backends.transport import CELL_HEADER
from incognita.common.io import read_json

ROLES = {"agent": None, "user": "customer"}  # the role's served profile (None: the cell's model's)


@dataclass
class _Twin:
    """One role of one native run: its logic and how many replies it has given."""

    role: str
    profile: str
    logic: NativeAgentLogic | NativeUserLogic
    answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, inputs: list[Turn], system: str) -> ModelResponse:
        self.answered += 1
        if self.role == "agent":
            return self.logic.reply(inputs, system)
        if len(inputs) != 1 or inputs[0].role != "user":
            got = ", ".join(t.role for t in inputs) or "nothing"
            raise ValueError(f"native user twin: expected the agent's one message since its last reply, got {got}")
        return ModelResponse(text=self.logic.reply(inputs[0].content or ""))


class NativeTwins:
    """Answers the calls of native runs: `(cell, served profile, body) -> reply`, from any thread.

    `profiles` is the file the native job reads, `seed` the design's seed (each run's seed derives
    from it), `cards_root` and `golden_root` the built task stages (one folder per domain under
    each, incognita.access.paths); a run's task is its qualified id, whose domain's vocabulary the
    scripted agent knows (`vocabulary`: domain -> file, default the domain's own)."""

    @classmethod
    def for_harness(cls, harness, cards_root, golden_root) -> NativeTwins:
        """The native twins beside a harness's access twins: its profiles, its domain's vocabulary and seed."""
        d = harness.design
        return cls(d.scripted_agents, d.seed, cards_root, golden_root, {harness.domain.name: harness.inputs.vocabulary})

    def __init__(self, profiles: str | Path, seed: int, cards_root, golden_root, vocabulary: dict | None = None):
        self.profiles, self.seed = str(profiles), int(seed)
        self.vocabulary = {d: str(v) for d, v in (vocabulary or {}).items()}
        self.cards_root, self.golden_root = Path(cards_root), Path(golden_root)
        self._twins: dict[tuple[str, str], _Twin] = {}
        self._files: dict[Path, dict] = {}
        self._lock = threading.Lock()

    def __call__(self, cell: dict, profile: str, body: dict) -> dict:
        role = str(cell.get("role"))
        key = json.dumps({k: v for k, v in cell.items() if k != "role"}, sort_keys=True)
        twin = self._twin(key, cell, role, profile, body)
        if twin.profile != profile:
            raise ValueError(f"native run {key} role {role}: served as scripted-{profile}, its twin is {twin.profile}")
        request = to_request(body, role)
        with twin.lock:  # a run's calls come one at a time; the lock keeps a stray retry in order
            return to_reply(self._answer(twin, key, request))

    def _twin(self, key: str, cell: dict, role: str, profile: str, body: dict) -> _Twin:
        with self._lock:
            found = self._twins.get((key, role))
        if found is None:
            built = self._build(cell, role, profile, body)
            with self._lock:
                found = self._twins.setdefault((key, role), built)
        return found

    def _build(self, cell: dict, role: str, profile: str, body: dict) -> _Twin:
        """The logic the offline run of this cell builds for `role` (native_scripted's registered classes)."""
        from incognita.access.episodes.harness import cell_seed

        if cell.get("arm") != NATIVE:
            raise ValueError(f"{CELL_HEADER} {cell}: not a native run (arm {cell.get('arm')!r})")
        if role not in ROLES:
            raise ValueError(f"{CELL_HEADER} {cell}: native runs have roles {' and '.join(ROLES)}, not {role!r}")
        try:
            model, task, rep, overlay = str(cell["model"]), str(cell["task"]), int(cell["rep"]), int(cell["overlay"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{CELL_HEADER} {cell}: a native run needs model, task, rep and overlay") from None
        if role == "user":
            if profile != ROLES["user"]:
                raise ValueError(f"native role user is served as scripted-{ROLES['user']}, not scripted-{profile}")
            return _Twin(role, profile, NativeUserLogic(self._card(task, overlay)))
        seed = cell_seed(self.seed, model, task, rep, NATIVE)
        if "seed" in body and body["seed"] != seed:
            raise ValueError(
                f"native run {model} task {task} r{rep}: the call's seed {body['seed']} is not the run's seed {seed} "
                f"(the twins' design seed is {self.seed})"
            )
        domain, local = split_task(task)
        golden = self._path(golden_file(domain, local, root=self.golden_root), task)
        args = {"profile": profile, "profiles": self.profiles, "golden": str(golden), "seed": seed}
        if domain in self.vocabulary:
            args["vocabulary"] = self.vocabulary[domain]
        return _Twin(role, profile, NativeAgentLogic(args, list(body.get("tools") or [])))

    def _answer(self, twin: _Twin, key: str, request) -> ModelResponse:
        turns = list(request.messages)
        if twin.role == "agent":
            while turns and turns[0].role == "assistant":
                turns.pop(0)  # the harness's greeting opens the agent's history; the offline agent never sees it
        segments, inputs = [], []  # (the inputs before a reply, the reply)
        for turn in turns:
            if turn.role == "assistant":
                segments.append((inputs, turn))
                inputs = []
            else:
                inputs.append(turn)
        if len(segments) < twin.answered:
            raise ValueError(
                f"native run {key} role {twin.role}: the call's history holds {len(segments)} replies, "
                f"the twin has given {twin.answered} (a call repeated after it was answered?)"
            )
        for i, (before, recorded) in enumerate(segments[twin.answered :], start=twin.answered):
            replayed = twin.step(before, request.system)  # a call the response cache answered
            if _shape(replayed.text, replayed.tool_calls) != _shape(recorded.content, recorded.tool_calls):
                raise ValueError(
                    f"native run {key} role {twin.role}: reply {i + 1}, replayed, is "
                    f"{_shape(replayed.text, replayed.tool_calls)}; the history records "
                    f"{_shape(recorded.content, recorded.tool_calls)}"
                )
        return twin.step(inputs, request.system)

    def _card(self, task: str, overlay: int) -> dict:
        """The card of the run: the current card, or the rule-built v1 card of an archived unrepaired run."""
        domain, local = split_task(task)
        for rule_built in (False, True):
            path = card_file(domain, local, rule_built=rule_built, root=self.cards_root)
            if path.exists() and overlay_version(self._read(path)) == overlay:
                return self._read(path)
        raise ValueError(f"task {task}: no card of overlay version {overlay} in {self.cards_root / domain} or its v1/")

    def _path(self, path: Path, task: str) -> Path:
        if not path.exists():
            raise ValueError(f"{path}: not found (task {task} of a native twin's run)")
        return path

    def _read(self, path: Path) -> dict:
        with self._lock:
            if path not in self._files:
                self._files[path] = read_json(path)
            return self._files[path]


def _shape(text: str | None, calls) -> tuple:
    """A reply as the harness keeps it: its text and its calls (id, name, arguments)."""
    return (text or "", tuple((c.id, c.name, json.dumps(c.arguments, sort_keys=True)) for c in calls))
