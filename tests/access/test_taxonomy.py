"""One home for each fact (issue #52): the arms and failure types are records in
incognita/access/taxonomy.py, complete, read by the figures and the viewer, and spelled out
nowhere else in the package.

The scan reads every module with `ast` (not by importing it) and fails on a string constant
that is an arm or failure-type name, or a list of them joined by "," or "-" (a command-line
default, a contrast's name), outside taxonomy.py and the allow-list below.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
from collections import Counter
from pathlib import Path

import pytest
from matplotlib.colors import is_color_like, to_hex

from incognita.access import taxonomy
from incognita.access.arm_registry import arm_registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "incognita"
HOME = PACKAGE / "access" / "taxonomy.py"
NAMES = frozenset((*taxonomy.ALL_ARMS, *taxonomy.FAILURE_TYPES))

# The CollabSim family may not import the access family (tests/test_import_graph.py), so no word
# of its is an access arm: its `direct` is a messaging mode (to one teammate, not broadcast).
OTHER_FAMILY = PACKAGE / "collabsim"

# The same word meaning something else: (file, word) -> (how many times, why). Kept tiny; a new
# occurrence of an allowed word in its file fails too, and so does an entry nothing matches.
ALLOWED = {
    ("incognita/access/cells.py", "native"): (
        1,
        "the workflow config's `native` block (config/config.yaml, incognita/schemas/config.schema.json): a config key",
    ),
    ("incognita/access/reference/partition.py", "social"): (
        1,
        "DESK_MAP, the desks' holder map (a domain's partition.yaml, holder_maps.social): a config value",
    ),
}


def _restates(value: str) -> bool:
    if value in NAMES:
        return True
    return any(
        len(parts) > 1 and all(p.strip() in NAMES for p in parts) for parts in (value.split(","), value.split("-"))
    )


def restatements(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, string) of every string constant in `source` that spells a name (f-string parts included)."""
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source, filename))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _restates(node.value)
    )


def test_the_scan_finds_names_written_as_strings():
    source = (
        'ARM = "social"\n'
        "MIX = {'never_requested': 1}\n"
        'DEFAULT = "direct,indirect"\n'
        'CONTRAST = "indirect-social"\n'
        'ANNOUNCE = f"{n} native runs"\n'  # a name inside prose is not the name
        'UNBUNDLED = "social-3"\n'  # a registered arm's own name, not two of ours
    )
    assert restatements(source) == [
        (1, "social"),
        (2, "never_requested"),
        (3, "direct,indirect"),
        (4, "indirect-social"),
    ]


def test_no_module_outside_the_taxonomy_spells_an_arm_or_a_failure_type():
    found: Counter = Counter()
    unexpected = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME or OTHER_FAMILY in path.parents:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, value in restatements(path.read_text(encoding="utf-8"), rel):
            found[(rel, value)] += 1
            if (rel, value) not in ALLOWED:
                unexpected.append(f"{rel}:{line}: {value!r}")
    assert not unexpected, "use the names and records of incognita.access.taxonomy instead:\n" + "\n".join(unexpected)
    assert {key: found[key] for key in ALLOWED} == {key: count for key, (count, _why) in ALLOWED.items()}


# --- the records ---------------------------------------------------------------------------


def _complete(term: taxonomy.Term) -> None:
    assert term.label.strip() and term.description.strip(), term
    assert "\n" not in term.label + term.description, f"{term.name}: one line each"
    assert is_color_like(term.color), f"{term.name}: {term.color!r} is no matplotlib colour"


def test_every_arm_and_outcome_has_a_label_a_colour_and_a_description():
    assert tuple(a.name for a in taxonomy.ARM_RECORDS) == taxonomy.ALL_ARMS
    assert taxonomy.ALL_ARMS == (*taxonomy.HARNESS_ARMS, taxonomy.NATIVE)
    assert (taxonomy.DIRECT, taxonomy.INDIRECT, taxonomy.SOCIAL) == taxonomy.HARNESS_ARMS
    assert tuple(f.name for f in taxonomy.FAILURE_RECORDS) == taxonomy.FAILURE_TYPES
    # composition order: success, the failure chain, then the trials without a type
    assert taxonomy.OUTCOMES == (
        taxonomy.SUCCESS,
        *taxonomy.FAILURE_TYPES,
        taxonomy.FAILED_UNLABELLED,
        taxonomy.EXCLUDED,
    )
    assert set(taxonomy.ATTRIBUTED_FAILURES) <= set(taxonomy.FAILURE_TYPES)
    for name in taxonomy.ALL_ARMS:
        _complete(taxonomy.arm_record(name))
    for name in taxonomy.OUTCOMES:
        _complete(taxonomy.outcome_record(name))
    terms = [*taxonomy.ARM_RECORDS, *taxonomy.OUTCOME_RECORDS]
    assert len({t.name for t in terms}) == len(terms)
    # each label and colour tells its term apart on a figure
    for kind in (taxonomy.ARM_RECORDS, taxonomy.OUTCOME_RECORDS):
        assert len({t.label for t in kind}) == len({to_hex(t.color) for t in kind}) == len(kind)
    with pytest.raises(KeyError):
        taxonomy.arm_record("social+map")
    with pytest.raises(dataclasses.FrozenInstanceError):
        taxonomy.arm_record(taxonomy.SOCIAL).color = "red"  # type: ignore[misc]


