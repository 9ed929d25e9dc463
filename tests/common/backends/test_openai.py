"""The openai backend end to end: whole episodes in every arm through the real `openai`
client against the loopback server, the response cache, injected faults and secrets.

Behind the server every role is played by its scripted backend (a "twin"): the responder
turns each HTTP request back into a ModelRequest and asks the twin of the role that sent
it. An episode run this way must therefore reproduce the purely scripted episode event for
event, which checks the request and response conversions on every path the loop uses.
"""

from __future__ import annotations

import json

import pytest
from backend_twins import ARMS, MODEL, Rig, Twins, all_text, scripted_episodes, stable, task_inputs, totals
from workflow_helpers import scripted_harness

from incognita.access.episodes.scripted import make_backend
from incognita.common.backends import openai as ob
from incognita.common.backends import transport
from incognita.common.backends.base import BackendConfigError, ModelRequest, Runtime, Turn
from incognita.common.backends.entry import ModelEntry, entry_param
from incognita.common.cache import ResponseCache
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer
from incognita.common.prices import load_prices

KEY = "sk-test-DUMMYKEY-0123456789abcdefXYZ"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 0.5, "max_retries": 6}
PRICES = """version: 7
retrieved: "2026-11-29"
models:
  sim-agent: {input: 2.0, output: 8.0}
  sim-customer: {input: 1.0, output: 1.0}
  sim-desk: {input: 1.0, output: 1.0}
  sim-judge: {input: 1.0, output: 1.0}
"""


def role_of(model: str, body: dict, desks: dict) -> str:
    """The role a chat.completions request came from: its model, else its system message (a desk)."""
    return {"sim-agent": "agent", "sim-customer": "USER", "sim-judge": "judge"}.get(model) or desks[
        body["messages"][0]["content"]
    ]


