"""The trajectory viewer (incognita.viewer, docs/viewer.md), tested in a real browser.

The site is built from the smoke design's records, committed under tests/fixtures/viewer/
(16 trials of the retail tasks 11 and 46: 12 episodes of our arms, 4 native runs, the trials
table, and the two tasks' entries of retail's coordination reference under reference/retail/),
plus one CollabSim run made here (a real run of the
smoke design's condition takes a second, so it is not committed). Headless Chromium is
Debian's (`/usr/bin/chromium`, installed with apt when missing and we are root), driven by
Playwright with that executable: no browser is downloaded.

The fixtures are in conftest.py, the pieces they share with the other files in
tests/viewer_helpers.py. Run by hand to measure a built site and take the screenshots of
docs/viewer.md:
    python tests/viewer/test_viewer.py results/viewer [--screenshots docs/img]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from viewer_helpers import (
    FIXTURE_EPISODE,
    FIXTURE_LABEL,
    FIXTURES,
    HOSTILE,
    HOSTILE_EPISODE,
    RARE_EVENTS,
    REFERENCE_ROOT,
    ROOT,
    launch,
    open_route,
    route,
    rows,
)

# --------------------------------------------------------------------------- tests


def test_index_lists_every_trial(page, site, trials):
    open_route(page, site.resolve().as_uri() + "/index.html", "trials")
    assert rows(page) == len(trials) == 16
    assert page.inner_text("[data-testid=shown]") == "16"
    arms = page.locator("table.grid tbody tr.row td:first-child").all_inner_texts()
    assert sorted(set(arms)) == ["direct", "indirect", "native", "social"]


def test_filters_narrow_to_the_right_count_and_stay_in_the_link(page, site, trials):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials")
    page.select_option("select[data-filter=arm]", "social")
    want = int((trials["arm"] == "social").sum())
    assert rows(page) == want == 4
    page.fill("input[data-filter=turns]", ">5")
    want = int(((trials["arm"] == "social") & (trials["turns"] > 5)).sum())
    assert rows(page) == want
    assert page.inner_text("[data-testid=shown]") == str(want)
    # The value lists count under the other filters: models among the social trials with >5 turns.
    options = page.locator("select[data-filter=model] option").all_inner_texts()
    sub = trials[(trials["arm"] == "social") & (trials["turns"] > 5)]
    assert options[1:] == [f"{m} ({n})" for m, n in sorted(sub["model"].value_counts().items())]
    link = page.url
    assert "arm=social" in link and "turns=%3E5" in link
    page.goto("about:blank")
    page.goto(link)
    page.wait_for_selector("body[data-ready]")
    assert rows(page) == want


def test_a_column_chooser_hides_columns_and_keeps_the_choice_in_the_address(page, site):
    open_route(page, site.resolve().as_uri() + "/index.html", "trials?arm=social")
    headers = lambda: page.locator("table.grid thead tr:first-child th").count()  # noqa: E731
    before = headers()
    # The per-kind finding counts of the participant audit are in the list, not shown at first.
    from incognita.access.taxonomy import FINDING_KINDS

    # So is the domain's, with the fixture's one domain (a design of several shows it).
    assert (
        page.inner_text("[data-testid=columns] summary") == f"columns ({before} of {before + len(FINDING_KINDS) + 1})"
    )
    page.click("[data-testid=columns] summary")
    page.uncheck("[data-testid=columns] input[data-col=turns]")
    assert headers() == before - 1 and "cols=" in page.url and "turns" not in page.url.split("cols=")[1]
    assert "arm=social" in page.url  # the filters stay
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("body[data-ready]")
    assert headers() == before - 1
    assert page.locator("table.grid thead button.sort[data-col=turns]").count() == 0
    # A filter no trial passes (no fixture trial is excluded) says so instead of showing nothing.
    open_route(page, site.resolve().as_uri() + "/index.html", "trials?outcome=excluded")
    assert rows(page) == 0 and page.inner_text("[data-testid=empty]") == (
        "No row of 16 matches these filters: outcome excluded."
    )


def test_the_index_filters_by_domain(page, site, trials):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials?domain=retail&arm=social")
    assert rows(page) == int((trials["arm"] == "social").sum()) == 4
    # A filter in force shows its column, though one domain hides it at first.
    headers = page.locator("table.grid thead tr:first-child th").all_inner_texts()
    assert any(h.startswith("domain") for h in headers)
    options = page.locator("select[data-filter=domain] option").all_inner_texts()
    assert options[1:] == ["retail (4)"]
    open_route(page, base, "trials?domain=mock")
    assert rows(page) == 0
    open_route(page, base, "tasks")
    assert page.locator("[data-testid=domains]").count() == 0  # one domain: nothing to choose


def test_sorting_by_a_number_column(page, site, trials):
    open_route(page, site.resolve().as_uri() + "/index.html", "trials?sort=-turns")
    first = page.locator("table.grid tbody tr.row").first
    columns = page.locator("table.grid thead tr:first-child th").all_inner_texts()
    turns = first.locator("td").nth(next(i for i, c in enumerate(columns) if c.startswith("turns"))).inner_text()
    assert int(turns) == int(trials["turns"].max())


def test_episode_page_shows_events_labels_and_the_reference(page, site, trials):
    arm, model, task, rep = FIXTURE_EPISODE
    row = trials[
        (trials["arm"] == arm) & (trials["model"] == model) & (trials["task"] == task) & (trials["rep"] == rep)
    ]
    assert row["failure_type"].item() == FIXTURE_LABEL  # the fixture is what this test says it is
    record = json.loads((FIXTURES / "episodes" / arm / model / task / f"r{rep}.json").read_text())
    open_route(page, site.resolve().as_uri() + "/index.html", "trials")
    page.click(f"a[href^='#{route(arm, model, task, rep)}?in=trials']")  # the index row links to its episode
    page.wait_for_selector(f"[data-key='{arm}/{model}/{task}/{rep}']")
    # One lane per participant: the agent, the customer, all six desks, the environment.
    lanes = page.locator(".tl-head .lane-name").evaluate_all("els => els.map(e => e.title)")
    assert lanes == ["agent", "USER", "Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn", "ENVIRONMENT"]
    # Every event of the record, by kind.
    assert page.locator(".timeline .tl-row[data-kind]").count() == len(record["events"])
    for kind in {e["type"] for e in record["events"]}:
        n = sum(e["type"] == kind for e in record["events"])
        assert page.locator(f".timeline .tl-row[data-kind={kind}]").count() == n
    messages = [e for e in record["events"] if e["type"] == "message"]
    assert messages[0]["text"] in page.inner_text("[data-testid=timeline]")
    # The reader's label and the rule that assigned it, with its evidence.
    rule = page.inner_text("[data-testid=failure-rule]")
    assert "requested not obtained" in rule and "rule 2 of the reader's table" in rule
    assert "source approached" in page.inner_text("[data-testid=reader]")
    # The reference: the user id released at a turn, linked to that event.
    release = next(i for i, e in enumerate(record["events"]) if e["type"] == "disclosure" and e["status"] == "released")
    link = page.locator(f"[data-testid=reference] a[href$='/e{release}']").first
    assert link.inner_text() == f"✓ turn {record['events'][release]['turn']}"
    link.click()
    page.wait_for_selector(f"#e{release}.focus")
    assert page.url.endswith(f"#{route(arm, model, task, rep, f'e{release}')}")
    assert "✗" in page.inner_text("[data-testid=reference]")


def test_the_participant_audit_marks_its_findings_on_the_timeline(page, site, audited_site):
    arm, model, task, rep = FIXTURE_EPISODE
    address = route(arm, model, task, rep)
    open_route(page, site.resolve().as_uri() + "/index.html", address)  # a table read without the audit
    assert "has no audit for this trial" in page.inner_text("[data-testid=audit]")
    assert page.locator(".timeline .badge", has_text="audit:").count() == 0
    out, event, finding, _ = audited_site
    open_route(page, out.resolve().as_uri() + "/index.html", address)
    panel = page.inner_text("[data-testid=audit]")
    assert "replies audited\n7" in panel.replace("\t", "\n") and "no participant fault found" in panel
    assert f"named tool {finding['participant']}, turn {finding['turn']}: get_order_details" in panel
    assert page.locator(f"#e{event} .badge", has_text="audit: named tool").count() == 1
    page.click(f"[data-testid=audit] a[href$='/e{event}']")
    page.wait_for_selector(f"#e{event}.focus")
    # The outcome panel calls the outcome an outcome, and lane names are whole.
    assert page.inner_text("[data-testid=outcome]").startswith("Outcome\noutcome")
    names = page.locator(".tl-head .lane-name").evaluate_all("els => els.map(e => [e.textContent, e.title])")
    assert ["ENVIRONMENT", "ENVIRONMENT"] in names and all(text == title for text, title in names)


def test_event_filters_and_lane_focus(page, site):
    arm, model, task, rep = FIXTURE_EPISODE
    open_route(page, site.resolve().as_uri() + "/index.html", route(arm, model, task, rep))
    total = page.locator(".timeline .tl-row[data-kind]").count()
    page.uncheck(".tl-filters input[data-kind=message]")
    shown = page.locator(".timeline .tl-row[data-kind]:visible").count()
    assert shown == page.locator(".timeline .tl-row[data-kind]:not([data-kind=message])").count() < total
    page.check(".tl-filters input[data-kind=message]")
    page.select_option(".tl-filters select[data-filter=lane]", "Boreal")
    visible = page.locator(".timeline .tl-row[data-kind]:visible")
    assert 0 < visible.count() < total
    assert all("Boreal" in lanes.split() for lanes in visible.evaluate_all("els => els.map(e => e.dataset.lanes)"))


def test_previous_and_next_follow_the_filtered_list_and_filters_live_in_the_address(page, site, trials):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials?arm=social&sort=task")
    social = trials[trials["arm"] == "social"].sort_values("task", kind="stable")
    keys = [f"social/{r.model}/{r.task}/{r.rep}" for r in social.itertuples()]
    page.locator("table.grid tbody tr.row").first.click()
    page.wait_for_selector(f"[data-key='{keys[0]}']")
    assert "in=trials" in page.url and "arm=social" in page.url
    nav = page.inner_text("[data-testid=list-nav]")
    assert f"1 of {len(keys)} in the list" in nav
    page.click("[data-testid=list-nav] a[data-testid=next]")
    page.wait_for_selector(f"[data-key='{keys[1]}']")
    assert f"2 of {len(keys)}" in page.inner_text("[data-testid=list-nav]")
    page.click("[data-testid=list-nav] a[data-testid=previous]")
    page.wait_for_selector(f"[data-key='{keys[0]}']")
    # The event-kind and lane filters go into the address, and come back from it.
    page.uncheck(".tl-filters input[data-kind=message]")
    page.select_option(".tl-filters select[data-filter=lane]", "USER")
    assert "hide=message" in page.url and "lane=USER" in page.url
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector("body[data-ready]")
    assert not page.is_checked(".tl-filters input[data-kind=message]")
    assert page.input_value(".tl-filters select[data-filter=lane]") == "USER"
    assert page.locator(".timeline .tl-row[data-kind=message]:visible").count() == 0
    page.click("[data-testid=list-nav] a:has-text('the list')")
    page.wait_for_selector("table.grid")
    assert rows(page) == len(keys)


def test_search_finds_events_links_them_and_narrows_the_index(page, site):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials")
    page.fill("[data-testid=search-input]", "pwned onerror")  # words of the injected markup, in any order
    page.press("[data-testid=search-input]", "Enter")
    page.wait_for_selector("[data-testid=search-count]")
    arm, model, task, rep = HOSTILE_EPISODE
    assert page.inner_text("[data-testid=search-count]").startswith("1 event in 1 page ·")
    hit = page.locator(f"ol.hits > li[data-hit='{arm}/{model}/{task}/{rep}']")
    assert hit.count() == 1
    assert "onerror" in hit.inner_text() and page.evaluate("window.pwned") is None  # text, never markup
    hit.locator("ul a").first.click()
    page.wait_for_selector(".tl-row.focus")
    assert page.locator(".tl-row.focus").inner_text().count("pwned") >= 1
    # The index narrowed to the trials whose events hold the words.
    open_route(page, base, "trials?q=pwned")
    assert rows(page) == 1 and "pwned" in page.inner_text("[data-testid=search-filter]")
    open_route(page, base, "search?q=zzzunfound")
    assert page.inner_text("[data-testid=search-count]") == "No event holds every word of “zzzunfound”."


def test_each_composition_count_links_to_exactly_its_trials(page, site, trials):
    """results/stats/composition.md links every count to the viewer's filtered list: the list
    holds exactly that many trials (the fixture's table, through the statistics' own code)."""
    import re

    from incognita.access.stats.paper_tables import composition_table
    from incognita.access.stats.viewer_links import VIEWER, with_links

    arms, models = list(dict.fromkeys(trials["arm"])), list(dict.fromkeys(trials["model"]))
    md = with_links("composition", composition_table(trials, arms, models))
    checked = 0
    for row in md[md["count"] > 0].itertuples():
        href = re.fullmatch(r"\[trials\]\((.*)\)", row.trials).group(1)
        assert href.startswith(VIEWER + "#trials?")
        open_route(page, site.resolve().as_uri() + "/index.html", href.split("#", 1)[1])
        assert rows(page) == row.count, (row.arm, row.model, row.outcome)
        checked += 1
    assert checked >= 6 and (md["count"] == 0).any() and (md[md["count"] == 0]["trials"] == "").all()


def test_a_collabsim_stats_row_links_to_its_runs(page, site):
    """results/collabsim/stats/summary.md and effects.md link each row to its runs."""
    import pandas as pd

    from incognita.collabsim.condition_stats import _with_run_links

    ids = {"task": "daytrader", "condition": "communication_bandwidth", "model": "scripted", "design": "persona"}
    md = _with_run_links("effects", pd.DataFrame([{**ids, "metric": "average_wealth", "n": 1}]))
    condition, baseline = md["runs"][0].split(", ")
    href = condition[len("[condition](") : -1]
    assert href.startswith("../../viewer/index.html#collabsim?") and "condition=baseline" in baseline
    open_route(page, site.resolve().as_uri() + "/index.html", href.split("#", 1)[1])
    assert rows(page) == 1  # the one run the fixture site holds
    assert _with_run_links("design_effects", pd.DataFrame([ids])) is None


def test_native_run_renders_from_the_harness_format(page, site):
    doc = json.loads((FIXTURES / "native" / "surveyor" / "retail" / "11" / "r0.json").read_text())
    sim = doc["simulations"][0]
    open_route(page, site.resolve().as_uri() + "/index.html", route("native", "surveyor", "retail/11", 0))
    text = page.inner_text("[data-testid=outcome]")
    assert sim["termination_reason"] in text and "reward" in text
    calls = sum(len(m.get("tool_calls") or []) for m in sim["messages"])
    assert page.locator(".timeline .tl-row[data-kind=tool_proposal]").count() == calls
    assert page.locator(".timeline .tl-row[data-kind=tool_result]").count() == calls


def test_matched_views_put_the_arms_side_by_side(page, site, trials):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, route("task", "retail/11"))
    assert page.locator("table.matrix tbody tr").count() == trials[trials["task"] == "retail/11"]["model"].nunique()
    assert page.locator("table.matrix a.chip.success, table.matrix a.chip.failed").count() == int(
        (trials["task"] == "retail/11").sum()
    )
    open_route(page, base, route("compare", "impatient", "retail/11", 0))
    assert page.locator(".compare-head").count() == 4
    assert page.locator(".compare-cell[data-arm=native] .compare-row").count() > 0
    # One lane set per arm, named in its header: social's six desks, indirect's Vega.
    lanes = lambda arm: page.locator(f".compare-head[data-arm={arm}] .lane-name").all_inner_texts()  # noqa: E731
    assert lanes("social") == ["agent", "USER", "Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn", "ENVIRONMENT"]
    assert lanes("indirect") == ["agent", "USER", "Vega", "ENVIRONMENT"]
    # Aligned by turn: every arm's cell of a band holds that arm's events of that turn.
    record = json.loads((FIXTURES / "episodes" / "social" / "impatient" / "retail" / "11" / "r0.json").read_text())
    turns = {e["turn"] for e in record["events"]}
    for t in turns:
        n = sum(e["turn"] == t for e in record["events"])
        assert page.locator(f".compare-cell[data-arm=social][data-turn='{t}'] .compare-row").count() == n
    # Where social first falls behind direct: fewer reference items there, none fewer before.
    done = lambda arm, t: int(  # noqa: E731
        page.inner_text(f".compare-cell[data-arm={arm}][data-turn='{t}'] .progress").split()[1].split("/")[0]
    )
    marked = page.locator(".compare-cell.departs[data-arm=social]")
    assert marked.count() == 1
    first = int(marked.get_attribute("data-turn"))
    bands = sorted(int(t) for t in page.locator(".compare-turn[id]").evaluate_all("els => els.map(e => e.textContent)"))
    assert done("social", first) < done("direct", first)
    assert all(done("social", t) >= done("direct", t) for t in bands if t < first)
    assert page.inner_text("[data-testid=departs-social]") == f"falls behind direct at turn {first}"
    # At 1400 px, long JSON wraps inside its column: nothing scrolls sideways.
    page.set_viewport_size({"width": 1400, "height": 900})
    overflowing = page.evaluate(
        "[...document.querySelectorAll('.compare-cell, .content, code.json')]"
        ".filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1).length"
    )
    assert overflowing == 0


def test_the_pages_take_the_arms_and_failure_types_from_the_site_data(page, site):
    """data/index.js ships incognita.access.taxonomy; the page code spells no arm or failure type."""
    from incognita.access import taxonomy

    text = (site / "data" / "index.js").read_text()
    assert json.loads(text[len('viewerData("index",') : -len(");\n")])["taxonomy"] == taxonomy.as_json()
    for js in (ROOT / "incognita" / "viewer" / "assets").glob("*.js"):
        assert not any(f'"{name}"' in js.read_text() for name in (*taxonomy.HARNESS_ARMS, *taxonomy.FAILURE_TYPES))
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "tasks")
    assert page.locator("table.grid thead th").all_inner_texts()[3:] == list(taxonomy.ALL_ARMS)
    open_route(page, base, route("task", "retail/11"))  # the fixture's social impatient r0 is requested_not_obtained
    assert page.locator("td[data-arm=social] a.chip.failed").all_inner_texts() == ["r0 RNO"]
    assert "RNO requested not obtained" in page.inner_text("section.page")


def test_collabsim_index_and_run_with_probes_at_their_actions(page, site, tmp_path_factory):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "collabsim")
    assert rows(page) == 1
    page.locator("table.grid tbody tr.row").first.click()
    page.wait_for_selector("[data-testid=timeline]")
    key = page.locator("[data-key]").get_attribute("data-key")
    assert key == "collabsim/daytrader/communication_bandwidth/scripted/persona/s1"
    events = [
        json.loads(line)
        for line in next(
            tmp_path_factory.getbasetemp().glob(
                "viewer*/collabsim/runs/daytrader/communication_bandwidth/scripted/persona/s1/events.jsonl"
            )
        )
        .read_text()
        .splitlines()
    ]
    probes = [e for e in events if e["kind"] == "probe"]
    assert probes and page.locator(
        ".tl-row[data-kind=action] details.probe, .tl-row[data-kind=message] details.probe"
    ).count() == len(probes)
    assert page.locator(".timeline .tl-row[data-kind]").count() == len(events) - len(probes)
    # The counter and the probe switch say how many probes are folded into the rows.
    rows_n = len(events) - len(probes)
    counter = page.inner_text("[data-testid=event-count]")
    assert counter == f"{rows_n} of {rows_n} events shown, {len(probes)} probes inside them"
    assert page.locator(".tl-filters label", has_text=f"probes ({len(probes)})").count() == 1
    page.set_viewport_size({"width": 1400, "height": 900})  # payloads wrap beside the side panel
    overflowing = page.evaluate(
        "[...document.querySelectorAll('.content, aside, code.json')]"
        ".filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1).length"
    )
    assert overflowing == 0
    from playwright.sync_api import expect  # installed: the browser fixture skipped otherwise

    first = page.locator("details.probe").first
    first.locator("summary").click()
    # The answers are built by the `toggle` event, which the browser fires as a later task than
    # the click: wait for them (expect retries) instead of reading the text at once.
    expect(first.locator(".answer").first).to_contain_text(probes[0]["payload"]["answers"][0]["answer"])


def test_model_output_is_shown_as_text(page, site):
    arm, model, task, rep = HOSTILE_EPISODE
    open_route(page, site.resolve().as_uri() + "/index.html", route(arm, model, task, rep))
    assert HOSTILE in page.inner_text("[data-testid=timeline]")
    assert page.evaluate("window.pwned") is None
    assert page.locator(".timeline img, .timeline script").count() == 0


def test_protocol_errors_refusals_and_truncation_are_drawn(page, site):
    arm, model, task, rep = HOSTILE_EPISODE
    open_route(page, site.resolve().as_uri() + "/index.html", route(arm, model, task, rep))
    for event in RARE_EVENTS:
        assert page.locator(f".tl-row[data-kind={event['type']}]").last.is_visible()
    text = page.inner_text("[data-testid=timeline]")
    assert "protocol error by agent" in text and "malformed JSON" in text
    assert "inadmissible" in text and "order_id: no such order" in text
    assert "credit_card" in text and "unknown" in text
    assert "the turn budget (300) ran out" in text
    assert "another reader version" not in page.inner_text("[data-testid=reader]")


def test_served_on_loopback(page, site):
    from incognita.viewer.serve import server

    httpd = server(site, 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        open_route(page, f"http://127.0.0.1:{httpd.server_address[1]}/index.html", "trials")
        assert rows(page) == 16
    finally:
        httpd.shutdown()
        httpd.server_close()


# --------------------------------------------------------------------------- without a browser


def test_reference_ticks_add_up_to_the_readers_measures(trials):
    """The checklist counts what the reader counts: its ticks give the trial's measures."""
    from incognita.access.domain import split_task
    from incognita.common.io import read_json
    from incognita.viewer.episode_page import episode_page

    reference = read_json(REFERENCE_ROOT / "retail" / "coordination.json")  # keyed by retail's upstream ids
    for row in trials[trials["arm"] != "native"].to_dict("records"):
        path = FIXTURES / "episodes" / row["arm"] / row["model"] / row["task"] / f"r{row['rep']}.json"
        task = reference["tasks"][split_task(row["task"])[1]]
        page = episode_page(path, {"failure_type": row["failure_type"]}, task)
        assert page["reference"]["task"] == row["task"]  # the checklist names the qualified id
        ref = page["reference"]
        assert sum(i["at"] is not None for i in ref["items"]) / len(ref["items"]) == pytest.approx(
            row["information_acquisition"]
        )
        assert sum(c["at"] is not None for c in ref["calls"]) / len(ref["calls"]) == pytest.approx(row["execution"])
        if row["arm"] == "social":
            roles = ref["role_assignments"]
            assert sum(r["executed"] is not None for r in roles) / len(roles) == pytest.approx(
                row["role_identification"]
            )
        if page["failure"]:
            assert page["failure"]["recomputed"] == row["failure_type"]


