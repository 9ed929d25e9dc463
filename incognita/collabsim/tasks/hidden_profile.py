"""Hidden Profile (Stasser & Titus 1985): can a group pool facts that only some members hold?

Three members choose among candidates A-D. Everyone reads the same shared facts, which make
the correct candidate look weak and a wrong one look best; the correct candidate's strengths
are dealt out privately, a few to each member, so that only a group that pools them can see
the correct answer. The run has three phases: a private initial vote, a discussion of
`discussion_sec` simulated seconds in which members may only message (to everyone), and a
private final vote. It ends when the final votes are in, or when `vote_steps` steps of the
final vote have passed.

Each fact carries a weight: the candidate with the highest total over all facts is the
correct one, and `check_params` refuses materials in which any single member could already
see it (the profile would not be hidden). Members see a fact's text and whether it is listed
as a strength or a concern, never its weight. Each private fact also names a regular
expression that recognises a paraphrase of it, for the mention rate (paper, Appendix 10.2).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import ClassVar

from incognita.collabsim.world.task import NOTHING, Context, Task
from incognita.common.io import InputError

DECIDE = "decide"
INITIAL, DISCUSSION, FINAL, OVER = "initial_vote", "discussion", "final_vote", "over"
BALLOT = {INITIAL: "initial", FINAL: "final"}
DEFAULTS = {"discussion_sec": 300, "vote_steps": 3}
REQUIRED = ("candidates", "correct", "deal", "shared_facts", "private_facts")
# A standalone capital letter: "C", "C's" or "(C)" but not the C in "Captain" or "ABC".
STANDALONE = r"(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"


def totals(facts: list[dict], candidates: list[str]) -> dict[str, float]:
    """Each candidate's summed weight over `facts`."""
    out = {c: 0.0 for c in candidates}
    for f in facts:
        out[f["about"]] += f["weight"]
    return out


def unique_best(scores: dict[str, float]) -> str | None:
    top = max(scores.values())
    best = [c for c, s in scores.items() if s == top]
    return best[0] if len(best) == 1 else None


def deal(private: list[dict], counts: list[int], members: list[str], rng) -> dict[str, list[dict]]:
    """Shuffle the private facts and hand each member its share; who gets the larger share is drawn too."""
    facts, sizes = list(private), list(counts)
    rng.shuffle(facts)
    rng.shuffle(sizes)
    out, at = {}, 0
    for member, size in zip(members, sizes):
        out[member], at = facts[at : at + size], at + size
    return out


def shown(fact: dict) -> dict:
    """A fact as a member sees it: its text and its listing, not its weight."""
    return {"about": fact["about"], "note": "strength" if fact["weight"] > 0 else "concern", "text": fact["text"]}


