"""Airline in the native anchor: the unmodified upstream harness runs airline tasks with our
scripted agent and customer (incognita.access.native), and the loopback twins answer a native
airline run's calls as its offline run does.

Four tasks: 1, whose golden trajectory writes nothing (the customer's request is refused);
19, a cancellation whose reservation id is read from the customer's record; 2, whose one write
(`send_certificate`) has an `amount` of provenance `derived` (the compensation rule, which the
airline's scripted agent applies: incognita.access.domains.airline.scripted); 35, whose booking
needs a birth date no participant can supply (`unsourced`), so the agent must give up at that
argument, saying why, and the harness scores the run: a finished run, never a crash the reader
would exclude.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tau2.data_model.simulation import Results

from incognita.access.native.native_run import NativeJob, NativeSettings, run_job

ROOT = Path(__file__).resolve().parents[4]
REFUSAL, WRITE, DERIVED, UNSOURCED = "airline/1", "airline/19", "airline/2", "airline/35"
TASKS = (REFUSAL, WRITE, DERIVED, UNSOURCED)
MODEL, PROFILE, SEED = "oracle", "oracle", 20260820
KEY_ENV = "INCOGNITA_AIRLINE_NATIVE_TEST_KEY"


@pytest.fixture(scope="module")
def roots(stages, tmp_path_factory) -> Path:
    """The built stages under the roots the native job reads (<root>/airline/...)."""
    root = tmp_path_factory.mktemp("airline_native_roots")
    for name in ("source", "cards", "golden"):
        (root / name).mkdir()
        (root / name / "airline").symlink_to(stages / name, target_is_directory=True)
    return root


def job(roots: Path, out: Path, spec, customer, tasks=TASKS, cache: Path | None = None) -> NativeJob:
    return NativeJob(
        model=MODEL,
        spec=spec,
        customer=customer,
        tasks=tasks,
        reps=1,
        seed=SEED,
        arms=("direct", "indirect", "social", "native"),
        models_order=(MODEL,),
        source_root=str(roots / "source"),
        cards_root=str(roots / "cards"),
        golden_root=str(roots / "golden"),
        profiles=str(ROOT / "config/scripted_agents.yaml"),
        out_dir=str(out),
        archive_unrepaired=False,
        cache_dir=str(cache) if cache else None,
    )


@pytest.fixture(scope="module")
def offline(roots, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("airline_native")
    paths = run_job(job(roots, out, f"scripted:{PROFILE}", "scripted:customer"), NativeSettings(), log=lambda _: None)
    return dict(zip(TASKS, paths))


def simulation(path: Path):
    return Results.load(path).simulations[0]


def test_the_harness_scores_airline_runs_of_our_scripted_participants(offline, golden):
    for task in (REFUSAL, WRITE):
        sim = simulation(offline[task])
        facts = sim.reward_info.info["incognita"]
        assert facts["error"] is None and sim.termination_reason.value == "user_stop", task
        assert sim.reward_info.reward == 1.0 and sim.reward_info.db_check.db_match, task
    # The refusal task's golden writes nothing, and neither did the agent.
    assert not [c for c in golden["1"]["calls"] if c["tool_type"] == "write"]
    written = {c.name for m in simulation(offline[REFUSAL]).messages for c in (getattr(m, "tool_calls", None) or [])}
    assert not written & {"cancel_reservation", "update_reservation_flights", "send_certificate", "book_reservation"}
    # The write task's cancellation went through the harness's environment.
    calls = [c for m in simulation(offline[WRITE]).messages for c in (getattr(m, "tool_calls", None) or [])]
    assert "cancel_reservation" in [c.name for c in calls]


def test_a_derived_argument_is_derived_in_the_harness_as_offline(offline, golden):
    """The compensation's amount is computed by the agent's rule from the reservation it read,
    and the harness's own environment accepts the certificate: the run scores 1.0."""
    (write,) = [c for c in golden["2"]["calls"] if c["tool_type"] == "write"]
    assert write["provenance"]["/amount"]["kind"] == "derived"
    sim = simulation(offline[DERIVED])
    assert sim.reward_info.info["incognita"]["error"] is None
    assert sim.reward_info.reward == 1.0 and sim.reward_info.db_check.db_match
    sent = [c for m in sim.messages for c in (getattr(m, "tool_calls", None) or []) if c.name == "send_certificate"]
    assert [c.arguments for c in sent] == [write["arguments"]]


def test_an_argument_no_participant_can_supply_ends_the_run_it_does_not_break_it(offline, golden):
    kinds = {p["kind"] for c in golden["35"]["calls"] for p in c["provenance"].values()}
    assert "unsourced" in kinds
    sim = simulation(offline[UNSOURCED])
    facts = sim.reward_info.info["incognita"]
    assert facts["error"] is None and not sim.skipped
    assert sim.termination_reason.value == "user_stop" and sim.reward_info.reward == 0.0
    said = [m.content for m in sim.messages if m.role == "assistant" and m.content]
    assert any("no participant can supply this value" in text for text in said)
    assert "book_reservation" not in {c.name for m in sim.messages for c in (getattr(m, "tool_calls", None) or [])}


def test_the_twins_answer_native_airline_runs_as_offline(roots, offline, tmp_path, monkeypatch):
    """The harness's own LLM classes behind a loopback, answered by the native twins (handed the
    native cells by the access twins of an airline harness): the runs are the offline runs."""
    from workflow_helpers import twin_entry

    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings
    from incognita.access.episodes.loopback_twins import AccessTwins
    from incognita.access.native.native_twins import NativeTwins
    from incognita.common.loopback import LoopbackServer

    settings = HarnessSettings(
        arms=("direct",),
        models={MODEL: f"scripted:{PROFILE}"},
        repetitions=1,
        seed=SEED,
        budget=300,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    # The shipped partition, vocabulary and prompts of config/domains/airline/, the built database.
    harness = Harness(settings, DomainInputs.of("airline", db=str(roots / "source/airline/db.json")))
    cards, golden = roots / "cards", roots / "golden"
    twins = AccessTwins(harness, cards, golden, NativeTwins.for_harness(harness, cards, golden))
    monkeypatch.setenv(KEY_ENV, "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    tasks = (REFUSAL, WRITE)
    with LoopbackServer(twins, with_headers=True) as server:
        entry = lambda model: twin_entry(server.base_url, model, KEY_ENV)  # noqa: E731
        online = run_job(
            job(roots, tmp_path / "online", entry(f"scripted-{PROFILE}"), entry("scripted-customer"), tasks,
                tmp_path / "cache"),
            NativeSettings(),
            log=lambda _: None,
        )  # fmt: skip
    for task, path in zip(tasks, online):
        mine, theirs = simulation(path), simulation(offline[task])
        assert Results.load(path).info.agent_info.implementation == "llm_agent"
        assert mine.reward_info.info["incognita"]["error"] is None, task
        assert [_said(m) for m in mine.messages] == [_said(m) for m in theirs.messages], task
        assert (mine.termination_reason, mine.reward_info.reward) == (theirs.termination_reason, 1.0), task
    assert {json.loads(key)["task"] for key in twins.calls} == set(tasks)


def _said(message) -> tuple:
    calls = getattr(message, "tool_calls", None) or []
    return (message.role, message.content, [(c.id, c.name, c.arguments) for c in calls])
