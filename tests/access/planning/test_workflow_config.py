"""`incognita check-config` (incognita.access.planning.workflow_config): a bad config stops it with
one line naming the file that sets the key, the key, and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.cli import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)  # the domains' folders and the arm registry are relative paths


def check(path: Path):
    return CliRunner().invoke(main, ["check-config", "--config", str(path)])


def overlay(tmp_path: Path, text: str) -> Path:
    """An overlay beside a copy of config/config.yaml, read over it as check-config reads one."""
    (tmp_path / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return path


def test_a_misspelt_model_setting_names_the_file_the_key_and_the_spelling(tmp_path):
    path = overlay(tmp_path, "models:\n  stub:\n    spec: openai:m\n    temprature: 1\n")
    out = check(path)
    assert out.exit_code == 2
    assert out.output == f"error: {path}: models.stub.temprature: unknown key (did you mean 'temperature'?)\n"


def test_a_repeated_task_names_the_task_and_the_file(tmp_path):
    path = overlay(tmp_path, "design:\n  tasks: [retail/11, retail/46, retail/11]\n")
    out = check(path)
    assert out.exit_code == 2
    assert out.output == f"error: {path}: config key design.tasks: ['retail/11'] listed more than once\n"


def test_a_key_the_base_sets_is_named_in_the_base(tmp_path):
    path = overlay(tmp_path, "design:\n  repetitions: 1\n")
    base = tmp_path / "config.yaml"
    base.write_text(base.read_text().replace("  budget: 300", "  budget: 0"))
    out = check(path)
    assert out.exit_code == 2 and out.output.startswith(
        f"error: {base}: design.budget: 0 is less than the minimum of 1"
    )


def test_the_shipped_configs_pass():
    for name in ("config.yaml", "smoke.yaml", "paper.yaml", "two_domains.yaml", "unbundle.yaml", "local.yaml"):
        out = check(ROOT / "config" / name)
        assert out.exit_code == 0, (name, out.output)


def test_the_default_runs_both_domains_and_the_paper_stays_retail():
    from incognita.access.planning.workflow_config import load_config

    assert load_config(ROOT / "config/config.yaml")["domains"] == ["retail", "airline"]
    assert load_config(ROOT / "config/paper.yaml")["domains"] == ["retail"]


def test_the_two_domain_design_is_the_papers_over_both_domains():
    """config/two_domains.yaml repeats config/paper.yaml's entries (a config file cannot extend
    another): every key but `domains` must stay equal, so the paper's models change in both."""
    from incognita.access.cells import design_from_config
    from incognita.access.planning.workflow_config import load_config

    paper, both = load_config(ROOT / "config/paper.yaml"), load_config(ROOT / "config/two_domains.yaml")
    assert both["domains"] == ["retail", "airline"]
    assert {**both, "domains": paper["domains"]} == paper
    tasks = design_from_config(both).tasks
    assert {t.split("/")[0] for t in tasks} == {"retail", "airline"}
    assert [t for t in tasks if t.startswith("retail/")] == list(design_from_config(paper).tasks)