def test_a_missing_record_stops_the_build_with_its_path(tmp_path):
    episodes = tmp_path / "episodes"
    shutil.copytree(FIXTURES / "episodes", episodes)
    (episodes / "social" / "impatient" / "retail" / "11" / "r0.json").unlink()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "incognita",
            "view",
            "--out",
            str(tmp_path / "site"),
            "--trials",
            str(FIXTURES / "trials.parquet"),
            "--reference-root",
            str(REFERENCE_ROOT),
            "--episodes",
            str(episodes),
            "--native",
            str(FIXTURES / "native"),
            "--no-collabsim",
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "social/impatient/retail/11/r0.json" in proc.stderr and not (tmp_path / "site").exists()


# --------------------------------------------------------------------------- measuring by hand


def measure(site: Path, screenshots: Path | None, loads: int = 5) -> None:
    """Print the site's size and how long the index takes to load and render in headless
    Chromium (each load in a fresh browser context, so nothing is cached between them)."""
    from playwright.sync_api import sync_playwright

    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    files = sum(1 for p in site.rglob("*") if p.is_file())
    index = (site / "data" / "index.js").stat().st_size
    print(f"{site}: {size / 1e6:.1f} MB in {files} files; data/index.js {index / 1e3:.0f} kB")
    url = site.resolve().as_uri() + "/index.html"
    with sync_playwright() as p:
        browser = launch(p)
        times = []
        for _ in range(loads):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto("about:blank")  # the renderer process starts here, not inside the timing
            start = time.perf_counter()
            page.goto(url + "#trials")
            page.wait_for_selector("body[data-ready]")
            times.append((time.perf_counter() - start, page.evaluate("V.firstRender")))
            n = page.inner_text("[data-testid=shown]")
            context.close()
        wall = statistics.median(t[0] for t in times)
        render = statistics.median(t[1] for t in times)
        print(
            f"index ({n} trials): rendered {render:.0f} ms after navigation start (page clock), "
            f"{wall * 1000:.0f} ms from goto() to ready (median of {loads} fresh loads; "
            f"range {min(t[0] for t in times) * 1000:.0f}-{max(t[0] for t in times) * 1000:.0f} ms)"
        )
        _page_loads(browser, url, site)
        if screenshots:
            _screenshots(browser, url, screenshots)
        browser.close()


