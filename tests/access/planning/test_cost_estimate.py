"""The price table and `incognita estimate`."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from incognita.access.cost_assumptions import Assumptions
from incognita.access.planning.commands import estimate_cmd
from incognita.access.planning.cost_estimate import (
    CHAIN_SHARE,
    FORECAST_LATENCY,
    Estimator,
    conversation,
    reserve_forecast,
    wall_time,
)
from incognita.access.planning.workflow_config import load_config
from incognita.common.io import InputError
from incognita.common.prices import Price, PriceTable, empty_table, load_prices

ROOT = Path(__file__).resolve().parents[3]
PAPER_MODELS = ("gpt-5.2-2025-12-11", "gpt-5.4-2026-03-05", "gpt-5.5-2026-04-23", "gpt-5.6-sol", "gpt-4.1-2025-04-14")


# --------------------------------------------------------------------------- prices


def test_price_table_is_versioned_dated_and_prices_the_paper_models():
    table = load_prices(ROOT / "config/prices.yaml")
    assert table.version >= 1 and len(table.retrieved) == 10
    for model in PAPER_MODELS:
        assert table.lookup(model) is not None, model
    assert table.cost("gpt-4.1-2025-04-14", 1_000_000, 1_000_000) == pytest.approx(10.0)


def test_lookup_and_cost_rules(capsys):
    table = PriceTable(1, "2026-01-01", {"gpt-5": Price(1.25, 10.0, 0.125), "gpt-5-mini": Price(0.25, 2.0)}, "p.yaml")
    assert table.lookup("gpt-5-2025-08-07") == table.models["gpt-5"]  # dated snapshot -> family
    assert table.lookup("gpt-5-mini-2025-08-07") == table.models["gpt-5-mini"]  # longest prefix wins
    assert table.lookup("gpt-50") is None  # a prefix must end at '-'
    # 1000 prompt tokens of which 400 cached, 100 output.
    assert table.cost("gpt-5", 1000, 100, cached_tokens=400) == pytest.approx((600 * 1.25 + 400 * 0.125 + 1000) / 1e6)
    assert table.cost("gpt-5-mini", 1000, 0, cached_tokens=400) == pytest.approx(1000 * 0.25 / 1e6)  # no cached price
    assert table.cost("llama-local", 1000, 100) == 0.0
    assert "no price for model 'llama-local'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"retrieved": "x", "models": {}}, "version: missing"),
        ({"version": 1, "retrieved": "x", "models": {"m": {"input": 1}}}, "models.m: expected"),
        ({"version": 1, "retrieved": "x", "models": {"m": {"input": -1, "output": 1}}}, "models.m.input"),
        ({"version": 1, "retrieved": "x", "models": {"m": {"input": 1, "output": 1, "batch": 1}}}, "unknown key"),
    ],
)
def test_bad_price_tables_name_the_field(tmp_path, doc, message):
    path = tmp_path / "prices.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError, match=message):
        load_prices(path)


# --------------------------------------------------------------------------- estimate


def test_conversation_sums_the_resent_history():
    # Three calls with a 100-token system prompt, each adding 10 tokens: 110 + 120 + 130.
    assert conversation(3, 100, 10) == 360


@pytest.fixture(scope="module")
def paper():
    return load_config(ROOT / "config/paper.yaml")


def test_paper_config_matches_the_paper(paper):
    d = paper["design"]
    assert (d["repetitions"], d["budget"], d["arms"][:3]) == (3, 300, ["direct", "indirect", "social"])
    agents = [paper["models"][m] for m in d["models"]]
    assert [a["spec"] for a in agents] == [f"openai:{m}" for m in PAPER_MODELS[:4]]
    assert all(a["temperature"] == 1 and a["reasoning_effort"] == "high" for a in agents)
    for role in ("customer", "service"):
        p = paper["participants"][role]
        assert (p["spec"], p["temperature"], p["reasoning_effort"]) == ("openai:gpt-5.5-2026-04-23", 0, "none")
    assert paper["participants"]["judge"]["spec"] == "openai:gpt-4.1-2025-04-14"


def test_estimate_scales_with_the_design_and_prices(paper, tmp_path):
    table = load_prices(ROOT / "config/prices.yaml")
    lines, by_arm = Estimator(paper, table, Assumptions(), cards_root=None).run()
    episodes = 18 * 4 * 3
    agent = {ln.label: ln for ln in lines}
    turns = Assumptions().agent_turns
    assert agent["agent gpt-5.2"].calls == pytest.approx(
        episodes / 4 * sum(turns(a) for a in ("direct", "indirect", "social"))
    )
    # Same calls and tokens for every agent; cost follows each model's price.
    costs = [agent[f"agent {m}"].cost_usd for m in ("gpt-5.2", "gpt-5.4", "gpt-5.5", "gpt-5.6-sol")]
    assert costs[2] == max(costs) and all(c > 0 for c in costs)
    assert by_arm["social"].cost_usd > by_arm["indirect"].cost_usd > 0
    # No cards at hand: the paper's share of tasks, which gives its 252 judged Incognita trials.
    assert agent["judge"].calls == pytest.approx(3 * episodes * 7 / 18) == 252
    # Doubling the repetitions doubles everything.
    twice = {**paper, "design": {**paper["design"], "repetitions": 6}}
    lines2, _ = Estimator(twice, table, Assumptions(), cards_root=None).run()
    assert sum(ln.cost_usd for ln in lines2) == pytest.approx(2 * sum(ln.cost_usd for ln in lines))


def test_assumptions_override_and_reject_unknown_keys(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("reasoning: {high: 3000}\ncached_share: 0\n")
    a = Assumptions.load(str(path))
    assert a.reasoning["high"] == 3000 and a.reasoning["low"] == Assumptions().reasoning["low"] and a.cached_share == 0
    path.write_text("turns: 3\n")
    with pytest.raises(InputError, match="unknown assumption"):
        Assumptions.load(str(path))


def test_estimate_command_on_the_paper_and_the_default_config(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(estimate_cmd, ["--config", "config/paper.yaml", "--cards-dir", "/nonexistent"])
    assert out.exit_code == 0, out.output
    assert "18 tasks x 4 models x 3 repetitions" in out.output and "gpt-5.6-sol" in out.output
    assert "total:" in out.output and "not estimated: native" in out.output
    out = CliRunner().invoke(estimate_cmd, ["--config", "config/config.yaml"])
    assert out.exit_code == 0, out.output
    assert "(offline)" in out.output and "$0.00" in out.output
    # `incognita estimate` on a CollabSim design: tests/collabsim/test_call_estimate.py.


# --------------------------------------------------------------------------- wall time


# The hand counts below take these calls per service message, whatever the defaults become.
HAND_STEPS = {"indirect": 1.8, "social": 1.4}


@pytest.fixture
def small(paper):
    """The paper's design cut to one agent and one repetition: 18 tasks x 3 arms = 54 episodes."""
    return {**paper, "design": {**paper["design"], "models": ["gpt-5.2"], "repetitions": 1}}


