"""Hidden Profile: the materials hide the profile, the three phases run on the simulated clock,
the metrics match hand counts, and the scripted members earn their results from what they see."""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import replace

import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.engine import Engine
from incognita.collabsim.policies.hidden_profile import MemberPolicy, fit, telegraphic
from incognita.collabsim.run import events_bytes, simulate
from incognita.collabsim.tasks.hidden_profile import (
    HiddenProfile,
    hidden_profile_metrics,
    mentions,
    totals,
)
from incognita.collabsim.world.experiment import load_experiment
from incognita.common.io import InputError

BASELINE = CONFIG / "hidden_profile/baseline.yaml"
LIMITED = CONFIG / "hidden_profile/communication_bandwidth.yaml"
MEMBERS = ("M1", "M2", "M3")


def experiment(path=BASELINE, **knobs):
    """The experiment, with the default profile's knobs changed when `knobs` are given."""
    exp = load_experiment(path)
    if knobs:
        exp = replace(exp, profiles={**exp.profiles, "default": {**exp.profiles["default"], **knobs}})
    return exp


def mean(path, metric, seeds=range(1, 6), **knobs) -> float:
    exp = experiment(path, **knobs)
    return sum(simulate(exp, s).metrics[metric] for s in seeds) / len(seeds)


# --- materials ------------------------------------------------------------------------------
def test_pooled_totals_make_c_best_and_b_the_shared_favourite():
    p = experiment().params
    # by hand from baseline.yaml: shared A +1+1-1-1, B +1+1+1-1-1, C -1-1-1, D +1-1; private C +1 x 7
    assert totals(p["shared_facts"], p["candidates"]) == {"A": 0, "B": 1, "C": -3, "D": 0}
    assert totals(p["shared_facts"] + p["private_facts"], p["candidates"]) == {"A": 0, "B": 1, "C": 4, "D": 0}
    assert len(p["private_facts"]) == 7 and {f["about"] for f in p["private_facts"]} == {"C"}


def bad(edit):
    exp = load_experiment(BASELINE)
    params = copy.deepcopy(exp.params)
    edit(params)
    return lambda: HiddenProfile.check_params(params, exp.agents, "task_params")


@pytest.mark.parametrize(
    "edit, expected",
    [
        # a member dealt 5 of C's strengths sees C at -3 + 5 = 2 > B's 1
        (lambda p: p.update(deal=[5, 1, 1]), "profile is not hidden"),
        (lambda p: p.update(deal=[3, 2, 1]), "deal"),
        (lambda p: p.update(correct="B"), "best candidate is C"),
        (lambda p: p["private_facts"][0].update(pattern=r"\bflight\b"), "also matches shared fact"),
        (lambda p: p["private_facts"][1].update(pattern=r"\bparachute\b"), "does not match the fact's own text"),
        (lambda p: p["private_facts"][2].update(pattern="(unclosed"), "does not compile"),
        (lambda p: p["private_facts"][3].pop("pattern"), "needs a clue pattern"),
        (lambda p: p["shared_facts"][0].update(about="E"), "not a candidate"),
        (lambda p: p["shared_facts"][0].update(weight=0), "non-zero"),
        (lambda p: p.update(discussion_seconds=300), "unknown key"),
    ],
)
def test_materials_that_cannot_run_are_refused_with_the_reason(edit, expected):
    with pytest.raises(InputError, match=expected):
        bad(edit)()


def test_the_deal_gives_3_2_2_distinct_facts_and_is_the_same_in_every_condition_of_a_seed():
    for seed in (1, 2, 3):
        dealt = [
            simulate(load_experiment(path), seed).events[-1]["payload"]["final_state"]["dealt"]
            for path in (BASELINE, LIMITED)
        ]
        assert dealt[0] == dealt[1]
        hands = list(dealt[0].values())
        assert sorted(map(len, hands)) == [2, 2, 3]
        assert len({f for h in hands for f in h}) == 7


# --- the clue patterns and the metrics ------------------------------------------------------
PARAPHRASES = {  # one hand-written paraphrase per clue group (Appendix 10.2)
    "p_decisions": "C is decisive in emergencies",
    "p_stress": "C keeps cool under pressure",
    "p_atmosphere": "crews love flying with C, great morale",
    "p_conscientious": "C is meticulous with paperwork",
    "p_technical": "C knows the aircraft systems inside out",
    "p_concern": "C really cares about passengers",
    "p_attention": "C spotted the altimeter slip",
}


