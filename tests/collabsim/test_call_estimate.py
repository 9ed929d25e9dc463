"""`incognita collabsim estimate` and the design keys it prices: `stand_ins` and `labels`.

The estimate counts the calls the stand-ins receive through a wrapped backend; the runs'
manifests count them through each participant's usage, a path the estimate does not use."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from click.testing import CliRunner
from collabsim_paths import CONFIG, ROOT

from incognita.cli import main
from incognita.collabsim.call_estimate import estimate
from incognita.collabsim.design import design_from_config
from incognita.collabsim.loopback_twins import CollabSimTwins
from incognita.collabsim.run import simulate
from incognita.collabsim.world.experiment import load_experiment
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer
from incognita.common.prices import load_prices

PRICES = load_prices(ROOT / "config/prices.yaml")
GPT = {"*": {"spec": "openai:gpt-5.5-2026-04-23", "temperature": 0}}
CLAUDE = {"*": {"spec": "anthropic:claude-sonnet-4-6", "max_tokens": 1024}}
SELF_HOSTED = {"*": {"spec": "openai:Qwen/Qwen3.6-35B-A3B", "base_url_env": "QWEN_BASE_URL"}}


def section(**overrides) -> dict:
    base = {
        "dir": str(CONFIG),
        "seeds": 2,
        "tasks": {"daytrader": ["group_size_6"]},
        "designs": ["persona"],
        "stand_ins": True,
        "models": {
            "gpt": GPT,
            "claude": CLAUDE,
            "claude_cached": {"*": {**CLAUDE["*"], "cache_prompt": True}},
            "qwen": SELF_HOSTED,
            "scripted": None,
        },
    }
    return {"collabsim": {**base, **overrides}}


def test_calls_are_the_runs_own_and_every_label_is_priced_from_its_entries():
    design = design_from_config(section())
    lines, _ = estimate(design, PRICES)
    by_label = {ln.label: ln for ln in lines if ln.task == "daytrader"}
    turns = probes = 0
    for condition in ("baseline", "group_size_6"):
        for seed in (1, 2):
            manifest = simulate(load_experiment(CONFIG / f"daytrader/{condition}.yaml"), seed).manifest
            turns += sum(u["calls"] for u in manifest["usage"].values())
            probes += sum(u["calls"] for u in manifest["probe_usage"].values())
    for line in by_label.values():  # a repeated request is a call the response cache answers
        assert (line.runs, line.turn_calls, line.probe_calls + line.cache_hits) == (4, turns, probes)
        assert line.prompt_tokens > 1000 * (turns + probes) // 10 and line.output_tokens > 0
    gpt, claude, qwen, scripted = (by_label[k] for k in ("gpt", "claude", "qwen", "scripted"))
    # Only the entry at temperature 0 keys the cache without the seed (every probe has its own).
    assert gpt.cache_hits > 0 and claude.cache_hits == qwen.cache_hits == scripted.cache_hits == 0
    assert gpt.cost_usd == pytest.approx(PRICES.cost("gpt-5.5-2026-04-23", gpt.prompt_tokens, gpt.output_tokens))
    assert 0 < gpt.cached_cost_usd < gpt.cost_usd  # OpenAI caches repeated prefixes on its own
    assert claude.cost_usd == pytest.approx(
        PRICES.cost("claude-sonnet-4-6", claude.prompt_tokens, claude.output_tokens)
    )
    assert claude.cached_cost_usd == claude.cost_usd  # no cache_control is sent: no caching
    # With cache_prompt, each call reads what the agent's previous call wrote (at 0.1x) and writes
    # the rest (at 1.25x): the same tokens, priced from the table's three input prices.
    marked = by_label["claude_cached"]
    assert (marked.prompt_tokens, marked.cost_usd) == (claude.prompt_tokens, claude.cost_usd)
    price = PRICES.lookup("claude-sonnet-4-6")
    assert price.cache_write_input > price.input > price.cached_input
    assert marked.cached_cost_usd < claude.cost_usd / 3
    assert qwen.unpriced == ("Qwen/Qwen3.6-35B-A3B",) and qwen.cost_usd == 0 and not qwen.offline
    assert scripted.offline and scripted.cost_usd == 0 and scripted.models == ("scripted",)


def test_the_estimate_bills_what_a_run_through_the_cache_sends(tmp_path, monkeypatch):
    """At temperature 0 with no seed sent, an agent probed twice with nothing new between (after a
    message and an action of one turn) asks the same request twice, and the response cache answers
    the second: the run sends it once. The estimate's calls are the requests the runs send to an
    endpoint (scripted twins behind the loopback, which play the stand-ins' part), and its repeats
    the runs' cache hits; an entry that sends the seed makes every probe a call of its own."""
    monkeypatch.setenv("INCOGNITA_TWINS_KEY", "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    twins = CollabSimTwins(CONFIG)
    with LoopbackServer(twins, with_headers=True) as server:
        entry = {
            "spec": "openai:scripted-default",
            "base_url": server.base_url,
            "api_key_env": "INCOGNITA_TWINS_KEY",
            "send_cell": True,
            "temperature": 0,
            "rpm": None,  # the loopback has no limits to keep to
            "tpm": None,
        }
        models = {"twins": {"*": entry}, "seeded": {"*": {**entry, "send_seed": True}}}
        cfg = section(tasks={"daytrader": ["baseline"]}, models=models, stand_ins=False)
        design = design_from_config(cfg)
        lines = {ln.label: ln for ln in estimate(design, PRICES)[0]}
        usage = {"calls": 0, "probes": 0, "hits": 0, "probe_hits": 0}
        for cell in design.cells():
            if cell.model != "twins":
                continue
            for seed in design.seeds:
                manifest = simulate(design.load(cell), seed, cache_dir=str(tmp_path / "cache")).manifest
                turns, probes = manifest["usage"].values(), manifest["probe_usage"].values()
                usage["calls"] += sum(u["cache_misses"] for u in (*turns, *probes))
                usage["probes"] += sum(u["cache_misses"] for u in probes)
                usage["hits"] += sum(u["cache_hits"] for u in (*turns, *probes))
                usage["probe_hits"] += sum(u["cache_hits"] for u in probes)
        sent = server.requests  # counted on arrival (`answered` is counted after the reply has left)
    twins_line, seeded = lines["twins"], lines["seeded"]
    assert usage["probe_hits"] == usage["hits"] > 0  # only probes repeat
    assert sent == usage["calls"] == twins_line.turn_calls + twins_line.probe_calls
    assert (twins_line.probe_calls, twins_line.cache_hits) == (usage["probes"], usage["hits"])
    assert seeded.cache_hits == 0 and seeded.probe_calls == twins_line.probe_calls + twins_line.cache_hits
    assert seeded.turn_calls == twins_line.turn_calls and seeded.prompt_tokens > twins_line.prompt_tokens


def test_stand_ins_keep_the_labels_and_their_checked_entries_but_call_nothing():
    design = design_from_config(section(labels=["gpt", "claude"]))
    assert list(design.models) == ["gpt", "claude"] and design.stand_ins
    assert all(design.overrides(label) is None for label in design.models)
    assert design_from_config(section(stand_ins=False)).overrides("gpt") == GPT
    with pytest.raises(InputError, match=r"collabsim.labels: \['gemini'\] not in collabsim.models"):
        design_from_config(section(labels=["gemini"]))
    with pytest.raises(InputError, match="collabsim.stand_ins: expected true or false"):
        design_from_config(section(stand_ins="yes"))
    with pytest.raises(InputError, match="temperature"):  # a stand-in label's entry is still checked
        design_from_config(section(models={"gpt": {"*": {"spec": "openai:gpt-5.5", "temperature": -1}}}))
    with pytest.raises(InputError, match=r"^config key collabsim.tasks.daytrader: \['group_size_6'\] listed more"):
        design_from_config(section(tasks={"daytrader": ["group_size_6", "baseline", "group_size_6"]}))


def test_the_paper_design_builds_offline_and_the_command_prints_its_bill(tmp_path):
    cfg = yaml.safe_load((ROOT / "config/collabsim/paper.yaml").read_text())
    design = design_from_config(cfg)
    assert design.stand_ins and len(design.models) == 4 and design.designs == ("persona", "theory")
    assert {e["*"]["spec"].partition(":")[0] for e in design.models.values()} == {"openai", "anthropic"}

    small = tmp_path / "small.yaml"
    cfg["collabsim"]["tasks"] = {"hidden_profile": []}
    cfg["collabsim"]["dir"] = str(CONFIG)
    small.write_text(yaml.safe_dump(cfg))
    out = CliRunner().invoke(main, ["collabsim", "estimate", "--config", str(small)])
    assert out.exit_code == 0, out.output
    assert (
        "4 runs per label (2 conditions x 2 designs x 1 seeds)" in out.output
        and "label claude-sonnet-4.6:" in out.output
    )
    assert "(no price: Qwen/Qwen3.6-35B-A3B)" in out.output and out.output.splitlines()[-1].startswith("total: ")

    # `incognita estimate` routes a CollabSim design here; the access family's options are refused.
    routed = CliRunner().invoke(main, ["estimate", "--config", str(small)])
    assert routed.exit_code == 0, routed.output
    simulated = re.compile(r"simulated in [0-9.]+ s")
    assert simulated.sub("", routed.output) == simulated.sub("", out.output)
    refused = CliRunner().invoke(main, ["estimate", "--config", str(small), "--rpm", "100"])
    assert refused.exit_code == 2 and "--rpm apply to the access family's estimate only" in refused.output


def test_a_file_whose_own_agents_call_a_model_is_refused(tmp_path):
    root = tmp_path / "collabsim"
    shutil.copytree(CONFIG, root)
    baseline = root / "hidden_profile/baseline.yaml"
    baseline.write_text(baseline.read_text().replace("scripted:default", "openai:gpt-5.5", 1))
    design = design_from_config(section(dir=str(root), tasks={"hidden_profile": []}, models={"gpt": GPT}))
    with pytest.raises(InputError, match=r"hidden_profile/baseline.yaml: agents .* call a model in the file itself"):
        estimate(design, PRICES)
