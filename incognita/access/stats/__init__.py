"""Statistics of the paper (Sections 5-6, Appendix B) over the trials table.

Modules: `estimator` (task-level means, paired t intervals), `signflip` (exact task-blocked
sign-flip test, Holm), `power` (corpus-size extrapolation; `power_command` is the CLI's `power`),
`splithalf` (split-half concordance), `interpretation` (the frozen interpretation table),
`tables` (every output table), `report` (the pre-specified analysis in words), `markdown`,
`synthetic` (a contract-shaped synthetic trials table for tests and benchmarks) and `run`
(`run_stats`, which writes everything).

The package import is light on purpose: the CLI imports `power_command` at start-up,
so pandas and scipy are imported only by the functions that need them.
"""

from __future__ import annotations

__all__ = ["power_command", "required_tasks", "run_stats"]


def __getattr__(name: str):
    if name == "run_stats":
        from incognita.access.stats.stats_stage import run_stats

        return run_stats
    if name in ("required_tasks", "power_command"):
        from incognita.access.stats import power as _power

        return getattr(_power, name)
    raise AttributeError(f"module 'incognita.access.stats' has no attribute {name!r}")