def test_wall_time_takes_the_largest_bound(small):
    est = Estimator(
        small, load_prices(ROOT / "config/prices.yaml"), Assumptions(service_steps=HAND_STEPS), cards_root=None
    )
    lines, _ = est.run()
    # By hand, calls per episode from the default assumptions but HAND_STEPS (judge: 7 of 18 tasks):
    #   direct:   agent 6 + 7.4 + 1 = 14.4, customer 6 x 1.5 = 9                     -> 23.4
    #   indirect: agent 6 + 6.2 + 1 = 13.2, customer 9, service 6.2 x 1.8 = 11.16     -> 33.36
    #   social:   agent 6 + 19.2 + 1 = 26.2, customer 9, service 19.2 x 1.4 = 26.88  -> 62.08
    judge = 7 / 18
    social = 62.08 + judge
    calls = 18 * (23.4 + 33.36 + 62.08 + 3 * judge)  # 2160.12
    assert est.episode_calls[("social", "gpt-5.2")] == pytest.approx(social)
    tokens = sum(ln.prompt_tokens + ln.completion_tokens for ln in lines)

    w = wall_time(est, lines, rpm=100, tpm=None, latency=5)
    assert (w.calls, w.chain_cell) == (pytest.approx(calls), ("social", "gpt-5.2"))
    assert w.terms == {"requests": pytest.approx(2160.12 / 100 * 60), "chain": pytest.approx(social * 5)}
    assert w.binding == "requests" and w.seconds == pytest.approx(1296.072)
    assert w.in_flight == pytest.approx(2160.12 * 5 / 1296.072)  # 8.33: five calls a minute per episode
    w = wall_time(est, lines, rpm=100, tpm=tokens / 60, latency=5)  # the tokens would take an hour
    assert w.binding == "tokens" and w.seconds == pytest.approx(3600)
    w = wall_time(est, lines, rpm=1e6, tpm=1e9, latency=30)  # generous limits: the longest episode binds
    assert w.binding == "chain" and w.seconds == pytest.approx(social * 30)


