"""The viewer at the widths people read it at (docs/viewer.md, "Widths"): the compare view and the
episode page at 800, 1,000 and 1,400 px, measured in the browser.

Run by hand to measure a built site (the numbers of docs/viewer.md):
    PYTHONPATH=tests python tests/viewer/test_viewer_widths.py results/viewer <model> <task> <rep> <arm>
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from viewer_helpers import FIXTURE_EPISODE, launch, route

WIDTHS = (800, 1000, 1400)
# The fixture cell with the longest social episode (23 turns): its compare view is the tallest.
COMPARE = ("surveyor", "retail/11", 0)


def load(page, url: str, width: int) -> None:
    """Open `url` afresh at `width` px (the page decides its folds when it is drawn)."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("body[data-ready]", timeout=15000)


def compare_measures(page, base: str, model: str, task: str, rep: int, width: int) -> dict:
    """The compare view of one cell at `width`: the narrowest text column of the social arm's
    rows (each row's content box), the page's height, and whether anything scrolls sideways."""
    load(page, f"{base}#{route('compare', model, task, rep)}", width)
    return page.evaluate(
        """() => {
          const texts = [...document.querySelectorAll('.compare-cell[data-arm=social] .compare-row > .content')]
            .map((e) => e.clientWidth);
          const doc = document.documentElement;
          return { text: Math.min(...texts), height: doc.scrollHeight, sideways: doc.scrollWidth > doc.clientWidth };
        }"""
    )


def episode_measures(page, base: str, key: tuple, width: int) -> dict:
    """One episode page at `width`: where its outcome panel and its timeline start, the page's
    height, and whether the panels sit beside the timeline."""
    load(page, f"{base}#{route(*key)}", width)
    return page.evaluate(
        """() => {
          const top = (sel) => document.querySelector(sel).getBoundingClientRect().top + window.scrollY;
          const outcome = document.querySelector('[data-testid=outcome]').getBoundingClientRect();
          const timeline = document.querySelector('[data-testid=timeline]').getBoundingClientRect();
          const doc = document.documentElement;
          return { outcome: Math.round(top('[data-testid=outcome]')), timeline: Math.round(top('[data-testid=timeline]')),
                   height: doc.scrollHeight, beside: outcome.left >= timeline.right,
                   sideways: doc.scrollWidth > doc.clientWidth };
        }"""
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_compare_view_reads_at_each_width(page, site, width):
    base = site.resolve().as_uri() + "/index.html"
    wide = compare_measures(page, base, *COMPARE, 1400)
    m = compare_measures(page, base, *COMPARE, width)
    # Each arm's text keeps a readable measure (about 40 characters and more) ...
    assert m["text"] >= 280, m
    # ... so the page stays about as tall as at 1,400 px (two arms a row below 1,100 px).
    assert m["height"] <= 2.5 * wide["height"], (m, wide)
    assert not m["sideways"]
    # The lanes are still drawn: every row of the social column has its dot.
    social = page.locator(".compare-cell[data-arm=social] .compare-row")
    assert social.count() == page.locator(".compare-cell[data-arm=social] .compare-row .dot").count() > 0
    if width < 1100:  # two arms a row: each cell names its arm
        assert page.locator(".compare-cell[data-arm=social] .cell-arm").first.is_visible()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_episode_page_shows_its_outcome_at_each_width(page, site, width):
    base = site.resolve().as_uri() + "/index.html"
    m = episode_measures(page, base, FIXTURE_EPISODE, width)
    assert not m["sideways"]
    if width >= 1100:
        assert m["beside"] and m["outcome"] < 200, m
        return
    # Narrow: the panels come first, the outcome within the first screen, and the timeline
    # starts within the first two screens (the later panels are folded) ...
    assert m["outcome"] < 300 and m["timeline"] < 2 * 900, m
    assert page.locator("[data-testid=outcome]").evaluate("e => e.open")
    assert not page.locator("[data-testid=reference]").evaluate("e => e.open")
    # ... and a folded panel opens on a click.
    page.click("[data-testid=reference] summary")
    assert "required calls" in page.inner_text("[data-testid=reference]").lower()


def measure(site: Path, model: str, task: str, rep: int, arm: str) -> None:
    """Print the numbers the tests above assert, for one cell of a built site."""
    from playwright.sync_api import sync_playwright

    base = site.resolve().as_uri() + "/index.html"
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        for width in WIDTHS:
            c = compare_measures(page, base, model, task, rep, width)
            e = episode_measures(page, base, (arm, model, task, rep), width)
            print(
                f"{width} px: compare {model}/{task}/r{rep}: social text {c['text']} px, page {c['height']} px; "
                f"{arm} episode: outcome panel at y = {e['outcome']}, timeline at y = {e['timeline']}, "
                f"page {e['height']} px"
            )
        browser.close()


if __name__ == "__main__":
    site_dir, model, task, rep, arm = sys.argv[1:6]
    measure(Path(site_dir), model, task, int(rep), arm)
