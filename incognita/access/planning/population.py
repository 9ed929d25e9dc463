"""Populations for `incognita plan` (incognita.access.planning.design_planner): where a simulated
task's success probabilities come from, a pilot's trials table or an assumptions file.

Who reads it: the design planner, which draws simulated designs from a population, and
`incognita plan`, which builds one (`pilot_population`, `load_assumptions`). The two sources,
and how an assumed cell's intercept is solved so that its rate is the mean over tasks, are set
out in the planner's docstring and in docs/statistics.md ("Planning a design").

A pilot of several domains is resampled within domains: a simulated design of n tasks takes
from each domain a share of n proportional to its pilot tasks (largest remainders, ties by
name), drawn with replacement from that domain's tasks only, and is analysed with the domain as
a stratum, as the statistics stage pools domains (incognita.access.stats.estimator.stratified).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from incognita.access.stats.estimator import domain_of
from incognita.access.stats.power import parse_gap
from incognita.access.taxonomy import ALL_ARMS
from incognita.common.io import InputError, read_yaml

ARMS = ALL_ARMS  # the paper's arms: first on every arm axis, then any other arm a population has


def arm_axis(found) -> tuple[str, ...]:
    """A population's arm axis: the paper's arms, then the others in the order they were found."""
    found = list(dict.fromkeys(map(str, found)))
    return (*ARMS, *(a for a in found if a not in ARMS))


_GH = np.polynomial.hermite_e.hermegauss(24)  # nodes and weights for expectations over N(0, 1)
_GH_NODES, _GH_WEIGHTS = _GH[0], _GH[1] / _GH[1].sum()
# The same on three independent normals (task effect, two models' interaction effects), flattened.
_GH3 = [g.ravel() for g in np.meshgrid(_GH_NODES, _GH_NODES, _GH_NODES, indexing="ij")]
_GH3_WEIGHTS = np.einsum("i,j,k->ijk", _GH_WEIGHTS, _GH_WEIGHTS, _GH_WEIGHTS).ravel()


# --- populations ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # arrays inside: identity, not value, equality
class Population:
    """Success probabilities of simulated tasks, per arm (`arms` order) and model."""

    kind: str  # "pilot" or "assumed"
    models: tuple[str, ...]
    source: str
    probs: np.ndarray | None = None  # pilot: (tasks, arms, models) observed shares, NaN where unobserved
    rates: np.ndarray | None = None  # assumed: (arms, models) success rates, NaN where not given
    tau: float = 0.0
    interaction: float = 0.0
    notes: tuple[str, ...] = field(default=())
    arms: tuple[str, ...] = ARMS  # the arm axis of `probs` and `rates` (arm_axis)
    strata: tuple[str, ...] = ()  # pilot: each task's domain ("" for an unqualified id)
    _parts: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def has(self, arm: str, model: str) -> bool:
        if arm not in self.arms:
            return False
        a, m = self.arms.index(arm), self.models.index(model)
        if self.kind == "pilot":
            return bool(np.isfinite(self.probs[:, a, m]).any())
        return bool(np.isfinite(self.rates[a, m]))

    def has_any(self, arm: str) -> bool:
        return any(self.has(arm, m) for m in self.models)

    @property
    def domains(self) -> tuple[str, ...]:
        """The pilot's domains, by name (one, or none for assumed rates: nothing to stratify)."""
        return tuple(sorted(set(self.strata)))

    def allocation(self, n_tasks: int) -> dict[str, int]:
        """Tasks per domain in a simulated design of `n_tasks`: proportional to the pilot's tasks of
        each domain, the remainders to the largest fractions (ties by name)."""
        counts = {d: self.strata.count(d) for d in self.domains}
        exact = {d: n_tasks * c / len(self.strata) for d, c in counts.items()}
        take = {d: math.floor(x) for d, x in exact.items()}
        by_rest = sorted(self.domains, key=lambda d: (-(exact[d] - take[d]), d))
        for d in by_rest[: n_tasks - sum(take.values())]:
            take[d] += 1
        return take

    def task_strata(self, n_tasks: int) -> tuple[str, ...] | None:
        """The domain of each simulated task (the order `draw` puts them in); None for one domain."""
        if len(self.domains) <= 1:
            return None
        return tuple(d for d, k in self.allocation(n_tasks).items() for _ in range(k))

    def draw(self, rng: np.random.Generator, sims: int, n_tasks: int) -> np.ndarray:
        """Success probabilities of `sims` x `n_tasks` simulated tasks: (sims, tasks, arms, models)."""
        if self.kind == "pilot":
            if len(self.domains) <= 1:
                return self.probs[rng.integers(len(self.probs), size=(sims, n_tasks))]
            labels = np.asarray(self.strata, dtype=object)
            picks = []
            for d, k in self.allocation(n_tasks).items():  # each domain's share, from its own tasks
                rows = np.flatnonzero(labels == d)
                picks.append(rows[rng.integers(len(rows), size=(sims, k))])
            return self.probs[np.concatenate(picks, axis=1)]
        z = rng.standard_normal((sims, n_tasks, 1, 1))
        w = rng.standard_normal((sims, n_tasks, 1, len(self.models)))
        return special.expit(self.intercepts()[None, None] + self.tau * z + self.interaction * w)

    def intercepts(self) -> np.ndarray:
        if "b" not in self._parts:  # solved once per population
            self._parts["b"] = intercepts(self.rates, math.hypot(self.tau, self.interaction))
        return self._parts["b"]

    def moments(self, x: tuple[str, str], y: tuple[str, str], n_reps: int) -> tuple[float, float]:
        """Mean and SD of one simulated task's difference of task means, cell x minus cell y
        ((arm, model) each): the inputs `incognita power` would need for this comparison. The
        variance is the binomial part E[px(1-px) + py(1-py)] / n_reps plus Var(px - py)."""
        if (x, y) not in self._parts:
            self._parts[(x, y)] = self._moment_parts(x, y)
        mean, within, between = self._parts[(x, y)]
        return mean, math.sqrt(max(within / n_reps + between, 0.0))

    def _moment_parts(self, x: tuple[str, str], y: tuple[str, str]) -> tuple[float, float, float]:
        (ax, mx), (ay, my) = ((self.arms.index(a), self.models.index(m)) for a, m in (x, y))
        if self.kind == "pilot":
            px, py = self.probs[:, ax, mx], self.probs[:, ay, my]
            keep = np.isfinite(px) & np.isfinite(py)
            px, py = px[keep], py[keep]
            weights = np.full(len(px), 1 / max(len(px), 1))
            labels = np.asarray(self.strata, dtype=object)[keep] if self.strata else None
        else:
            b, (z, w1, w2), weights = self.intercepts(), _GH3, _GH3_WEIGHTS
            wy = w1 if my == mx else w2  # one model's interaction effect is shared by its arms
            px = special.expit(b[ax, mx] + self.tau * z + self.interaction * w1)
            py = special.expit(b[ay, my] + self.tau * z + self.interaction * wy)
            labels = None
        if not len(px):
            return float("nan"), float("nan"), float("nan")
        diff = px - py
        mean = float(weights @ diff)
        between = float(weights @ diff**2) - mean**2
        if labels is not None and len(set(labels)) > 1:
            # Resampled within domains, a task varies about its own domain's mean only.
            centre = pd.Series(diff).groupby(labels).transform("mean").to_numpy()
            between = float(weights @ (diff - centre) ** 2)
        return mean, float(weights @ (px * (1 - px) + py * (1 - py))), between


