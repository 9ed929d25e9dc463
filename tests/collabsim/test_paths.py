"""incognita.collabsim.paths: the one place CollabSim's result paths and its run key are spelled.

The scans fail when the fact is restated elsewhere in the package, the rules or the benchmarks:
the results root as a string literal, a run directory built from `s{seed}` by hand, or a run
directory's parts or root found by counting its parts or parents. Prose (comments, docstrings)
may name them.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from collabsim_paths import CONFIG, ROOT

from incognita.collabsim.commands import collabsim
from incognita.collabsim.paths import (
    KEY_FIELDS,
    MANIFEST,
    RESULTS,
    Cell,
    RunKey,
    finished_runs,
)
from incognita.common.io import InputError

PATHS_MODULE = ROOT / "incognita" / "collabsim" / "paths.py"
CELL = Cell("daytrader", "baseline", "scripted", "persona")
RESTATED_ROOT = "results/collabsim"
SEED_DIR = re.compile(r"(^|/)s\{")  # in a string or an f-string's template: .../s{seed}
SMK_SEED_DIR = re.compile(r"""(/|\bf?["'])s\{""")  # the same in a rule file's code
SMK_PARENTS = re.compile(r"\.parents\[")


def counted_parts(path: Path) -> list[int]:
    """Lines that index a path's parts or parents five or six deep: a run directory (five names
    under runs/) parsed or its root recovered by counting."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr in ("parts", "parents")
        and {n.value for n in ast.walk(node.slice) if isinstance(n, ast.Constant)} & {5, 6}  # -5 is USub(5)
    )


def python_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in the module's code: docstrings and other bare string
    statements are prose and left out; an f-string is its template, each value as {}."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            template = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            found.append((node.lineno, template))
    return sorted(found)


def rule_code(path: Path) -> list[tuple[int, str]]:
    """(line, text) of a Snakemake file with its comments blanked out."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col] + "\n"
    return list(enumerate(lines, 1))


def restatements(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        if path.suffix == ".py":
            for line, text in python_strings(path):
                if RESTATED_ROOT in text:
                    found.append(f"{path}:{line}: the results root spelled: {text!r}")
                if SEED_DIR.search(text):
                    found.append(f"{path}:{line}: a run directory built by hand: {text!r}")
            for line in counted_parts(path):
                found.append(f"{path}:{line}: a run directory's parts counted by hand")
        else:
            for line, text in rule_code(path):
                if RESTATED_ROOT in text:
                    found.append(f"{path}:{line}: the results root spelled: {text.strip()}")
                if SMK_SEED_DIR.search(text):
                    found.append(f"{path}:{line}: a run directory built by hand: {text.strip()}")
                if SMK_PARENTS.search(text):
                    found.append(f"{path}:{line}: a root recovered by counting parents: {text.strip()}")
    return found


def sources() -> list[Path]:
    files = [
        *(ROOT / "incognita").rglob("*.py"),
        *(ROOT / "bench").glob("*.py"),
        *(ROOT / "rules").glob("*.smk"),
        ROOT / "Snakefile",
    ]
    return sorted(p for p in files if p != PATHS_MODULE)


def test_the_results_paths_and_run_directories_are_spelled_only_in_the_paths_module():
    found = restatements(sources())
    assert not found, "use incognita.collabsim.paths instead:\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_restatement(tmp_path):
    py = tmp_path / "restates.py"
    py.write_text(
        '"""Prose may say results/collabsim/runs/<task>/s<seed>."""\n'
        "# so may comments: results/collabsim\n"
        'OUT = "results/collabsim/stats"\n'
        'def run_dir(root, task, seed):\n    return f"{root}/runs/{task}/s{seed}"\n'
        'LEAF = f"s{seed}"\n'
        'LOG = f"{task} s{seed}: done"\n'  # a message, not a path
        "TASK = run.parts[-5]\n"
        "ROOT = run.parents[5]\n"
        "PACKAGE = Path(__file__).parents[1]\n"  # not a run directory
    )
    smk = tmp_path / "restates.smk"
    smk.write_text(
        "# results/collabsim in a comment is prose\n"
        "rule r:\n"
        "    output:\n"
        '        f"{ROOT}/runs/{{cs_task}}/s{{seed}}/events.jsonl",\n'
        "    params:\n"
        "        out=lambda w, output: Path(output[0]).parents[6],\n"
        '        root="results/collabsim",\n'
    )
    found = restatements([py, smk])
    assert [f.split(": ", 1)[0].rsplit(":", 1)[1] for f in found] == ["3", "5", "6", "8", "9", "4", "6", "7"], found


def test_a_run_directory_is_its_key_under_the_runs_folder():
    key = CELL.run(1)
    assert key.dir() == Path("results/collabsim/runs/daytrader/baseline/scripted/persona/s1")
    assert key.dir("/scratch/out") == Path("/scratch/out/runs/daytrader/baseline/scripted/persona/s1")
    assert key.rel == "daytrader/baseline/scripted/persona/s1"
    assert RESULTS == "results/collabsim"


@pytest.mark.parametrize("root", ["results/collabsim", "/scratch/out", ".", "elsewhere/runs"])
@pytest.mark.parametrize("seed", [0, 1, 20261130])
def test_a_run_key_round_trips_through_its_directory(root, seed):
    key = Cell("map_task", "group_size_9", "gpt-4.1_mini", "theory").run(seed)
    assert RunKey.from_dir(key.dir(root)) == key
    assert RunKey.from_dir(f"{key.dir(root)}/") == key


def test_a_run_key_round_trips_through_its_dict():
    key = CELL.run(3)
    assert list(key.as_dict()) == list(KEY_FIELDS) == ["task", "condition", "model", "design", "seed"]
    assert RunKey.from_dict(key.as_dict()) == key
    assert RunKey.from_dict({**key.as_dict(), "seed": np.int64(3), "variable": "x"}) == key  # a table row


def test_a_run_is_filed_under_the_key_its_manifest_carries(tmp_path):
    args = ["run", str(CONFIG / "daytrader/baseline.yaml"), "--seeds", "2", "--out-root", str(tmp_path)]
    result = CliRunner().invoke(collabsim, args)
    assert result.exit_code == 0, result.output
    (run,) = finished_runs(tmp_path)
    manifest = json.loads((run / MANIFEST).read_text())
    assert RunKey.from_dir(run) == RunKey.from_dict(manifest) == CELL.run(2)


@pytest.mark.parametrize(
    "path, problem",
    [
        ("results/collabsim/runs/daytrader/baseline/scripted/s1", "no runs/ above the cell"),  # a level missing
        ("persona/s1", "no runs/ above the cell"),
        ("results/collabsim/runs/daytrader/baseline/scripted/persona/seed1", "'seed1' is not a seed"),
        ("results/collabsim/runs/daytrader/baseline/scripted/persona/s01", "'s01' is not a seed"),
        ("results/collabsim/runs/daytrader/baseline/scripted/persona/s-1", "'s-1' is not a seed"),
        ("results/collabsim/runs/../baseline/scripted/persona/s1", "bad task '..'"),
    ],
)
def test_a_malformed_run_directory_names_the_path_and_what_is_wrong(path, problem):
    with pytest.raises(InputError) as exc:
        RunKey.from_dir(path)
    message = str(exc.value)
    assert message.startswith(f"{Path(path)}: not a CollabSim run directory") and problem in message, message


def test_the_expected_layout_is_named_when_a_run_directory_is_malformed():
    with pytest.raises(InputError, match=re.escape("expected <root>/runs/<task>/<condition>/<model>/<design>/s<seed>")):
        RunKey.from_dir("results/collabsim/runs/daytrader/baseline/scripted/persona/latest")


@pytest.mark.parametrize(
    "make, problem",
    [
        (lambda: Cell("day/trader", "baseline", "scripted", "persona"), "bad task 'day/trader'"),
        (lambda: Cell("daytrader", "", "scripted", "persona"), "bad condition ''"),
        (lambda: Cell("daytrader", "baseline", None, "persona"), "bad model None"),
        (lambda: CELL.run(-1), "bad seed -1"),
        (lambda: CELL.run("1"), "bad seed '1'"),
        (lambda: CELL.run(True), "bad seed True"),
        (lambda: RunKey.from_dict({**CELL.run(1).as_dict(), "seed": 1.5}), "bad seed 1.5"),
    ],
)
def test_a_key_that_names_no_directory_is_refused(make, problem):
    with pytest.raises(InputError, match=re.escape(problem)):
        make()


def test_a_manifest_without_a_key_field_names_the_field():
    ids = CELL.run(1).as_dict()
    del ids["model"]
    with pytest.raises(KeyError, match="model"):
        RunKey.from_dict(ids)


def test_finished_runs_are_the_run_directories_with_a_manifest(tmp_path):
    done, started = CELL.run(1).dir(tmp_path), CELL.run(2).dir(tmp_path)
    for run in (done, started):
        run.mkdir(parents=True)
    (done / MANIFEST).write_text("{}")
    (tmp_path / "runs" / MANIFEST).write_text("{}")  # not in a run directory
    assert finished_runs(tmp_path) == [done]
