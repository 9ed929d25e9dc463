"""The stages name no domain: outside a domain's own package, no code spells a registered domain's
name, one of its tools or one of its holders (incognita.access.domain states the invariant).

Docstrings and comments may use a domain as an example; string literals and identifiers are what
the code acts on, so they are what this scans. The registry itself (incognita/access/domain.py)
is the one place that names domains.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from incognita.access.domain import REGISTRY, domain_files
from incognita.common.io import read_yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "incognita"
DOMAIN_PACKAGES = PACKAGE / "access" / "domains"
REGISTRY_MODULE = PACKAGE / "access" / "domain.py"
WORKFLOW = [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]


@functools.cache
def domain_words() -> dict[str, str]:
    """Every registered domain's name, tools and holders -> what it is (for the failure message)."""
    words = {}
    for name in REGISTRY:
        partition = read_yaml(domain_files(name, ROOT / "config/domains").partition)
        words[name] = "a domain"
        words.update({tool: f"a {name} tool" for tool in partition["tools"]})
        for holder_map in partition["holder_maps"].values():
            words.update({holder: f"a {name} holder" for holder in holder_map["holders"]})
    return words


def word_pattern(words) -> re.Pattern:
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])({alternatives})(?![A-Za-z0-9_])")


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def spelled_in_code(path: Path, pattern: re.Pattern, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found += [f"{path.relative_to(root)}:{node.lineno}: {m.group(1)!r}" for m in pattern.finditer(node.value)]
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if pattern.fullmatch(name):
                found.append(f"{path.relative_to(root)}:{node.lineno}: identifier {name!r}")
    return found


def generic_modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if DOMAIN_PACKAGES not in path.parents and path != REGISTRY_MODULE
    ]


def test_the_scan_sees_what_it_looks_for(tmp_path):
    """The scan flags a literal and an identifier, and passes over a docstring and a comment."""
    module = tmp_path / "example.py"
    module.write_text('"""Used by retail."""\n# Vega answers\nTOOL = "get_user_details"\nx = calculate\n')
    found = spelled_in_code(module, word_pattern(["retail", "Vega", "get_user_details", "calculate"]), tmp_path)
    assert found == ["example.py:3: 'get_user_details'", "example.py:4: identifier 'calculate'"]


@pytest.mark.parametrize("path", generic_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_generic_code_names_no_domain(path):
    found = spelled_in_code(path, word_pattern(domain_words()))
    assert not found, "generic code names a domain's own words (move them into its package):\n" + "\n".join(found)


def test_the_workflow_names_no_domain():
    """Rules take the design's domains from the config; their comments may not name a domain either
    (the workflow has no docstrings to hold an example)."""
    pattern = word_pattern(domain_words())
    found = [
        f"{path.relative_to(ROOT)}:{number}: {m.group(1)!r}"
        for path in WORKFLOW
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for m in pattern.finditer(line)
    ]
    assert not found, "\n".join(found)


def test_only_the_registry_module_names_domains():
    """domain.py names them once, in REGISTRY (and the example id of help texts)."""
    text = REGISTRY_MODULE.read_text()
    for name in REGISTRY:
        assert f'"{name}": "incognita.access.domains.{name}"' in text