@pytest.mark.parametrize("fact_id, text", sorted(PARAPHRASES.items()))
def test_each_clue_pattern_recognises_a_paraphrase(fact_id, text):
    facts = {f["id"]: f for f in experiment().params["private_facts"]}
    assert re.search(facts[fact_id]["pattern"], text, re.IGNORECASE)


@pytest.mark.parametrize(
    "text, counted",
    [
        ("C stayed calm when the engine caught fire", True),
        ("Candidate C's decisions were quick and correct", True),
        ("(C) is very conscientious", True),
        ("Candidate C has the fewest flight hours", False),  # names C, but a shared concern
        ("Crews love the atmosphere on her flights", False),  # a clue, but no letter C
        ("ABC stayed calm", False),  # C not standalone
        ("Captain B stayed calm", False),  # the C of "Captain" is not a letter on its own
        ("c stayed calm", False),  # the standalone letter is the capital
    ],
)
def test_a_mention_needs_the_standalone_letter_and_a_clue(text, counted):
    patterns = [re.compile(f["pattern"], re.IGNORECASE) for f in experiment().params["private_facts"]]
    assert mentions(text, "C", patterns) is counted


def _e(kind, payload, actor="system"):
    return {"kind": kind, "actor": actor, "payload": payload}


def _vote(actor, ballot, candidate):
    return _e("state", {"event": "vote", "ballot": ballot, "candidate": candidate}, actor)


def test_metrics_on_a_hand_made_log():
    events = [
        _e("run_start", {"task": "hidden_profile", "agents": [{"id": m, "role": "member"} for m in MEMBERS]}),
        _vote("M1", "initial", "B"),
        _vote("M2", "initial", "B"),
        _vote("M3", "initial", "C"),
        _e("message", {"text": "I lean B. Candidate B has the most hours."}, "M1"),
        _e("message", {"text": "C stayed calm under stress in three emergencies."}, "M2"),
        _e("message_rejected", {"text": "C is thorough C is thorough C is thorough"}, "M3"),  # not delivered
        _e("message", {"text": "I lean C now."}, "M3"),
        _e("message", {"text": "Candidate C noticed the altimeter error."}, "M3"),
        _vote("M1", "final", "C"),
        _vote("M2", "final", "C"),
        _vote("M3", "final", "A"),
        _e("run_end", {"final_state": {"correct": "C", "clue_patterns": {"s": r"\bcalm\b", "a": r"\bnotic\w+"}}}),
    ]
    m = hidden_profile_metrics(events)
    assert m["initial_accuracy"] == 1 / 3
    assert m["final_accuracy"] == 2 / 3
    assert m["consensus"] == 0.0
    assert m["vote_change_rate"] == 1.0  # B->C, B->C, C->A
    assert m["mention_rate"] == 2 / 4


def test_metrics_without_votes_or_messages_are_nan_and_a_missing_vote_breaks_consensus():
    events = [
        _e("run_start", {"task": "hidden_profile", "agents": [{"id": m, "role": "member"} for m in MEMBERS]}),
        _vote("M1", "final", "C"),
        _vote("M2", "final", "C"),
        _e("run_end", {"final_state": {"correct": "C", "clue_patterns": {}}}),
    ]
    m = hidden_profile_metrics(events)
    assert math.isnan(m["initial_accuracy"]) and math.isnan(m["vote_change_rate"]) and math.isnan(m["mention_rate"])
    assert m["final_accuracy"] == 1.0 and m["consensus"] == 0.0


# --- the phases -----------------------------------------------------------------------------
class Fixed:
    """Answers from a list (then passes); keeps every observation it was shown."""

    def __init__(self, answers: list) -> None:
        self.answers, self.seen = list(answers), []

    def act(self, observation: dict) -> str:
        self.seen.append(observation)
        return json.dumps(self.answers.pop(0) if self.answers else {"action": "do_nothing"})

    def probe(self, prompt: str) -> str:
        return "not an answer"  # probe errors: recorded, never in anyone's observations


def vote(c):
    return {"action": "decide", "candidate": c}


def run_fixed(answers: dict[str, list]) -> tuple[list[dict], dict[str, Fixed]]:
    players = {m: Fixed(answers.get(m, [])) for m in MEMBERS}
    return Engine(load_experiment(BASELINE), 1, players).run(), players


