"""Schema errors a person reads: the file that sets the key, the key path, and what to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from incognita.common.io import InputError, read_yaml
from incognita.common.schema import key_source, validate

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "config" / "config.yaml"


def merged_with(tmp_path: Path, overlay: dict) -> tuple[dict, list[str]]:
    """config/config.yaml under `overlay` (written to a file), merged as the workflow merges them."""
    from incognita.access.planning.workflow_config import merged

    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay))
    return merged(read_yaml(BASE), overlay), [str(BASE), str(path)]


def test_a_misspelt_key_in_a_model_entry_is_named_with_its_file_and_the_right_spelling(tmp_path):
    """The entry is a name or a mapping (oneOf): a mapping is judged as a mapping, so the error is
    the unknown key, not "is not valid under any of the given schemas"."""
    cfg, sources = merged_with(tmp_path, {"models": {"stub": {"spec": "openai:m", "temprature": 1}}})
    with pytest.raises(InputError) as err:
        validate(cfg, "config.schema.json", "config", sources=sources)
    assert str(err.value) == f"{sources[1]}: models.stub.temprature: unknown key (did you mean 'temperature'?)"


def test_a_misspelt_key_under_an_optional_entry_and_a_design_key(tmp_path):
    cfg, sources = merged_with(
        tmp_path,
        {
            "participants": {"judge": {"spec": "openai:j", "max_retires": 2}},
            "design": {"repetitons": 2},
        },
    )
    with pytest.raises(InputError) as err:
        validate(cfg, "config.schema.json", "config", sources=sources)
    lines = str(err.value).splitlines()
    assert lines[0] == "config: invalid (2 problems):"
    assert f"  {sources[1]}: design.repetitons: unknown key (did you mean 'repetitions'?)" in lines
    assert f"  {sources[1]}: participants.judge.max_retires: unknown key (did you mean 'max_retries'?)" in lines


def test_a_key_with_no_close_spelling_lists_the_keys_it_may_be(tmp_path):
    cfg, sources = merged_with(tmp_path, {"native": {"zzz": 1}})
    with pytest.raises(InputError, match=r"native\.zzz: unknown key \(expected one of: max_steps, max_errors, "):
        validate(cfg, "config.schema.json", "config", sources=sources)


def test_a_wrong_value_is_named_in_the_file_that_sets_it(tmp_path):
    base = read_yaml(BASE)
    base["source"]["version"] = 26.3
    with pytest.raises(InputError) as err:
        validate(base, "config.schema.json", "config", sources=[str(BASE)])
    assert str(err.value) == f"{BASE}: source.version: 26.3 is not of type 'string'"


def test_key_source_is_the_last_file_that_sets_the_key():
    docs = [("a.yaml", {"design": {"tasks": None, "seed": 1}}), ("b.yaml", {"design": {"tasks": ["retail/11"]}})]
    assert key_source(docs, ["design", "tasks"]) == "b.yaml"
    assert key_source(docs, ["design", "seed"]) == "a.yaml"
    assert key_source(docs, ["design", "budget"]) is None
