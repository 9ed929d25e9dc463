"""Write the viewer's static site: the pages and assets, the index, one data file per page.

Layout of <out> (docs/viewer.md):
  index.html, assets/*.{js,css}        the page and its code, copied from the package
  data/index.js                        every trial and run, the task summaries, the access
                                       family's names (incognita.access.taxonomy.as_json)
  data/episodes/<arm>/<model>/<domain>/<id>/r<rep>.js   one episode (our arms) or native run
  data/runs/<task>/<condition>/<model>/<design>/s<seed>.js   one CollabSim run
  data/runs/<task>/<condition>/<model>/<design>/s<seed>.observations.js   what its agents saw

Data files are scripts calling `viewerData(key, payload)`: pages opened from file:// may not
fetch() local JSON, but may load scripts. The site is written to a temporary sibling and
moved into place, so a failed build never leaves half a site behind.
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from incognita.access import taxonomy
from incognita.access.cells import Cell, record_path
from incognita.access.domain import qualify, split_task
from incognita.collabsim.paths import RunKey, finished_runs
from incognita.common.io import InputError, read_json
from incognita.viewer import VIEWER_VERSION
from incognita.viewer import collabsim_pages as collabsim
from incognita.viewer.episode_page import episode_page, service_side
from incognita.viewer.native_page import native_page
from incognita.viewer.search_index import SearchIndex
from incognita.viewer.trial_index import (
    index_table,
    load_trials,
    task_summaries,
    trial_detail,
)


@dataclass
class Inputs:
    trials: Path
    references: dict[str, Path]  # domain -> its coordination reference
    episodes: Path
    native: Path
    partitions: dict[str, Path]  # domain -> who holds its tools: the lanes of each arm
    collabsim: Path | None = None  # results/collabsim, or None to leave CollabSim out
    arm_registry: Path = Path("config/arms.yaml")  # which holder map each arm uses


def _names(rows: list[dict]) -> dict:
    """The family's names for the pages: the paper's arms, then any other registered arm the
    trials have (in the trials table's order, the registry's)."""
    names = taxonomy.as_json()
    names["arms"] += [a for a in dict.fromkeys(r["arm"] for r in rows) if a not in names["arms"]]
    return names


def script(key: str, payload: Any) -> str:
    """A data file's text. ASCII-only JSON, so the file reads the same under any charset."""
    return f"viewerData({json.dumps(key)},{json.dumps(payload, separators=(',', ':'))});\n"


def compressed(payload: Any) -> dict:
    """A page's payload as the site ships it: its JSON gzip-compressed, in base64. The page code
    decompresses it on load (util.js, V.load); pages shrink about fivefold, so a site of
    thousands of trials stays copyable (docs/viewer.md, "Size and speed")."""
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return {"gzip_json": base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode()}


def _write(out: Path, rel: str, key: str, payload: Any, compress: bool = False) -> None:
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script(key, compressed(payload) if compress else payload), encoding="ascii")


def _source(inputs: Inputs, row: dict) -> Path:
    """The record behind a trial row, at the path the workflow writes it to."""
    path = record_path(Cell(row["arm"], row["model"], row["task"], row["rep"]), inputs.episodes, inputs.native)
    if not path.is_file():
        raise InputError(f"{path}: record of trial {row['arm']}/{row['model']}/{row['task']}/r{row['rep']} not found")
    return path


def _trial_pages(inputs: Inputs, rows: list[dict], reference: dict, out: Path, search: SearchIndex) -> None:
    service = {d: service_side(path, inputs.arm_registry) for d, path in inputs.partitions.items()}
    for row in rows:
        detail = trial_detail(row)
        if row["arm"] == taxonomy.NATIVE:
            page = native_page(_source(inputs, row), detail)
        else:
            lanes = service[split_task(row["task"])[0]].get(row["arm"], [])
            page = episode_page(_source(inputs, row), detail, reference["tasks"][row["task"]], lanes)
        rel = f"data/episodes/{row['arm']}/{row['model']}/{row['task']}/r{row['rep']}.js"
        _write(out, rel, page["key"], page, compress=True)
        search.add_page(page["key"], rel, page["events"], lambda i, e: f"e{i}")


