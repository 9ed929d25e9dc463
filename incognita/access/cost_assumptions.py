"""What the cost model assumes of an episode, per arm: the agent's turns and how they split,
participants' steps per message, conversation growth, tokens written (docs/models.md).

Read by the estimate (incognita.access.planning.cost_estimate), its calibration and the design planner,
and by the harness, which takes the arms expected to run longest as its critical cells (their
calls may use the pace's reserve: incognita.common.pacing). Defaults follow the paper; a YAML
file overrides them key by key (`Assumptions.load`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from incognita.access.taxonomy import DIRECT, INDIRECT, SOCIAL
from incognita.common.io import InputError, read_yaml


@dataclass(frozen=True)
class Assumptions:
    """Per-episode behaviour the estimate assumes; every number is a mean per episode or call."""

    # Agent turns by kind. Totals are the paper's mean agent actions per episode (Section 6.3:
    # 14.4 direct, 13.2 indirect, 26.2 social; config/cost_calibration.yaml); the split follows
    # the offline scripted runs, with social's extra turns going to the desks, as the paper reports.
    customer_messages: dict = field(default_factory=lambda: {DIRECT: 6.0, INDIRECT: 6.0, SOCIAL: 6.0})
    service_messages: dict = field(default_factory=lambda: {DIRECT: 0.0, INDIRECT: 6.2, SOCIAL: 19.2})
    tool_calls: dict = field(default_factory=lambda: {DIRECT: 7.4, INDIRECT: 0.0, SOCIAL: 0.0})
    # Backend steps per message (a release_field or tool call, then the reply). The customer's from
    # the scripted runs; the service side's fitted to the paper's prices (incognita.access.planning.cost_calibration:
    # indirect's fixes the holder's, social's a desk's; the scripted runs take 1.8 and 1.4).
    customer_steps: float = 1.5
    service_steps: dict = field(default_factory=lambda: {INDIRECT: 2.93, SOCIAL: 3.87})
    desks_engaged: float = 4.0  # social: the service messages spread over this many desks' conversations
    # Tokens a conversation grows by per call (the new turns it resends next time).
    growth: dict = field(
        default_factory=lambda: {"agent_message": 120, "agent_tool": 300, "customer": 100, "service": 220}
    )
    customer_context: int = 150  # request block and released memory on top of the behaviour block
    # Tokens written per call: visible output, plus reasoning tokens by reasoning_effort. The
    # reasoning table is fitted to the paper's direct-arm price at high effort (cost_calibration);
    # the other levels keep the planning ratios (minimal 0.1, low 0.25, medium 0.5, xhigh 2 x high).
    output: dict = field(default_factory=lambda: {"agent": 60, "customer": 50, "service": 80, "judge": 30})
    reasoning: dict = field(
        default_factory=lambda: {
            "none": 0,
            "minimal": 20,
            "low": 50,
            "medium": 100,
            "high": 200,
            "xhigh": 400,
            "default": 0,
        }
    )
    cached_share: float = 0.5  # prompt tokens billed at the cached-input price (repeated prefixes)
    judge_transcript: int = 1200  # tokens of the customer dialogue the judge reads
    nl_share: float = 7 / 18  # tasks with natural-language assertions when the cards are not at hand

    @classmethod
    def load(cls, path: str | None) -> Assumptions:
        if not path:
            return cls()
        doc = read_yaml(path) or {}
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise InputError(f"{path}: unknown assumption(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        base = cls()
        merged = {
            k: ({**getattr(base, k), **v} if isinstance(getattr(base, k), dict) and isinstance(v, dict) else v)
            for k, v in doc.items()
        }
        return dataclasses.replace(base, **merged)

    def agent_turns(self, arm: str) -> float:
        return self.customer_messages[arm] + self.service_messages[arm] + self.tool_calls[arm] + 1  # + FINAL


def assumed_like(arm: str, assumptions: Assumptions, arms, partition) -> str:
    """The arm whose per-episode assumptions `arm` takes: its own when the assumptions name it,
    else the paper's arm of the same access structure (the agent holds the tools: direct; one
    holder: indirect; several: social). `arms` is the arm registry, `partition` the tools' holders."""
    if arm in assumptions.customer_messages:
        return arm
    entry = arms.arm(arm)
    return DIRECT if entry.agent_executes else (INDIRECT if len(entry.owners(partition)) == 1 else SOCIAL)


def longest_arms(design_arms, arms, partition, share: float = 0.9) -> frozenset[str]:
    """The arms whose episodes the estimate expects to be the design's longest chains of calls: the
    agent's expected turns at least `share` of the longest arm's (the harness lets their calls use
    the pace's reserve, incognita.common.pacing.RESERVE)."""
    a = Assumptions()
    turns = {arm: a.agent_turns(assumed_like(arm, a, arms, partition)) for arm in design_arms}
    top = max(turns.values(), default=0.0)
    return frozenset(arm for arm, t in turns.items() if t >= share * top)
