"""The viewer's search index (incognita.viewer.search_index), without a browser."""

from __future__ import annotations

import base64
import gzip
import json

from incognita.viewer.search_index import SearchIndex, words


def decode(encoded: str) -> list[int]:
    docs, doc = [], 0
    for part in encoded.split("."):
        doc += int(part, 36)
        docs.append(doc)
    return docs


def test_words_are_lower_case_runs_of_letters_and_digits():
    assert words('Refund to gift_card_7711863, $54.04 for "#W2378156" a') == {
        "refund",
        "to",
        "gift",
        "card",
        "7711863",
        "54",
        "04",
        "for",
        "w2378156",
    }


def test_every_event_is_a_document_and_common_words_are_listed_not_indexed():
    index = SearchIndex()
    index.add_page("social/x/1/0", "data/a.js", [{"text": "hello refund"}, {"text": "hello"}], lambda i, e: f"e{i}")
    runs = [{"id": 7, "payload": {"note": "refund 40 items"}}, {"id": 9, "kind": "probe", "follows": 7, "q": "hello"}]
    index.add_page("collabsim/t/c/m/d/s1", "data/b.js", runs, lambda i, e: f"ev{e.get('follows', e['id'])}")
    payload = index.payload()
    assert payload["pages"] == [["social/x/1/0", "data/a.js"], ["collabsim/t/c/m/d/s1", "data/b.js"]]
    assert payload["doc_page"] == [0, 0, 1, 1] and payload["doc_event"] == ["e0", "e1", "ev7", "ev7"]
    assert payload["common"] == ["hello"] and "hello" not in payload["words"]  # in 3 of 4 documents
    assert decode(payload["words"]["refund"]) == [0, 2] and decode(payload["words"]["40"]) == [2]
    from incognita.viewer.site import compressed

    shipped = json.loads(gzip.decompress(base64.b64decode(compressed(payload)["gzip_json"])))
    assert shipped == payload
