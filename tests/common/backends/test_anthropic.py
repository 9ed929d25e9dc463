"""The anthropic backend end to end: whole episodes in every arm through the official `anthropic`
client against the loopback's Messages API route, the response cache, 429 and 529 answers,
and the key.

As in test_openai.py, every role behind the server is played by its scripted twin: the
responder turns each Messages API request back into a ModelRequest (anthropic.to_request) and
asks the twin of the role that sent it, so an episode run this way must reproduce the purely
scripted episode, which checks both conversions on every path the loop uses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend_twins import ARMS, MODEL, Rig, Twins, all_text, scripted_episodes, stable, task_inputs, totals
from workflow_helpers import scripted_harness

from incognita.common.backends import anthropic as ab
from incognita.common.backends import openai as ob
from incognita.common.backends import transport
from incognita.common.backends.base import (
    BackendConfigError,
    BackendError,
    ModelRequest,
    Runtime,
    ToolCall,
    Turn,
    check_settings,
)
from incognita.common.backends.entry import ModelEntry
from incognita.common.cache import ResponseCache
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-ant-test-DUMMYKEY-0123456789abcdefXYZ"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 0.5, "max_retries": 6}
PRICES = """version: 3
retrieved: "2026-12-03"
models:
  claude-agent: {input: 3.0, output: 15.0, cached_input: 0.3}
  claude-customer: {input: 1.0, output: 5.0}
  claude-desk: {input: 1.0, output: 5.0}
