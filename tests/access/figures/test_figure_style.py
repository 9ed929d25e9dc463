"""The number formats of the figures and tables (incognita.access.figures.figure_style)."""

from __future__ import annotations

from incognita.access.figures.figure_style import fmt_p, fmt_signed, fmt_usd


def test_number_formats():
    assert fmt_signed(0.333) == "+0.333" and fmt_signed(-0.0372) == "−0.037"
    assert fmt_p(0.0058594) == "0.00586" and fmt_p(1e-7) == "<0.00001"
    assert fmt_usd(1395.2) == "$1,395" and fmt_usd(float("nan")) == "—"
