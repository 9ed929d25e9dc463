"""A committee member for Hidden Profile that pools facts only as far as its knobs and the
channel let it.

What it knows comes from its observations only: its fact sheet (`state.shared_facts` and
`state.private_facts` at the initial vote, each listed as a strength or a concern) and the
messages it reads. It values a candidate at +1 per strength and -1 per concern on its own sheet.
A heard message teaches it a fact when its words do not mostly repeat a fact it already knows:
the fact is credited to the candidate the message names ("candidate X" or a standalone capital
letter) with the sign of the evaluative words it contains (a small fixed lexicon, below), times
`update`. A message naming no candidate, or with no evaluative word, teaches it nothing. It
never sees a weight, and nothing of a teammate's sheet reaches it except through messages.

Knobs, each with the direction it moves the metrics:
- `sharing`: chance per discussion turn to share one private fact not yet shared (more sharing:
  higher final_accuracy and mention_rate);
- `talk`: chance, on a turn it does not share, to argue for its favourite with a strength it
  knows, stating "I lean X" (more talk: more messages; early arguments back the shared
  favourite and later ones repeat C's clues, so the mention rate moves little without a word
  limit and falls with one, where an argument shrinks to "I lean X");
- `update`: weight of a heard fact against one on its own sheet (higher: higher final_accuracy);
- `conformity`: pull towards the candidates its teammates said they lean to, or whose votes it
  saw (higher: lower final_accuracy, as everyone starts on the shared favourite);
- `concision`: under a word limit, the chance that it shortens a message by dropping function
  words before cutting (higher: a smaller loss from the limit).

Under a word limit it learns the limit from its first rejected message, sends the rejected fact
again, and from then on fits every message to the limit like a hurried writer: it keeps the most
important part (the fact when sharing, its stance when arguing) and drops the rest; if that part
alone is too long it keeps its first words, after dropping function words with chance
`concision`. A clue whose candidate letter or key words come late in its sentence can be cut
off, and an argument loses its reason: that is how the limit lowers the mention rate and the
accuracy.
"""

from __future__ import annotations

import re

from incognita.collabsim.policies import Policy

LEAN = re.compile(
    r"\bI (?:now )?(?:lean|vote|support|favou?r|prefer|choose) (?:for |towards? )?(?:[Cc]andidate )?([A-Z])\b\.?"
)
NAMED = re.compile(r"\b[Cc]andidate ([A-Z])\b")
# A standalone capital; "A" followed by a lower-case word ("A former captain") is the article.
LETTER = re.compile(r"(?<![A-Za-z0-9'])([B-Z]|A(?! [a-z]))(?![A-Za-z0-9])")
LIMIT = re.compile(r"limit of (\d+) words")
WORD = re.compile(r"[a-z]+")
LEAD_IN = "Something from my own sheet:"
SAME_FACT = 0.6  # share of a message's content words found in a known fact for it to be that fact
FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "that",
        "which",
        "who",
        "it",
        "its",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "during",
        "over",
        "under",
        "into",
        "as",
        "than",
        "this",
        "these",
        "those",
        "there",
        "their",
        "his",
        "her",
        "has",
        "have",
        "had",
    }
)
# Evaluative words it recognises in what it hears (it reads its own sheet's listings instead).
POSITIVE = frozenset(
    {
        "best",
        "better",
        "excellent",
        "outstanding",
        "exceptional",
        "strong",
        "stronger",
        "skilled",
        "expert",
        "quick",
        "correct",
        "calm",
        "composed",
        "steady",
        "relaxed",
        "friendly",
        "supportive",
        "conscientious",
        "thorough",
        "careful",
        "reliable",
        "noticed",
        "spotted",
        "praised",
        "thank",
        "thanked",
        "highest",
        "top",
        "popular",
        "clear",
        "fluently",
        "safe",
        "good",
        "great",
        "trusted",
        "respected",
    }
)
NEGATIVE = frozenset(
    {
        "worst",
        "worse",
        "weak",
        "weaker",
        "poor",
        "failed",
        "fails",
        "late",
        "warning",
        "fewest",
        "seldom",
        "reserved",
        "disputed",
        "expires",
        "expired",
        "careless",
        "slow",
        "complaint",
        "complaints",
        "reprimanded",
        "unreliable",
        "nervous",
        "panicked",
    }
)


def content(text: str) -> set[str]:
    """The words that identify a fact: lower case, four letters or more, not 'candidate'."""
    return {w for w in WORD.findall(text.lower()) if len(w) >= 4 and w != "candidate"}


def tone(text: str) -> int:
    words = WORD.findall(text.lower())
    score = sum(w in POSITIVE for w in words) - sum(w in NEGATIVE for w in words)
    return (score > 0) - (score < 0)


def named(text: str, candidates: list[str]) -> str | None:
    """The candidate a message is about: 'candidate X' first, else the first standalone letter."""
    for pattern in (NAMED, LETTER):
        found = [c for c in pattern.findall(text) if c in candidates]
        if found:
            return found[0]
    return None


def telegraphic(text: str) -> str:
    """The text without its function words ("the", "was", "during", ...)."""
    return " ".join(w for w in text.split() if w.lower().strip(",.;:") not in FILLER)


def fit(parts: list[tuple[int, str]], limit: int | None, terse: bool = False) -> str:
    """Join (position, text) parts, given in priority order, within `limit` words: lower-priority
    parts are dropped first and the first part is cut to its first words if it alone is too long.
    A terse writer first drops the function words of a part that does not fit."""
    if limit is None:
        return " ".join(text for _, text in sorted(parts))
    kept, used = [], 0
    for i, (pos, text) in enumerate(parts):
        words = text.split()
        if terse and used + len(words) > limit:
            words = telegraphic(text).split()
        if i == 0 and len(words) > limit:
            words = words[:limit]
        if used + len(words) <= limit:
            kept.append((pos, " ".join(words)))
            used += len(words)
    return " ".join(text for _, text in sorted(kept))


