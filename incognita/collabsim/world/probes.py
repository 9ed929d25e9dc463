"""The probing module: after chosen moments, each agent reports its picture of the collaboration.

A probe asks three questions (the perceived task state, the teammates' intentions, the agent's
own plan; task-specific wording in `config/collabsim/probes/<task>.yaml`) in one call, and asks
for an answer and a confidence in [0, 1] per question plus the task's structured fields. The
call sees the agent's conversation so far but is never added to it, and its events are visible
to nobody, so probing cannot change what agents do. A malformed answer (not JSON, a missing
question, a confidence outside [0, 1]) becomes a `probe_error` event with the reason and never
counts as an answer; the run goes on.

Cadences: `off`, `action` (after every accepted action, messages and `do_nothing` included, as
the paper probes "after every action"), `turn` (after each turn of the agent), `every_n_actions`
(after every `every_n`-th accepted action of the agent), `events` (every agent, at the end of a
step in which the task emitted one of the named state events). `after_do_nothing: false` leaves
`do_nothing` out of the two action cadences (a run with many idle agents then costs fewer probe
calls, at the price of the paper's cadence).

An answer depends only on what its agent was asked before (its observations and earlier
probes), never on the moment's task state, so probes of several agents at one moment go out
together (`Engine.gather`) and are recorded in agent order; one agent's probes are always
asked one after another, in order (a scripted agent's probe draws depend on their order).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from incognita.collabsim.world.events import canonical
from incognita.collabsim.world.replies import json_reply
from incognita.collabsim.world.task import NOTHING
from incognita.common.io import InputError, read_yaml_cached

CADENCES = ("off", "action", "turn", "every_n_actions", "events")
QUESTION_IDS = ("situation", "partners", "plan")
PROBE_MARK = "PROBE"  # the first word of a probe's user turn (scripted policies answer it)
FIELD_TYPES = ("number", "integer", "enum", "text")


@dataclass(frozen=True)
class ProbeSettings:
    cadence: str = "off"
    every_n: int = 1
    events: tuple[str, ...] = ()
    questions: Path | None = None
    after_do_nothing: bool = True  # `do_nothing` counts as an action for the action cadences


@dataclass(frozen=True)
class Template:
    questions: tuple[dict, ...]  # {id, text}
    fields: dict[str, dict]  # name -> {question, type, values?, min?, max?, description}

    def fields_of(self, question: str) -> dict[str, dict]:
        return {k: v for k, v in self.fields.items() if v["question"] == question}


def load_template(path: Path) -> Template:
    doc = read_yaml_cached(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise InputError(f"{path}: expected 'questions' (a list) and 'fields'")
    ids = [q.get("id") for q in doc["questions"] if isinstance(q, dict)]
    if sorted(ids) != sorted(QUESTION_IDS) or not all(isinstance(q.get("text"), str) for q in doc["questions"]):
        raise InputError(f"{path}: questions: need exactly the ids {', '.join(QUESTION_IDS)}, each with a 'text'")
    fields = doc.get("fields") or {}
    for name, f in fields.items():
        if not isinstance(f, dict) or f.get("question") not in QUESTION_IDS or f.get("type") not in FIELD_TYPES:
            raise InputError(
                f"{path}: fields.{name}: needs 'question' (one of {', '.join(QUESTION_IDS)}) and "
                f"'type' (one of {', '.join(FIELD_TYPES)})"
            )
        if f["type"] == "enum" and not f.get("values"):
            raise InputError(f"{path}: fields.{name}: an enum needs 'values'")
    return Template(tuple(doc["questions"]), fields)


def probe_prompt(template: Template) -> str:
    """The user turn of a probe: the questions, the fields and the answer format."""
    lines = [
        f"{PROBE_MARK}: the task is paused for a short interview. Your answer goes to the researchers only; "
        "your teammates never see it and it changes nothing in the task.",
        "",
    ]
    for q in template.questions:
        lines.append(f'- "{q["id"]}": {q["text"]}')
        for name, f in template.fields_of(q["id"]).items():
            kind = f"one of {', '.join(map(str, f['values']))}" if f["type"] == "enum" else f["type"]
            lines.append(f'    field "{name}" ({kind}): {f.get("description", "")}'.rstrip())
    lines += [
        "",
        'Reply with JSON only: {"answers": [{"id": "situation", "answer": "...", "confidence": 0.0-1.0, '
        '"fields": {...}}, ...]} with one entry per question id above.',
        "Questions: "
        + canonical(
            {
                "questions": [q["id"] for q in template.questions],
                "fields": {
                    k: {
                        "question": v["question"],
                        "type": v["type"],
                        **{x: v[x] for x in ("values", "min", "max") if x in v},
                    }
                    for k, v in template.fields.items()
                },
            }
        ),
    ]
    return "\n".join(lines)


def read_probe(text: str) -> dict:
    """The question ids and field specs from a probe's last line (the line `probe_prompt` wrote);
    the scripted policies answer from it."""
    return json.loads(text[text.rindex("Questions: ") + len("Questions: ") :])


def parse_probe(raw: str, template: Template) -> tuple[list[dict], list[dict]]:
    """A probe's raw answer -> (answers, errors). Each question stands alone: a bad one is an
    error and the others still count. A bad field value is kept as null and noted."""
    doc, error = json_reply(raw)
    if error:
        return [], [{"question": None, "reason": error}]
    items = doc.get("answers") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return [], [{"question": None, "reason": 'expected {"answers": [...]}'}]
    by_id: dict[str, dict] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            by_id.setdefault(item["id"], item)
    answers, errors = [], []
    for q in template.questions:
        item = by_id.get(q["id"])
        reason = _problem(item)
        if reason:
            errors.append({"question": q["id"], "reason": reason})
            continue
        fields, notes = _fields(item.get("fields"), template.fields_of(q["id"]))
        answer = {
            "id": q["id"],
            "answer": item["answer"].strip(),
            "confidence": float(item["confidence"]),
            "fields": fields,
        }
        if notes:
            answer["field_errors"] = notes
        answers.append(answer)
    return answers, errors


def _problem(item: dict | None) -> str | None:
    if item is None:
        return "missing"
    if not isinstance(item.get("answer"), str) or not item["answer"].strip():
        return "no answer text"
    c = item.get("confidence")
    if isinstance(c, bool) or not isinstance(c, (int, float)):
        return "confidence is not a number"
    if not 0 <= c <= 1:
        return f"confidence {c} outside [0, 1]"
    return None


def _fields(given: object, declared: dict[str, dict]) -> tuple[dict, list[str]]:
    given = given if isinstance(given, dict) else {}
    out, notes = {}, []
    for name, f in declared.items():
        if name not in given:
            out[name] = None
            notes.append(f"{name}: missing")
            continue
        value = given[name]  # an explicit null means "I do not know" and is not an error
        ok = value is None or _valid(value, f)
        out[name] = value if ok else None
        if not ok:
            notes.append(f"{name}: invalid value {value!r}")
    return out, notes


def _valid(value: object, f: dict) -> bool:
    if f["type"] == "enum":
        return value in f["values"]
    if f["type"] == "text":
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if f["type"] == "integer" and int(value) != value:
        return False
    return f.get("min", float("-inf")) <= value <= f.get("max", float("inf"))


@dataclass(frozen=True)
class Ask:
    """A probe due now: its agent, number and trigger, and the moment it is recorded at (taken
    when it is due, since the answer may arrive after the task has moved on)."""

    agent: str
    number: int
    trigger: str
    step: int
    t: int
    truth: dict | None


class Prober:
    """Decides when to probe and records the answers; the engine calls its three hooks."""

    def __init__(self, settings: ProbeSettings, template: Template | None, engine) -> None:
        self.settings = settings
        self.template = template
        self.engine = engine
        self.prompt = probe_prompt(template) if template else ""
        self.actions = {a.id: 0 for a in engine.exp.agents}
        self.count = 0
        self.step_start = 0  # first event id of the current step, for the `events` cadence

    @property
    def on(self) -> bool:
        return self.settings.cadence != "off" and self.template is not None

    def after_action(self, agent: str, action: str) -> None:
        s = self.settings
        if not self.on or (action == NOTHING and not s.after_do_nothing):
            return
        self.actions[agent] += 1
        if s.cadence == "action" or (s.cadence == "every_n_actions" and self.actions[agent] % s.every_n == 0):
            self.probe(agent, s.cadence)

    def after_turn(self, agent: str) -> None:
        if self.on and self.settings.cadence == "turn":
            self.probe(agent, "turn")

    def after_step(self) -> None:
        log = self.engine.log.events
        if self.on and self.settings.cadence == "events":
            fired = sorted(
                {e.payload.get("event") for e in log[self.step_start :] if e.kind == "state"}
                & set(self.settings.events)
            )
            if fired:
                asks = [self.ask(agent, f"event:{fired[0]}") for agent in self.engine.participants]
                for ask, raw in zip(asks, self.answers(asks)):
                    self.record(ask, raw)
        self.step_start = len(log)

    def probe(self, agent: str, trigger: str) -> None:
        """Probe now, or hold the probe's place while the engine holds a simultaneous step's events."""
        ask = self.ask(agent, trigger)
        if self.engine.held is not None:
            self.engine.held.append(ask)
        else:
            self.record(ask, self.engine.participants[agent].probe(self.prompt))

    def ask(self, agent: str, trigger: str) -> Ask:
        self.count += 1
        e = self.engine
        return Ask(agent, self.count, trigger, e.step, e.t, e.task.probe_truth(agent))

    def answers(self, asks: list[Ask]) -> list[str]:
        """The raw answers to `asks`, in their order: the agents concurrently, each agent's probes
        one after another."""
        per_agent: dict[str, int] = defaultdict(int)
        for ask in asks:
            per_agent[ask.agent] += 1
        agents = list(per_agent)
        raws = self.engine.gather([partial(self._answer, a, per_agent[a]) for a in agents])
        queues = {a: iter(r) for a, r in zip(agents, raws)}
        return [next(queues[ask.agent]) for ask in asks]

    def _answer(self, agent: str, times: int) -> list[str]:
        return [self.engine.participants[agent].probe(self.prompt) for _ in range(times)]

    def record(self, ask: Ask, raw: str) -> None:
        """One batched call's answer; its events are visible to nobody, so no agent ever reads them."""
        answers, errors = parse_probe(raw, self.template)
        log, head = self.engine.log, {"probe": ask.number, "trigger": ask.trigger}
        if answers:
            log.emit(ask.step, ask.t, "probe", ask.agent, {**head, "answers": answers, "truth": ask.truth}, ())
        for err in errors:
            log.emit(ask.step, ask.t, "probe_error", ask.agent, {**head, **err, "raw": raw}, ())
