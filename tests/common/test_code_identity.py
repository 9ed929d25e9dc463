"""The code identity a result carries (incognita.common.environment): the source hash names the
package's files, so a copy hashes the same and any edit changes it; the commit comes from git."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from incognita.common import environment


def identity_of(package_copy) -> dict:
    """code_identity() as the copy computes it, in a fresh interpreter (the values are cached)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from incognita.common.environment import code_identity as c; print(json.dumps(c()))",
        ],
        cwd=package_copy.parent,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(package_copy.parent), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        check=True,
    )
    return json.loads(out.stdout)


def test_a_copy_hashes_the_same_and_an_edit_does_not(tmp_path):
    copy = tmp_path / "tree" / "incognita"
    shutil.copytree(environment.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "common" / "__pycache__").mkdir(exist_ok=True)
    (copy / "common" / "__pycache__" / "stale.cpython-311.pyc").write_bytes(b"bytecode is not source")
    same = identity_of(copy)
    assert same["source_sha256"] == environment.source_hash() and same["git_commit"] is None  # not a checkout

    (copy / "common" / "environment.py").write_text((copy / "common" / "environment.py").read_text() + "\n# edited\n")
    assert identity_of(copy)["source_sha256"] != environment.source_hash()


def test_the_commit_is_heads_and_a_changed_package_is_dirty(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(environment.PACKAGE_DIR, root / "incognita", ignore=shutil.ignore_patterns("__pycache__"))

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "empty")
    git("add", "incognita")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "package")
    head = git("rev-parse", "HEAD").strip()
    assert identity_of(root / "incognita")["git_commit"] == head

    (root / "incognita" / "new_module.py").write_text("x = 1\n")  # untracked counts as a change
    assert identity_of(root / "incognita")["git_commit"] == head + "+dirty"


def test_describe_names_version_source_and_lock():
    text = environment.describe()
    assert text.startswith("incognita ") and f"source {environment.source_hash()[:12]}" in text
    assert "lock " in text


def test_the_cli_prints_it_on_request_only():
    from click.testing import CliRunner

    from incognita.cli import main

    out = CliRunner().invoke(main, ["--version"])
    assert out.exit_code == 0 and out.output.strip() == environment.describe()
    fresh = subprocess.run(
        [sys.executable, "-c", "import incognita.cli, sys; print('incognita.common.environment' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert fresh.stdout.strip() == "False"  # importing the CLI does not hash the source