class HiddenProfile(Task):
    name = "hidden_profile"
    title = "Hidden Profile"
    actions: ClassVar[dict[str, tuple[str, ...]]] = {"member": (DECIDE,)}
    METRICS = ("final_accuracy", "initial_accuracy", "consensus", "vote_change_rate", "mention_rate")
    DEFAULTS, REQUIRED = DEFAULTS, REQUIRED  # the module's tables, checked by Task.check_params

    def __init__(self, params, agents, rng):
        super().__init__(params, agents, rng)
        p = self.params
        self.members = [a.id for a in agents]
        self.private = deal(p["private_facts"], p["deal"], self.members, rng)
        self.stage = INITIAL
        self.votes: dict[str, dict[str, str]] = {"initial": {}, "final": {}}
        self.stage_steps = 0  # steps spent in the current vote phase
        self.discussion_from: int | None = None  # first step of the discussion
        self.seconds_left = p["discussion_sec"]

    # --- configuration ----------------------------------------------------------------------
    @classmethod
    def check_params(cls, params, agents, where):
        super().check_params(params, agents, where)
        p = {**DEFAULTS, **params}
        for key in DEFAULTS:
            if not isinstance(p[key], int) or p[key] < 1:
                raise InputError(f"{where}.{key}: must be a whole number >= 1")
        check_materials(p, len(agents), where)

    # --- phases -----------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        return self.stage

    def start(self, ctx: Context) -> None:
        p = self.params
        for member in self.members:
            ctx.emit("private", member, {"private_facts": [shown(f) for f in self.private[member]]}, [member])
        ctx.emit(
            "state",
            "system",
            {
                "event": "setup",
                "candidates": p["candidates"],
                "shared_facts": [shown(f) for f in p["shared_facts"]],
                "discussion_sec": p["discussion_sec"],
            },
        )
        ctx.emit("phase", "system", {"phase": INITIAL})

    def acts(self, agent: str) -> bool:
        if self.stage in BALLOT:
            return agent not in self.votes[BALLOT[self.stage]]
        return self.stage == DISCUSSION

    def allowed(self, agent: str) -> set[str]:
        if self.stage == DISCUSSION:
            return {"message", NOTHING}
        if self.stage in BALLOT and agent not in self.votes[BALLOT[self.stage]]:
            return {DECIDE, NOTHING}
        return {NOTHING}

    def messaging(self) -> str | None:
        return "broadcast"

    @classmethod
    def argument_schemas(cls, params, agent_ids):
        return {DECIDE: {"candidate": {"type": "string", "enum": list(params["candidates"])}}}

    def validate(self, agent, action, args):
        candidate = args.get("candidate")
        if candidate is None:
            return f"decide needs a 'candidate' (one of {', '.join(self.params['candidates'])})"
        if candidate not in self.params["candidates"]:
            return f"unknown candidate {candidate!r} (choose one of {', '.join(self.params['candidates'])})"
        return None

    def apply(self, ctx, agent, action, args):
        if action == DECIDE:
            ballot = BALLOT[self.stage]
            self.votes[ballot][agent] = args["candidate"]
            ctx.emit("state", agent, {"event": "vote", "ballot": ballot, "candidate": args["candidate"]}, [agent])

    def end_step(self, ctx: Context) -> None:
        if self.stage in BALLOT:
            self._close_vote(ctx)
        elif self.stage == DISCUSSION:
            self._tick_discussion(ctx)

    def _close_vote(self, ctx: Context) -> None:
        """A vote phase ends when every member has voted or after `vote_steps` steps."""
        self.stage_steps += 1
        ballot = BALLOT[self.stage]
        missing = [m for m in self.members if m not in self.votes[ballot]]
        if missing and self.stage_steps < self.params["vote_steps"]:
            return
        ctx.emit(
            "state",
            "system",
            {
                "event": "vote_closed",
                "ballot": ballot,
                "votes_cast": len(self.members) - len(missing),
                "missing": missing,
            },
        )
        self.stage_steps = 0
        if self.stage == INITIAL:
            self.stage, self.discussion_from = DISCUSSION, ctx.step + 1
            ctx.emit("phase", "system", {"phase": DISCUSSION, "seconds": self.params["discussion_sec"]})
        else:
            self.stage = OVER
            ctx.emit("phase", "system", {"phase": OVER})

    def _tick_discussion(self, ctx: Context) -> None:
        """The discussion lasts `discussion_sec` simulated seconds."""
        self.seconds_left = self.params["discussion_sec"] - (ctx.step - self.discussion_from + 1) * ctx.step_seconds
        if self.seconds_left <= 0:
            self.stage = FINAL
            ctx.emit("phase", "system", {"phase": FINAL})

    def done(self) -> bool:
        return self.stage == OVER

    # --- views ------------------------------------------------------------------------------
    def observation(self, agent, observed):
        """The fact sheet is shown at the votes, where it is needed; during the discussion it is
        left out (a model keeps its earlier observations), which keeps each turn short."""
        p = self.params
        view = {"candidates": p["candidates"], "your_votes": {b: v[agent] for b, v in self.votes.items() if agent in v}}
        if self.stage in BALLOT:
            view["shared_facts"] = [shown(f) for f in p["shared_facts"]]
            view["private_facts"] = [shown(f) for f in self.private[agent]]
        if self.stage == DISCUSSION:
            view["discussion_seconds_left"] = self.seconds_left
        if observed:
            view["peers"] = {q: {"votes": {b: v[q] for b, v in self.votes.items() if q in v}} for q in observed}
        return view

    def probe_truth(self, agent: str) -> dict:
        return {"favoured_candidate": self.params["correct"]}

    def final_state(self):
        p = self.params
        return {
            "votes": {b: dict(sorted(v.items())) for b, v in self.votes.items()},
            "correct": p["correct"],
            "dealt": {m: sorted(f["id"] for f in self.private[m]) for m in self.members},
            "clue_patterns": {f["id"]: f["pattern"] for f in p["private_facts"]},
        }

    @staticmethod
    def metrics(events):
        return hidden_profile_metrics(events)


