"""Compare two result trees file by file, ignoring only wall-clock fields and the code identity.

    python bench/compare_trees.py BEFORE/results AFTER/results

Used to show that a change of layout changed no output: every file present in one tree and
not the other is listed, and so is every file whose content differs once the fields that
record how long something took or when it ran are set aside. The exit code is 1 when
anything differs.

What counts as wall-clock, and nothing else:
- JSON (episode records, native results, manifests): the keys in WALL_CLOCK_KEYS, at any depth
  (the upstream harness stamps every message with a `timestamp`);
- TSV/CSV: the columns named in WALL_CLOCK_KEYS;
- Parquet: the same columns, compared as tables (the file's bytes also hold writer metadata);
- the viewer's data files embed records (`viewerData("key", {...});`), so they are compared as
  JSON the same way.
The code identity (`code_version` of records, `code` of CollabSim manifests and viewer pages,
incognita.common.environment) names the commit and source hash that made a file, and a
manifest's `lock` the hash of the dependency lock it ran under, so they differ between the two
builds being compared by design; those keys are set aside the same way.
Random run identifiers are not content either: the upstream harness gives every simulation a
fresh UUID4, so any string that is a UUID compares equal to any other UUID.
Everything else is compared byte for byte.

A change that moves files and renames values on purpose (a layout change, task ids that gain
their domain) is compared with a mapping (`--map FILE`, YAML): `paths`, regex substitutions that
turn a path of the before tree into its path in the after tree (the first that matches applies),
and `values`, regex substitutions applied to every string of the before tree's files (JSON keys
and leaves, table cells, the viewer's payloads) before they are compared, each optionally only for
the keys or columns it names (`keys`; a mapping's own keys are named `key:<its parent's key>`)
and the files whose path matches its `files` pattern. Hashes follow: a before file that equals its after file once
mapped, but whose bytes differ, has its sha256 mapped to the after file's, so a record that names
that file by its hash compares equal too (repeated until nothing new is learnt). What a mapping
allows is printed with the result, so the comparison says exactly what it set aside.

    python bench/compare_trees.py BEFORE/results AFTER/results --map bench/seam_mapping.yaml
"""

from __future__ import annotations

import argparse
import base64
import csv
import gzip
import hashlib
import io
import json
import re
import sys
from pathlib import Path

WALL_CLOCK_KEYS = frozenset(
    {"wall_time_s", "duration", "timestamp", "start_time", "end_time", "archived", "created", "elapsed_s"}
)
# The code identity, and the dependency lock's hash a CollabSim manifest records beside it
# (incognita.common.environment.lock_hash): both name what built a file, not what it holds.
CODE_KEYS = frozenset({"code_version", "code", "lock"})
IGNORED_KEYS = WALL_CLOCK_KEYS | CODE_KEYS


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Mapping:
    """What a comparison maps in the before tree (module docstring): paths, values, hashes."""

    def __init__(self, paths=(), values=()):
        self.paths = [(re.compile(a), b) for a, b in paths]
        self.all_values = [
            (re.compile(v["pattern"]), v["replace"], frozenset(v.get("keys") or ()), re.compile(v.get("files") or ""))
            for v in values
        ]
        self.values = [(p, r, k) for p, r, k, _ in self.all_values]
        self.hashes: dict[str, str] = {}

    def for_file(self, rel: str) -> Mapping:
        """The mapping of one before file: the value rules whose `files` pattern matches its path."""
        out = Mapping()
        out.paths, out.hashes = self.paths, self.hashes
        out.values = [(p, r, k) for p, r, k, f in self.all_values if f.search(rel)]
        out.all_values = self.all_values
        return out

    @classmethod
    def load(cls, path: Path | None) -> Mapping:
        if path is None:
            return cls()
        import yaml

        doc = yaml.safe_load(path.read_text()) or {}
        return cls(doc.get("paths") or (), doc.get("values") or ())

    def path(self, rel: str) -> str:
        for pattern, replace in self.paths:
            if pattern.search(rel):
                return pattern.sub(replace, rel, count=1)
        return rel

    def text(self, value: str, key: str | None = None) -> str:
        if value in self.hashes:
            return self.hashes[value]
        for pattern, replace, keys in self.values:
            if not keys or key in keys:
                value = pattern.sub(replace, value)
        return value

    def __bool__(self) -> bool:
        return bool(self.paths or self.values or self.hashes)


NO_MAPPING = Mapping()


def _strip(value, mapping: Mapping = NO_MAPPING, key: str | None = None):
    if isinstance(value, dict):  # a key is mapped in the context `key:<its parent's key>`
        return {mapping.text(k, f"key:{key}"): _strip(v, mapping, k) for k, v in value.items() if k not in IGNORED_KEYS}
    if isinstance(value, list):
        return [_strip(v, mapping, key) for v in value]
    if isinstance(value, str) and UUID.match(value):
        return "<uuid>"
    if isinstance(value, str):
        return mapping.text(value, key)
    return value


def _json_text(data: bytes, mapping: Mapping = NO_MAPPING):
    return _strip(json.loads(data), mapping)


