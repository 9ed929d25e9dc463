"""Fixtures of the figures stage's tests: the synthetic statistics and the figures drawn from them,
built once per session (tests/figure_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from figure_helpers import write_synthetic_stats

from incognita.access.figures.paper_figures import make_figures


@pytest.fixture(scope="session")
def stats_dir(tmp_path_factory) -> Path:
    return write_synthetic_stats(tmp_path_factory.mktemp("stats"))


@pytest.fixture(scope="session")
def rendered(stats_dir, tmp_path_factory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("figures")
    return out, make_figures(stats_dir, out)
