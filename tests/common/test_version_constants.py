"""The workflow reads each generator's version from the module's source (version_constants):
it must be the value the module has when imported, and a constant it cannot read is an error."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from incognita.common.io import InputError
from incognita.common.version_constants import read_constant

# Every constant rules/common.smk and rules/viewer.smk read this way.
READ_BY_THE_WORKFLOW = [
    ("incognita.access.cards.card", "BUILDER_VERSION"),
    ("incognita.access.golden.trajectory", "GENERATOR_VERSION"),
    ("incognita.access.episodes.harness", "GENERATOR_VERSION"),
    ("incognita.access.native.native_run", "GENERATOR_VERSION"),
    ("incognita.access.reader.trial_reading", "READER_VERSION"),
    ("incognita.collabsim", "GENERATOR_VERSION"),
    ("incognita.viewer", "VIEWER_VERSION"),
]


@pytest.mark.parametrize(("module", "name"), READ_BY_THE_WORKFLOW)
def test_the_source_gives_the_imported_value(module, name):
    assert read_constant(module, name) == getattr(importlib.import_module(module), name)


def test_the_list_above_is_what_the_workflow_reads():
    from workflow_helpers import ROOT

    rules = "\n".join(p.read_text() for p in (ROOT / "rules").glob("*.smk"))
    assert sorted(re.findall(r'read_constant\("([\w.]+)", "(\w+)"\)', rules)) == sorted(READ_BY_THE_WORKFLOW)


def _module(tmp_path, monkeypatch, source: str) -> str:
    (tmp_path / "probe_versions.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("probe_versions", None)
    return "probe_versions"


def test_a_computed_or_missing_or_repeated_constant_is_an_error_naming_the_file(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "BASE = 2\nVERSION = BASE + 1\nTWICE = 1\nTWICE = 2\nTYPED: int = 4\n")
    with pytest.raises(InputError, match=r"probe_versions\.py:2: VERSION must be assigned a literal"):
        read_constant(module, "VERSION")
    with pytest.raises(
        InputError, match=r"probe_versions\.py: expected one module-level assignment of MISSING, found 0"
    ):
        read_constant(module, "MISSING")
    with pytest.raises(InputError, match="found 2"):
        read_constant(module, "TWICE")
    assert read_constant(module, "TYPED") == 4 and read_constant(module, "BASE") == 2
    assert "probe_versions" not in sys.modules  # read, not imported


def test_an_unknown_module_is_an_error():
    with pytest.raises(InputError, match="incognita.no_such_module: no such module"):
        read_constant("incognita.no_such_module", "X")
