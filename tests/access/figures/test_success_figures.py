"""Figures 2 and 5 (incognita.access.figures.success_figures): the frozen decisions shortened to
their verdict."""

from __future__ import annotations

from incognita.access.figures.success_figures import short_decision


def test_decisions_are_shortened_to_their_verdict():
    long = "insufficient evidence (the interval includes zero; this is not evidence of no effect)"
    assert short_decision(long) == "insufficient evidence"
    assert short_decision("supports the hypothesis") == "supports the hypothesis"
