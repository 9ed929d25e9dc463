"""The viewer's full-text search: an inverted index built with the site, loaded on first use.

Every event of every page (episodes, native runs, CollabSim runs) is one document: all its
strings and numbers (message text, tool names, arguments, results, reasons, payloads),
lower-cased and split into words of letters and digits. The index maps each word to the
documents that hold it, as a delta-encoded list in base 36, so the page can answer a query
(every word of it, in any order) without a server and without loading the episodes; it loads
an episode's own data only to show a hit's text. Words in more than half of the documents
("you", "the") are left out and listed, so the page can say it ignored them.

Written as `data/search.js`, gzip-compressed like every page (incognita.viewer.site.compressed);
docs/viewer.md, "Search".
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

WORD = re.compile(r"[a-z0-9]+")
COMMON_SHARE = 0.5  # a word in more documents than this share is too common to index


def words(text: str) -> set[str]:
    """The searchable words of `text`: runs of letters and digits, lower case, two characters or more."""
    return {w for w in WORD.findall(text.lower()) if len(w) > 1}


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


def _b36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


class SearchIndex:
    """Documents added page by page; `payload()` is what the site ships."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = []  # [key, data file]
        self.doc_page: list[int] = []
        self.doc_event: list[str] = []  # the event's link part: e<i> (episodes, native) or ev<id> (CollabSim)
        self.postings: dict[str, list[int]] = defaultdict(list)

    def add_page(self, key: str, src: str, events: list[dict], link) -> None:
        """Index `events` of the page `key` (data file `src`); `link(i, event)` is an event's link part."""
        page = len(self.pages)
        self.pages.append([key, src])
        for i, event in enumerate(events):
            doc = len(self.doc_page)
            self.doc_page.append(page)
            self.doc_event.append(link(i, event))
            for w in words(" ".join(_strings(event))):
                self.postings[w].append(doc)

    def payload(self) -> dict:
        n = len(self.doc_page)
        common = sorted(w for w, docs in self.postings.items() if len(docs) > COMMON_SHARE * n)
        index = {}
        for w, docs in self.postings.items():
            if len(docs) > COMMON_SHARE * n:
                continue
            deltas = [docs[0]] + [b - a for a, b in zip(docs, docs[1:])]
            index[w] = ".".join(map(_b36, deltas))
        return {
            "pages": self.pages,
            "doc_page": self.doc_page,
            "doc_event": self.doc_event,
            "words": dict(sorted(index.items())),
            "common": common,
        }
