"""Where a golden argument's value comes from: JSON pointers into call results, and the
policy vocabulary.

Two of the provenance kinds of a golden trajectory (see `incognita.access.golden.trajectory`)
point outside the card: a `read` names an earlier call and an RFC 6901 pointer `path` into
its result, and a `policy` names an entry of `config/vocabulary.yaml`. This module is the
one home of both: the pointer helpers (walking a result's leaves, resolving and escaping
pointers, the result document a pointer addresses) and the vocabulary (loading it, and
recognising a value as one of its terms).

The golden builder writes pointers with these helpers; every later stage that follows one
(the agent plan, the scripted participants, the tests) reads it back with the same ones,
so a pointer means the same thing everywhere. Imports nothing of the stages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from incognita.common.io import InputError, read_yaml

ERROR_DOC = object()  # result-doc placeholder for a call that raised

# --------------------------------------------------------------------------- JSON pointers


def escape_token(key: Any) -> str:
    """One reference token of a JSON pointer ('~' and '/' escaped, RFC 6901)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def unescape_token(part: str) -> str:
    """The key one escaped reference token names."""
    return part.replace("~1", "/").replace("~0", "~")


def pointer_parts(pointer: str) -> list[str]:
    """The unescaped reference tokens of a pointer ('' -> [])."""
    return [unescape_token(p) for p in pointer.split("/")[1:]]


def top_argument(pointer: str) -> str:
    """The top-level argument name of a JSON pointer into a call's arguments."""
    return unescape_token(pointer.split("/")[1]) if pointer else ""


def leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(JSON pointer, scalar) for every scalar in obj, in document order."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from leaves(value, f"{prefix}/{escape_token(key)}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from leaves(value, f"{prefix}/{i}")
    else:
        yield prefix, obj


def resolve_pointer(doc: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer ('' is the whole document)."""
    if pointer == "":
        return doc
    node = doc
    for raw in pointer.split("/")[1:]:
        part = unescape_token(raw)
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def result_doc(result: Any) -> Any:
    """What a read pointer addresses: the result, or the JSON a string result encodes.

    `list_all_product_types` returns its mapping as JSON text; pointers address the decoded
    mapping. Other strings (a user id, a calculate result) are a single leaf at ''.
    """
    if isinstance(result, str) and result[:1] in ("{", "["):
        try:
            return json.loads(result)
        except json.JSONDecodeError:
            return result
    return result


def find_leaf(doc: Any, pred: Callable[[str, Any], bool]) -> str | None:
    """The pointer of the first leaf (document order) that matches; None for a call that raised."""
    if doc is ERROR_DOC:
        return None
    for ptr, leaf in leaves(doc):
        if pred(ptr, leaf):
            return ptr
    return None


# --------------------------------------------------------------------------- policy vocabulary


def load_vocabulary(path: str) -> dict[str, list[str]]:
    """`config/vocabulary.yaml`: a flat mapping argument name -> allowed values."""
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping 'argument name: [values]'")
    vocab = {}
    for key, values in raw.items():
        if (
            not isinstance(key, str)
            or not isinstance(values, list)
            or not all(isinstance(v, (str, int, float)) for v in values)
        ):
            raise InputError(f"{path}: entry {key!r} must be a list of plain values")
        vocab[key] = [str(v) for v in values]
    return vocab


def policy_source(vocabulary: dict[str, list[str]], fields: list[dict], arg: str, value: str) -> dict | None:
    """The `policy` provenance of a value that is a term of the vocabulary of its argument;
    `selected_by` lists the card fields whose kind equals that argument name (`reason`)."""
    if value in vocabulary.get(arg, ()):
        chosen_by = [f["token"] for f in fields if f["kind"] == arg]
        return {"kind": "policy", "vocabulary": arg, "selected_by": chosen_by}
    return None
