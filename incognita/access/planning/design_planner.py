"""`incognita plan`: the power and the price of a design (tasks x repetitions) before any paid run.

A *population* says where a simulated task comes from: a success probability for every
(arm, model) of that task. Two sources:

- **pilot** (a trials table): the population is the pilot's own tasks, each with the observed
  success share k/m of its scored repetitions in every (arm, model). A simulated design draws
  n tasks uniformly with replacement from the pilot's tasks, the same draw for every arm and
  model (so a simulated task keeps the pairing of its arms and models), then, per (arm, model,
  drawn task), n_reps repetitions with replacement from that task's observed repetitions. The
  number of successes among them is Binomial(n_reps, k/m), which is how it is drawn. A task
  solved (or failed) by every pilot repetition of a cell stays so in every simulation, so the
  pilot source understates within-task noise for tasks the pilot saw only a few times.
- **assumed** (a YAML file, `load_assumptions`): a success rate per (model, arm) and two
  log-odds random effects per task: `tau`, the SD of a task effect shared by every model and
  arm of the task (its difficulty), and `interaction`, the SD of a model-by-task effect shared
  by the arms of that model and task. Both are shared across arms, so a contrast between two
  arms of one model is a real paired comparison. Each cell's intercept is solved so that its
  success rate averaged over tasks is the rate given (the paper's cell success), not the rate
  of a median task. Repetitions are Bernoulli given the task's probability.

Each simulated design is analysed as the statistics stage would: repetitions averaged within a
task, per-task paired differences, a two-sided t interval at the interpretation table's
`confidence` (`paired_intervals` mirrors incognita.common.intervals.paired, rounding included).
The power of a contrast is the share of simulations whose decision would be `supports`
(primary: interval on the hypothesised side of zero) or `supporting_excludes_zero` (either
side), neither cell on the floor or ceiling. Separated pairs mirror
paper_tables.separability_tables (subset `all`): every pair of the models in order, one arm at
a time, counted when its interval excludes zero. A pilot of several domains is resampled and
analysed with the domain as a stratum (population.Population.allocation; `paired_intervals`
with `strata` mirrors incognita.access.stats.estimator.stratified). All simulations of a design point are drawn
and analysed as arrays; each point has its own seed, derived from (seed, tasks, reps).

Pricing scales what `incognita estimate` (cost_estimate.Estimator) gives for the config's own
design to n tasks x n_reps: every quantity of the estimate is a per-episode mean times the
number of episodes, so it is linear in tasks x repetitions, with the share of judged tasks
kept from the configured corpus.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from incognita.access.planning.population import ARMS, AnalyticCheck, CheckRow, Population
from incognita.access.stats.interpretation import Contrast, Interpretation
from incognita.access.stats.power import required_tasks
from incognita.common.io import InputError, atomic_write_text
from incognita.common.tables import to_markdown

_DECIMALS = 12  # the estimator's rounding (intervals.snap): identical models never "exclude zero"


def _snap(x: np.ndarray) -> np.ndarray:
    return np.round(x, _DECIMALS) + 0.0


# --- one design point ----------------------------------------------------------------------------


def simulate_task_means(pop: Population, rng: np.random.Generator, sims: int, n_tasks: int, n_reps: int) -> np.ndarray:
    """Task means (successes / n_reps) of `sims` simulated designs: (sims, tasks, arms, models), NaN
    where a cell has no data."""
    p = pop.draw(rng, sims, n_tasks)
    ok = np.isfinite(p)
    return np.where(ok, rng.binomial(n_reps, np.where(ok, p, 0.0)) / n_reps, np.nan)


@dataclass(frozen=True)
class Intervals:
    n: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def excludes_zero(self) -> np.ndarray:
        return (self.low > 0) | (self.high < 0)


def paired_intervals(d: np.ndarray, confidence: float, strata: tuple[str, ...] | None = None) -> Intervals:
    """incognita.common.intervals.paired along the last axis: NaN tasks dropped, mean and SD
    rounded the same way, no interval below two tasks; with `strata` (the domain of each task of
    the last axis, several domains), estimator.stratified instead."""
    if strata is not None and len(set(strata)) > 1:
        return _stratified_intervals(d, confidence, strata)
    ok = np.isfinite(d)
    n = ok.sum(axis=-1)
    x = np.where(ok, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = x.sum(axis=-1) / n
        sd = np.sqrt((np.where(ok, d - raw[..., None], 0.0) ** 2).sum(axis=-1) / (n - 1))
        half = _t_quantile(confidence, n) * _snap(sd) / np.sqrt(n)
    mean = _snap(raw)
    return Intervals(n, mean, mean - half, mean + half)


def _stratified_intervals(d: np.ndarray, confidence: float, strata: tuple[str, ...]) -> Intervals:
    """estimator.stratified along the last axis: the mean over tasks, the SD pooled from each
    task's deviation from its own domain's mean on n - h degrees of freedom (h: the domains with
    a task present), no interval below n - h = 1."""
    ok = np.isfinite(d)
    x = np.where(ok, d, 0.0)
    labels = np.asarray(strata, dtype=object)
    n = ok.sum(axis=-1)
    ss = np.zeros(n.shape)
    h = np.zeros(n.shape, dtype=int)
    with np.errstate(invalid="ignore", divide="ignore"):
        for dom in sorted(set(strata)):
            cols = labels == dom
            n_h = ok[..., cols].sum(axis=-1)
            mean_h = x[..., cols].sum(axis=-1) / n_h
            dev = np.where(ok[..., cols], d[..., cols] - mean_h[..., None], 0.0)
            ss += np.where(n_h > 0, (dev**2).sum(axis=-1), 0.0)
            h += n_h > 0
        raw = x.sum(axis=-1) / n
        df = n - h
        sd = np.sqrt(ss / df)
        half = _t_quantile(confidence, df + 1) * _snap(sd) / np.sqrt(n)
    mean = _snap(raw)
    return Intervals(n, mean, mean - half, mean + half)


def _t_quantile(confidence: float, n: np.ndarray) -> np.ndarray:
    """t_{(1+confidence)/2, n-1} per element, NaN below two tasks; evaluated once per distinct n."""
    values, inverse = np.unique(n, return_inverse=True)
    q = sps.t.ppf(0.5 + confidence / 2, np.where(values >= 2, values - 1, np.nan))
    return q[inverse].reshape(np.shape(n))


def analytic_power(sd: float, gap: float, n_tasks: int, alpha: float, either_side: bool = False) -> float:
    """The power `incognita power` assumes for n tasks: its approximation (t_{1-alpha/2} + t_power)
    * sd / gap = sqrt(n), with n - 1 degrees of freedom, solved for the power. `gap` is signed
    in the direction that counts; `either_side` adds the other side's tail (which the
    approximation drops) for a comparison that counts an interval on either side of zero."""
    if n_tasks < 2 or not sd > 0 or not math.isfinite(gap):
        return float("nan")
    df, ncp = n_tasks - 1, gap * math.sqrt(n_tasks) / sd
    crit = sps.t.ppf(1 - alpha / 2, df)
    return float(sps.t.cdf(ncp - crit, df) + (sps.t.cdf(-ncp - crit, df) if either_side else 0.0))


def _share(hit: np.ndarray) -> tuple[float, float]:
    p = float(hit.mean())
    return p, math.sqrt(p * (1 - p) / hit.size)


def contrast_hits(
    means: np.ndarray,
    interp: Interpretation,
    contrast: Contrast,
    model_index: int,
    arms: tuple[str, ...] = ARMS,
    strata: tuple[str, ...] | None = None,
) -> np.ndarray:
    """Per simulated design (axis 0 of `means`, its arm axis `arms`; `strata`: each simulated
    task's domain), whether the stage would decide `supports` (the primary contrast) or
    `supporting_excludes_zero` (a supporting one)."""
    a, b = arms.index(contrast.minuend), arms.index(contrast.subtrahend)
    x, y = means[:, :, a, model_index], means[:, :, b, model_index]
    iv = paired_intervals(x - y, interp.confidence, strata)
    xy = np.stack([x, y])
    with np.errstate(invalid="ignore"):  # a cell with no task in a design has no success (NaN)
        cells = _snap(np.nansum(xy, axis=2) / np.isfinite(xy).sum(axis=2))  # estimator.cell_mean
    bound = ((cells <= interp.floor) | (cells >= interp.ceiling)).any(axis=0)
    if contrast == interp.primary:
        side = (iv.low > 0) if interp.direction > 0 else (iv.high < 0)
        return side & ~bound
    return iv.excludes_zero & ~bound


def separated_pairs(
    means: np.ndarray, arm: str, confidence: float, arms: tuple[str, ...] = ARMS, strata: tuple[str, ...] | None = None
) -> np.ndarray:
    """Per simulated design, the model pairs of `arm` whose interval excludes zero (every pair of
    the models in order, as paper_tables.separability_tables counts them on subset `all`)."""
    pairs = list(combinations(range(means.shape[-1]), 2))
    if not pairs:
        return np.zeros(len(means), dtype=int)
    left, right = (list(ix) for ix in zip(*pairs))
    a = arms.index(arm)
    d = np.moveaxis(means[:, :, a, left] - means[:, :, a, right], 1, -1)  # (sims, pairs, tasks)
    return paired_intervals(d, confidence, strata).excludes_zero.sum(axis=1)


def evaluate_point(
    pop: Population, interp: Interpretation, n_tasks: int, n_reps: int, sims: int, seed: int
) -> list[dict]:
    """Power of every pre-specified contrast per model, and expected separated pairs per arm."""
    rng = np.random.default_rng([seed, n_tasks, n_reps])
    means = simulate_task_means(pop, rng, sims, n_tasks, n_reps)
    strata = pop.task_strata(n_tasks) if pop.kind == "pilot" else None
    alpha = 1 - interp.confidence
    rows = []
    base = {"tasks": n_tasks, "reps": n_reps}
    for contrast in interp.contrasts:
        primary = contrast == interp.primary
        for j, model in enumerate(pop.models):
            row = {**base, "quantity": "power", "target": contrast.name, "model": model}
            row["role"] = "primary" if primary else "supporting"
            if not (pop.has(contrast.minuend, model) and pop.has(contrast.subtrahend, model)):
                rows.append({**row, "available": False})  # unavailable, not zero power
                continue
            value, se = _share(contrast_hits(means, interp, contrast, j, pop.arms, strata))
            gap, sd = pop.moments((contrast.minuend, model), (contrast.subtrahend, model), n_reps)
            signed = interp.direction * gap if primary else gap
            rows.append(
                {**row, "available": True, "value": value, "mc_se": se, "gap": gap, "gap_sd": sd}
                | {"analytic": analytic_power(sd, signed, n_tasks, alpha, either_side=not primary)}
            )
    n_pairs = math.comb(len(pop.models), 2)
    for arm in pop.arms:
        row = {**base, "quantity": "separated_pairs", "target": arm, "model": "", "role": "exploratory"}
        if not pop.has_any(arm) or not n_pairs:
            rows.append({**row, "available": False, "pairs": n_pairs})
            continue
        count = separated_pairs(means, arm, interp.confidence, pop.arms, strata)
        analytic = 0.0
        for i, k in combinations(range(len(pop.models)), 2):
            gap, sd = pop.moments((arm, pop.models[i]), (arm, pop.models[k]), n_reps)
            analytic += np.nan_to_num(analytic_power(sd, gap, n_tasks, alpha, either_side=True))
        rows.append(
            {**row, "available": True, "pairs": n_pairs, "value": float(count.mean())}
            | {"mc_se": float(count.std(ddof=1) / math.sqrt(sims)), "analytic": analytic}
        )
    return rows


# --- pricing (incognita estimate) ------------------------------------------------------------------


@dataclass(frozen=True)
class Pricing:
    """`incognita estimate` of the config's design, per task x repetition (all models and priced arms)."""

    config: str
    models: tuple[str, ...]
    arms: tuple[str, ...]
    calls: float
    api_calls: float
    api_tokens: float
    usd: float
    chain_calls: float
    chain_cell: tuple[str, str] | None
    notes: tuple[str, ...]

    def point(self, n_tasks: int, n_reps: int, rpm: float | None, tpm: float | None, latency: float) -> dict:
        from incognita.access.planning.cost_estimate import WallTime

        k = n_tasks * n_reps
        wall = float("nan")  # as `incognita estimate`: only with a rate limit, and only for API calls
        if (rpm or tpm) and self.api_calls:
            args = (self.api_calls * k, self.api_tokens * k, self.chain_calls, self.chain_cell, latency, rpm, tpm)
            wall = WallTime(*args).seconds
        episodes = k * len(self.models) * len(self.arms)
        return {
            "episodes": episodes, "calls": self.calls * k, "api_calls": self.api_calls * k, "usd": self.usd * k,
            "wall_seconds": wall,
        }  # fmt: skip


def price_unit(config_path: str, models: tuple[str, ...], prices_path: str | None, cards_dir: str | None) -> Pricing:
    """Run the estimate on the config (its design's models replaced by `models` when the config
    has them all) and divide by its tasks x repetitions."""
    from incognita.access.cost_assumptions import Assumptions
    from incognita.access.planning.cost_estimate import Estimator, api_usage
    from incognita.access.planning.workflow_config import load_config
    from incognita.common.prices import load_prices, resolve_path

    cfg = copy.deepcopy(load_config(config_path))
    notes = []
    if set(models) <= set(cfg.get("models") or {}):
        cfg["design"]["models"] = list(models)
    else:
        notes.append(f"models priced as {config_path}'s design (the planned models are not all keys of its models)")
    table = load_prices(resolve_path(prices_path or cfg.get("prices")))
    est = Estimator(cfg, table, Assumptions(), cards_dir)
    lines, _ = est.run()
    unit = max(len(est.tasks) * est.design.repetitions, 1)
    calls, tokens = api_usage(lines)
    cell = max(est.episode_calls, key=est.episode_calls.__getitem__, default=None)
    unpriced = sorted({ln.model for ln in lines if not ln.offline and table.lookup(ln.model) is None})
    if unpriced:
        notes.append(f"no price in {table.path} for {', '.join(unpriced)} (counted as $0)")
    skipped = [a for a in est.design.rotation if a not in est.design.episode_arms]
    if skipped:
        notes.append(f"not priced: {', '.join(skipped)} (run by the upstream harness, as in `incognita estimate`)")
    return Pricing(
        config_path,
        est.design.models,
        est.design.episode_arms,
        sum(ln.calls for ln in lines) / unit,
        calls / unit,
        tokens / unit,
        sum(ln.cost_usd for ln in lines) / unit,
        est.episode_calls[cell] if cell else 0.0,
        cell,
        tuple(notes) + (f"prices: {table.path} version {table.version}; cold (no cache hits)",),
    )


# --- the grid ------------------------------------------------------------------------------------

COLUMNS = [
    "tasks", "reps", "quantity", "target", "model", "role", "available", "value", "mc_se", "pairs",
    "gap", "gap_sd", "analytic", "episodes", "calls", "api_calls", "usd", "wall_seconds",
]  # fmt: skip


def plan(
    pop: Population,
    interp: Interpretation,
    tasks: list[int],
    reps: list[int],
    sims: int,
    seed: int,
    pricing: Pricing | None = None,
    rate: dict | None = None,
) -> pd.DataFrame:
    """Every design point of tasks x reps: one row per (contrast, model) and per arm, priced."""
    rate, rows = rate or {"rpm": None, "tpm": None, "latency": 5.0}, []
    for n_tasks in tasks:
        for n_reps in reps:
            cost = pricing.point(n_tasks, n_reps, **rate) if pricing else {}
            rows += [r | cost for r in evaluate_point(pop, interp, n_tasks, n_reps, sims, seed)]
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def analytic_agreement(
    row: CheckRow, level: float, tau: float, check: AnalyticCheck, confidence: float, sims: int, seed: int, where: str
) -> dict:
    """Issue #28 item 6 on one row of Table 2: two models at success `level` +- gap/2, their
    model-by-task SD solved so that their per-task difference has the row's SD at the check's
    repetitions; the simulated power at the task count `incognita power` gives for that SD and
    gap, against the power its approximation assumes at that count."""
    alpha = 1 - confidence
    n = required_tasks(row.gap_sd, row.largest_gap, alpha, check.power)
    rates = np.full((len(ARMS), 2), np.nan)
    rates[ARMS.index(row.arm)] = pair = (level + row.largest_gap / 2, level - row.largest_gap / 2)
    if not 0 < min(pair) <= max(pair) < 1:
        raise InputError(f"{where}: success {level:.3f} +- half the gap leaves (0, 1)")

    def pair_sd(s: float) -> tuple[Population, float]:
        pop = Population("assumed", ("a", "b"), where, rates=rates, tau=tau, interaction=s)
        return pop, pop.moments((row.arm, "a"), (row.arm, "b"), check.repetitions)[1]

    lo, hi = 0.0, 8.0
    if not pair_sd(lo)[1] <= row.gap_sd <= pair_sd(hi)[1]:
        raise InputError(
            f"{where}.gap_sd: {row.gap_sd} is outside the SDs the assumed model gives at success "
            f"{level:.3f} and tau {tau} ({pair_sd(lo)[1]:.3f} to {pair_sd(hi)[1]:.3f}); change heterogeneity.tau"
        )
    for _ in range(50):  # the SD grows with the model-by-task spread
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pair_sd(mid)[1] < row.gap_sd else (lo, mid)
    pop, sd = pair_sd((lo + hi) / 2)
    means = simulate_task_means(pop, np.random.default_rng([seed, n, check.repetitions]), sims, n, check.repetitions)
    a = ARMS.index(row.arm)
    power, se = _share(paired_intervals(means[:, :, a, 0] - means[:, :, a, 1], confidence).low > 0)
    analytic = analytic_power(row.gap_sd, row.largest_gap, n, alpha)  # one side, as the approximation
    return {
        "arm": row.arm, "gap_sd": row.gap_sd, "largest_gap": row.largest_gap, "success": level,
        "interaction": pop.interaction, "model_sd": sd, "tasks": n, "reps": check.repetitions,
        "analytic_power": analytic, "simulated_power": power, "mc_se": se, "difference": power - analytic,
    }  # fmt: skip


def agreement_table(
    pop: Population, check: AnalyticCheck, interp: Interpretation, sims: int, seed: int
) -> pd.DataFrame:
    """`analytic_agreement` for every row of the check, at the arm's mean assumed success."""
    rows = []
    for row in check.rows:
        where = f"{pop.source}: analytic_check.arms.{row.arm}"
        level = float(np.nanmean(pop.rates[pop.arms.index(row.arm)])) if pop.has_any(row.arm) else float("nan")
        if not math.isfinite(level):
            raise InputError(f"{where}: no success rate for this arm under success")
        rows.append(analytic_agreement(row, level, pop.tau, check, interp.confidence, sims, seed, where))
    return pd.DataFrame(rows)


# --- outputs -------------------------------------------------------------------------------------

DIFFERENCES = (  # docs/statistics.md, "Planning a design", says the same at more length
    "`incognita power` takes per-task differences as normal with a known SD and solves "
    "(t_{1-a/2} + t_power) * sd / gap = sqrt(n); here task means are binomial shares of the "
    "repetitions (bounded, discrete) and every simulated design re-estimates its SD.",
    "Repetitions enter here explicitly; the analytic count has none (its SD is the pilot's, at the "
    "pilot's repetitions). Column `analytic` is its power at this row's `gap` and `gap_sd`.",
    "A contrast counts here only when the stage would decide `supports` or "
    "`supporting_excludes_zero`, which needs neither cell on the floor or ceiling; the analytic power "
    "has no such rule.",
    "Separated pairs are counted jointly per simulated design; the analytic column adds the pairs' separate powers.",
)


def _fmt(value: float, spec: str) -> str:
    return format(value, spec) if math.isfinite(value) else ""


def designs_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per design point: its price (for reading: plan.csv has full precision), the primary
    contrast's power per model, the expected separated pairs per arm (blank where unavailable)."""
    keys = ["tasks", "reps"]
    first = table.groupby(keys, sort=False).first().reset_index()
    out = first[keys].copy()
    out["episodes"] = first["episodes"].map(lambda v: _fmt(v, ",.0f"))
    out["calls"] = first["calls"].map(lambda v: _fmt(v, ",.0f"))
    out["cost USD"] = first["usd"].map(lambda v: _fmt(v, ",.2f"))
    out["wall min"] = first["wall_seconds"].map(lambda v: _fmt(v / 60, ",.1f"))
    prim = table[(table["role"] == "primary")]
    for model in dict.fromkeys(prim["model"]):
        values = prim[prim["model"] == model].set_index(keys)["value"]
        out[f"power {prim['target'].iloc[0]} {model}"] = values.reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
    pairs = table[table["quantity"] == "separated_pairs"]
    for arm in dict.fromkeys(pairs["target"]):
        sub = pairs[pairs["target"] == arm].set_index(keys)
        out[f"pairs {arm} (of {int(sub['pairs'].iloc[0])})"] = (
            sub["value"].reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
        )
    return out


def plan_markdown(table: pd.DataFrame, header: list[str], agreement: pd.DataFrame | None) -> str:
    power = table[(table["quantity"] == "power") & table["available"]]
    pairs = table[(table["quantity"] == "separated_pairs") & table["available"]]
    missing = table[~table["available"].astype(bool)].drop_duplicates(["quantity", "target", "model"])
    parts = ["# Design plan (`incognita plan`)\n", *[f"- {line}" for line in header], ""]
    parts += ["## Designs\n", to_markdown(designs_table(table))]
    if len(missing):
        gone = [f"{r.target}{' for ' + r.model if r.model else ''}" for r in missing.itertuples()]
        parts.append("Unavailable (an arm of it is absent from the input): " + "; ".join(gone) + ".\n")
    cols = ["tasks", "reps", "target", "model", "role", "value", "mc_se", "analytic", "gap", "gap_sd"]
    parts += [
        "## Every pre-specified contrast (power)\n",
        to_markdown(power[cols].rename(columns={"target": "contrast"})),
    ]
    cols = ["tasks", "reps", "target", "pairs", "value", "mc_se", "analytic"]
    parts += [
        "## Separated model pairs per arm (expected count)\n",
        to_markdown(pairs[cols].rename(columns={"target": "arm"})),
    ]
    if agreement is not None and len(agreement):
        parts += [
            "## Agreement with `incognita power` (analytic_check)\n",
            "Two models at the arm's mean success +- half the gap, their model-by-task SD solved so that the "
            "per-task difference has the row's SD; `tasks` as `incognita power` gives it.\n",
            to_markdown(agreement),
        ]
    parts += ["## How this differs from `incognita power`\n", *[f"- {d}" for d in DIFFERENCES], ""]
    return "\n".join(parts)


def write_plan(table: pd.DataFrame, out_dir: Path, header: list[str], agreement: pd.DataFrame | None) -> list[Path]:
    """plan.csv (every row, full precision) and plan.md, written atomically."""
    out_dir = Path(out_dir)
    csv_path, md_path = out_dir / "plan.csv", out_dir / "plan.md"
    atomic_write_text(csv_path, table.to_csv(index=False))
    atomic_write_text(md_path, plan_markdown(table, header, agreement))
    return [csv_path, md_path]
