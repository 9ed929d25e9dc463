"""Fitting the cost estimate's assumptions to observed usage: the paper's figures or a run's trials.

What is observed per arm is the mean number of agent actions per episode and the mean price of an
episode: published for the paper's design (config/cost_calibration.yaml, Section 6.3 and Table 2)
or measured in a run's trials table (`agent_actions`, `cost_episode_usd`).

Three prices cannot pin down the estimate's many assumptions, but the paper's arms form a ladder
in which each arm adds one component to the one before it, so each arm's price fixes one
assumption once the ones before it are fixed:

- direct: the agent and the customer only. Its price fixes the agent's reasoning tokens per call
  (the whole effort table scaled by one factor, so the levels keep their order);
- indirect: adds one holder of every tool. Its price fixes the holder's calls per message;
- social: adds the desks. Its price fixes a desk's calls per message.

The agent actions are set first, in every arm, from what was observed (the split between
customer messages, service messages and tool calls keeps the assumed proportions). Everything
else (conversation growth, output sizes, the cached share, the customer) stays as assumed; the
fitted values absorb whatever those get wrong, which is why docs/models.md reports them as
fitted, not measured.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from incognita.access.cost_assumptions import Assumptions
from incognita.access.planning.cost_estimate import Estimator
from incognita.access.taxonomy import DIRECT, INDIRECT, NATIVE, SOCIAL
from incognita.common.io import InputError, read_yaml


@dataclass(frozen=True)
class Observed:
    """One arm's observed means per episode."""

    agent_actions: float
    usd_per_episode: float
    episodes: int | None = None  # None: published figures


@dataclass(frozen=True)
class Observations:
    source: str
    arms: dict[str, Observed]
    config: str | None = None  # the config the figures were recorded with, when the source says
    models: tuple[str, ...] = ()  # the models measured (a trials table), for a check against the design


def published(path: str | Path) -> Observations:
    """Published per-arm figures from a YAML file like config/cost_calibration.yaml."""
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("arms"), dict) or not doc["arms"]:
        raise InputError(f"{path}: expected a mapping with `arms: {{ARM: {{agent_actions, usd_per_episode}}}}`")
    arms = {}
    for arm, entry in doc["arms"].items():
        values = []
        for key in ("agent_actions", "usd_per_episode"):
            value = (entry or {}).get(key) if isinstance(entry, dict) else None
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise InputError(f"{path}: arms.{arm}.{key} must be a positive number (got {value!r})")
            values.append(float(value))
        arms[str(arm)] = Observed(*values)
    return Observations(str(path), arms, doc.get("config"))


def measured(path: str | Path) -> Observations:
    """Per-arm means of a run's trials table (native trials, errors and exclusions left out).

    Refuses a table without priced usage: an offline scripted run records no tokens, and a price
    of zero fits nothing."""
    import pandas as pd

    try:
        trials = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read a trials table ({exc})") from None
    missing = {"arm", "model", "agent_actions", "cost_episode_usd", "error", "excluded"} - set(trials.columns)
    if missing:
        raise InputError(f"{path}: not a trials table (no column {', '.join(sorted(missing))})")
    rows = trials[(trials["arm"] != NATIVE) & trials["error"].isna() & ~trials["excluded"].astype(bool)]
    arms = {}
    for arm, group in rows.groupby("arm", sort=False):
        arms[str(arm)] = Observed(
            float(group["agent_actions"].mean()), float(group["cost_episode_usd"].mean()), len(group)
        )
    if not arms:
        raise InputError(f"{path}: no trial to fit (every row is native, an error or excluded)")
    if not any(o.usd_per_episode > 0 for o in arms.values()):
        raise InputError(
            f"{path}: cost_episode_usd is 0 in every trial: no priced usage to fit "
            "(an offline scripted run records none; fit a run of models that go to an API)"
        )
    return Observations(str(path), arms, models=tuple(sorted(map(str, rows["model"].unique()))))


# --------------------------------------------------------------------------- the ladder


def _scale_reasoning(a: Assumptions, factor: float, base: Assumptions) -> Assumptions:
    return dataclasses.replace(a, reasoning={k: v * factor for k, v in base.reasoning.items()})


def _service_steps(arm: str) -> Callable[[Assumptions, float, Assumptions], Assumptions]:
    def apply(a: Assumptions, value: float, base: Assumptions) -> Assumptions:
        return dataclasses.replace(a, service_steps={**a.service_steps, arm: value})

    return apply


@dataclass(frozen=True)
class Rung:
    arm: str
    assumption: str  # as named in docs/models.md and in an --assumptions file
    meaning: str
    apply: Callable[[Assumptions, float, Assumptions], Assumptions]
    bounds: tuple[float, float]
    current: Callable[[Assumptions], float]