def _table(data: bytes, delimiter: str, mapping: Mapping = NO_MAPPING):
    rows = list(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))
    if not rows:
        return rows
    keep = [i for i, name in enumerate(rows[0]) if name not in IGNORED_KEYS]
    header = rows[0]
    return [
        [row[i] if n == 0 else mapping.text(row[i], header[i]) for i in keep if i < len(row)]
        for n, row in enumerate(rows)
    ]


def _parquet(path: Path, mapping: Mapping = NO_MAPPING):
    import pandas as pd

    frame = pd.read_parquet(path)
    frame = frame.drop(columns=[c for c in frame.columns if c in IGNORED_KEYS])
    if mapping:
        for column in frame.columns:
            if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
                mapped = frame[column].map(lambda v, c=column: mapping.text(v, c) if isinstance(v, str) else v)
                frame[column] = mapped.astype(frame[column].dtype)
    return frame


def _js_data(data: bytes, mapping: Mapping = NO_MAPPING):
    # The viewer's data files are `viewerData("<key>", <JSON>);` scripts; other scripts compare as text.
    text = data.decode("utf-8").strip()
    if not (text.startswith("viewerData(") and text.endswith(");")):
        return text
    key, _, body = text[len("viewerData(") : -2].partition(",")
    try:
        payload = json.loads(body)
        if isinstance(payload, dict) and set(payload) == {"gzip_json"}:  # a compressed page (viewer/site.py)
            payload = json.loads(gzip.decompress(base64.b64decode(payload["gzip_json"])))
        return mapping.text(json.loads(key)), _strip(payload, mapping)
    except json.JSONDecodeError:
        return text


def same(a: Path, b: Path, mapping: Mapping = NO_MAPPING) -> bool:
    """Whether `a` (the before tree's, mapped) and `b` hold the same content."""
    da, db = a.read_bytes(), b.read_bytes()
    if da == db:
        return True
    suffix = a.suffix
    try:
        if suffix == ".json":
            return _json_text(da, mapping) == _json_text(db)
        if suffix == ".jsonl":
            return [_json_text(line, mapping) for line in da.splitlines() if line.strip()] == [
                _json_text(line) for line in db.splitlines() if line.strip()
            ]
        if suffix in (".tsv", ".csv"):
            delimiter = "\t" if suffix == ".tsv" else ","
            return _table(da, delimiter, mapping) == _table(db, delimiter)
        if suffix == ".parquet":
            return _parquet(a, mapping).equals(_parquet(b))
        if suffix == ".js":
            return _js_data(da, mapping) == _js_data(db)
        if mapping and suffix in (".md", ".txt"):
            text = da.decode("utf-8")
            for pattern, replace, keys in mapping.values:
                if not keys:
                    text = pattern.sub(replace, text)
            return text == db.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return False


def compare(
    before: Path, after: Path, ignore: tuple[str, ...] = (), mapping: Mapping = NO_MAPPING
) -> tuple[list[str], list[str], list[str], int]:
    def files(root: Path) -> set[str]:
        return {
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and not any(str(p.relative_to(root)).startswith(i) for i in ignore)
        }

    fa, fb = files(before), files(after)
    pairs = {rel: mapping.path(rel) for rel in fa}
    only_before = sorted(rel for rel, to in pairs.items() if to not in fb)
    only_after = sorted(fb - set(pairs.values()))
    common = [rel for rel, to in pairs.items() if to in fb]
    while True:  # learn the hashes of files that are the same once mapped, until nothing new
        differ = sorted(rel for rel in common if not same(before / rel, after / pairs[rel], mapping.for_file(rel)))
        learnt = 0
        for rel in common:
            if rel in differ:
                continue
            old, new = (
                hashlib.sha256((root / r).read_bytes()).hexdigest() for root, r in ((before, rel), (after, pairs[rel]))
            )
            if old != new and mapping.hashes.get(old) != new:
                mapping.hashes[old] = new
                learnt += 1
        if not learnt:
            return only_before, only_after, differ, len(common)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--ignore", action="append", default=[], help="a path prefix to leave out (repeatable)")
    parser.add_argument(
        "--map", dest="mapping", type=Path, default=None, help="YAML: paths and values mapped (docstring)"
    )
    args = parser.parse_args(argv)
    for root in (args.before, args.after):
        if not root.is_dir():
            parser.error(f"{root}: not a directory")
    mapping = Mapping.load(args.mapping)
    only_before, only_after, differ, common = compare(args.before, args.after, tuple(args.ignore), mapping)
    for rel in only_before:
        print(f"only in {args.before}: {rel}")
    for rel in only_after:
        print(f"only in {args.after}: {rel}")
    for rel in differ:
        print(f"differs: {rel}")
    total = len(only_before) + len(only_after) + len(differ)
    print(
        f"{common} files in both trees; {total} difference(s) (ignored: wall-clock fields {', '.join(sorted(WALL_CLOCK_KEYS))}; code identity {', '.join(sorted(CODE_KEYS))})"
    )
    if mapping:
        print(
            f"mapped ({args.mapping}): {len(mapping.paths)} path rule(s), {len(mapping.values)} value rule(s), "
            f"{len(mapping.hashes)} file hash(es) of files equal once mapped"
        )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
