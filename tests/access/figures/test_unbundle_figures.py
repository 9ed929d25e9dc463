"""Figure 8 (exploratory): drawn from the unbundling table when the statistics have one."""

from __future__ import annotations

import struct
from pathlib import Path

import pandas as pd
import pytest

from incognita.access.figures.paper_figures import FIGURES, make_figures
from incognita.access.stats.exploratory_spec import ExploratorySpec
from incognita.access.stats.stats_stage import run_stats
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
SPEC = ExploratorySpec(contrasts=(("indirect", "social"),), unbundle_from="social", unbundle_to="direct")


@pytest.fixture(scope="module")
def stats_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stats")
    run_stats(
        synthetic_trials(seed=3),
        [(ROOT / "config/domains/retail/interpretation.yaml", ROOT / "config/domains/retail/locks.yaml")],
        out,
        splits=20,
        exploratory=SPEC,
    )
    return out


def test_figure_8_is_drawn_beside_the_others(stats_dir, tmp_path):
    written = [p.name for p in make_figures(stats_dir, tmp_path)]
    assert written == [*FIGURES, "fig8_unbundle.png", "fig8_unbundle.svg"]
    width, height = struct.unpack(">II", (tmp_path / "fig8_unbundle.png").read_bytes()[16:24])
    assert width >= 1200 and height >= 500
    svg = (tmp_path / "fig8_unbundle.svg").read_text()
    assert "Figure 8 (exploratory)" in svg and "Separated model pairs per arm" in svg


def test_a_damaged_unbundling_table_names_the_file(stats_dir, tmp_path):
    for src in stats_dir.glob("*.csv"):
        (tmp_path / src.name).write_bytes(src.read_bytes())
    pd.read_csv(stats_dir / "unbundling.csv").drop(columns=["gap_low"]).to_csv(tmp_path / "unbundling.csv", index=False)
    with pytest.raises(InputError, match=r"unbundling\.csv: missing column\(s\) gap_low"):
        make_figures(tmp_path, tmp_path / "out")
