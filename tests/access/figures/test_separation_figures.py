"""Figures 4 and 7 (incognita.access.figures.separation_figures): the split-half figure keeps the
null distribution."""

from __future__ import annotations

from figure_helpers import ARMS

from incognita.access.figures.figure_inputs import load_stats


def test_split_half_keeps_the_null_kind(stats_dir, rendered):
    # "null" is a contract value, not a missing marker: both distributions must reach the figure
    stats = load_stats(stats_dir)
    assert set(stats["split_half"]["kind"]) == {"observed", "null"}
    svg = (rendered[0] / "fig7_split_half.svg").read_text()
    assert svg.count(">null mean ") == len(ARMS) and svg.count(">observed mean ") == len(ARMS)
