"""Upstream's database hash, without serializing again what a run left as it was.

Invariant: `CleanDbHasher(clean).hexdigest(db)` equals tau2's `ToolKitBase.get_db_hash()` on
`db`, i.e. `sha256(json.dumps(db.model_dump(), sort_keys=True, default=str))`, for every
database `db` that started as a copy of `clean`. Episode records and golden replays store
this hash and compare it with upstream's own, so it must be the same string, not merely an
equivalent fingerprint.

Why it can be computed in pieces: with sorted keys and the default separators, the JSON text
of a dict is `{"k1": <text of v1>, "k2": <text of v2>}` in key order, and the text of a value
does not depend on where it sits. The text of every record of the clean database is computed
once; for a database after a run, a record whose pydantic JSON (`to_json`, computed in
pydantic-core: about 11 ms for every record of the retail database, against about 15 ms for
comparing the models with `==`) equals its clean counterpart's reuses the clean text, and
only the handful a run changed are dumped again. That takes the hash of the 1.5 MB retail
database from about 80 ms (upstream's dump and `json.dumps` of everything) to about 12.

A run's private database (`upstream_replay.RetailWorld.private_toolkit`) holds its tables as
`HandedOutTable`s, which note the records they hand out: a record no tool was given since the
table was last clean is the clean record object, unchanged, and is not even fingerprinted (for
a retail episode, most of the 1,000 orders). A table that was iterated counts as handed out whole.

The one case the fingerprint cannot see: pydantic writes an int held in a float field as a
float (1 as 1.0) where `json.dumps` writes it as an int, so a tool that replaced 1.0 by 1
would keep the clean text where upstream prints `1`. Retail's tools never retype a value
(their new values are computed from the old ones), the golden stage checks this hash
against upstream's `get_db_hash` for every task on every build (`upstream_replay.verify`),
and tests/access/golden/test_db_hashing.py compares the two after the gold actions of all
114 tasks.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class HandedOutTable(dict):
    """A table of records that notes which records it handed out since `reset()`: by key
    (`[]`, `get`, `setdefault`, assignment) or all of them (`whole`, after any iteration or
    bulk change). Its own reads never count (the hasher reads through `dict`'s methods)."""

    __slots__ = ("handed", "whole")

    def __init__(self, records: dict):
        super().__init__(records)
        self.handed: set = set()
        self.whole = False

    def reset(self) -> None:
        self.handed.clear()
        self.whole = False

    def __getitem__(self, key):
        self.handed.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.handed.add(key)
        return super().get(key, default)

    def setdefault(self, key, default=None):
        self.handed.add(key)
        return super().setdefault(key, default)

    def __setitem__(self, key, value):
        self.handed.add(key)
        super().__setitem__(key, value)


def _handing_out_all(name: str):
    method = getattr(dict, name)

    def wrapper(self, *args, **kwargs):
        self.whole = True
        return method(self, *args, **kwargs)

    wrapper.__name__ = name
    return wrapper


# Every other way to reach a table's records counts as handing out all of them.
for _name in ("__iter__", "__reversed__", "values", "items", "copy", "update", "__ior__", "pop", "popitem"):
    setattr(HandedOutTable, _name, _handing_out_all(_name))
del _name


def _fingerprint(record: Any) -> bytes | None:
    """A record's pydantic JSON (one call into pydantic-core, about 7 us a record), or None
    for a value that is not a pydantic model (then it is always dumped again)."""
    serializer = getattr(record, "__pydantic_serializer__", None)
    return None if serializer is None else serializer.to_json(record)


class CleanDbHasher:
    """Holds a clean database, each record's JSON text and its pydantic JSON (the cheap test
    of whether a record is still as it was)."""

    def __init__(self, clean_db: Any):
        """Reads `clean_db` once and keeps no reference to it."""
        self._clean_fields = {}
        dumped = clean_db.model_dump()
        self._fields = sorted(dumped)
        # Field name -> {record key -> '"key": <record text>'} in key order, for the fields
        # that are dicts of records with string keys (retail: products, users, orders);
        # other fields are dumped whole.
        self._tables: dict[str, dict[str, str]] = {}
        self._fingerprints: dict[str, dict[str, bytes | None]] = {}
        self._types: dict[str, dict[str, type]] = {}
        for name in self._fields:
            value, records = dumped[name], getattr(clean_db, name)
            if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                self._tables[name] = {key: f"{json.dumps(key)}: {_text(value[key])}" for key in sorted(value)}
                self._fingerprints[name] = {key: _fingerprint(record) for key, record in records.items()}
                self._types[name] = {key: type(record) for key, record in records.items()}
            else:
                self._clean_fields[name] = _text(value)
        self.clean_digest = self._digest(
            {name: "{" + ", ".join(self._tables[name].values()) + "}" for name in self._tables} | self._clean_fields
        )

    def record_type(self, table: str, key: str) -> type | None:
        """The class of a clean record, None for a key the clean table does not have."""
        return self._types[table].get(key)

    def _digest(self, texts: dict[str, str]) -> str:
        body = ", ".join(f"{json.dumps(name)}: {texts[name]}" for name in self._fields)
        return hashlib.sha256(("{" + body + "}").encode()).hexdigest()

    def _table_text(self, name: str, records: dict, changed: list[str]) -> str:
        clean_parts, fingerprints = self._tables[name], self._fingerprints[name]
        # A run rarely adds or removes a record: then the keys and their order are the clean ones.
        keys = clean_parts if dict.keys(records) == clean_parts.keys() else sorted(dict.keys(records))
        # Records a HandedOutTable never handed out are the clean objects: no need to look.
        handed = records.handed if isinstance(records, HandedOutTable) and not records.whole else None
        parts = []
        for key in keys:
            record, clean = dict.__getitem__(records, key), fingerprints.get(key)
            if clean is not None and ((handed is not None and key not in handed) or _fingerprint(record) == clean):
                parts.append(clean_parts[key])
            else:
                changed.append(key)
                text = _text(record.model_dump() if hasattr(record, "model_dump") else record)
                parts.append(f"{json.dumps(key)}: {text}")
        changed.extend(key for key in clean_parts if key not in records)
        return "{" + ", ".join(parts) + "}"

    def hexdigest(self, db: Any) -> tuple[str, dict[str, list[str]] | None]:
        """(upstream's hash of `db`, the keys of the records that differ from the clean ones
        by table), or None for the keys when a field other than a table of records changed
        (the database can then not be restored record by record)."""
        texts: dict[str, str] = {}
        changed: dict[str, list[str]] | None = {}
        for name in self._fields:
            value = getattr(db, name)
            if name in self._tables and isinstance(value, dict) and all(isinstance(k, str) for k in dict.keys(value)):
                keys: list[str] = []
                texts[name] = self._table_text(name, value, keys)
                if keys and changed is not None:
                    changed[name] = keys
            else:
                texts[name] = _text(db.model_dump(include={name})[name])
                if texts[name] != self._clean_fields.get(name):
                    changed = None
        return self._digest(texts), changed