def test_initial_vote_then_300_simulated_seconds_of_discussion_then_final_vote():
    say = {"action": "message", "to": "all", "text": "hello"}
    events, players = run_fixed(
        {
            "M1": [vote("B"), say] + [{"action": "do_nothing"}] * 29 + [vote("C")],
            "M2": [vote("B"), vote("C")] + [{"action": "do_nothing"}] * 29 + [vote("C")],
            "M3": [vote("Z"), vote("D")] + [{"action": "do_nothing"}] * 30 + [vote("C")],
        }
    )
    phases = [(e["step"], e["payload"]["phase"]) for e in events if e["kind"] == "phase"]
    # M3's bad letter costs it step 0, so the initial vote closes at the end of step 1; the
    # discussion is steps 2..31 (30 steps x 10 s = 300 s) and the final vote is at step 32
    assert phases == [(0, "initial_vote"), (1, "discussion"), (31, "final_vote"), (32, "over")]
    invalid = [e for e in events if e["kind"] == "invalid_action"]
    assert [(e["actor"], e["step"]) for e in invalid] == [("M3", 0), ("M2", 2)]
    assert (
        "'Z'" in invalid[0]["payload"]["reason"]
        and "not allowed in phase discussion" in invalid[1]["payload"]["reason"]
    )
    ballots = [e for e in events if e["kind"] == "state" and e["payload"].get("event") == "vote"]
    assert all(e["visibility"] == [e["actor"]] for e in ballots)  # votes are private
    assert events[-1]["payload"]["final_state"]["votes"] == {
        "initial": {"M1": "B", "M2": "B", "M3": "D"},
        "final": {"M1": "C", "M2": "C", "M3": "C"},
    }
    # the sheet is shown at the votes and not during the discussion; votes stay one's own
    assert "private_facts" in players["M1"].seen[0]["state"] and "private_facts" not in players["M1"].seen[2]["state"]
    assert players["M1"].seen[2]["state"]["discussion_seconds_left"] == 290
    assert players["M2"].seen[-1]["state"]["your_votes"] == {"initial": "B"}
    assert not any(e["actor"] != "M2" and e.get("event") == "vote" for o in players["M2"].seen for e in o["events"])
    assert any(e.get("event") == "vote" for e in players["M2"].seen[1]["events"])  # its own vote, flattened


def test_a_vote_phase_closes_after_vote_steps_without_a_missing_vote():
    events, _ = run_fixed({"M1": [vote("B")], "M2": [vote("B")]})  # M3 never votes
    closed = [e for e in events if e["kind"] == "state" and e["payload"].get("event") == "vote_closed"]
    assert closed[0]["step"] == 2 and closed[0]["payload"]["missing"] == ["M3"]  # vote_steps: 3
    assert closed[1]["payload"]["missing"] == list(MEMBERS)
    assert math.isnan(hidden_profile_metrics(events)["final_accuracy"])


# --- the scripted member --------------------------------------------------------------------
def test_fit_keeps_the_priority_part_first_and_cuts_it_from_the_end():
    fact = "During a night approach it was Candidate C who noticed the error."
    assert fit([(1, fact), (2, "I lean B."), (0, "From my sheet:")], None) == f"From my sheet: {fact} I lean B."
    assert fit([(1, fact), (2, "I lean B."), (0, "From my sheet:")], 8) == "During a night approach it was Candidate C"
    assert telegraphic(fact) == "night approach Candidate C noticed error."
    assert fit([(1, fact), (2, "I lean B.")], 8, terse=True) == "night approach Candidate C noticed error."


def sheet_obs(extra_events=(), allowed=("decide", "do_nothing")):
    p = experiment().params
    note = {True: "strength", False: "concern"}
    private = [f for f in p["private_facts"] if f["id"] in ("p_decisions", "p_technical")]
    return {
        "you": "M1",
        "team": [{"id": "M2"}, {"id": "M3"}],
        "allowed_actions": list(allowed),
        "events": list(extra_events),
        "state": {
            "candidates": p["candidates"],
            "shared_facts": [
                {"about": f["about"], "note": note[f["weight"] > 0], "text": f["text"]} for f in p["shared_facts"]
            ],
            "private_facts": [{"about": "C", "note": "strength", "text": f["text"]} for f in private],
        },
    }


def heard(actor, text):
    return {"kind": "message", "actor": actor, "text": text}