def test_an_arm_registered_only_as_data_is_shown_by_its_name():
    from incognita.access.figures.figure_style import arm_label

    registered = [a for a in arm_registry(ROOT / "config" / "arms.yaml").names if a not in taxonomy.ALL_ARMS]
    assert registered, "config/arms.yaml registers arms beyond the paper's (social+map, ...)"
    for name in registered:
        assert taxonomy.arm_label(name) == arm_label(name) == name
    assert taxonomy.arm_label(taxonomy.SOCIAL) == arm_label(taxonomy.SOCIAL) == "Socially distributed"


def test_the_viewer_ships_the_records():
    doc = json.loads(json.dumps(taxonomy.as_json()))
    for kind, terms in (("arms", taxonomy.ARM_RECORDS), ("outcomes", taxonomy.OUTCOME_RECORDS)):
        assert list(doc["records"][kind]) == [t.name for t in terms]
        for t in terms:
            assert doc["records"][kind][t.name] == {"label": t.label, "color": t.color, "description": t.description}


# --- the figures and the viewer read them ---------------------------------------------------


@pytest.fixture
def retold(monkeypatch):
    """The taxonomy with the social arm's label and never_requested's colour changed, and the
    figure modules re-read from it; both restored afterwards."""
    from incognita.access.figures import breakdown_figures, figure_style

    def term(records, name, **change):
        return tuple(dataclasses.replace(t, **change) if t.name == name else t for t in records)

    arms = term(taxonomy.ARM_RECORDS, taxonomy.SOCIAL, label="Spread across desks")
    outcomes = term(taxonomy.OUTCOME_RECORDS, taxonomy.NEVER_REQUESTED, color="#123456")
    monkeypatch.setattr(taxonomy, "ARM_RECORDS", arms)
    monkeypatch.setattr(taxonomy, "OUTCOME_RECORDS", outcomes)
    monkeypatch.setattr(taxonomy, "_ARMS", {t.name: t for t in arms})
    monkeypatch.setattr(taxonomy, "_OUTCOMES", {t.name: t for t in outcomes})
    yield importlib.reload(figure_style), importlib.reload(breakdown_figures)
    monkeypatch.undo()
    importlib.reload(figure_style)
    importlib.reload(breakdown_figures)


def test_the_figures_take_labels_and_colours_from_the_taxonomy(retold, tmp_path):
    from figure_helpers import write_synthetic_stats

    from incognita.access.figures.figure_inputs import load_stats

    stats_dir = write_synthetic_stats(tmp_path)

    figure_style, breakdown_figures = retold
    assert figure_style.arm_label(taxonomy.SOCIAL) == "Spread across desks"
    assert figure_style.OUTCOMES[taxonomy.NEVER_REQUESTED] == ("1 Never requested", "#123456")
    fig = breakdown_figures.fig3_breakdown(load_stats(stats_dir))
    titles = [ax.get_title() for ax in fig.subfigs[0].axes]
    assert "Spread across desks" in titles
    legend = {
        t.get_text(): h for t, h in zip(fig.subfigs[0].legends[0].get_texts(), fig.subfigs[0].legends[0].legend_handles)
    }
    assert to_hex(legend["1 Never requested"].get_facecolor()) == "#123456"


def test_the_contrasts_and_the_native_markers_take_the_arms_colours():
    from incognita.access.figures.figure_style import CONTRASTS

    for name, (_label, color) in CONTRASTS.items():
        minuend = name.split("-")[0]
        assert color == taxonomy.arm_record(minuend).color


def test_a_count_is_printed_white_on_a_dark_bar_and_black_on_a_light_one():
    from incognita.access.figures.figure_style import OTHER_OUTCOME, OUTCOMES, text_color

    dark = {taxonomy.SUCCESS, taxonomy.NEVER_REQUESTED, taxonomy.CORRECT_UNCONFIRMED}
    assert {o for o, (_label, color) in OUTCOMES.items() if text_color(color) == "white"} == dark
    assert text_color(OTHER_OUTCOME[1]) == "black"


def test_the_viewer_prints_the_failure_types_description_as_its_rule(monkeypatch):
    from incognita.access.reader.trial_reading import CallKeys
    from incognita.viewer.failure_rule import explain

    task = {"information_items": {"customer": [], "service": []}, "arms": {taxonomy.DIRECT: {"required_calls": []}}}
    calls = CallKeys.of("retail/1")
    for number, name in enumerate(taxonomy.FAILURE_TYPES, start=1):
        shown = explain([], task, taxonomy.DIRECT, name, calls)
        assert (shown["rule"], shown["question"]) == (number, taxonomy.outcome_record(name).description)
    changed = dataclasses.replace(taxonomy.outcome_record(taxonomy.NEVER_REQUESTED), description="asked nobody")
    monkeypatch.setitem(taxonomy._OUTCOMES, taxonomy.NEVER_REQUESTED, changed)
    assert explain([], task, taxonomy.DIRECT, taxonomy.NEVER_REQUESTED, calls)["question"] == "asked nobody"