def entry(model: str, **extra) -> dict:
    return {"spec": f"openai:{model}", "temperature": 0, **FAST, **extra}


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

    def make(faults=None, judge: bool = False, **agent_settings) -> Rig:
        entries = {
            "models": {MODEL: entry("sim-agent", **agent_settings)},
            "customer": entry("sim-customer"),
            "service": entry("sim-desk"),
            "judge": entry("sim-judge") if judge else None,
        }
        twins = Twins(harness, ob.to_request, role_of)
        r = Rig(harness, inputs, tmp_path, twins, entries, PRICES, faults=faults)
        rigs.append(r)
        monkeypatch.setenv("OPENAI_BASE_URL", r.server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
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
        assert rec.termination == "final" and rec.error is None
        assert stable(rec) == stable(scripted[arm]), arm
        agent = json.loads(rec.models["agent"])  # the spec with its settings, as configured
        assert agent["spec"] == "openai:sim-agent" and agent["temperature"] == 0
        assert totals(rec, "calls") == totals(scripted[arm], "calls")
        assert totals(rec, "cache_misses") + totals(rec, "cache_hits") == totals(rec, "calls")
        assert all(u.prompt_tokens > 0 and u.completion_tokens > 0 and u.cost_usd > 0 for u in rec.usage.values())
    assert set(first["social"].usage) > {"agent", "USER"}  # desks answered too
    assert totals(first["direct"], "cache_hits") == 0
    assert sent == sum(totals(rec, "cache_misses") for rec in first.values())

    monkeypatch.delenv("OPENAI_API_KEY")  # a replay needs no key: nothing goes out
    second = {arm: r.run(arm) for arm in ARMS}
    assert r.server.requests == sent  # served entirely from the cache
    for arm in ARMS:
        assert stable(second[arm]) == stable(first[arm])
        for role, u in second[arm].usage.items():
            before = first[arm].usage[role]
            assert (u.cache_hits, u.cache_misses) == (before.calls, 0)
            assert (u.prompt_tokens, u.completion_tokens, u.cost_usd) == (
                before.prompt_tokens,
                before.completion_tokens,
                before.cost_usd,
            )
    assert KEY not in all_text(tmp_path)
    assert r.server.log[0].authorization == f"Bearer {KEY}"  # the key was sent, and only sent


def test_cost_follows_the_price_table(rig):
    r = rig()
    rec = r.run("direct")
    table = load_prices(r.tmp / "prices.yaml")
    agent = rec.usage["agent"]
    # Costs are rounded per call, so the per-episode sum may differ in the last digits.
    assert agent.cost_usd == pytest.approx(
        table.cost("sim-agent", agent.prompt_tokens, agent.completion_tokens), rel=1e-6
    )
    entries = list(ResponseCache(r.tmp / "cache").entries())
    assert {e["prices_version"] for _, e in entries} == {7}
    assert {e["model"] for _, e in entries} == {"sim-agent", "sim-customer"}


def test_judge_answers_through_the_client_and_is_counted(rig, inputs):
    card = json.loads(json.dumps(inputs[0]))
    card["information_channel"]["nl_assertions"] = ["The agent confirmed the change.", "The agent was polite."]
    r = rig(judge=True)
    r.twins.verdicts = [True, True]
    rec = r.run("direct", card)
    assert rec.channels["nl"] is True and rec.success is True
    assert (rec.usage["judge"].calls, rec.usage["judge"].cache_misses) == (1, 1)
    r.twins.verdicts = [True, False]  # a cached verdict stays the verdict: the rerun makes no call
    again = r.run("direct", card)
    assert again.channels["nl"] is True and again.usage["judge"].cache_hits == 1


# --------------------------------------------------------------------------- faults


def test_transient_faults_are_retried_and_change_nothing(rig, scripted, capsys):
    faults = {1: "429", 2: "500", 3: "timeout", 4: "malformed", 5: "incomplete", 6: "disconnect", 9: "503"}
    r = rig(faults=faults)
    rec = r.run("indirect")
    assert rec.error is None and stable(rec) == stable(scripted["indirect"])
    assert r.server.requests == totals(rec, "calls") + len(faults)
    assert [entry.fault for entry in r.server.log[:6]] == [
        "429",
        "500",
        "timeout",
        "malformed",
        "incomplete",
        "disconnect",
    ]
    log = capsys.readouterr().err
    for reason in ("HTTP 429", "HTTP 500", "timed out", "malformed response body", "connection error", "HTTP 503"):
        assert reason in log


def test_persistent_failure_is_a_clean_error_record_and_resumes_from_cache(rig, scripted, tmp_path):
    ok_calls = 7
    r = rig(faults=lambda n, body: "503" if n > ok_calls else None)
    rec = r.run("social")
    assert rec.termination == "error" and rec.success is None and rec.channels == {}
    assert "gave up after 7 attempts" in rec.error and "HTTP 503" in rec.error and "openai:sim-" in rec.error
    assert r.server.requests == ok_calls + 7  # the failing call was tried 1 + max_retries times
    out = tmp_path / "records"
    from incognita.common.io import read_json, write_json

    write_json(out / "r0.json", rec.to_dict())
    assert read_json(out / "r0.json")["termination"] == "error"

    # Nothing is lost: a rerun serves the answered calls from the cache and finishes the episode.
    r.server.faults = None
    r.twins.keep = True  # the twins stay where the interrupted episode left them
    before = r.server.requests
    again = r.run("social")
    assert again.error is None and stable(again) == stable(scripted["social"])
    assert totals(again, "cache_hits") == ok_calls
    assert r.server.requests - before == totals(again, "calls") - ok_calls
    assert KEY not in all_text(tmp_path)


def test_a_body_that_stays_malformed_is_an_error_record_naming_the_endpoint(rig):
    """A 2xx body that is never an answer: retried like a server error, then the episode's error
    record names the backend, the endpoint it called and the failure; the job goes on."""
    ok_calls = 3
    r = rig(faults=lambda n, body: "malformed" if n > ok_calls else None)
    rec = r.run("direct")
    assert rec.termination == "error" and rec.success is None
    assert f"at {r.server.base_url}: gave up after 7 attempts" in rec.error and "malformed response body" in rec.error
    assert r.server.requests == ok_calls + 7


def test_a_rejected_request_fails_the_episode_without_retrying(rig):
    r = rig(faults={1: "400"})
    rec = r.run("direct")
    assert rec.termination == "error" and "HTTP 400" in rec.error
    assert r.server.requests == 1


def test_bad_credentials_stop_the_run_and_the_key_is_scrubbed(rig, tmp_path):
    r = rig(faults={1: "401"})
    with pytest.raises(BackendConfigError) as err:
        r.run("direct")
    assert "HTTP 401" in str(err.value) and KEY not in str(err.value)
    assert r.server.requests == 1
    assert not (tmp_path / "cache").exists() or KEY not in all_text(tmp_path / "cache")


def test_missing_key_names_the_variable(rig, monkeypatch):
    r = rig()
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(BackendConfigError, match="OPENAI_API_KEY is not set"):
        r.run("direct")
    assert r.server.requests == 0


def test_malformed_tool_arguments_reach_the_loop_as_raw_text(tmp_path, monkeypatch):
    reply = {"tool_calls": [{"id": "x1", "name": "get_order_details", "arguments": "{not json"}]}
    with LoopbackServer(lambda model, body: reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        backend = make_backend(ModelEntry("openai:m", FAST), "agent", runtime=Runtime(cache_dir=str(tmp_path)))
        resp = backend.respond(ModelRequest(role="agent", system="s", messages=(Turn("user", "hi"),)))
    assert resp.tool_calls[0].arguments == "{not json"  # the gateway rejects it as inadmissible, logged


def test_the_cell_header_goes_only_with_send_cell_and_a_calls_cell_replaces_the_backends(tmp_path, monkeypatch):
    """The native stage shares one backend between runs on several threads, so each call may name
    its own cell; neither the header nor the cell ever enters the request or its cache key."""
    seen: list[str | None] = []

    def responder(model, body, headers):
        seen.append(headers.get(transport.CELL_HEADER.lower()))
        return "ok"

    request = ModelRequest(role="agent", system="s", messages=(Turn("user", "hi"),))
    own, call = {"family": "access", "task": "1"}, {"family": "access", "task": "2"}
    with LoopbackServer(responder, with_headers=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        for send_cell in (False, True):
            settings = {**FAST, "send_cell": send_cell}
            backend = make_backend(
                ModelEntry("openai:m", settings), "agent", runtime=Runtime(cache_dir=False, cell=own)
            )
            backend.respond(request)
            backend.respond(request, cell=call)
        cached = make_backend(
            ModelEntry("openai:m", {**FAST, "send_cell": True}),
            "agent",
            runtime=Runtime(cache_dir=str(tmp_path), cell=own),
        )
        cached.respond(request, cell=call)
        assert cached.respond(request, cell=own).usage.cache_hits == 1  # the cell is not part of the key
    sent = [json.loads(h) if h else None for h in seen]
    assert sent == [None, None, {**own, "role": "agent"}, {**call, "role": "agent"}, {**call, "role": "agent"}]


# --------------------------------------------------------------------------- conversions and settings


def test_request_conversion_round_trips():
    from incognita.common.backends.base import ToolCall

    call = ToolCall("c1", "find_user_id_by_email", {"email": "a@b.c"})
    req = ModelRequest(
        role="Aster",
        system="sys",
        seed=5,
        tools=({"type": "function", "function": {"name": "f"}},),
        messages=(
            Turn("user", "hello"),
            Turn("assistant", None, tool_calls=(call,)),
            Turn("tool", '{"status": "accepted"}', tool_call_id="c1"),
            Turn("assistant", "done"),
        ),
    )
    settings = ob.Settings.from_dict("m", {"temperature": 0.5, "max_tokens": 99, "send_seed": True}, "test")
    body = ob.request_body(settings, req)
    assert body["max_completion_tokens"] == 99 and body["seed"] == 5 and "reasoning_effort" not in body
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"email": "a@b.c"}'
    assert body["messages"][2]["content"] == ""  # a string: llama.cpp's server refuses null here
    back = ob.to_request(json.loads(json.dumps(body)), "Aster")
    assert back == req


def test_settings_are_checked():
    with pytest.raises(Exception, match="unknown setting"):
        ob.Settings.from_dict("m", {"api_key": "x"}, "models.a")
    with pytest.raises(Exception, match="extra_body may not set model"):
        ob.Settings.from_dict("m", {"extra_body": {"model": "other"}}, "models.a")
    with pytest.raises(Exception, match="not its value"):
        ob.Settings.from_dict("m", {"api_key_env": "sk-abcdef123456"}, "models.a")
    with pytest.raises(Exception, match="temperature"):
        ob.Settings.from_dict("m", {"temperature": -1}, "models.a")
    old = ob.Settings.from_dict(
        "m", {"max_tokens": 10, "max_tokens_param": "max_tokens", "extra_body": {"top_p": 0.9}}, "models.a"
    )
    body = ob.request_body(old, ModelRequest(role="a", system="s", messages=()))
    assert body["max_tokens"] == 10 and body["top_p"] == 0.9 and "max_completion_tokens" not in body


def test_scrub_removes_keys():
    text = f"Incorrect API key provided: Bearer {KEY}; also sk-live-abcdefghijkl"
    clean = transport.scrub(text, KEY)
    assert KEY not in clean and "sk-live-abcdefghijkl" not in clean and "Incorrect API key" in clean


def test_entry_forms():
    def parts(value):
        entry = ModelEntry.parse(value)
        return entry.spec, dict(entry.settings)

    assert parts("openai:gpt-5") == ("openai:gpt-5", {})
    assert parts({"spec": "openai:gpt-5", "temperature": 1}) == ("openai:gpt-5", {"temperature": 1})
    param = entry_param({"spec": "openai:gpt-5", "temperature": 1})
    assert parts(param) == ("openai:gpt-5", {"temperature": 1})
    assert entry_param("scripted:desk") == "scripted:desk" and entry_param(None) == "none"
    with pytest.raises(InputError):
        ModelEntry.parse({"temperature": 1})


SCHEMA = {"name": "agent_message", "schema": {"type": "object", "properties": {}, "additionalProperties": False}}


@pytest.mark.parametrize(
    "kind, field",
    [
        ("json_schema", {"type": "json_schema", "json_schema": {**SCHEMA, "strict": True}}),  # OpenAI, vLLM, SGLang
        ("json_object", {"type": "json_object", "schema": SCHEMA["schema"]}),  # llama-cpp-python's server
    ],
)
def test_structured_output_sends_the_roles_schema_in_the_servers_field(kind, field):
    request = ModelRequest(role="agent", system="s", messages=(), output_schema=SCHEMA)
    on = ob.Settings.from_dict("m", {"structured_output": kind}, "models.a")
    assert ob.request_body(on, request)["response_format"] == field
    # Off (the default, as the paper ran), or a role whose answer has no schema: nothing is sent,
    # so the request and its cache key are those of before the setting existed.
    off = ob.Settings.from_dict("m", {}, "models.a")
    assert "response_format" not in ob.request_body(off, request)
    assert "response_format" not in ob.request_body(on, ModelRequest(role="customer", system="s", messages=()))
    # A schema with a grammar form (a rule strict modes cannot state) sends it to grammar servers only.
    exact = {"anyOf": [SCHEMA["schema"], {"type": "string"}]}
    both = ModelRequest(role="agent", system="s", messages=(), output_schema={**SCHEMA, "grammar_schema": exact})
    sent = ob.request_body(on, both)["response_format"]
    assert (sent.get("schema") or sent["json_schema"]["schema"]) == (
        exact if kind == "json_object" else SCHEMA["schema"]
    )


def test_structured_output_settings_are_checked():
    with pytest.raises(Exception, match=r"models.a: structured_output: expected one of json_schema, json_object"):
        ob.Settings.from_dict("m", {"structured_output": "grammar"}, "models.a")
    with pytest.raises(Exception, match="extra_body may not set response_format"):
        ob.Settings.from_dict("m", {"extra_body": {"response_format": {"type": "text"}}}, "models.a")
