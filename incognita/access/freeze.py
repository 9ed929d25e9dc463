"""Hash locks for frozen artifacts (coordination reference, corpus, interpretation table).

Each domain's `locks.yaml` (config/domains/<name>/locks.yaml) records, for each of its frozen
artifacts, its path, version, sha256 and the date it was frozen. Anything that consumes a frozen artifact calls `verify_lock` first, which
refuses an artifact whose bytes differ from the lock: a changed reference or corpus is never
used silently. Re-freezing is deliberate and versioned: `incognita freeze --domain <domain> --bump` gives every
changed artifact the next version and rewrites its lock.

An artifact may carry its own `version` key (a domain's corpus.yaml does); freezing keeps that
key equal to the lock's version, so the file states which frozen version it is.
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

import yaml

from incognita.access.domain import REGISTRY, DomainFiles
from incognita.access.paths import coordination_file
from incognita.common.io import InputError, atomic_write_text, read_yaml, sha256_file


def refreeze(locks_path: str | Path, bump: bool = True) -> str:
    """The command that re-freezes the artifacts of the domain whose locks file this is: a
    domain's own (config/domains/<domain>/locks.yaml) by its name, any other by its path."""
    path = Path(locks_path)
    if path.name == "locks.yaml" and path.parent.name in REGISTRY and path.parent.parent.name == "domains":
        where = f"--domain {path.parent.name}"
    else:
        where = f"--domain <domain> --locks {path}"
    return f"incognita freeze {where}{' --bump' if bump else ''}"


def domain_artifacts(files: DomainFiles) -> dict[str, str]:
    """A domain's frozen artifacts, with the path each is built at: its coordination reference,
    its corpus and the interpretation table of its pre-specified analysis."""
    return {
        "coordination": str(coordination_file(files.name)),
        "corpus": str(files.corpus),
        "interpretation": str(files.interpretation),
    }


_HEADER = """\
# sha256 locks of frozen artifacts. Written by `incognita freeze`; do not edit by hand.
# A consumer refuses an artifact whose sha256 differs from its entry here. If a change is
# intended, rebuild the artifact and run `incognita freeze --bump`, which gives each changed
# artifact the next version and rewrites its entry (then commit this file).
"""
_VERSION_LINE = re.compile(r"^version:[ \t]*(\d+)[ \t]*$", re.MULTILINE)


class LockError(InputError):
    """A frozen artifact is missing, unlocked, or differs from its lock."""


def load_locks(path: str | Path) -> dict[str, dict]:
    """The `artifacts` mapping of the locks file ({} when the file does not exist yet)."""
    path = Path(path)
    if not path.exists():
        return {}
    doc = read_yaml(path) or {}
    if not isinstance(doc, dict) or not isinstance(doc.get("artifacts", {}), dict):
        raise InputError(f"{path}: artifacts: expected a mapping of artifact name to lock")
    artifacts = doc.get("artifacts") or {}
    for name, entry in artifacts.items():
        for key, kind in (("path", str), ("version", int), ("sha256", str), ("frozen", str)):
            if not isinstance(entry, dict) or not isinstance(entry.get(key), kind):
                raise InputError(f"{path}: artifacts.{name}.{key}: missing or not a {kind.__name__}")
    return artifacts


def write_locks(path: str | Path, artifacts: dict[str, dict]) -> None:
    body = yaml.safe_dump(
        {"artifacts": {k: artifacts[k] for k in sorted(artifacts)}}, sort_keys=False, default_flow_style=False
    )
    atomic_write_text(path, _HEADER + body)


def embedded_version(path: str | Path) -> int | None:
    """The top-level `version: N` line of a YAML artifact, if it has one."""
    path = Path(path)
    if path.suffix not in (".yaml", ".yml"):
        return None
    m = _VERSION_LINE.search(path.read_text(encoding="utf-8"))
    return int(m.group(1)) if m else None


