"""What every card shares (incognita.access.cards.card): demand sentences become requests with
their conditional fallbacks."""

from incognita.access.cards.card import build_requests
from incognita.access.cards.text import split_sentences


def test_fallback_sentences_attach_to_their_demand():
    sentences = split_sentences(
        "You want to return the lamp. If the agent refuses, ask for a human. Also cancel the mug."
    )
    reqs = build_requests(sentences)
    assert [r["covers"] for r in reqs] == [[0, 1], [2]]
    assert reqs[0]["fallbacks"] == ["If the agent refuses, ask for a human."]
