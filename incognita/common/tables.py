"""Result tables: CSV at full precision beside a GitHub-flavoured Markdown copy (pandas' own
Markdown writer needs `tabulate`, absent here)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from incognita.common.io import atomic_write_text

# Columns whose name starts with one of these get more decimals (p-values are compared at 1e-5).
_PRECISE = ("p_",)


def _cell(value: object, digits: int) -> str:
    if value is None or value is pd.NA:
        return ""
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()  # numpy scalar -> Python, so the bool/float checks below apply
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def to_markdown(df: pd.DataFrame, digits: int = 3, precise_digits: int = 5) -> str:
    """Render every row of `df`; floats to `digits` decimals, p-value columns to `precise_digits`."""
    names = [str(c) for c in df.columns]
    cells = [
        [_cell(v, precise_digits if name.startswith(_PRECISE) else digits) for v in df[col].tolist()]
        for name, col in zip(names, df.columns)
    ]
    lines = [
        "| " + " | ".join(names) + " |",
        "| " + " | ".join("---:" if _numeric(df[c]) else "---" for c in df.columns) + " |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*cells)]
    return "\n".join(lines) + "\n"


def write_table(df: pd.DataFrame, out_dir: Path, name: str, md: pd.DataFrame | None = None) -> list[Path]:
    """`name`.csv (full precision, NaN as empty) and `name`.md (of `md` if given), written atomically."""
    csv_path, md_path = out_dir / f"{name}.csv", out_dir / f"{name}.md"
    atomic_write_text(csv_path, df.to_csv(index=False))
    atomic_write_text(md_path, f"# {name}\n\n" + to_markdown(df if md is None else md))
    return [csv_path, md_path]
