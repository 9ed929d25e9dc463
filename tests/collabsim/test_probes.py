"""The probing module, the probe measures, personas and the theory-informed design."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.agents import make_participants
from incognita.collabsim.engine import Engine
from incognita.collabsim.personas import OCCUPATIONS, build_library
from incognita.collabsim.probe_analysis import (
    convergence_rows,
    correct,
    probe_rows,
    run_summaries,
)
from incognita.collabsim.run import simulate
from incognita.collabsim.world.agent_prompts import MODULE_TAG, PERSONA_TAG, system_prompt
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.persona_library import load_library, persona_for
from incognita.collabsim.world.probes import ProbeSettings, load_template, parse_probe

TEMPLATE = load_template(CONFIG / "probes/hidden_profile.yaml")
# The paper's probing questions (Appendix 11), quoted: the probes ask them word for word.
APPENDIX_11 = {
    ("shape_factory", "daytrader"): (
        "At this moment, how do you assess the current situation?",
        "At this moment, what do you think the other participants are trying to do?",
        "At this moment, what do you plan to do?",
    ),
    ("hidden_profile",): (
        "At this moment, what do you think you and your partners are trying to do?",
        "At this moment, what do you think your partners are trying to do?",
        "At this moment, what do you plan to do?",
    ),
    ("map_task",): (
        "At this moment, what do you think you and your partner are trying to do?",
        "At this moment, what do you think your partner is trying to do?",
        "At this moment, what do you plan to do?",
    ),
}


@pytest.mark.parametrize("tasks, questions", APPENDIX_11.items())
def test_the_probes_ask_the_papers_questions_word_for_word(tasks, questions):
    for task in tasks:
        template = load_template(CONFIG / f"probes/{task}.yaml")
        assert {q["id"]: q["text"] for q in template.questions} == dict(
            zip(("situation", "partners", "plan"), questions)
        )


def answer(**overrides) -> dict:
    base = {
        q: {"id": q, "answer": f"about {q}", "confidence": 0.7, "fields": {}} for q in ("situation", "partners", "plan")
    }
    base["plan"]["fields"] = {"favoured_candidate": "C"}
    for q, v in overrides.items():
        base[q] = v
    return {"answers": [v for v in base.values() if v is not None]}


# --- parsing -------------------------------------------------------------------------------


def test_a_good_probe_gives_three_answers():
    answers, errors = parse_probe(json.dumps(answer()), TEMPLATE)
    assert errors == [] and [a["id"] for a in answers] == ["situation", "partners", "plan"]
    assert answers[2]["fields"] == {"favoured_candidate": "C"}


@pytest.mark.parametrize(
    "raw, question, reason",
    [
        ("I think things are fine", None, "not JSON"),
        ('{"answer": "x"}', None, "expected"),
        (json.dumps(answer(partners=None)), "partners", "missing"),
        (
            json.dumps(answer(situation={"id": "situation", "answer": "x", "confidence": 1.5})),
            "situation",
            "outside [0, 1]",
        ),
        (
            json.dumps(answer(situation={"id": "situation", "answer": "x", "confidence": "high"})),
            "situation",
            "not a number",
        ),
        (json.dumps(answer(plan={"id": "plan", "answer": " ", "confidence": 0.5})), "plan", "no answer"),
    ],
)
def test_a_malformed_probe_is_an_error_that_never_counts_as_an_answer(raw, question, reason):
    answers, errors = parse_probe(raw, TEMPLATE)
    assert len(errors) == 1 and errors[0]["question"] == question and reason in errors[0]["reason"]
    assert question not in {a["id"] for a in answers}
    assert len(answers) == (0 if question is None else 2)


def test_a_bad_field_is_null_and_noted_but_the_answer_counts():
    bad = answer(plan={"id": "plan", "answer": "x", "confidence": 0.4, "fields": {"favoured_candidate": "Z"}})
    answers, errors = parse_probe(json.dumps(bad), TEMPLATE)
    plan = answers[2]
    assert errors == [] and plan["fields"] == {"favoured_candidate": None}
    assert "invalid value 'Z'" in plan["field_errors"][0]
    unknown = answer(plan={"id": "plan", "answer": "x", "confidence": 0.4, "fields": {"favoured_candidate": None}})
    assert "field_errors" not in parse_probe(json.dumps(unknown), TEMPLATE)[0][2]  # null = "I do not know"


# --- the engine -----------------------------------------------------------------------------


def strip(events: list[dict]) -> list[tuple]:
    return [
        (e["step"], e["kind"], e["actor"], json.dumps(e["payload"], sort_keys=True))
        for e in events
        if e["kind"] not in ("probe", "probe_error")
    ]


@pytest.mark.parametrize("task", ["daytrader", "shape_factory", "hidden_profile", "map_task"])
def test_probing_changes_no_action(task):
    exp = load_experiment(CONFIG / task / "baseline.yaml")
    off = replace(exp, probe=ProbeSettings())
    probed, plain = simulate(exp, 2).events, simulate(off, 2).events
    assert any(e["kind"] == "probe" for e in probed) and not any(e["kind"] == "probe" for e in plain)
    assert strip(probed)[:-1] == strip(plain)[:-1]  # run_end differs only in nothing: same final state
    assert probed[-1]["payload"]["state_hash"] == plain[-1]["payload"]["state_hash"]


class Scripted:
    """A real participant whose probe answers are replaced, and whose observations are kept."""

    def __init__(self, inner, probe_answer: str) -> None:
        self.inner, self.probe_answer, self.seen = inner, probe_answer, []

    def act(self, observation):
        self.seen.append(observation)
        return self.inner.act(observation)

    def probe(self, prompt):
        return self.probe_answer


def run_with(exp, probe_answer: str, seed: int = 1):
    people = {a: Scripted(p, probe_answer) for a, p in make_participants(exp, seed, None, None).items()}
    return Engine(exp, seed, people).run(), people


def test_probe_errors_are_events_nobody_sees_and_the_run_goes_on():
    exp = load_experiment(CONFIG / "daytrader/baseline.yaml")
    exp = replace(exp, params={**exp.params, "rounds": 3, "discussion_every": 0})
    events, people = run_with(exp, "not JSON at all")
    errors = [e for e in events if e["kind"] == "probe_error"]
    assert errors and all(e["visibility"] == [] and "not JSON" in e["payload"]["reason"] for e in errors)
    assert not any(e["kind"] == "probe" for e in events) and events[-1]["kind"] == "run_end"
    assert not any(ev["kind"].startswith("probe") for p in people.values() for o in p.seen for ev in o["events"])


@pytest.mark.parametrize(
    "cadence, every_n, expected",
    [
        ("action", 1, "actions"),
        ("turn", 1, "turns"),
        ("every_n_actions", 2, "half"),
        ("events", 1, "rounds"),
        ("off", 1, "none"),
    ],
)
def test_cadences(cadence, every_n, expected):
    exp = load_experiment(CONFIG / "daytrader/baseline.yaml")
    exp = replace(
        exp,
        params={**exp.params, "rounds": 4, "discussion_every": 0},
        probe=replace(exp.probe, cadence=cadence, every_n=every_n, events=("round_settled",)),
    )
    ok = json.dumps(answer())
    events, _ = run_with(exp, ok)
    probes = [e for e in events if e["kind"] == "probe_error" or e["kind"] == "probe"]
    per_agent = {a: [e for e in probes if e["actor"] == a] for a in "ABC"}
    acted = {a: [e for e in events if e["actor"] == a and e["kind"] in ("message", "action")] for a in "ABC"}
    for a in "ABC":
        n = {"actions": len(acted[a]), "turns": 4, "half": len(acted[a]) // 2, "rounds": 4, "none": 0}[expected]
        assert len(per_agent[a]) == n, (a, cadence)


@pytest.mark.parametrize("after_do_nothing", [True, False])
def test_do_nothing_is_an_action_to_probe_after_unless_the_config_says_not(after_do_nothing):
    """The paper probes after every action and counts do_nothing among them; Shape Factory's
    traders often wait, so the two settings differ there, and only in the probes."""
    exp = load_experiment(CONFIG / "shape_factory/baseline.yaml")
    exp = replace(exp, probe=replace(exp.probe, after_do_nothing=after_do_nothing))
    events, _ = run_with(exp, json.dumps(answer()))
    waits = [e for e in events if e["kind"] == "action" and e["payload"]["action"] == "do_nothing"]
    acts = [{k: v for k, v in e.items() if k != "id"} for e in events if e["kind"] in ("message", "action")]
    probes = [e for e in events if e["kind"] in ("probe", "probe_error")]
    assert waits, "no do_nothing in this run: the test shows nothing"
    assert len(probes) == len(acts) - (0 if after_do_nothing else len(waits))
    other, _ = run_with(
        replace(exp, probe=replace(exp.probe, after_do_nothing=not after_do_nothing)), json.dumps(answer())
    )
    assert [{k: v for k, v in e.items() if k != "id"} for e in other if e["kind"] in ("message", "action")] == acts


def test_after_do_nothing_is_read_from_the_config_and_checked(tmp_path):
    import shutil

    from incognita.common.io import InputError

    root = tmp_path / "collabsim"
    shutil.copytree(CONFIG, root)
    path = root / "daytrader/quiet.yaml"
    path.write_text(
        "extends: baseline\nvariable: communication_bandwidth\ndescription: quiet probes\nset:\n  probe.after_do_nothing: false\n"
    )
    assert load_experiment(path).probe.after_do_nothing is False
    assert load_experiment(root / "daytrader/baseline.yaml").probe.after_do_nothing is True
    path.write_text(
        "extends: baseline\nvariable: communication_bandwidth\ndescription: quiet probes\nset:\n  probe.after_do_nothing: sometimes\n"
    )
    with pytest.raises(InputError, match="after_do_nothing"):
        load_experiment(path)


# --- scripted answers -----------------------------------------------------------------------


def test_scripted_accuracy_knob_sets_how_often_fields_are_true():
    exp = load_experiment(CONFIG / "hidden_profile/baseline.yaml")
    rates = {}
    for accuracy in (1.0, 0.0):
        profiles = {"default": {**exp.profiles["default"], "probe_accuracy": accuracy}}
        events = simulate(replace(exp, profiles=profiles), 3).events
        plans = [a for e in events if e["kind"] == "probe" for a in e["payload"]["answers"] if a["id"] == "plan"]
        said = [a["answer"].split()[4] for a in plans]  # "I intend to back X ..."
        rates[accuracy] = np.mean([a["fields"]["favoured_candidate"] == s for a, s in zip(plans, said)])
    assert rates[1.0] == 1.0 and rates[0.0] == 0.0


# --- measures ------------------------------------------------------------------------------


def test_correct_against_the_truth():
    assert correct({"favoured_candidate": "C"}, {"favoured_candidate": "C"}) == 1.0
    assert correct({"favoured_candidate": "B"}, {"favoured_candidate": "C"}) == 0.0
    assert correct({"route_progress": 0.55}, {"route_progress": 0.5}) == 1.0
    assert correct({"route_progress": 0.7}, {"route_progress": 0.5}) == 0.0
    assert np.isnan(correct({"route_progress": None}, {"route_progress": 0.5}))
    assert np.isnan(correct({}, None))


def hand_probes() -> tuple[list[dict], dict]:
    """Two agents, probes at steps 0, 5 and 9 of a 10-step run."""
    manifest = {
        "task": "hidden_profile",
        "condition": "baseline",
        "model": "m",
        "design": "persona",
        "seed": 1,
        "roles": {"A": "member", "B": "member"},
        "steps": 10,
    }

    def probe(step, agent, conf, fav):
        answers = [{"id": "plan", "answer": f"back {fav}", "confidence": conf, "fields": {"favoured_candidate": fav}}]
        return {
            "kind": "probe",
            "step": step,
            "t": step * 10,
            "actor": agent,
            "payload": {"probe": step, "trigger": "turn", "answers": answers, "truth": {"favoured_candidate": "C"}},
        }

    events = [
        probe(0, "A", 0.9, "B"),
        probe(0, "B", 0.5, "B"),
        probe(5, "A", 0.6, "C"),
        probe(9, "A", 0.8, "C"),
        probe(9, "B", 0.7, "C"),
    ]
    return events, manifest


def test_confidence_thirds_calibration_and_convergence_by_hand():
    events, manifest = hand_probes()
    probes = pd.DataFrame(probe_rows(events, manifest))
    assert probes["third"].tolist() == ["early", "early", "middle", "late", "late"]
    # vectors: "back B" and "back C" orthogonal unit vectors
    vec = {"back B": np.array([1.0, 0.0]), "back C": np.array([0.0, 1.0])}
    conv = convergence_rows(probes, np.stack([vec[a] for a in probes["answer"]]))
    assert conv["step"].tolist() == [0, 9] and conv["similarity"].tolist() == [1.0, 1.0]  # step 5: only A answered
    row = run_summaries(probes, conv).iloc[0]
    assert row["confidence"] == pytest.approx((0.9 + 0.5 + 0.6 + 0.8 + 0.7) / 5)
    assert row["confidence_early"] == pytest.approx(0.7) and row["confidence_late"] == pytest.approx(0.75)
    # correct: 0, 0, 1, 1, 1 -> Brier mean of (0.9^2, 0.5^2, 0.4^2, 0.2^2, 0.3^2); gap 0.7 - 0.6
    assert row["calibration_brier"] == pytest.approx((0.81 + 0.25 + 0.16 + 0.04 + 0.09) / 5)
    assert row["calibration_gap"] == pytest.approx(0.7 - 0.6)
    assert row["convergence_trend"] == pytest.approx(0.0)


# --- personas and designs ------------------------------------------------------------------


def test_the_library_has_fifty_plausible_profiles():
    library = load_library(CONFIG / "personas.yaml")
    assert len(library) >= 50 and len({p["id"] for p in library}) == len(library)
    for p in library:
        assert p["age_range"] in OCCUPATIONS[p["occupation"]]
        if p["occupation"] == "manager or executive":
            assert p["education"] in ("bachelor's degree", "graduate degree")
        assert p["description"].startswith("You are") and p["gender"] in p["description"]
    assert tuple(build_library(len(library), 20261130)) == library  # the committed file is the generator's output


def test_personas_follow_the_seed_and_reach_the_prompt():
    library = load_library(CONFIG / "personas.yaml")
    assert persona_for(library, 7, "A") == persona_for(library, 7, "A")
    assert len({persona_for(library, s, "A")["id"] for s in range(30)}) > 5
    exp = load_experiment(CONFIG / "daytrader/baseline.yaml")
    prompt = system_prompt(exp, exp.agents[0], 7)
    assert f"<{PERSONA_TAG}>" in prompt and persona_for(library, 7, "A")["description"] in prompt
    assert f"<{MODULE_TAG}>" not in prompt
    theory = load_experiment(CONFIG / "daytrader/baseline.yaml", design="theory")
    assert f"<{MODULE_TAG}>" in system_prompt(theory, theory.agents[0], 7)
    assert theory.config_hash != exp.config_hash


def test_scripted_agents_read_the_module_from_their_instructions():
    persona = load_experiment(CONFIG / "daytrader/baseline.yaml")
    theory = load_experiment(CONFIG / "daytrader/baseline.yaml", design="theory")
    people = make_participants(theory, 1, None, None)
    people["A"].act(
        {
            "you": "A",
            "step": 0,
            "t": 0,
            "steps_left": 1,
            "state": {},
            "events": [],
            "allowed_actions": ["do_nothing"],
            "team": [],
            "phase": "discussion",
            "role": "player",
        }
    )
    assert people["A"].backend.knobs["pledging"] == persona.profiles["default"]["theory"]["pledging"]
    rates = [np.mean([simulate(e, s).metrics["cooperation_rate"] for s in range(1, 9)]) for e in (persona, theory)]
    assert rates[1] > rates[0]


def test_confidence_per_agent_and_third():
    from incognita.collabsim.condition_stats import confidence_by_agent

    events, manifest = hand_probes()
    rows = [*probe_rows(events, manifest), *probe_rows(events, {**manifest, "seed": 2})]
    table = confidence_by_agent(pd.DataFrame(rows)).set_index(["agent", "part"])
    assert table.loc[("A", "all"), "mean"] == pytest.approx((0.9 + 0.6 + 0.8) / 3)
    assert table.loc[("A", "early"), "mean"] == 0.9 and table.loc[("B", "late"), "mean"] == 0.7
    assert table.loc[("A", "all"), "n"] == 2  # two seeds
    assert ("B", "middle") not in table.index  # B was not probed in the middle third


def test_a_probe_never_joins_the_conversation_a_model_sees():
    from incognita.collabsim.agents import ModelParticipant
    from incognita.common.backends.base import ModelResponse

    class Recording:
        spec = "fake:recording"

        def __init__(self):
            self.requests = []

        def respond(self, request):
            self.requests.append(request)
            return ModelResponse(text='{"action": "do_nothing"}')

    exp = load_experiment(CONFIG / "daytrader/baseline.yaml")
    backend = Recording()
    agent = ModelParticipant(exp.agents[0], backend, "system", 1)
    obs = {"step": 0, "t": 0, "steps_left": 3}
    agent.act(obs)
    agent.probe("PROBE: how is it going?")
    agent.act({**obs, "step": 1})
    contents = [t.content for t in backend.requests[-1].messages]
    assert len(contents) == 3 and not any("PROBE" in c for c in contents)  # obs, answer, obs
    assert backend.requests[1].messages[-1].content.startswith("PROBE")  # the probe itself saw the history
    assert agent.usage.calls == 2 and agent.probe_usage.calls == 1
