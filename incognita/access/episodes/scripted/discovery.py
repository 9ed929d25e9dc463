"""How a scripted agent turns descriptions of desks' work into guesses of who holds which tool:
the desks' replies to a survey (`map_replies`) and a declared capability map (`read_map`).

The agent knows the tools (their names and the upstream descriptions, as any agent of
the retail domain does) but not the partition. Each desk answers "what do you handle?" in
its own words. The rule is general and knows no desk's wording: a tool goes to the desk
whose reply shares the most content words with the tool's name and the first sentence of
its description, each shared word weighted by how rare it is among the replies (a word
every desk says, like "customer", tells nothing apart) and words of the tool's own name
counting double. A tool no reply mentions, or that two desks match equally well, stays
unassigned: the agent then finds its holder by trying desks, and every refusal it meets
is a dead end.

A declared map is read as a reader reads it (`read_map`). Its role texts are written in the
words of the business ("the customer's profile", "work out the amounts"), the tools in the
words of the toolkit ("user", "calculate"); a reader of the domain knows how the one is said
in the other. The domain says so (`plain_words`: a toolkit term -> the everyday words for it,
retail's in incognita/access/domains/retail/scripted/tool_words.py), and each tool is read with
those words beside its own before the same weighing. The longest term wins where terms overlap
("user id" is an identifier, not a profile).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

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
    return _place(replies, {tool: (tool, description) for tool, description in tools.items()})


def read_map(
    roles: dict[str, str], tools: dict[str, str], plain_words: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Tool name -> holder, from a declared map (`roles`: holder -> its role text), each tool's
    name and description read with the everyday words of its terms beside them (`plain_words`)."""
    plain = _plain(plain_words or {})
    tools_read = {tool: (plain(tool), plain(description)) for tool, description in tools.items()}
    return _place(roles, tools_read, words=_word_forms)


def _word_forms(text: str) -> set[str]:
    """Content words with a silent final "e" dropped, so that the forms of one word meet
    ("exchange", "exchanges" and "exchanging" are one word to a reader)."""
    return {w[:-1] if w.endswith("e") and len(w) > 3 else w for w in content_words(text)}


def _plain(plain_words: Mapping[str, str]):
    """A function adding, after each toolkit term of a text, the everyday words for it."""
    if not plain_words:
        return lambda text: text
    lowered = {t.lower(): words for t, words in plain_words.items()}
    terms = sorted(lowered, key=lambda t: (-len(t), t))  # the longest term first: "user id" before "user"
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")(?:e?s)?\b")  # a plural too
    return lambda text: pattern.sub(
        lambda m: f"{m.group(0)} {lowered[m.group(1)]}", (text or "").lower().replace("_", " ")
    )


def _place(descriptions: dict[str, str], tools: dict[str, tuple[str, str]], words=content_words) -> dict[str, str]:
    """Tool -> the one desk whose description shares the most weight of words with the tool's
    name (counted double) and the first sentence of its description (`tools`: tool -> both)."""
    said = {desk: words(text) for desk, text in descriptions.items()}
    spread = Counter(word for words in said.values() for word in words)
    holders = {}
    for tool, (name, description) in tools.items():
        own = words(name)
        described = own | words(_first_sentence(description or ""))
        scores = {
            desk: sum((2.0 if w in own else 1.0) / spread[w] for w in words & described) for desk, words in said.items()
        }
        best = max(scores.values(), default=0.0)
        winners = [desk for desk, score in scores.items() if score == best]
        if best > 0 and len(winners) == 1:
            holders[tool] = winners[0]
    return holders
