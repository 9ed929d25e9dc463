"""Small file helpers shared by every stage: atomic writes, hashing, JSON/YAML loading."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

_UMASK = os.umask(0)
os.umask(_UMASK)


class InputError(Exception):
    """Bad input named by file and field; the CLI turns it into a clean exit."""


class WriteError(OSError):
    """An output could not be written (disk full, quota, read-only file system), named by path.
    An OSError still, so callers that handle OSError keep working; the CLI prints it as one line."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Have `write(tmp)` fill a temp file in the target's directory, then rename it into place,
    so readers never see half a file and an interrupted run leaves the old one."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; results should read like any file
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            # A full disk raises a bare "[Errno 28] No space left on device" that names no file.
            raise WriteError(exc.errno, f"{path}: cannot write ({exc.strerror or exc})") from exc
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))


def canonical_json(obj: Any) -> str:
    """Stable serialisation used for hashing and for every JSON artifact we write."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, canonical_json(obj))


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:  # binary garbage: a ValueError, but not a JSONDecodeError
        raise InputError(f"{path}: not valid JSON (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


# libyaml's scanner and parser (the C extension in PyYAML's wheels) with PyYAML's own safe
# constructor: the same values as yaml.safe_load, several times faster; the workflow reads some
# 130 YAML files each time Snakemake parses it.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: str | os.PathLike) -> Any:
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({exc})") from None


def read_yaml_cached(path: str | os.PathLike) -> Any:
    """read_yaml for files read many times in one process (the same persona library, profiles
    and baselines for every experiment the workflow checks at parse time): parsed once per
    file version, a fresh copy each call so callers may change what they get."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return read_yaml(path)  # let read_yaml name the problem
    return copy.deepcopy(_parsed_yaml(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _parsed_yaml(path: str, mtime_ns: int, size: int) -> Any:
    return read_yaml(path)


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_obj(obj: Any) -> str:
    return sha256_text(canonical_json(obj))


def write_tsv(path: str | os.PathLike, header: list[str], rows: list[list[Any]]) -> None:
    def cell(v: Any) -> str:
        return str(v).replace("\t", " ").replace("\n", " ")

    lines = ["\t".join(header)] + ["\t".join(cell(v) for v in row) for row in rows]
    atomic_write_text(path, "\n".join(lines) + "\n")