def test_wall_time_counts_only_api_calls(small):
    offline = {
        **small,
        "participants": {**small["participants"], "judge": {"spec": "scripted:judge"}},
    }
    est = Estimator(
        offline, load_prices(ROOT / "config/prices.yaml"), Assumptions(service_steps=HAND_STEPS), cards_root=None
    )
    lines, _ = est.run()
    w = wall_time(est, lines, rpm=100, tpm=None, latency=5)
    assert w.calls == pytest.approx(18 * (23.4 + 33.36 + 62.08))
    assert w.chain_calls == pytest.approx(62.08)


def test_estimate_command_prints_the_wall_time_only_when_asked(small, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump(small))
    steps = tmp_path / "steps.yaml"
    steps.write_text(yaml.safe_dump({"service_steps": HAND_STEPS}))
    args = ["--config", str(config), "--cards-dir", "/nonexistent", "--assumptions", str(steps)]
    plain = CliRunner().invoke(estimate_cmd, args)
    assert plain.exit_code == 0, plain.output
    assert "wall time" not in plain.output
    timed = CliRunner().invoke(estimate_cmd, [*args, "--rpm", "100", "--latency", "5"])
    assert timed.exit_code == 0, timed.output
    assert timed.output.startswith(plain.output)  # the estimate itself is unchanged
    assert timed.output[len(plain.output) :].splitlines() == [
        "wall time at 100 requests/min, 5 s per call: at least 21.6 min (requests bound)",
        "  requests 2,160 calls / 100 per min = 21.6 min  <- binds",
        "  chain    62.5 calls one after another in the longest episode (social gpt-5.2) x 5 s = 5.2 min",
        "  reaching it takes about 8 episodes running at once (calls x latency / wall time)",
        # 2,160 calls x 5 s / 1,296 s = 8.3 episodes at once; a job holds 3 arms x 1 repetition: 3 jobs
        "  in jobs of 3 episodes (one model and task), 3 jobs at once: snakemake --cores 2 --resources api_calls=3",
    ]


