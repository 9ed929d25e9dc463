"""JSON pointers into call results and the policy vocabulary (incognita.access.golden.provenance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from incognita.access.golden.provenance import (
    ERROR_DOC,
    escape_token,
    find_leaf,
    leaves,
    load_vocabulary,
    pointer_parts,
    policy_source,
    resolve_pointer,
    result_doc,
    top_argument,
    unescape_token,
)
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
VOCAB_PATH = ROOT / "config" / "domains" / "retail" / "vocabulary.yaml"


def test_pointers_escape_walk_and_resolve():
    doc = {"a/b": [1, {"c~d": "x"}], "Action Camera": "123", "": 0}
    found = list(leaves(doc))
    assert found == [("/a~1b/0", 1), ("/a~1b/1/c~0d", "x"), ("/Action Camera", "123"), ("/", 0)]
    assert all(resolve_pointer(doc, ptr) == value for ptr, value in found)
    assert resolve_pointer(doc, "") is doc
    assert escape_token("a~/b") == "a~0~1b" and unescape_token("a~0~1b") == "a~/b"
    assert pointer_parts("/a~1b/1/c~0d") == ["a/b", "1", "c~d"] and pointer_parts("") == []
    assert top_argument("/new_item_ids/0") == "new_item_ids" and top_argument("") == ""
    assert find_leaf(doc, lambda ptr, leaf: leaf == "x") == "/a~1b/1/c~0d"
    assert find_leaf(ERROR_DOC, lambda ptr, leaf: True) is None
    with pytest.raises(KeyError):
        resolve_pointer(doc, "/missing")


def test_a_result_that_is_json_text_is_addressed_decoded():
    assert result_doc('{"T-Shirt": "9523456873"}') == {"T-Shirt": "9523456873"}
    assert result_doc("[1, 2]") == [1, 2]
    assert result_doc("{not json") == "{not json"
    assert result_doc("yusuf_rossi_9620") == "yusuf_rossi_9620"
    assert result_doc({"a": 1}) == {"a": 1}


def test_vocabulary_must_be_a_flat_mapping(tmp_path):
    bad = tmp_path / "v.yaml"
    bad.write_text("reason: {a: 1}\n")
    with pytest.raises(InputError, match="reason"):
        load_vocabulary(str(bad))
    assert load_vocabulary(str(VOCAB_PATH))["address2"] == [""]


def test_a_vocabulary_term_is_a_policy_value_selected_by_fields_of_its_kind():
    fields = [
        {"token": "reason", "kind": "reason", "value": "ordered by mistake"},
        {"token": "name", "kind": "identity"},
    ]
    vocab = {"reason": ["no longer needed", "ordered by mistake"]}
    assert policy_source(vocab, fields, "reason", "ordered by mistake") == {
        "kind": "policy",
        "vocabulary": "reason",
        "selected_by": ["reason"],
    }
    assert policy_source(vocab, fields, "reason", "too expensive") is None
    assert policy_source(vocab, fields, "payment_method_id", "ordered by mistake") is None
