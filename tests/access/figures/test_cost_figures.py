"""Figure 6 (incognita.access.figures.cost_figures): zero costs are drawn with a note, paid ones
without."""

from __future__ import annotations

import pandas as pd
from figure_helpers import cost_rows

from incognita.access.figures.cost_figures import fig6_cost
from incognita.access.figures.figure_inputs import load_stats
from incognita.access.figures.figure_style import ZERO_COST_NOTE


def test_zero_costs_render_with_a_note(rendered, stats_dir, tmp_path):
    out, _ = rendered
    assert ZERO_COST_NOTE.replace("$", "") in (out / "fig6_cost.svg").read_text().replace("$", "")
    paid = tmp_path / "paid"
    paid.mkdir()
    for src in stats_dir.glob("*.csv"):
        (paid / src.name).write_bytes(src.read_bytes())
    pd.DataFrame(cost_rows(offline=False)).to_csv(paid / "cost.csv", index=False)
    fig = fig6_cost(load_stats(paid))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts] + [fig.get_supxlabel()]
    assert not any("scripted (offline)" in t or "every value is 0" in t for t in texts)