def check_materials(p: dict, n_agents: int, where: str) -> None:
    """The materials must be well formed and must hide the profile from every single member."""
    cands = p["candidates"]
    if not isinstance(cands, list) or len(set(cands)) != len(cands) or len(cands) < 2:
        raise InputError(f"{where}.candidates: need a list of at least 2 distinct names")
    if not all(isinstance(p[k], list) and p[k] for k in ("shared_facts", "private_facts")):
        raise InputError(f"{where}: shared_facts and private_facts must be non-empty lists")
    if p["correct"] not in cands:
        raise InputError(f"{where}.correct: {p['correct']!r} is not a candidate")
    facts = [*p["shared_facts"], *p["private_facts"]]
    ids = [f.get("id") for f in facts]
    if len(set(ids)) != len(ids):
        raise InputError(f"{where}: fact ids must be unique")
    for f in facts:
        _check_fact(f, cands, f"{where}: fact {f.get('id')!r}")
    for f in p["private_facts"]:
        _check_pattern(f, p["shared_facts"], f"{where}: private fact {f['id']!r}")
    counts = p["deal"]
    if (
        not isinstance(counts, list)
        or len(counts) != n_agents
        or not all(isinstance(c, int) and c >= 1 for c in counts)
        or sum(counts) != len(p["private_facts"])
    ):
        raise InputError(
            f"{where}.deal: need one count >= 1 per member ({n_agents}) summing to the "
            f"{len(p['private_facts'])} private facts"
        )
    best = unique_best(totals(facts, cands))
    if best != p["correct"]:
        raise InputError(
            f"{where}.correct: with every fact pooled the best candidate is {best or 'a tie'}, not {p['correct']}"
        )
    for size in sorted(set(counts)):
        for hand in itertools.combinations(p["private_facts"], size):
            if unique_best(totals([*p["shared_facts"], *hand], cands)) == p["correct"]:
                raise InputError(
                    f"{where}: a member dealt {', '.join(f['id'] for f in hand)} would already see "
                    f"{p['correct']} as best; the profile is not hidden"
                )


def _check_fact(f: dict, cands: list[str], where: str) -> None:
    if not isinstance(f, dict) or not isinstance(f.get("id"), str) or not isinstance(f.get("text"), str):
        raise InputError(f"{where}: needs a string id and text")
    if f.get("about") not in cands:
        raise InputError(f"{where}: about {f.get('about')!r} is not a candidate")
    weight = f.get("weight")
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight == 0 or not math.isfinite(weight):
        raise InputError(f"{where}: weight must be a non-zero number")


def _check_pattern(f: dict, shared: list[dict], where: str) -> None:
    """A clue pattern must compile, recognise its own fact and not fire on any shared fact (or
    restating shared information would count as surfacing a hidden clue)."""
    if not isinstance(f.get("pattern"), str) or not f["pattern"]:
        raise InputError(f"{where}: needs a clue pattern (a regular expression for the mention rate)")
    try:
        pattern = re.compile(f["pattern"], re.IGNORECASE)
    except re.error as exc:
        raise InputError(f"{where}: pattern does not compile ({exc})") from None
    if not pattern.search(f["text"]):
        raise InputError(f"{where}: pattern does not match the fact's own text")
    hit = next((s["id"] for s in shared if pattern.search(s["text"])), None)
    if hit:
        raise InputError(f"{where}: pattern also matches shared fact {hit!r}")


def votes(events: list[dict], ballot: str) -> dict[str, str]:
    return {
        e["actor"]: e["payload"]["candidate"]
        for e in events
        if e["kind"] == "state" and e["payload"].get("event") == "vote" and e["payload"]["ballot"] == ballot
    }


def mentions(text: str, correct: str, patterns: list[re.Pattern]) -> bool:
    """The message names the correct candidate by its standalone letter and paraphrases one of its
    private clues (paper, Appendix 10.2)."""
    return bool(re.search(STANDALONE.format(re.escape(correct)), text)) and any(p.search(text) for p in patterns)


def hidden_profile_metrics(events: list[dict]) -> dict[str, float]:
    start = next(e for e in events if e["kind"] == "run_start")
    members = [a["id"] for a in start["payload"]["agents"]]
    final_state = events[-1]["payload"]["final_state"]
    correct = final_state["correct"]
    patterns = [re.compile(p, re.IGNORECASE) for _, p in sorted(final_state["clue_patterns"].items())]
    first, last = votes(events, "initial"), votes(events, "final")
    both = [m for m in members if m in first and m in last]
    texts = [e["payload"]["text"] for e in events if e["kind"] == "message"]

    def rate(hits: int, n: int) -> float:
        return hits / n if n else float("nan")

    return {
        "final_accuracy": rate(sum(v == correct for v in last.values()), len(last)),
        "initial_accuracy": rate(sum(v == correct for v in first.values()), len(first)),
        "consensus": float(len(last) == len(members) and len(set(last.values())) == 1),
        "vote_change_rate": rate(sum(first[m] != last[m] for m in both), len(both)),
        "mention_rate": rate(sum(mentions(t, correct, patterns) for t in texts), len(texts)),
    }


TASK = HiddenProfile