def intercepts(rates: np.ndarray, scale: float) -> np.ndarray:
    """Log-odds b per cell with E[expit(b + scale * Z)] = rate, Z standard normal (bisection on
    every cell at once); a rate of 0 or 1 gives -inf or +inf, NaN stays NaN."""
    r = np.asarray(rates, dtype=float)
    inner = np.isfinite(r) & (r > 0) & (r < 1)
    target = np.where(inner, r, 0.5)
    lo, hi = np.full(r.shape, -40.0), np.full(r.shape, 40.0)
    for _ in range(80):  # 80 halvings of 80 log-odds units: far below float resolution
        mid = (lo + hi) / 2
        mean = special.expit(mid[..., None] + scale * _GH_NODES) @ _GH_WEIGHTS
        below = mean < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    b = (lo + hi) / 2
    return np.select([~np.isfinite(r), r <= 0, r >= 1], [np.nan, -np.inf, np.inf], b)


def pilot_population(
    trials: pd.DataFrame,
    models: list[str] | None = None,
    source: str = "trials",
    known_arms=None,
    domains: list[str] | None = None,
) -> Population:
    """The pilot's tasks with the observed success share of each (arm, model); excluded trials
    dropped. Models in the order of `models` (those the table has), then the table's order.
    With `known_arms` (the arm registry's, and native), any other arm is an error. With `domains`
    (the design's), the pilot's tasks must be theirs and each must have some: a plan draws from
    every design domain's tasks. Tasks without a domain (a synthetic table's) are one stratum."""
    missing = [c for c in ("arm", "model", "task", "success") if c not in trials.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {', '.join(missing)}")
    if trials["arm"].isna().any():
        raise InputError(f"{source}: arm: empty value(s)")
    bad = sorted(set(trials["arm"].astype(str)) - set(known_arms)) if known_arms is not None else []
    if bad:
        raise InputError(f"{source}: arm: unknown value(s) {', '.join(bad)} (expected one of {', '.join(known_arms)})")
    excluded = trials["excluded"].astype(bool) if "excluded" in trials.columns else False
    s = trials[~excluded].dropna(subset=["success"]).astype({"task": str, "model": str, "arm": str})
    odd = s.loc[~s["success"].isin([0, 1]), "success"]
    if len(odd):
        raise InputError(f"{source}: success: expected 0/1 on scored trials, found {odd.iloc[0]!r}")
    if s.empty:
        raise InputError(f"{source}: no scored trials to resample")
    present = list(dict.fromkeys(s["model"]))
    first = [m for m in models or () if m in present]  # a config's order, for the models the pilot has
    order = first + [m for m in present if m not in first]
    share = s.groupby(["task", "arm", "model"])["success"].mean()
    tasks = sorted(set(s["task"]))
    strata = tuple(domain_of(t) for t in tasks)
    if domains is not None and any(strata):
        stray = [t for t, d in zip(tasks, strata) if d not in domains]
        if stray:
            raise InputError(f"{source}: task {stray[0]!r} is of no design domain ({', '.join(domains)})")
        absent = [d for d in domains if d not in strata]
        if absent:
            raise InputError(f"{source}: design domain(s) {', '.join(absent)} have no scored trials to resample")
    arms = arm_axis(s["arm"])  # any registered arm the pilot ran
    index = pd.MultiIndex.from_product([tasks, arms, order], names=["task", "arm", "model"])
    probs = share.reindex(index).to_numpy(dtype=float).reshape(len(tasks), len(arms), len(order))
    reps = s.groupby(["task", "arm", "model"]).size()
    note = f"{len(tasks)} tasks, {reps.min()}-{reps.max()} scored repetitions per task and cell"
    if len(set(strata)) > 1:
        per = ", ".join(f"{d} {strata.count(d)}" for d in sorted(set(strata)))
        note += f"; tasks per domain {per}, resampled within domains"
    return Population("pilot", tuple(order), source, probs=probs, notes=(note,), arms=arms, strata=strata)


# --- the assumptions file ------------------------------------------------------------------------

ASSUMPTION_KEYS = ("heterogeneity", "success", "analytic_check")


@dataclass(frozen=True)
class CheckRow:
    """One row of Table 2's inputs for the comparison with `incognita power`."""

    arm: str
    gap_sd: float
    largest_gap: float


@dataclass(frozen=True)
class AnalyticCheck:
    repetitions: int
    power: float
    rows: tuple[CheckRow, ...]


def _number(path: Path, key: str, value: object, low: float, high: float, open_low: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not (low < value if open_low else low <= value) or value > high:
        span = f"{'(' if open_low else '['}{low}, {high}]"
        raise InputError(f"{path}: {key}: expected a number in {span}, got {value!r}")
    return float(value)


def _rate(path: Path, key: str, value: object, open_low: bool = False) -> float:
    """A number in [0, 1], or a fraction such as "41/54" (successes over 18 tasks x 3 repetitions)."""
    if isinstance(value, str):
        try:
            value = parse_gap(value)
        except ValueError:
            pass  # `_number` names the key and the value
    return _number(path, key, value, 0.0, 1.0, open_low)


def _mapping(path: Path, key: str, value: object) -> dict:
    if not isinstance(value, dict) or not value:
        raise InputError(f"{path}: {key}: expected a non-empty mapping, got {value!r}")
    return value


def load_assumptions(path: str | Path, known_arms=None) -> tuple[Population, AnalyticCheck | None]:
    """The assumed population and the optional analytic check, every error naming its key. With
    `known_arms` (the arm registry's, and native), an arm outside them is an error."""
    path = Path(path)
    doc = _mapping(path, "(top level)", read_yaml(path))
    unknown = sorted(set(map(str, doc)) - set(ASSUMPTION_KEYS))
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(ASSUMPTION_KEYS)})")
    het = doc.get("heterogeneity") or {}
    if not isinstance(het, dict) or set(het) - {"tau", "interaction"}:
        raise InputError(f"{path}: heterogeneity: expected a mapping with keys tau and interaction, got {het!r}")
    tau = _number(path, "heterogeneity.tau", het.get("tau", 0.0), 0.0, 10.0)
    interaction = _number(path, "heterogeneity.interaction", het.get("interaction", 0.0), 0.0, 10.0)
    success = _mapping(path, "success", doc.get("success"))
    models = tuple(str(m) for m in success)
    cells = {model: _mapping(path, f"success.{model}", c) for model, c in zip(models, success.values())}
    arms = arm_axis(arm for c in cells.values() for arm in c)  # any registered arm, by its name
    rates = np.full((len(arms), len(models)), np.nan)
    for j, model in enumerate(models):
        for arm, rate in cells[model].items():
            if known_arms is not None and arm not in known_arms:
                raise InputError(
                    f"{path}: success.{model}.{arm}: unknown arm (expected one of {', '.join(known_arms)})"
                )
            rates[arms.index(str(arm)), j] = _rate(path, f"success.{model}.{arm}", rate)
    pop = Population("assumed", models, str(path), rates=rates, tau=tau, interaction=interaction, arms=arms)
    return pop, _analytic_check(path, doc.get("analytic_check"))


def _analytic_check(path: Path, doc: object) -> AnalyticCheck | None:
    if doc is None:
        return None
    doc = _mapping(path, "analytic_check", doc)
    reps = doc.get("repetitions", 3)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise InputError(f"{path}: analytic_check.repetitions: expected a positive integer, got {reps!r}")
    power = _number(path, "analytic_check.power", doc.get("power", 0.8), 0.0, 0.999, open_low=True)
    rows = []
    for arm, entry in _mapping(path, "analytic_check.arms", doc.get("arms")).items():
        key = f"analytic_check.arms.{arm}"
        if arm not in ARMS:
            raise InputError(f"{path}: {key}: unknown arm (expected one of {', '.join(ARMS)})")
        entry = _mapping(path, key, entry)
        sd = _number(path, f"{key}.gap_sd", entry.get("gap_sd"), 0.0, 1.0, open_low=True)
        rows.append(CheckRow(arm, sd, _rate(path, f"{key}.largest_gap", entry.get("largest_gap"), open_low=True)))
    return AnalyticCheck(reps, power, tuple(rows))
