"""How a surveying agent turns desks' descriptions of their own work into guesses of who
holds which tool.

The agent knows the tools (their names and the upstream descriptions, as any agent of
the retail domain does) but not the partition. Each desk answers "what do you handle?" in
its own words. The rule is general and knows no desk's wording: a tool goes to the desk
whose reply shares the most content words with the tool's name and the first sentence of
its description, each shared word weighted by how rare it is among the replies (a word
every desk says, like "customer", tells nothing apart) and words of the tool's own name
counting double. A tool no reply mentions, or that two desks match equally well, stays
unassigned: the agent then finds its holder by trying desks, and every refusal it meets
is a dead end.
"""

from __future__ import annotations

import re
from collections import Counter

STOP_WORDS = frozenset(
    "a an the of and or to in on for with by is are be it its this that you your their they we our i my me "
    "as at from can only if not no any one all other such do does what which who when while also has have "
    "am will would could should there here so than then them these those into out about".split()
)
_SUFFIXES = ("ies", "es", "s", "ing", "ed")


def content_words(text: str) -> set[str]:
    """Lower-case content words of `text`, crudely stemmed (plurals, -ing, -ed)."""
    out = set()
    for word in re.findall(r"[a-z]+", text.lower().replace("_", " ")):
        if word in STOP_WORDS or len(word) < 3:
            continue
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
                break
        out.add(word)
    return out


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", " ".join(text.split()), maxsplit=1)[0]


def map_replies(replies: dict[str, str], tools: dict[str, str]) -> dict[str, str]:
    """Tool name -> desk, for the tools one reply matches better than every other.

    `replies`: desk -> what it said about its work; `tools`: tool name -> description.
    """
    said = {desk: content_words(text) for desk, text in replies.items()}
    spread = Counter(word for words in said.values() for word in words)
    holders = {}
    for tool, description in tools.items():
        own = content_words(tool)
        described = own | content_words(_first_sentence(description or ""))
        scores = {
            desk: sum((2.0 if w in own else 1.0) / spread[w] for w in words & described) for desk, words in said.items()
        }
        best = max(scores.values(), default=0.0)
        winners = [desk for desk, score in scores.items() if score == best]
        if best > 0 and len(winners) == 1:
            holders[tool] = winners[0]
    return holders