class MemberPolicy(Policy):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.candidates: list[str] = []
        self.known: list[tuple[str, float, set[str]]] = []  # (candidate, signed weight, content words)
        self.texts: dict[str, list[str]] = {}  # candidate -> texts of its strengths it knows
        self.unshared: list[str] = []
        self.pending: str | None = None  # the private fact in its last message
        self.retry: str | None = None  # a private fact whose message was rejected: sent again, shortened
        self.leans: dict[str, str] = {}  # teammate -> the candidate it last said it leans to
        self.lean: str | None = None
        self.limit: int | None = None

    # --- reading ----------------------------------------------------------------------------
    def decide(self, obs: dict) -> list[dict]:
        if not self.candidates:
            self.read_sheet(obs["state"])
        self.read_events(obs)
        allowed = obs["allowed_actions"]
        if "decide" in allowed:
            self.lean = self.favourite(obs)
            return [{"action": "decide", "candidate": self.lean}]
        if "message" in allowed:
            self.lean = self.favourite(obs)
            text = self.compose()
            if text:
                return [{"action": "message", "to": "all", "text": text}]
        return [{"action": "do_nothing"}]

    def read_sheet(self, state: dict) -> None:
        self.candidates = list(state["candidates"])
        for fact in [*state["shared_facts"], *state["private_facts"]]:
            self.learn(fact["about"], 1.0 if fact["note"] == "strength" else -1.0, fact["text"])
        self.unshared = [f["text"] for f in state["private_facts"]]

    def learn(self, candidate: str, weight: float, text: str) -> None:
        self.known.append((candidate, weight, content(text)))
        if weight > 0:
            self.texts.setdefault(candidate, []).append(text)

    def read_events(self, obs: dict) -> None:
        me = obs["you"]
        for e in obs["events"]:
            if e["kind"] == "message_rejected" and e["actor"] == me:
                match = LIMIT.search(str(e.get("reason", "")))
                self.limit = int(match.group(1)) if match else self.limit
                self.retry, self.pending = self.pending, None
            elif e["kind"] == "message" and e["actor"] == me:
                if self.pending in self.unshared:
                    self.unshared.remove(self.pending)
                self.pending = None
            elif e["kind"] == "message":
                self.hear(e["actor"], str(e.get("text", "")))
            elif e["kind"] == "state" and e.get("event") == "vote" and e["actor"] != me:
                self.leans[e["actor"]] = e["candidate"]

    def hear(self, speaker: str, text: str) -> None:
        stance = [c for c in LEAN.findall(text) if c in self.candidates]
        if stance:
            self.leans[speaker] = stance[-1]
        body = LEAN.sub("", text).replace(LEAD_IN, "").strip()
        words = content(body)
        if not words or any(len(words & known) >= SAME_FACT * len(words) for _, _, known in self.known):
            return
        candidate, sign = named(body, self.candidates), tone(body)
        if candidate and sign:
            self.learn(candidate, sign * self.knob("update", 0.8), body)

    # --- choosing ---------------------------------------------------------------------------
    def favourite(self, obs: dict) -> str:
        scores = {c: 0.0 for c in self.candidates}
        for candidate, weight, _ in self.known:
            scores[candidate] += weight
        team = max(len(obs["team"]), 1)
        for candidate in self.leans.values():
            scores[candidate] += self.knob("conformity", 0.5) / team
        top = max(scores.values())
        best = [c for c in self.candidates if scores[c] == top]
        return self.lean if self.lean in best else best[0]

    def beliefs(self) -> dict:
        """Its favourite on what it knows, how clearly it leads, and the leanings it has heard."""
        obs = self.last_obs
        if not self.candidates:
            self.read_sheet(obs["state"])
        fav = self.favourite(obs)
        scores = sorted((sum(w for c, w, _ in self.known if c == cand) for cand in self.candidates), reverse=True)
        margin = scores[0] - scores[1] if len(scores) > 1 else 0.0
        heard = sorted(set(self.leans.values()))
        partners = (
            f"My teammates seem to lean towards {' and '.join(heard)}."
            if heard
            else "My teammates have not said whom they prefer yet."
        )
        plan = f"I intend to back {fav}" + (
            " and share what I know that the others may not."
            if self.unshared
            else " and weigh what the others have shared."
        )
        return {
            "situation": "We are choosing the best candidate for captain from facts that we do not all share.",
            "partners": partners,
            "plan": plan,
            "fields": {"favoured_candidate": fav},
            "certainty": min(0.5 + 0.15 * margin, 0.95),
        }

    def compose(self) -> str | None:
        """Share a private fact (priority: the fact, then the stance), argue for the favourite
        (priority: the stance, then a strength of the favourite it knows), or stay silent."""
        stance = f"I lean {self.lean}."
        self.pending, retry, self.retry = None, self.retry, None
        if retry or (self.unshared and self.rng.random() < self.knob("sharing", 0.07)):
            self.pending = retry or self.rng.choice(self.unshared)
            return fit([(1, self.pending), (2, stance), (0, LEAD_IN)], self.limit, self.terse())
        if self.rng.random() >= self.knob("talk", 0.4):
            return None
        reasons = self.texts.get(self.lean, [])
        parts = [(0, stance)] + ([(1, self.rng.choice(reasons))] if reasons else [])
        return fit(parts, self.limit, self.terse())

    def terse(self) -> bool:
        """Whether this message, if it must be shortened, is first stripped of function words."""
        return self.limit is not None and self.rng.random() < self.knob("concision", 0.5)


POLICY = MemberPolicy