def test_a_member_switches_only_when_heard_facts_outweigh_the_sheet():
    member = MemberPolicy("default", "member", {"update": 0.8, "conformity": 0.0}, 1)
    # its own sheet: B +1, C -3 + 2 = -1
    assert member.decide(sheet_obs()) == [vote("B")]
    clues = [
        "Candidate C stayed calm in three emergencies.",
        "Cabin crews find the atmosphere with C relaxed.",
        "Candidate C is thorough and conscientious with every checklist.",
    ]
    member.decide(sheet_obs([heard("M2", t) for t in clues], ("message", "do_nothing")))
    # C: -1 + 3 x 0.8 = 1.4 > B's 1
    assert member.decide(sheet_obs([], ("decide", "do_nothing"))) == [vote("C")]
    # a repeat of a fact it knows, and a message with no evaluative word, teach nothing
    other = MemberPolicy("default", "member", {"update": 0.8, "conformity": 0.0}, 1)
    other.decide(sheet_obs())
    other.decide(
        sheet_obs(
            [
                heard("M2", clues[0]),
                heard("M3", "Candidate C stayed calm in three emergencies!"),
                heard("M3", "Candidate C flew to Oslo on Tuesday."),
            ],
            ("message", "do_nothing"),
        )
    )
    assert [w for c, w, _ in other.known if c == "C"] == [-1, -1, -1, 1, 1, 0.8]


@pytest.mark.parametrize("conformity, expected", [(3.0, "D"), (1.0, "B")])
def test_conformity_follows_stated_leanings_and_seen_votes(conformity, expected):
    member = MemberPolicy("default", "member", {"update": 0.8, "conformity": conformity, "talk": 0.0}, 1)
    member.decide(sheet_obs())
    leans = [
        heard("M2", "I lean D. Candidate D speaks three languages fluently."),  # a known fact: no new weight
        {"kind": "state", "actor": "M3", "event": "vote", "ballot": "initial", "candidate": "D"},
    ]
    member.decide(sheet_obs(leans, ("message", "do_nothing")))
    # D: 0 + conformity x 2/2 teammates = 3 or 1; B: 1, and a tie keeps its own earlier vote, B
    assert member.decide(sheet_obs()) == [vote(expected)]


def test_after_a_rejection_the_member_resends_the_fact_within_the_limit():
    member = MemberPolicy("default", "member", {"sharing": 1.0, "concision": 0.0}, 1)
    member.decide(sheet_obs())
    [first] = member.decide(sheet_obs([], ("message", "do_nothing")))
    rejected = {
        "kind": "message_rejected",
        "actor": "M1",
        "text": first["text"],
        "reason": f"{len(first['text'].split())} words is over the limit of 15 words per message",
    }
    [second] = member.decide(sheet_obs([rejected], ("message", "do_nothing")))
    assert len(second["text"].split()) == 15
    assert second["text"].split() == first["text"].split()[5:20]  # the 5-word lead-in dropped, the fact cut after 15


# --- whole runs -----------------------------------------------------------------------------
def test_runs_replay_byte_identically():
    # (how long a run takes is measured in bench/collabsim.py, not asserted here)
    exp = load_experiment(LIMITED)
    assert events_bytes(simulate(exp, 3)) == events_bytes(simulate(exp, 3))


def test_alone_nobody_picks_c_and_without_sharing_nobody_finds_it():
    assert mean(BASELINE, "initial_accuracy") == 0.0
    assert mean(BASELINE, "final_accuracy", sharing=0.0) == 0.0
    assert mean(BASELINE, "mention_rate", sharing=0.0) == 0.0


def test_more_sharing_raises_final_accuracy_and_mention_rate():
    accuracy = [mean(BASELINE, "final_accuracy", sharing=s) for s in (0.03, 0.07, 0.3)]
    assert accuracy[0] < accuracy[1] <= accuracy[2]  # the default already finds C in all 5 seeds
    mention = [mean(BASELINE, "mention_rate", sharing=s) for s in (0.03, 0.07, 0.3)]
    assert mention[0] < mention[1] < mention[2]


def test_the_15_word_limit_lowers_mention_rate_and_final_accuracy():
    for metric in ("mention_rate", "final_accuracy"):
        assert mean(LIMITED, metric) < mean(BASELINE, metric)
    events = simulate(load_experiment(LIMITED), 1).events
    assert max(e["payload"]["words"] for e in events if e["kind"] == "message") <= 15
    assert any(e["kind"] == "message_rejected" for e in events)
