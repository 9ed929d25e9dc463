"""Figure 3 (incognita.access.figures.breakdown_figures): absent processes drawn as absent, not
zero, and an unknown outcome drawn and named."""

from __future__ import annotations

from figure_helpers import copy_with

from incognita.access.figures.breakdown_figures import fig3_breakdown, process_matrix
from incognita.access.figures.figure_inputs import load_stats
from incognita.access.figures.figure_style import ABSENT


def test_absent_processes_are_drawn_as_absent_not_zero(stats_dir, rendered):
    out, _ = rendered
    stats = load_stats(stats_dir)
    matrix = process_matrix(stats["process"], "direct", stats.models)
    assert matrix.loc["role_identification"].isna().all()  # direct has no holder to find
    assert matrix.loc["execution"].notna().all()
    svg = (out / "fig3_breakdown.svg").read_text()
    # absent cells: 2 measures x 4 models in each centralized arm; native has none at all
    assert svg.count(f">{ABSENT}<") == 2 * 4 * 2
    assert "no process measures in the statistics" in svg
    assert "Failed, no type (native harness)" in svg


def test_unknown_outcome_is_drawn_and_named(stats_dir, tmp_path):
    def rename(df):
        df.loc[df["outcome"] == "failed_unlabelled", "outcome"] = "mystery_label"
        return df

    fig = fig3_breakdown(load_stats(copy_with(stats_dir, tmp_path, "composition", rename)))
    labels = [t.get_text() for t in fig.subfigs[0].legends[0].get_texts()]
    assert any("mystery_label" in lab for lab in labels) and not any("Failed, no type" in lab for lab in labels)
