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
incognita.common.environment) names the commit and source hash that made a file, so it differs
between the two builds being compared by design; those keys are set aside the same way.
Random run identifiers are not content either: the upstream harness gives every simulation a
fresh UUID4, so any string that is a UUID compares equal to any other UUID.
Everything else is compared byte for byte.
"""

from __future__ import annotations

import argparse
import base64
import csv
import gzip
import io
import json
import re
import sys
from pathlib import Path

WALL_CLOCK_KEYS = frozenset(
    {"wall_time_s", "duration", "timestamp", "start_time", "end_time", "archived", "created", "elapsed_s"}
)
CODE_KEYS = frozenset({"code_version", "code"})
IGNORED_KEYS = WALL_CLOCK_KEYS | CODE_KEYS


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in IGNORED_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str) and UUID.match(value):
        return "<uuid>"
    return value


def _json_text(data: bytes):
    return _strip(json.loads(data))


def _table(data: bytes, delimiter: str):
    rows = list(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))
    if not rows:
        return rows
    keep = [i for i, name in enumerate(rows[0]) if name not in IGNORED_KEYS]
    return [[row[i] for i in keep if i < len(row)] for row in rows]


def _parquet(path: Path):
    import pandas as pd

    frame = pd.read_parquet(path)
    return frame.drop(columns=[c for c in frame.columns if c in IGNORED_KEYS])


def _js_data(data: bytes):
    # The viewer's data files are `viewerData("<key>", <JSON>);` scripts; other scripts compare as text.
    text = data.decode("utf-8").strip()
    if not (text.startswith("viewerData(") and text.endswith(");")):
        return text
    key, _, body = text[len("viewerData(") : -2].partition(",")
    try:
        payload = json.loads(body)
        if isinstance(payload, dict) and set(payload) == {"gzip_json"}:  # a compressed page (viewer/site.py)
            payload = json.loads(gzip.decompress(base64.b64decode(payload["gzip_json"])))
        return json.loads(key), _strip(payload)
    except json.JSONDecodeError:
        return text


def same(a: Path, b: Path) -> bool:
    da, db = a.read_bytes(), b.read_bytes()
    if da == db:
        return True
    suffix = a.suffix
    try:
        if suffix == ".json":
            return _json_text(da) == _json_text(db)
        if suffix == ".jsonl":
            return [_json_text(line) for line in da.splitlines() if line.strip()] == [
                _json_text(line) for line in db.splitlines() if line.strip()
            ]
        if suffix in (".tsv", ".csv"):
            delimiter = "\t" if suffix == ".tsv" else ","
            return _table(da, delimiter) == _table(db, delimiter)
        if suffix == ".parquet":
            return _parquet(a).equals(_parquet(b))
        if suffix == ".js":
            return _js_data(da) == _js_data(db)
    except (ValueError, UnicodeDecodeError):
        return False
    return False


def compare(before: Path, after: Path, ignore: tuple[str, ...] = ()) -> tuple[list[str], list[str], list[str], int]:
    def files(root: Path) -> set[str]:
        return {
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and not any(str(p.relative_to(root)).startswith(i) for i in ignore)
        }

    fa, fb = files(before), files(after)
    only_before = sorted(fa - fb)
    only_after = sorted(fb - fa)
    differ = sorted(rel for rel in fa & fb if not same(before / rel, after / rel))
    return only_before, only_after, differ, len(fa & fb)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--ignore", action="append", default=[], help="a path prefix to leave out (repeatable)")
    args = parser.parse_args(argv)
    for root in (args.before, args.after):
        if not root.is_dir():
            parser.error(f"{root}: not a directory")
    only_before, only_after, differ, common = compare(args.before, args.after, tuple(args.ignore))
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
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