def test_the_reserve_is_forecast_from_the_longest_chain_against_the_run(small):
    """The run's ideal is its slowest endpoint's budget, with the usage of the roles that share an
    endpoint summed; the reserve is kept where the longest episode's calls, at FORECAST_LATENCY
    each, take at least CHAIN_SHARE of it, and set to 0 in every API entry otherwise."""
    from incognita.common.backends.entry import entry_param

    est = Estimator(small, empty_table(), Assumptions(), cards_root=None)
    lines = {ln.label: ln for ln in est.run()[0]}
    chain = est.episode_calls[("social", "gpt-5.2")] * FORECAST_LATENCY
    customer, service = lines["customer"], lines["service"]

    def forecast(customer_url, service_url, rpm, tpm=None):
        entry = {"spec": "openai:m", "temperature": 0, "rpm": rpm, "tpm": tpm}
        participants = {
            **small["participants"],
            "customer": {**entry, "base_url": customer_url},
            "service": {**entry, "base_url": service_url},
        }
        return reserve_forecast({**small, "participants": participants}, cards_dir=None)

    # Requests alone limited: the customer and the service on one endpoint take (their calls) / rpm
    # minutes, apart the service's alone (it makes more calls than the customer).
    assert service.calls > customer.calls
    apart = forecast("http://a/v1", "http://b/v1", rpm=100)
    shared = forecast("http://a/v1", "http://a/v1", rpm=100)
    assert apart.run_seconds == pytest.approx(service.calls / 100 * 60)
    assert shared.run_seconds == pytest.approx((service.calls + customer.calls) / 100 * 60)
    assert apart.chain_seconds == shared.chain_seconds == pytest.approx(chain)
    tokens = sum(ln.prompt_tokens + ln.completion_tokens for ln in (customer, service))
    assert forecast("http://a/v1", "http://a/v1", rpm=None, tpm=100_000).run_seconds == pytest.approx(
        tokens / 100_000 * 60
    )

    # The whole requests a minute just over, then just under, the limit at which the chain is
    # CHAIN_SHARE of the run (the slower the run, the smaller the chain's share).
    even = (service.calls + customer.calls) * 60 / (chain / CHAIN_SHARE)
    assert math.floor(even) < even < math.ceil(even)
    keeps = forecast("http://a/v1", "http://a/v1", rpm=math.ceil(even))
    drops = forecast("http://a/v1", "http://a/v1", rpm=math.floor(even))
    assert keeps.pays and keeps.settings() == {}
    assert not drops.pays
    api = {entry_param({"spec": "openai:m", "temperature": 0, "base_url": "http://a/v1"})}
    api |= {entry_param(small["models"]["gpt-5.2"]), entry_param(small["participants"]["judge"])}
    assert drops.settings() == dict.fromkeys(api, {"reserve": 0})

    with pytest.raises(InputError, match="participants.customer: rpm: expected a positive integer"):
        forecast("http://a/v1", "http://b/v1", rpm=0)


def test_estimate_command_says_what_the_pace_does_with_its_reserve(small, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)

    def pace_line(cfg):
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(cfg))
        out = CliRunner().invoke(estimate_cmd, ["--config", str(config), "--cards-dir", "/nonexistent"])
        assert out.exit_code == 0, out.output
        return [line for line in out.output.splitlines() if line.startswith("pace:")]

    def limited(**limits):
        cfg = {**small, "models": {k: {**v, **limits} for k, v in small["models"].items()}}
        cfg["participants"] = {k: v and {**v, **limits} for k, v in small["participants"].items()}
        return cfg

    # The customer and the service share one entry, so one endpoint: 2,150 calls at 10 a minute, 3.6 h.
    (slow,) = pace_line(limited(rpm=10, tpm=None))
    assert "sets each API entry's `reserve` to 0" in slow and "(3.6 h)" in slow
    (kept,) = pace_line(limited(rpm=100_000, tpm=1_000_000_000))
    assert "keeps its reserve" in kept
    assert pace_line(limited(rpm=None, tpm=None)) == [
        "pace: no API entry sets a rate limit, so nothing is held back for the longest chains"
    ]
    offline = {**small, "models": {"gpt-5.2": "scripted:surveyor"}}
    offline["participants"] = {
        k: v and {"spec": f"scripted:{k if k != 'service' else 'desk'}"} for k, v in small["participants"].items()
    }
    assert pace_line(offline) == []
