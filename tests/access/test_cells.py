"""The access family's design (incognita.access.cells): the config's design, its cells, the record paths."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from incognita.access.cells import (
    Cell,
    design_files,
    design_from_config,
    design_models,
    record_path,
    repaired_tasks,
)
from incognita.access.cost_assumptions import Assumptions
from incognita.access.freeze import LockError
from incognita.access.planning.cost_estimate import Estimator
from incognita.access.planning.workflow_config import load_config
from incognita.access.taxonomy import HARNESS_ARMS
from incognita.common.io import InputError, read_yaml
from incognita.common.prices import load_prices

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "config" / "domains" / "retail"
AIRLINE = ROOT / "config" / "domains" / "airline"


@pytest.fixture
def config(monkeypatch) -> dict:
    """The default config, read from the checkout (its domains' folders are relative paths)."""
    monkeypatch.chdir(ROOT)
    return read_yaml(ROOT / "config/config.yaml")


def with_design(config: dict, **changes) -> dict:
    cfg = copy.deepcopy(config)
    cfg["design"].update(changes)
    return cfg


def test_the_default_design(config):
    design = design_from_config(config)
    retail = [f"retail/{t}" for t in read_yaml(RETAIL / "corpus.yaml")["tasks"]]
    airline = [f"airline/{t}" for t in read_yaml(AIRLINE / "corpus.yaml")["tasks"]]
    corpus = retail + airline  # each domain's corpus, in the order of `domains`
    assert design.domains == ("retail", "airline") and list(design_files(config)) == ["retail", "airline"]
    assert design.rotation == ("direct", "indirect", "social", "native") and design.native
    assert design.episode_arms == HARNESS_ARMS
    assert design.models == tuple(config["models"])  # design.models: null
    assert design.tasks == tuple(corpus)  # design.tasks: null, in corpus order, qualified ids
    assert design.tasks_of("retail") == tuple(t.split("/")[1] for t in retail)
    assert design.tasks_of("airline") == tuple(t.split("/")[1] for t in airline)
    assert (design.repetitions, design.seed, design.budget) == (3, 20260820, 300)
    repaired = {f"{d.name}/{t}" for d in (RETAIL, AIRLINE) for t in repaired_tasks(d / "repairs")}
    assert design.unrepaired_tasks == tuple(t for t in corpus if t in repaired) and design.unrepaired_tasks


def test_cells_run_arm_by_arm_and_native_apart(config):
    tasks = ["retail/46", "retail/11"]
    design = design_from_config(with_design(config, tasks=tasks, models=["prober", "surveyor"], repetitions=2))
    cells = design.cells()
    assert len(cells) == 3 * 2 * 2 * 2 and cells[0] == Cell("direct", "prober", "retail/46", 0)
    assert cells[:4] == [Cell("direct", "prober", t, r) for t in tasks for r in (0, 1)]
    assert {c.arm for c in cells} == set(HARNESS_ARMS)
    assert design.native_cells()[0] == Cell("native", "prober", "retail/46", 0) and len(design.native_cells()) == 8
    no_native = design_from_config(with_design(config, arms=["social", "direct"]))
    assert no_native.episode_arms == ("social", "direct") and no_native.native_cells() == []


def test_tasks_are_the_corpus_or_a_subset_of_it(config):
    chosen = design_from_config(with_design(config, tasks=["retail/46", "retail/11"]))
    assert chosen.tasks == ("retail/46", "retail/11") and chosen.tasks_of("retail") == ("46", "11")
    with pytest.raises(InputError, match=r"^config key design\.tasks: \['retail/5'\] are not in the design domains'"):
        design_from_config(with_design(config, tasks=["retail/11", "retail/5"]))
    with pytest.raises(InputError, match=r"^config key design\.tasks: '11' is not a qualified task id"):
        design_from_config(with_design(config, tasks=["11"]))  # an upstream id alone names no domain
    with pytest.raises(InputError, match=r"\['retail/11'\] listed more than once"):
        design_from_config(with_design(config, tasks=["retail/11", "retail/11"]))


def test_the_design_domains_are_registered_once_each(config):
    with pytest.raises(InputError, match=r"^config key domains: unknown domain 'telecom'"):
        design_from_config({**config, "domains": ["retail", "telecom"]})
    with pytest.raises(InputError, match=r"^config key domains: \['retail'\] listed more than once"):
        design_from_config({**config, "domains": ["retail", "retail"]})


def test_the_corpus_is_read_with_its_lock_verified(config, tmp_path, monkeypatch):
    """Each domain's corpus (config/domains/<name>/corpus.yaml) is checked against its locks file."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    monkeypatch.chdir(tmp_path)
    design_from_config(with_design(config, tasks=["retail/11"]))  # the copy is as frozen
    corpus = tmp_path / "config/domains/retail/corpus.yaml"
    corpus.write_text(corpus.read_text() + "# an edit\n")
    with pytest.raises(LockError, match="changed since it was frozen"):
        design_from_config(with_design(config, tasks=["retail/11"]))


def test_the_estimate_and_the_workflow_share_one_tasks_rule(config):
    """The cost estimate reads the design here too: the same tasks, models and arms, and a task
    outside the corpus stops it as it stops the workflow."""
    prices = load_prices(ROOT / "config/prices.yaml")
    for cfg in (config, with_design(config, tasks=["retail/46", "retail/11"], models=["hasty"])):
        est = Estimator(cfg, prices, Assumptions())
        assert est.design == design_from_config(cfg) and est.tasks == list(est.design.tasks)
    with pytest.raises(InputError, match="config key design.tasks"):
        Estimator(with_design(config, tasks=["retail/5"]), prices, Assumptions())


def test_models_are_design_models_or_every_model(config):
    assert design_from_config(with_design(config, models=["hasty", "prober"])).models == ("hasty", "prober")
    with pytest.raises(InputError, match=r"^config key design\.models: \['nosuch'\] are not keys of models"):
        design_from_config(with_design(config, models=["prober", "nosuch"]))
    # The statistics' model order reads configs that may lack sections.
    assert design_models({}) == () and design_models({"models": {"a": "scripted:x"}}) == ("a",)


def test_an_unknown_arm_names_design_arms(config, tmp_path):
    with pytest.raises(
        InputError,
        match=r"^config key design\.arms: unknown arm\(s\) \['tools'\] \(registered in config/arms.yaml: direct, indirect, social, social\+map, ",
    ):
        design_from_config(with_design(config, arms=["direct", "tools"]))
    # The schema leaves the names to the arm registry; check-config still refuses them, in one line.
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(with_design(config, arms=["direct", "tools"])))
    with pytest.raises(InputError, match="config key design.arms") as err:
        load_config(path)
    assert "\n" not in str(err.value)


def test_no_archive_without_archive_unrepaired(config):
    config["native"]["archive_unrepaired"] = False
    assert design_from_config(config).unrepaired_tasks == ()


def test_record_paths():
    """A cell's record, under its qualified task id (incognita.access.paths lays them out)."""
    assert record_path(Cell("native", "m", "retail/11", 1), "e", "n") == Path("n/m/retail/11/r1.json")
    assert record_path(Cell("direct", "m", "retail/11", 1), "e", "n") == Path("e/direct/m/retail/11/r1.json")
    assert record_path(Cell("social", "m", "retail/11", 0)) == Path("results/episodes/social/m/retail/11/r0.json")
    assert record_path(Cell("native", "m", "retail/11", 0)) == Path("results/native/m/retail/11/r0.json")