LADDER = (
    Rung(
        DIRECT,
        "reasoning",
        "reasoning-table factor (the agent's reasoning tokens per call)",
        _scale_reasoning,
        (0.0, 20.0),
        lambda a: 1.0,
    ),
    Rung(
        INDIRECT,
        f"service_steps.{INDIRECT}",
        "the holder's calls per message",
        _service_steps(INDIRECT),
        (0.25, 40.0),
        lambda a: a.service_steps[INDIRECT],
    ),
    Rung(
        SOCIAL,
        f"service_steps.{SOCIAL}",
        "a desk's calls per message",
        _service_steps(SOCIAL),
        (0.25, 40.0),
        lambda a: a.service_steps[SOCIAL],
    ),
)


def with_actions(a: Assumptions, arm: str, actions: float) -> Assumptions:
    """`a` with the agent's turns in `arm` scaled to `actions` (the termination signal included)."""
    kinds = ("customer_messages", "service_messages", "tool_calls")
    now = a.agent_turns(arm) - 1
    if actions < 1 or now <= 0:
        raise InputError(f"arm {arm}: {actions:g} agent actions per episode leaves no turn besides the termination")
    factor = (actions - 1) / now
    return dataclasses.replace(a, **{k: {**getattr(a, k), arm: getattr(a, k)[arm] * factor} for k in kinds})


@dataclass(frozen=True)
class FitRow:
    arm: str
    observed: Observed
    before_usd: float  # the estimate with the starting assumptions
    after_usd: float
    assumption: str | None  # the rung fitted on this arm (None: the arm fixes nothing)
    meaning: str = ""
    before_value: float = math.nan
    after_value: float = math.nan


@dataclass(frozen=True)
class Fit:
    assumptions: Assumptions
    rows: list[FitRow]
    skipped: list[str]  # rungs not fitted, with why

    def overrides(self) -> dict:
        """The fitted assumptions as an --assumptions file holds them."""
        a = self.assumptions
        keys = ("customer_messages", "service_messages", "tool_calls", "service_steps", "reasoning")
        return {k: {name: round(float(v), 4) for name, v in getattr(a, k).items()} for k in keys}


def per_episode_usd(est: Estimator, a: Assumptions) -> dict[str, float]:
    """The estimate's mean price of one episode per arm under assumptions `a` (which `est` keeps)."""
    est.a = a
    _, by_arm = est.run()
    episodes = max(len(est.tasks) * len(est.design.models) * est.design.repetitions, 1)
    return {arm: line.cost_usd / episodes for arm, line in by_arm.items()}


def _solve(f: Callable[[float], float], lo: float, hi: float) -> float | None:
    from scipy.optimize import brentq

    flo, fhi = f(lo), f(hi)
    if flo == 0:
        return lo
    if flo * fhi > 0:
        return None
    return float(brentq(f, lo, hi, xtol=1e-6))


def fit(est: Estimator, obs: Observations) -> Fit:
    """Fit the ladder's assumptions to `obs`, rung by rung, on the design of `est`; `est` is left
    with the fitted assumptions (its `a`), for the estimate that follows."""
    start = est.a
    design_arms = set(est.design.episode_arms)
    a = start
    for arm, o in obs.arms.items():
        if arm in design_arms and arm in a.customer_messages:
            a = with_actions(a, arm, o.agent_actions)
    before = per_episode_usd(est, start)
    skipped = []
    fitted: dict[str, tuple[Rung, float, float]] = {}
    for rung in LADDER:
        o = obs.arms.get(rung.arm)
        if o is None or rung.arm not in design_arms:
            skipped.append(f"{rung.assumption}: arm {rung.arm} is not {'observed' if o is None else 'in the design'}")
            continue
        if o.usd_per_episode <= 0:
            skipped.append(f"{rung.assumption}: arm {rung.arm} has no priced usage")
            continue
        base = a

        def gap(x: float, rung=rung, base=base, target=o.usd_per_episode) -> float:
            return per_episode_usd(est, rung.apply(base, x, start))[rung.arm] - target

        lo, hi = rung.bounds
        x = _solve(gap, lo, hi)
        if x is None:
            low, high = gap(lo) + o.usd_per_episode, gap(hi) + o.usd_per_episode
            raise InputError(
                f"{obs.source}: arm {rung.arm} costs ${o.usd_per_episode:.3f} per episode, outside what "
                f"{rung.assumption} in [{lo:g}, {hi:g}] gives (${min(low, high):.3f} to ${max(low, high):.3f}) "
                "with the other assumptions as they are; change those first (docs/models.md)"
            )
        fitted[rung.arm] = (rung, rung.current(base), x)
        a = rung.apply(base, x, start)
    after = per_episode_usd(est, a)
    est.a = a
    rows = []
    for arm, o in obs.arms.items():
        if arm not in after:
            skipped.append(f"arm {arm}: observed but not in the design of the config")
            continue
        rung, old, new = fitted.get(arm, (None, math.nan, math.nan))
        rows.append(
            FitRow(
                arm,
                o,
                before[arm],
                after[arm],
                rung.assumption if rung else None,
                rung.meaning if rung else "",
                old,
                new,
            )
        )
    return Fit(a, rows, skipped)


def observations(path: str) -> Observations:
    """A trials table (.parquet) or a YAML file of published figures."""
    if not Path(path).exists():
        raise InputError(f"--from {path}: no such file")
    return measured(path) if str(path).endswith(".parquet") else published(path)
