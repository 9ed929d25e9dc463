"""bench/compare_trees.py: wall-clock fields are ignored, every other difference is listed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_trees", ROOT / "bench" / "compare_trees.py")
compare_trees = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_trees)


def _tree(root: Path, record: dict, table: str, extra: str | None = None) -> Path:
    (root / "episodes").mkdir(parents=True)
    (root / "episodes" / "r0.json").write_text(json.dumps(record))
    (root / "manifest.tsv").write_text(table)
    if extra:
        (root / extra).write_text("x")
    return root


def test_wall_clock_fields_alone_are_no_difference(tmp_path):
    a = _tree(
        tmp_path / "a",
        {"success": True, "wall_time_s": 1.5, "events": [{"timestamp": "t1"}]},
        "task\twall_time_s\n1\t0.5\n",
    )
    b = _tree(
        tmp_path / "b",
        {"success": True, "wall_time_s": 9.0, "events": [{"timestamp": "t2"}]},
        "task\twall_time_s\n1\t7.0\n",
    )
    assert compare_trees.compare(a, b) == ([], [], [], 2)
    assert compare_trees.main([str(a), str(b)]) == 0


def test_content_and_missing_files_are_listed(tmp_path, capsys):
    a = _tree(tmp_path / "a", {"success": True, "wall_time_s": 1.5}, "task\n1\n", extra="only_a.txt")
    b = _tree(tmp_path / "b", {"success": False, "wall_time_s": 1.5}, "task\n2\n")
    only_a, only_b, differ, common = compare_trees.compare(a, b)
    assert (only_a, only_b, differ, common) == (["only_a.txt"], [], ["episodes/r0.json", "manifest.tsv"], 2)
    assert compare_trees.main([str(a), str(b)]) == 1
    assert "differs: manifest.tsv" in capsys.readouterr().out


def test_random_run_ids_and_viewer_scripts(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, uid, text in (
        (a, "fa78b945-f5dc-4b59-bd70-6bef03fff469", "hi"),
        (b, "add5fbde-461a-44b4-9fe2-3116e81c93ed", "hi"),
    ):
        root.mkdir()
        (root / "native.json").write_text(json.dumps({"simulations": [{"id": uid, "text": text}]}))
        (root / "r0.js").write_text(
            f'viewerData("k",{json.dumps({"id": uid, "wall_time_s": len(str(root)), "text": text})});\n'
        )
    assert compare_trees.compare(a, b) == ([], [], [], 2)
    (b / "r0.js").write_text('viewerData("k",{"text":"changed"});\n')
    assert compare_trees.compare(a, b)[2] == ["r0.js"]
    # A compressed page (the viewer's) is compared by its content, wall-clock fields aside.
    from incognita.viewer.site import compressed

    for root, seconds, text in ((a, 1.5, "hi"), (b, 9.0, "hi")):
        (root / "r0.js").write_text(
            f'viewerData("k",{json.dumps(compressed({"wall_time_s": seconds, "text": text}))});\n'
        )
    assert compare_trees.compare(a, b)[2] == []
    (b / "r0.js").write_text(f'viewerData("k",{json.dumps(compressed({"wall_time_s": 1.5, "text": "bye"}))});\n')
    assert compare_trees.compare(a, b)[2] == ["r0.js"]
