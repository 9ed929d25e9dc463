"""Tables 1 and 2 (incognita.access.figures.figure_tables): the Markdown renderer, readable headers
and every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from figure_helpers import ARMS

from incognita.access.figures.figure_style import ARM_LABELS, fmt_signed
from incognita.access.figures.figure_tables import TABLE1_CSV, markdown_table


def test_markdown_table_renderer():
    text = markdown_table(["Pair", "p"], [["a | b", "0.5"], ["c", "1"]], "lr")
    assert text == "| Pair | p |\n| :--- | ---: |\n| a \\| b | 0.5 |\n| c | 1 |\n"
    with pytest.raises(ValueError):
        markdown_table(["a", "b"], [["only one"]])


def test_tables_carry_readable_headers_and_every_row(rendered, stats_dir):
    out, _ = rendered
    inter = pd.read_csv(stats_dir / "interactions.csv")
    t1 = pd.read_csv(out / "table1.csv")
    assert list(t1.columns) == list(TABLE1_CSV.values())
    assert np.allclose(t1["Mean delta"], inter["mean_delta"]) and len(t1) == 6
    md = (out / "table1.md").read_text()
    first = inter.iloc[0]
    assert f"| {first.model_a} – {first.model_b} | 18 | {fmt_signed(first.mean_delta)} |" in md
    assert "Global dispersion test" in md
    t2 = pd.read_csv(out / "table2.csv")
    assert list(t2["Condition"]) == [ARM_LABELS[a] for a in ARMS]
    md2 = (out / "table2.md").read_text()
    assert md2.count("\n| ") == 2 + len(ARMS) and "| Socially distributed | " in md2
    assert t1["Tasks"].dtype == np.int64 and "18.0" not in (out / "table1.csv").read_text()