def _page_loads(browser, url: str, site: Path) -> None:
    """How long the largest episode and the largest CollabSim run take to open from the index."""
    largest = {
        kind: max(site.glob(f"data/{kind}/**/*.js"), key=lambda p: p.stat().st_size, default=None)
        for kind in ("episodes", "runs")
    }
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "#trials")
    page.wait_for_selector("body[data-ready]")
    for kind, path in largest.items():
        if path is None:
            continue
        parts = path.relative_to(site / "data" / kind).with_suffix("").parts
        if kind == "episodes":  # <arm>/<model>/<domain>/<id>/r<rep>: the qualified task one part of the route
            arm, model, *task, last = parts
            address = route(arm, model, "/".join(task), last[1:])
        else:
            address = "collabsim/" + "/".join(parts)
        start = time.perf_counter()
        open_route(page, url, address)
        elapsed = time.perf_counter() - start
        events = page.locator(".timeline .tl-row[data-kind]").count()
        print(
            f"largest {kind[:-1]} ({path.stat().st_size / 1e3:.0f} kB, {events} rows): opened in {elapsed * 1000:.0f} ms"
        )
    page.close()


def _screenshots(browser, url: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    for name, address in (
        ("viewer-index", "trials?arm=social&sort=-turns"),
        ("viewer-episode", route("social", "surveyor", "retail/3", 0, "e79")),
        ("viewer-task", route("task", "retail/11")),
        ("viewer-collabsim", "collabsim/map_task/canvas_visibility/scripted/persona/s1"),
    ):
        page.goto("about:blank")
        page.goto(f"{url}#{address}")
        page.wait_for_selector("body[data-ready]")
        page.screenshot(path=str(out / f"{name}.png"))
        print(f"{out / name}.png")


if __name__ == "__main__":
    args = sys.argv[1:]
    shots = Path(args[args.index("--screenshots") + 1]) if "--screenshots" in args else None
    measure(Path(args[0]), shots)


def test_a_run_shows_what_each_agent_saw_when_asked(page, site, tmp_path_factory):
    """The observations file is its own data file, loaded on the click; each fold shows the
    observation as logged (read here from observations.jsonl.gz, not through the site)."""
    import gzip

    from playwright.sync_api import expect

    run = next(
        tmp_path_factory.getbasetemp().glob(
            "viewer*/collabsim/runs/daytrader/communication_bandwidth/scripted/persona/s1"
        )
    )
    logged = [json.loads(line) for line in gzip.decompress((run / "observations.jsonl.gz").read_bytes()).splitlines()]
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "collabsim/daytrader/communication_bandwidth/scripted/persona/s1")
    page.wait_for_selector("[data-testid=timeline]")
    assert page.locator("details.observation").count() == 0  # nothing loaded before the click
    page.locator("[data-testid=load-observations]").click()
    expect(page.locator("details.observation")).to_have_count(len(logged))
    page.locator("select[aria-label=agent]").select_option(logged[0]["agent"])
    mine = [o for o in logged if o["agent"] == logged[0]["agent"]]
    expect(page.locator("details.observation")).to_have_count(len(mine))
    first = page.locator("details.observation").first
    expect(first.locator("summary")).to_contain_text(f"{mine[0]['agent']}, step {mine[0]['step']}")
    first.locator("summary").click()
    expect(first).to_contain_text(json.dumps(mine[0]["shown"]["steps_left"]))
