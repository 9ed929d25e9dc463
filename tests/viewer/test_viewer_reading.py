"""Reading a failure in the viewer (docs/viewer.md): native runs turn by turn beside our arms,
the attempt nearest a required call that failed, the participant audit reachable from the
index and the fidelity table, and what an empty result or a bad address says."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from viewer_helpers import FIXTURES, REFERENCE_ROOT, ROOT, open_route, route, rows

# A successful direct episode whose second return is edited into a refused one with another
# order id: the required call it was is then executed by nobody, and its closest attempt is it.
FAILED = ("direct", "surveyor", "retail/11", 0)
WRONG_ORDER = "#W7387997"
NOT_FOUND = "Order not found"


def _failed_copy(dest: Path) -> tuple[Path, int]:
    shutil.copytree(FIXTURES / "episodes", dest)
    arm, model, task, rep = FAILED
    path = dest / arm / model / task / f"r{rep}.json"
    record = json.loads(path.read_text())
    returns = [i for i, e in enumerate(record["events"]) if e.get("tool") == "return_delivered_order_items"]
    proposal, decision = returns[-2:]
    for i in (proposal, decision):
        record["events"][i]["arguments"]["order_id"] = WRONG_ORDER
    record["events"][decision].update(status="error", reason=NOT_FOUND, result=None, write=False)
    path.write_text(json.dumps(record))
    return dest, decision


@pytest.fixture(scope="module")
def failed_site(tmp_path_factory) -> tuple[Path, int]:
    """The site with the edited episode, its row of the trials table labelled as the reader
    labels it now (the page checks the label against the reader's own reading)."""
    import pandas as pd

    tmp = tmp_path_factory.mktemp("failed")
    episodes, decision = _failed_copy(tmp / "episodes")
    trials = pd.read_parquet(FIXTURES / "trials.parquet")
    arm, model, task, rep = FAILED
    at = (trials["arm"] == arm) & (trials["model"] == model) & (trials["task"] == task) & (trials["rep"] == rep)
    trials.loc[at, "success"] = 0.0
    trials.loc[at, "failure_type"] = "delivered_incorrect"
    trials.to_parquet(tmp / "trials.parquet")
    proc = subprocess.run(
        [sys.executable, "-m", "incognita", "view", "--out", str(tmp / "site"), "--trials",
         str(tmp / "trials.parquet"), "--reference-root", str(REFERENCE_ROOT), "--episodes", str(episodes),
         "--native", str(FIXTURES / "native"), "--no-collabsim"],
        check=False, cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return tmp / "site", decision


# --------------------------------------------------------------------------- native turns


def test_native_runs_line_up_with_our_arms_turn_by_turn(page, site):
    """The scripted agent makes the same calls in direct and native: aligned by our arms' turns
    (an agent output and the answers to it), each call sits in the same band in both."""
    model, task, rep = "surveyor", "retail/11", 0
    direct = json.loads((FIXTURES / "episodes" / "direct" / model / task / f"r{rep}.json").read_text())
    calls = [(e["turn"], e["tool"]) for e in direct["events"] if e["type"] == "tool_proposal"]
    open_route(page, site.resolve().as_uri() + "/index.html", route("compare", model, task, rep))
    for turn, tool in calls:
        native = page.locator(
            f".compare-cell[data-arm=native][data-turn='{turn}'] .compare-row[data-kind=tool_proposal]"
        )
        assert native.count() == 1 and tool in native.inner_text(), (turn, tool)
    last = max(int(t) for t in page.locator(".compare-cell[data-arm=native]").evaluate_all(
        "els => els.filter(e => e.querySelector('.compare-row')).map(e => e.dataset.turn)"))  # fmt: skip
    assert last == direct["turns"]
    # The native run's page gives the same count, the trials table's `turns`.
    open_route(page, site.resolve().as_uri() + "/index.html", route("native", model, task, rep))
    assert f"turns\n{direct['turns']}\n" in page.inner_text("[data-testid=outcome]").replace("\t", "\n")


# --------------------------------------------------------------------------- what failed


def test_a_failed_call_links_its_closest_attempt_and_how_it_differs(page, failed_site):
    site, decision = failed_site
    open_route(page, site.resolve().as_uri() + "/index.html", route(*FAILED))
    closest = page.locator("[data-testid=reference] [data-testid=closest-attempt]")
    assert closest.count() == 1
    text = closest.inner_text()
    assert "turn 12 by agent" in text and WRONG_ORDER in text and "#W7387996" in text
    assert f"the gateway answered error: {NOT_FOUND}" in text
    assert "another reader version" not in page.inner_text("[data-testid=reader]")  # the label is the reader's
    # The reader's panel points at it too (below 1,100 px it is open where the reference is folded).
    assert "closest attempt at return_delivered_order_items: turn 12 by agent" in page.inner_text(
        "[data-testid=reader]"
    )
    # The timeline marks the attempt, and the link goes to it.
    assert page.locator(f"#e{decision} .badge", has_text="≠ reference return_delivered_order_items").count() == 1
    closest.locator("a").click()
    page.wait_for_selector(f"#e{decision}.focus")


# --------------------------------------------------------------------------- the audit, reachable


def test_the_index_has_the_audits_findings_and_attribution(page, audited_site):
    out, _, finding, _ = audited_site
    base = out.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials?findings=%3E0")
    assert rows(page) == 1
    options = page.locator("select[data-filter=failure_attribution] option").all_inner_texts()
    assert "no_participant_fault_found (1)" in options
    # A filter on a kind's column (hidden at first) shows the column.
    open_route(page, base, f"trials?findings_{finding['kind']}=%3E0")
    assert rows(page) == 1
    assert page.locator(f"table.grid thead button.sort[data-col=findings_{finding['kind']}]").count() == 1


def test_each_fidelity_row_links_to_its_trials_with_a_finding(page, audited_site):
    """results/stats/participant_fidelity.md keeps its count of audited trials and links each
    kind to exactly the trials with a finding of it."""
    import pandas as pd

    from incognita.access.stats.fidelity_tables import participant_fidelity_table
    from incognita.access.stats.viewer_links import VIEWER, with_links

    out, _, finding, table = audited_site
    trials = pd.read_parquet(table)
    arms, models = list(dict.fromkeys(trials["arm"])), list(dict.fromkeys(trials["model"]))
    md = with_links("participant_fidelity", participant_fidelity_table(trials, arms, models))
    assert md["trials"].map(lambda n: isinstance(n, int)).all()  # the count, not a link
    linked = md[md["trials_with"] > 0]
    assert set(linked["finding"]) == {finding["kind"]} and len(linked) == 2  # the model's row and `all`
    for row in linked.itertuples():
        label = f"{row.trials_with} trial{'' if row.trials_with == 1 else 's'}"  # "1 trial", "2 trials"
        href = re.fullmatch(rf"\[{label}\]\((.*)\)", row.with_finding).group(1)
        assert href.startswith(VIEWER + "#trials?")
        open_route(page, out.resolve().as_uri() + "/index.html", href.split("#", 1)[1])
        assert rows(page) == row.trials_with
    assert (md[md["trials_with"] == 0]["with_finding"] == "").all()


# --------------------------------------------------------------------------- empty results


def test_empty_results_and_bad_addresses_read_as_a_person_expects(page, site):
    base = site.resolve().as_uri() + "/index.html"
    open_route(page, base, "trials?q=zzzunfound")
    assert page.inner_text("[data-testid=summary]").startswith(
        "0 trials: none of the 16 has an event holding every word of “zzzunfound”."
    )
    assert page.inner_text("[data-testid=empty]") == "No trial has an event holding every word of “zzzunfound”."
    # A one-letter word is not indexed: the search says so instead of finding nothing.
    open_route(page, base, "search?q=a")
    assert "Nothing to search for: ignored “a”" in page.inner_text("[data-testid=search-note]")
    open_route(page, base, "trials?q=a")
    assert "Every trial is listed" in page.inner_text("[data-testid=search-note]") and rows(page) == 16
    open_route(page, base, "search?q=x pwned")
    assert page.inner_text("[data-testid=search-note]").startswith("Ignored “x”")
    assert page.inner_text("[data-testid=search-count]").startswith("1 event in 1 page ·")
    # Snippets read as text (a message's own words as written), not as the event's escaped JSON.
    open_route(page, base, "search?q=mia garcia")
    snippets = page.locator(".snippet").all_inner_texts()
    assert snippets and not any(re.search(r'\\"|\\u|"type":', s) for s in snippets), snippets
    # One of a thing is one thing: the impatient agent's indirect episode lasted one turn.
    open_route(page, base, route("indirect", "impatient", "retail/11", 0))
    assert "after 1 turn\n" in page.inner_text("[data-testid=outcome]") + "\n"
    # Addresses that name nothing say so, without a data file's path.
    for address, said in (
        (route("social", "nobody", "retail/11", 0), "No trial social · nobody · task retail/11 · r0 in this site."),
        (route("compare", "nobody", "retail/11", 0), "No trial of nobody on task retail/11, r0, in this site."),
        ("collabsim/daytrader/none/scripted/persona/s9", "No CollabSim run daytrader · none · scripted · persona · s9"),
        (route("task", "retail/999"), "No task retail/999 in this design."),
        ("nowhere", "Nothing at the address #nowhere."),
    ):
        open_route(page, base, address)
        text = page.inner_text("[data-testid=not-found]")
        assert said in text and "data/" not in text and ".js" not in text, (address, text)
