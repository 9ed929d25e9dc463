"""Evaluation: the database channel and the two ways of scoring the information channel
(upstream's substring check, or the judge deciding one assertion per information item)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workflow_helpers import scripted_harness

from incognita.access.episodes.harness import Harness
from incognita.access.episodes.loop.evaluation import INFO_ASSERTION, evaluate
from incognita.access.episodes.scripted.scripted_judge import ScriptedJudge, agent_messages, statements
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.common.backends.base import (
    BackendError,
    ModelRequest,
    ModelResponse,
    Turn,
)

ROOT = Path(__file__).resolve().parents[4]
ARMS = ("direct", "indirect", "social")
TASKS = ("30", "46", "37")  # retail corpus tasks whose customer must be told one or two facts
CARD = {"information_channel": {"communicate_info": ["1,126.04", "camera"], "nl_assertions": []}}
PROMPT = (ROOT / "config/prompts/judge.md").read_text()


class Canned:
    """A judge that answers with fixed text and records what it was asked."""

    def __init__(self, text: str):
        self.text, self.asked = text, []

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.asked.append(request)
        return ModelResponse(text=self.text)


def test_substring_channel_is_upstreams_check():
    out = evaluate("h", "h", CARD, ["Your refund is 1126.04.", "The Camera is back."])
    assert out.channels == {"db": True, "communicate": False, "nl": None}  # "1,126.04" keeps its comma
    out = evaluate(
        "h",
        "h",
        {"information_channel": {"communicate_info": ["camera"], "nl_assertions": []}},
        ["The Camera is back."],
    )
    assert out.success and out.channels["communicate"] is True and out.judgements == ()


def test_judged_channel_records_one_verdict_per_item():
    judge = Canned(json.dumps({"verdicts": [True, False]}))
    out = evaluate(
        "h", "h", CARD, [], channel="judge", judge=judge, judge_prompt=PROMPT, transcript=[("agent", "hello")]
    )
    assert out.channels == {"db": True, "communicate": None, "nl": False} and not out.success
    assert [j["verdict"] for j in out.judgements] == [True, False]
    assert out.judgements[0]["assertion"] == INFO_ASSERTION.format(info="1,126.04")
    assert "2. " + INFO_ASSERTION.format(info="camera") in judge.asked[0].system


@pytest.mark.parametrize("text", ["yes", json.dumps({"verdicts": [True]}), json.dumps({"verdicts": ["yes", True]})])
def test_a_malformed_verdict_breaks_the_episode_instead_of_scoring_a_guess(text):
    with pytest.raises(BackendError, match="judge"):
        evaluate("h", "h", CARD, [], channel="judge", judge=Canned(text), judge_prompt=PROMPT, transcript=[])


def test_the_judged_channel_refuses_to_run_without_a_judge():
    with pytest.raises(ValueError, match="'judge' needs participants.judge"):
        evaluate("h", "h", CARD, [], channel="judge")


def test_scripted_judge_reads_what_a_model_judge_reads():
    system = PROMPT.format(
        assertions="1. " + INFO_ASSERTION.format(info="1126.04") + "\n2. " + INFO_ASSERTION.format(info="camera")
    )
    assert statements(system) == [INFO_ASSERTION.format(info="1126.04"), INFO_ASSERTION.format(info="camera")]
    transcript = "customer: hi\nagent: Your refund is 1,126.04\nin total.\ncustomer: and the camera?"
    assert agent_messages(transcript) == ["Your refund is 1,126.04\nin total."]
    reply = ScriptedJudge().respond(ModelRequest(role="judge", system=system, messages=(Turn("user", transcript),)))
    assert json.loads(reply.text) == {"verdicts": [True, False]}  # the customer, not the agent, said "camera"
    with pytest.raises(BackendError, match="information items only"):
        ScriptedJudge().respond(
            ModelRequest(role="judge", system=PROMPT.format(assertions="1. The sky is blue"), messages=())
        )


@pytest.fixture(scope="module")
def inputs(source_dir, repaired_card):
    from incognita.access.domain import get_domain
    from incognita.access.golden.upstream_replay import World

    world = World(get_domain("retail"), source_dir / "db.json")
    vocab = load_vocabulary(str(ROOT / "config/domains/retail/vocabulary.yaml"))
    return {t: (card, build_golden(card, world, vocab)) for t in TASKS for card in [repaired_card(t)]}


def _harness(source_dir, channel: str, judge) -> Harness:
    return scripted_harness(
        source_dir, ARMS, {"surveyor": "scripted:surveyor"}, judge=judge, information_channel=channel
    )


def test_offline_the_judged_channel_decides_as_the_substring_check(source_dir, inputs):
    """The scripted judge makes the substring check's decision through the whole judge path,
    in every arm; every verdict is recorded with its assertion and the judge prompt's hash."""
    substring, judged = _harness(source_dir, "substring", None), _harness(source_dir, "judge", "scripted:judge")
    for task, (card, golden) in inputs.items():
        for arm in ARMS:
            a = substring.run_cell(arm, "surveyor", f"retail/{task}", 0, card, "-", golden, "-")
            b = judged.run_cell(arm, "surveyor", f"retail/{task}", 0, card, "-", golden, "-")
            assert b.channels["nl"] == a.channels["communicate"] and b.channels["communicate"] is None
            assert b.success == a.success and b.information_channel == "judge"
            infos = card["information_channel"]["communicate_info"]
            assert [j["assertion"] for j in b.judgements] == [INFO_ASSERTION.format(info=i) for i in infos]
            assert {len(j["judge_prompt_sha256"]) for j in b.judgements} == {64}
            assert b.usage["judge"].calls == 1


def test_judged_channel_through_a_model_server_and_the_cache(source_dir, inputs, tmp_path, monkeypatch):
    """An openai judge (the scripted judge behind a loopback server): the same verdicts, and an
    unchanged rerun takes them from the response cache."""
    from incognita.common.backends.openai import to_reply, to_request
    from incognita.common.loopback import LoopbackServer

    def responder(model, body):
        return to_reply(ScriptedJudge().respond(to_request(body, "judge")))

    monkeypatch.setenv("OPENAI_API_KEY", "loopback-dummy-key")
    card, golden = inputs["46"]
    expected = _harness(source_dir, "judge", "scripted:judge").run_cell(
        "social", "surveyor", "retail/46", 0, card, "-", golden, "-"
    )
    with LoopbackServer(responder) as server:
        judge = {"spec": "openai:judge-model", "base_url": server.base_url, "temperature": 0}
        harness = _harness(source_dir, "judge", judge)
        harness.design = type(harness.design)(**{**harness.design.__dict__, "cache_dir": str(tmp_path / "cache")})
        first = harness.run_cell("social", "surveyor", "retail/46", 0, card, "-", golden, "-")
        requests = server.requests
        second = harness.run_cell("social", "surveyor", "retail/46", 0, card, "-", golden, "-")
        assert server.requests == requests == 1
    assert [j["verdict"] for j in first.judgements] == [j["verdict"] for j in expected.judgements]
    assert first.channels == expected.channels and second.judgements == first.judgements
    assert second.usage["judge"].cache_hits == 1