def _run_pages(runs: list[Path], out: Path, search: SearchIndex) -> None:
    for run in runs:
        rel = f"data/runs/{RunKey.from_dir(run).rel}"
        page = collabsim.run_page(run)
        _write(out, f"{rel}.js", page["key"], page, compress=True)
        search.add_page(page["key"], f"{rel}.js", page["events"], _run_event_link)
        if page["observations"] is not None:
            seen = collabsim.observations_page(run)
            _write(out, f"{rel}.observations.js", seen["key"], seen)


def _run_event_link(i: int, event: dict) -> str:
    """A CollabSim event's link part; a probe is drawn inside the row of the event it follows."""
    if event.get("kind") in ("probe", "probe_error") and event.get("follows") is not None:
        return f"ev{event['follows']}"
    return f"ev{event['id']}"


def _copy_assets(out: Path) -> None:
    assets = resources.files("incognita.viewer") / "assets"
    (out / "assets").mkdir(parents=True)
    for item in assets.iterdir():
        if item.name == "index.html":
            (out / "index.html").write_bytes(item.read_bytes())
        elif item.name.endswith((".js", ".css")):
            (out / "assets" / item.name).write_bytes(item.read_bytes())


def _reference(paths: dict[str, Path]) -> dict:
    """The domains' coordination references as one, its tasks under their qualified ids."""
    tasks = {}
    for domain, path in paths.items():
        if not path.is_file():
            raise InputError(f"{path}: coordination reference not found")
        reference = read_json(path)
        if not isinstance(reference, dict) or "tasks" not in reference:
            raise InputError(f"{path}: not a coordination reference (no tasks)")
        tasks.update({qualify(domain, local): entry for local, entry in reference["tasks"].items()})
    return {"tasks": tasks}


def trial_domains(trials: Path) -> list[str]:
    """The domains a trials table's tasks belong to, in registry order."""
    from incognita.access.domain import REGISTRY

    named = {split_task(r["task"])[0] for r in load_trials(trials)}
    return [d for d in REGISTRY if d in named]


def build(inputs: Inputs, out: str | Path) -> dict:
    """Build the site into `out` (replacing it) and return what it holds."""
    out = Path(out)
    rows = load_trials(inputs.trials)
    reference = _reference(inputs.references)
    missing = sorted({r["task"] for r in rows if r["arm"] != taxonomy.NATIVE} - set(reference["tasks"]))
    if missing:
        where = ", ".join(str(p) for p in inputs.references.values())
        raise InputError(f"{where}: task(s) {', '.join(missing)} of the trials table are in no coordination reference")
    for row in rows:  # a native row has no level in the table; the level is the task's, in every arm
        if row.get("level") is None and row["task"] in reference["tasks"]:
            row["level"] = reference["tasks"][row["task"]].get("level")
    runs = finished_runs(inputs.collabsim) if inputs.collabsim else []
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _copy_assets(tmp)
        search = SearchIndex()
        _trial_pages(inputs, rows, reference, tmp, search)
        if runs:
            _run_pages(runs, tmp, search)
        _write(tmp, "data/search.js", "search", search.payload(), compress=True)  # loaded on the first search
        index = {
            "version": VIEWER_VERSION,
            "trials": index_table(rows),
            "tasks": task_summaries(reference, {r["task"] for r in rows}, {r["arm"] for r in rows}),
            "runs": collabsim.runs_index(inputs.collabsim, runs) if runs else None,
            "taxonomy": _names(rows),  # the arms and failure types the pages lay out
        }
        _write(tmp, "data/index.js", "index", index)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return {"trials": len(rows), "runs": len(runs), "bytes": site_size(out)}


def site_size(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
