"""Independent calls, several at once, their results in the order they were asked for.

Who uses it: a job's episode cells (access.episodes.harness.run_blocks), native runs
(access.native.native_run.run_job) and CollabSim's simultaneous turns and probes when their
participants wait on an API; the three commands share the `--workers` option defined here. The invariant: the
results come back in the calls' order whatever order they finish in, so what a caller writes
does not depend on timing; the first failure stops the rest (calls already running finish,
queued ones never start) and is raised as it was, as a one-at-a-time loop would raise it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Calls one job keeps in flight by default when its participants call an API (episodes and
# native cells, CollabSim's simultaneous turns): a job spends nearly all its time waiting for
# answers, and the endpoint's shared pace (incognita.common.pacing) bounds what all jobs send.
JOB_WORKERS = 16
WORKERS_ENV = "INCOGNITA_WORKERS"  # sets the commands' --workers, so a workflow run can change it


def resolve_workers(workers: int, calls_api: bool) -> int:
    """--workers 0: JOB_WORKERS when a participant calls an API (`calls_api`: the caller asks its
    entries, incognita.common.backends.entry.calls_api), else 1 (scripted participants are
    CPU-bound, and threads would only contend for the interpreter)."""
    if workers:
        return workers
    return JOB_WORKERS if calls_api else 1


def workers_option(what: str):
    """The commands' --workers (what: "cells", "runs", "model calls of a run")."""
    import click

    return click.option(
        "--workers",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        envvar=WORKERS_ENV,
        help=f"{what} at once (0: {JOB_WORKERS} when a participant calls an API, else 1; the endpoint's "
        f"shared pace still bounds the calls in flight; the records are the same for any value); the "
        f"workflow's jobs take it from ${WORKERS_ENV}",
    )


def run_in_order(calls: list[Callable[[], T]], workers: int, name: str = "call") -> list[T]:
    """Run `calls`, at most `workers` at once (1: one after another, no threads)."""
    if workers <= 1 or len(calls) <= 1:
        return [call() for call in calls]
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    with ThreadPoolExecutor(max_workers=min(workers, len(calls)), thread_name_prefix=name) as pool:
        futures = [pool.submit(call) for call in calls]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in done if f.exception() is not None), None)
        if failed is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            raise failed.exception()
    return [f.result() for f in futures]
