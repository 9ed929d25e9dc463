"""The do-nothing check: which tasks an agent that does nothing already passes.

A task whose success criterion holds at the start (no write, nothing the customer must be
told) measures nothing: an agent that gives up at once passes it. The corpus stage
excludes such tasks (issue #12). To find them we run the `idle` scripted profile
(config/scripted_agents.yaml, `gives_up_at_once: true`) on every task, once per arm,
through the same harness and evaluation as the experiment: it asks nobody for anything,
tells the customer it cannot help and closes the episode. It runs natively too, in the
upstream harness (`run_native`).

The table (results/reference/idle.tsv) has one row per task and arm: whether the episode
succeeded, its channels, and its turns. It depends on the cards, the golden files (for
the gold hash), the database, the partition, the prompts and the profile; it is
deterministic, because every participant is scripted.
"""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from incognita.access.episodes.harness import DomainInputs
from incognita.access.selection.profile_check import flag, outcome_columns, write_tsv
from incognita.access.taxonomy import HARNESS_ARMS, NATIVE
from incognita.common.io import InputError

PROFILE = "idle"
HEADER = ["task", "arm", "success", "channel_db", "channel_communicate", "turns", "termination"]


def run_arms(
    tasks: list[str],
    cards_dir: str | Path,
    golden_dir: str | Path,
    *,
    inputs: DomainInputs,
    prompts_dir: str,
    scripted_agents: str,
    arms=HARNESS_ARMS,
    seed: int = 0,
    budget: int = 300,
) -> list[dict]:
    """One idle episode per task (upstream ids of the domain of `inputs`) and arm (our harness); the rows of the table."""
    from incognita.access.episodes.harness import profile_episodes

    rows = []
    for task, arm, _golden, record in profile_episodes(
        PROFILE,
        "do-nothing check",
        tasks,
        cards_dir,
        golden_dir,
        arms=tuple(arms),
        inputs=inputs,
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
        seed=seed,
        budget=budget,
    ):
        rows.append(
            {
                "task": task,
                "arm": arm,
                **outcome_columns(record),
                "turns": str(record["turns"]),
                "termination": record["termination"],
            }
        )
    return rows


def run_native(
    domain: str,
    tasks: list[str],
    cards_dir: str | Path,
    golden_dir: str | Path,
    *,
    source_dir: str | Path,
    scripted_agents: str,
    seed: int = 0,
    log=print,
) -> list[dict]:
    """One idle run per task (upstream ids of `domain`) in the upstream harness
    (incognita.access.native.native_run); the cards, golden files and source copy are the domain's folders."""
    from incognita.access.domain import qualify, split_task
    from incognita.access.native.native_results import native_trial
    from incognita.access.native.native_run import NativeJob, NativeSettings, run_job

    with tempfile.TemporaryDirectory(prefix="incognita-idle-") as tmp:
        out_dir = Path(tmp) / NATIVE
        job = NativeJob(
            model=PROFILE,
            spec=f"scripted:{PROFILE}",
            customer="scripted:customer",
            tasks=tuple(qualify(domain, t) for t in tasks),
            reps=1,
            seed=seed,
            arms=(NATIVE,),
            models_order=(PROFILE,),
            # The job reads <root>/<domain>/...: each of these folders is its root's domain folder.
            source_root=str(Path(source_dir).parent),
            cards_root=str(Path(cards_dir).parent),
            golden_root=str(Path(golden_dir).parent),
            profiles=scripted_agents,
            out_dir=str(out_dir),
            archive_unrepaired=False,
        )
        rows = []
        for path in run_job(job, NativeSettings(), log=lambda _line: None):
            trial = native_trial(path)
            if trial["error"]:
                # The harness could not finish or score the run (upstream's evaluator raises on an
                # environment assertion that names a record the run never made): the agent that
                # did nothing did not pass it. Said here and in the table, never silently.
                log(f"task {trial['task']}, native: the idle run broke, counted as not passed: {trial['error']}")
                rows.append(
                    {
                        "task": split_task(trial["task"])[1],
                        "arm": NATIVE,
                        "success": "false",
                        "channel_db": "",
                        "channel_communicate": "",
                        "turns": str(trial["agent_actions"]),
                        "termination": "error",
                    }
                )
                continue
            nan_free = {
                k: (None if trial[k] != trial[k] else trial[k])
                for k in ("success", "channel_db", "channel_communicate")
            }
            rows.append(
                {
                    "task": split_task(trial["task"])[1],
                    "arm": NATIVE,
                    **{k: flag(v) for k, v in nan_free.items()},
                    "turns": str(trial["agent_actions"]),
                    "termination": trial["termination"],
                }
            )
    return rows


def write_table(rows: list[dict], out: str | Path) -> None:
    write_tsv(rows, HEADER, out)


def passed(path: str | Path) -> dict[str, list[str]]:
    """Task -> the arms in which the idle agent succeeded, from a table written by `write_table`."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found; build it with `incognita idle` (the do-nothing check)")
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t")
    if reader.fieldnames != HEADER:
        raise InputError(f"{path}: header {reader.fieldnames} is not {HEADER}")
    out: dict[str, list[str]] = {}
    for n, row in enumerate(reader, start=2):
        if row["success"] not in ("true", "false"):
            raise InputError(f"{path}: line {n}: success = {row['success']!r}, expected true or false")
        if row["success"] == "true":
            out.setdefault(row["task"], []).append(row["arm"])
    return out