"""


def role_of(model: str, body: dict, desks: dict) -> str:
    """The role a Messages API request came from: its model, else its top-level system (a desk)."""
    return {"claude-agent": "agent", "claude-customer": "USER"}.get(model) or desks[body["system"]]


def entry(model: str, **extra) -> dict:
    return {"spec": f"anthropic:{model}", "temperature": 0, "max_tokens": 1024, **FAST, **extra}


@pytest.fixture(scope="module")
def harness(source_dir):
    return scripted_harness(source_dir, ARMS, {MODEL: f"scripted:{MODEL}"})


@pytest.fixture(scope="module")
def inputs(harness, tasks, db, meta):
    return task_inputs(harness, tasks, db, meta)


@pytest.fixture(scope="module")
def scripted(harness, inputs):
    return scripted_episodes(harness, inputs)


@pytest.fixture
def rig(harness, inputs, tmp_path, monkeypatch):
    rigs = []

    def make(faults=None) -> Rig:
        entries = {
            "models": {MODEL: entry("claude-agent")},
            "customer": entry("claude-customer"),
            "service": entry("claude-desk"),
            "judge": None,
        }
        twins = Twins(harness, ab.to_request, role_of)
        r = Rig(harness, inputs, tmp_path, twins, entries, PRICES, faults=faults)
        rigs.append(r)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", r.server.root_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setattr(harness, "_make", twins.wrap(harness._make))
        return r

    yield make
    for r in rigs:
        r.close()


# --------------------------------------------------------------------------- whole episodes


def test_every_arm_matches_the_scripted_episode_and_reruns_from_cache(rig, scripted, tmp_path, monkeypatch):
    r = rig()
    first = {arm: r.run(arm) for arm in ARMS}
    sent = r.server.requests
    for arm in ARMS:
        rec = first[arm]
        assert rec.termination == "final" and rec.error is None, rec.error
        assert stable(rec) == stable(scripted[arm]), arm
        assert json.loads(rec.models["agent"])["spec"] == "anthropic:claude-agent"
        assert all(u.prompt_tokens > 0 and u.completion_tokens > 0 and u.cost_usd > 0 for u in rec.usage.values())
    assert set(first["social"].usage) > {"agent", "USER"}  # desks answered too
    assert sent == sum(totals(rec, "cache_misses") for rec in first.values())
    # What went over the wire is Anthropic's shape: a top-level system, alternating turns opening
    # with the user, tool_use blocks answered by tool_result blocks.
    for body in r.twins.bodies:
        assert body["system"] and body["max_tokens"] == 1024 and "seed" not in body
        roles = [m["role"] for m in body["messages"]]
        assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:]))
    blocks = [b["type"] for body in r.twins.bodies for m in body["messages"] for b in m["content"]]
    assert {"text", "tool_use", "tool_result"} <= set(blocks)
    assert any("input_schema" in t for body in r.twins.bodies for t in body.get("tools", []))

    monkeypatch.delenv("ANTHROPIC_API_KEY")  # a replay needs no key: nothing goes out
    second = {arm: r.run(arm) for arm in ARMS}
    assert r.server.requests == sent
    for arm in ARMS:
        assert stable(second[arm]) == stable(first[arm])
        assert totals(second[arm], "cache_misses") == 0
        assert totals(second[arm], "cost_usd") == pytest.approx(totals(first[arm], "cost_usd"))
    assert KEY not in all_text(tmp_path)
    assert r.server.log[0].authorization == f"Bearer {KEY}"  # the key was sent, and only sent
    entries = list(ResponseCache(tmp_path / "cache").entries())
    assert {e["prices_version"] for _, e in entries} == {3}  # the rig's own price table


def test_429_and_529_are_waited_out_and_change_nothing(rig, scripted, capsys):
    faults = {1: "429", 2: "529", 3: "500", 4: "timeout", 5: "malformed", 6: "incomplete"}
    r = rig(faults=faults)
    rec = r.run("indirect")
    assert rec.error is None and stable(rec) == stable(scripted["indirect"])
    assert r.server.requests == totals(rec, "calls") + len(faults)
    log = capsys.readouterr().err
    for reason in ("HTTP 429", "HTTP 529", "HTTP 500", "timed out", "malformed response body"):
        assert reason in log


def test_bad_credentials_stop_the_run_and_the_key_is_scrubbed(rig, tmp_path):
    r = rig(faults={1: "401"})
    with pytest.raises(BackendConfigError) as err:
        r.run("direct")
    assert "HTTP 401" in str(err.value) and KEY not in str(err.value)
    assert r.server.requests == 1
    assert not (tmp_path / "cache").exists() or KEY not in all_text(tmp_path / "cache")


def test_missing_key_names_the_variable(rig, monkeypatch):
    r = rig()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(BackendConfigError, match="ANTHROPIC_API_KEY is not set"):
        r.run("direct")
    assert r.server.requests == 0


def test_a_plain_400_fails_the_episode_and_a_spent_credit_balance_stops_the_run(monkeypatch):
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "Your credit balance is too low"}}

    def responder(model, request):
        raise AssertionError("never reached")

    with LoopbackServer(responder, faults={1: "400"}) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        backend = ab.make_anthropic(
            ModelEntry("anthropic:claude-agent", {"base_url": server.root_url, **FAST}),
            "agent",
            runtime=Runtime(cache_dir=False),
        )
        with pytest.raises(BackendError, match="HTTP 400"):
            backend.respond(ModelRequest("agent", "sys", (Turn("user", "hi"),)))
    import anthropic

    kind = transport.classify_sdk_error(_status_error(400, body), anthropic)
    assert kind[0] == "fatal" and "credit balance" in kind[1]


def _status_error(status: int, body: dict):
    import anthropic
    import httpx

    response = httpx.Response(status, json=body, request=httpx.Request("POST", "http://x/v1/messages"))
    return anthropic.APIStatusError(body["error"]["message"], response=response, body=body)


# --------------------------------------------------------------------------- conversions and settings


def test_conversions_round_trip_with_the_opening_turn():
    request = ModelRequest(
        role="agent",
        system="You are the agent.",
        messages=(
            Turn("assistant", "Hello, how can I help?"),
            Turn("user", "Cancel order #W1."),
            Turn("assistant", None, tool_calls=(ToolCall("t1", "get_order_details", {"order_id": "#W1"}),)),
            Turn("tool", '{"status": "pending"}', tool_call_id="t1"),
            Turn("assistant", "", tool_calls=()),
        ),
        tools=({"type": "function", "function": {"name": "get_order_details", "description": "d", "parameters": {}}},),
    )
    body = ab.request_body(ab.AnthropicSettings(model="m"), request)
    assert body["messages"][0] == {"role": "user", "content": [{"type": "text", "text": ab.OPENING_TURN}]}
    assert body["messages"][-1]["content"] == [{"type": "text", "text": ab.EMPTY_TURN}]
    assert body["tools"] == [
        {"name": "get_order_details", "input_schema": {"type": "object", "properties": {}}, "description": "d"}
    ]
    back = ab.to_request(body, "agent")
    assert back.system == request.system
    assert back.messages[:4] == request.messages[:4]
    assert back.messages[4] == Turn("assistant", None)


def test_a_reply_parses_into_the_shared_shape():
    text = json.dumps(
        {
            "type": "message",
            "model": "claude-sonnet-4-6",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_order_details", "input": {"order_id": "#W1"}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 50},
        }
    )
    parsed = ab.parse_message(text)
    assert parsed["usage"] == {
        "prompt_tokens": 150,
        "completion_tokens": 20,
        "cached_tokens": 50,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    text_part, calls = ob.from_message(parsed["message"])
    assert text_part == "Checking." and calls == (ToolCall("toolu_1", "get_order_details", {"order_id": "#W1"}),)
    with pytest.raises(ob.MalformedResponse):
        ab.parse_message('{"type": "message"}')


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"max_tokens": None}, "max_tokens: Anthropic's API requires it"),
        ({"temperature": 1.5}, "temperature: expected a number in [0, 1]"),
        ({"reasoning_effort": "high"}, "unknown setting(s) reasoning_effort"),
        ({"extra_body": {"system": "x"}}, "extra_body may not set system"),
        ({"structured_output": "json_object"}, "structured_output: expected one of json_schema or null"),
        ({"extra_body": {"output_config": {}}}, "extra_body may not set output_config"),
        ({"cache_prompt": "yes"}, "cache_prompt: expected true or false"),
    ],
)
def test_settings_are_checked_with_the_entry_named(settings, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")) as err:
        check_settings(ModelEntry("anthropic:claude-sonnet-4-6", settings), "config key models.claude")
    assert "config key models.claude" in str(err.value)


def test_the_paper_backbone_has_a_price():
    from incognita.common.prices import load_prices

    table = load_prices(ROOT / "config/prices.yaml")
    assert table.lookup("claude-sonnet-4-6") is not None
    assert table.cost("claude-sonnet-4-6", 1_000_000, 0) == pytest.approx(3.0)


def test_structured_output_goes_in_output_config():
    schema = {"name": "probe_answers", "schema": {"type": "object", "properties": {}, "additionalProperties": False}}
    request = ModelRequest(role="A", system="s", messages=(Turn("user", "hi"),), output_schema=schema)
    on = ab.AnthropicSettings.from_dict("claude-sonnet-4-6", {"structured_output": "json_schema"}, "models.c")
    assert ab.request_body(on, request)["output_config"] == {
        "format": {"type": "json_schema", "schema": schema["schema"]}
    }
    listed = {**schema, "schema": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "string"}}}
    sent = ab.request_body(on, ModelRequest(role="A", system="s", messages=(), output_schema=listed))
    assert sent["output_config"]["format"]["schema"] == {"type": "array", "minItems": 1, "items": {"type": "string"}}
    off = ab.AnthropicSettings.from_dict("claude-sonnet-4-6", {}, "models.c")
    assert "output_config" not in ab.request_body(off, request)


def test_cache_prompt_marks_the_last_block_and_writes_are_priced():
    request = ModelRequest(
        role="A",
        system="s",
        messages=(Turn("user", "hi"), Turn("assistant", "hello"), Turn("user", "again")),
    )
    on = ab.AnthropicSettings.from_dict("claude-sonnet-4-6", {"cache_prompt": True}, "models.c")
    messages = ab.request_body(on, request)["messages"]
    marked = [b for m in messages for b in m["content"] if "cache_control" in b]
    assert marked == [messages[-1]["content"][-1]] and marked[0]["cache_control"] == {"type": "ephemeral"}
    off = ab.AnthropicSettings.from_dict("claude-sonnet-4-6", {}, "models.c")
    assert "cache_control" not in json.dumps(ab.request_body(off, request))
    with pytest.raises(InputError, match="unknown setting"):  # an openai entry has no such setting
        check_settings(ModelEntry("openai:gpt-5", {"cache_prompt": True}), "models.g")

    # The usage Anthropic reports splits the prompt into fresh, read and written tokens.
    reply = {
        "content": [{"type": "text", "text": "ok"}],
        "usage": {
            "input_tokens": 100,
            "cache_read_input_tokens": 5000,
            "cache_creation_input_tokens": 900,
            "output_tokens": 20,
        },
    }
    usage = ab.parse_message(json.dumps(reply))["usage"]
    assert (usage["prompt_tokens"], usage["cached_tokens"], usage["cache_write_tokens"]) == (6000, 5000, 900)
    from incognita.common.prices import load_prices

    price = load_prices(ROOT / "config/prices.yaml").lookup("claude-sonnet-4-6")
    cost = price.cost(usage["prompt_tokens"], usage["completion_tokens"], 5000, 900)
    assert cost == pytest.approx((100 * 3.00 + 5000 * 0.30 + 900 * 3.75 + 20 * 15.00) / 1e6)
