"""The figures stage's entry point (incognita.access.figures.paper_figures): every declared output
written, reproducible, nothing drawn before every input is checked, and every title marked
when the agents are scripted."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from incognita.access.figures import paper_figures as figures
from incognita.access.figures.figure_inputs import STATS_INPUTS, load_stats
from incognita.access.figures.success_figures import fig5_native
from incognita.common.io import InputError
from incognita.common.plotting import RC, save_figure


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_every_declared_output_is_written_and_nothing_else(rendered):
    out, paths = rendered
    assert [p.name for p in paths] == figures.FIGURES
    assert sorted(p.name for p in out.iterdir()) == sorted(figures.FIGURES)  # no temp files left behind
    assert len(figures.FIGURES) == 6 * 2 + 2 * 2


@pytest.mark.parametrize("stem", figures.FIGURE_STEMS)
def test_figures_are_substantial_images(rendered, stem):
    out, _ = rendered
    width, height = _png_size(out / f"{stem}.png")
    assert width >= 1200 and height >= 500, (stem, width, height)
    assert (out / f"{stem}.png").stat().st_size > 30_000
    svg = (out / f"{stem}.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert f"Figure {stem[3]}." in svg  # the title is real text, so the figure names itself


def test_output_is_reproducible(stats_dir, rendered, tmp_path):
    out, _ = rendered
    with matplotlib.rc_context(RC):
        again = save_figure(fig5_native(load_stats(stats_dir)), tmp_path, "fig5_native")
    for path in again:  # no date, software stamp or random id varies between runs
        assert path.read_bytes() == (out / path.name).read_bytes(), path.name


@pytest.mark.parametrize("name", list(STATS_INPUTS))
def test_missing_input_csv_names_the_file(stats_dir, tmp_path, name):
    for src in stats_dir.glob("*.csv"):
        if src.stem != name:
            (tmp_path / src.name).write_bytes(src.read_bytes())
    with pytest.raises(InputError, match=re.escape(str(tmp_path / f"{name}.csv")) + ".*not found"):
        figures.make_figures(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing is drawn before every input is checked


def test_every_title_says_when_the_agents_are_scripted(stats_dir, tmp_path):
    """A figure of the offline default cannot pass for a result about language models."""

    def titles(directory: Path) -> list[str]:
        stats = load_stats(directory)
        return [figures.FIGURE_BUILDERS[stem](stats).get_suptitle() for stem in figures.FIGURE_STEMS]

    note = "Offline scripted agents, not language models"
    for backend, expected in (("scripted", True), ("openai", False), ("openai,scripted", True)):
        out = tmp_path / backend
        out.mkdir()
        for src in stats_dir.glob("*.csv"):
            (out / src.name).write_bytes(src.read_bytes())
        success = pd.read_csv(out / "success.csv").assign(agent_backend=backend)
        success.to_csv(out / "success.csv", index=False)
        assert all((note in t) == expected for t in titles(out)), backend
