"""Independent calls, several at once, their results in the order they were asked for.

Who uses it: a job's episode cells (access.episodes.harness.run_blocks) and native runs
(access.native.native_run.run_job) when their participants wait on an API. The invariant: the
results come back in the calls' order whatever order they finish in, so what a caller writes
does not depend on timing; the first failure stops the rest (calls already running finish,
queued ones never start) and is raised as it was, as a one-at-a-time loop would raise it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


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