def set_embedded_version(path: str | Path, version: int) -> None:
    """Rewrite the top-level `version:` line in place, keeping every comment."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    new, n = _VERSION_LINE.subn(f"version: {version}", text, count=1)
    if n:
        atomic_write_text(path, new)


def verify_lock(name: str, path: str | Path, locks_path: str | Path) -> dict:
    """Refuse `path` unless its sha256 equals the lock `name`; return the lock entry."""
    locks_path = Path(locks_path)
    path = Path(path)
    artifacts = load_locks(locks_path)
    entry = artifacts.get(name)
    if entry is None:
        raise LockError(
            f"{path}: artifact {name!r} has no lock in {locks_path}; it has not been frozen. "
            f"Check it, then freeze it with `{refreeze(locks_path, bump=False)}` (or `{refreeze(locks_path)}`)."
        )
    if not path.exists():
        raise LockError(f"{path}: frozen artifact {name!r} (version {entry['version']}) not found; build it first")
    actual = sha256_file(path)
    if actual != entry["sha256"]:
        raise LockError(
            f"{path}: refused: artifact {name!r} changed since it was frozen "
            f"(version {entry['version']}, {entry['frozen']}, locked file {entry['path']}).\n"
            f"  expected sha256 {entry['sha256']}\n"
            f"  actual   sha256 {actual}\n"
            f"  If the change is intended, re-freeze with a new version: {refreeze(locks_path)} "
            f"(then commit {locks_path}); otherwise restore the inputs that changed."
        )
    inner = embedded_version(path)
    if inner is not None and inner != entry["version"]:
        raise LockError(
            f"{path}: version {inner} in the file but {entry['version']} in {locks_path}; re-freeze with {refreeze(locks_path)}"
        )
    return entry


def verify_all(locks_path: str | Path, at: dict[str, str | Path] | None = None) -> list[tuple[str, dict]]:
    """Verify every locked artifact, at its recorded path or at the path `at` gives for its name
    (where a job sees it: under a storage provider that is not the recorded path); the first
    failure raises. A name in `at` that the locks file does not lock is an error."""
    artifacts, at = load_locks(locks_path), at or {}
    if not artifacts:
        raise LockError(f"{locks_path}: no frozen artifacts; run `incognita freeze`")
    unknown = sorted(set(at) - set(artifacts))
    if unknown:
        raise InputError(
            f"{locks_path}: no artifact {', '.join(map(repr, unknown))} is locked here (locked: {', '.join(sorted(artifacts))})"
        )
    return [
        (name, verify_lock(name, at.get(name, entry["path"]), locks_path)) for name, entry in sorted(artifacts.items())
    ]


def freeze(
    locks_path: str | Path,
    *,
    bump: bool = False,
    names: list[str] | None = None,
    today: str | None = None,
    extra: dict[str, str] | None = None,
) -> list[dict]:
    """Lock artifacts; return one report row per artifact.

    An artifact with no lock is frozen at version 1. An unchanged artifact is left alone. A
    changed artifact is refused unless `bump`, which gives it the next version (written into
    the artifact too when it carries a `version:` line) and a new lock. `extra` (name -> path;
    `domain_artifacts` for a domain's) names the artifacts to lock beyond those already in the
    locks file; once locked they are known from it.
    """
    locks_path = Path(locks_path)
    today = today or _dt.date.today().isoformat()
    artifacts = load_locks(locks_path)
    targets = {**(extra or {}), **{n: e["path"] for n, e in artifacts.items()}}
    if names:
        unknown = [n for n in names if n not in targets]
        if unknown:
            raise InputError(
                f"{locks_path}: unknown artifact(s) {', '.join(unknown)} (known: {', '.join(sorted(targets))})"
            )
        targets = {n: targets[n] for n in names}

    # Check everything before writing anything, so a refusal leaves every file untouched.
    plan = []
    for name, apath in sorted(targets.items()):
        path = Path(apath)
        entry = artifacts.get(name)
        if not path.exists():
            if entry is None and not names:
                plan.append((name, path, None, "missing"))
                continue
            raise LockError(f"{path}: artifact {name!r} not found; build it before freezing")
        if entry is None:
            plan.append((name, path, None, embedded_version(path) or 1))
            continue
        inner = embedded_version(path)
        same = sha256_file(path) == entry["sha256"] and inner in (None, entry["version"])
        if same:
            plan.append((name, path, entry, None))
        elif not bump:
            raise LockError(
                f"{path}: artifact {name!r} differs from its lock (version {entry['version']}); "
                f"nothing written. To accept the change, run {refreeze(locks_path)}."
            )
        else:
            plan.append((name, path, entry, entry["version"] + 1))

    rows = []
    for name, path, entry, new_version in plan:
        if new_version is None:
            rows.append({"artifact": name, "path": str(path), "version": entry["version"], "action": "unchanged"})
            continue
        if new_version == "missing":
            rows.append({"artifact": name, "path": str(path), "version": None, "action": "not built, skipped"})
            continue
        if embedded_version(path) is not None:
            set_embedded_version(path, new_version)
        artifacts[name] = {"path": str(path), "version": new_version, "sha256": sha256_file(path), "frozen": today}
        rows.append(
            {
                "artifact": name,
                "path": str(path),
                "version": new_version,
                "action": "frozen" if entry is None else "bumped",
                "sha256": artifacts[name]["sha256"],
            }
        )
    if any(r["action"] in ("frozen", "bumped") for r in rows):
        write_locks(locks_path, artifacts)
    return rows
