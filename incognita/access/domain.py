"""Benchmark domains: which task families of the upstream package the access family converts,
where each one's files are, and how a task is named across them.

Who reads it: every stage's command (each resolves `--domain NAME` here), the design
(incognita.access.cells: a design's domains and its tasks' qualified ids) and the workflow at
parse time (rules/common.smk).

The invariant: what is specific to one tau2 domain lives in that domain's package
(`incognita/access/domains/<name>/`: its tau2 classes, tool roles, card rules, golden rules,
the scripted participants' knowledge of its records, the shapes of its identifiers) and in its
config folder (`config/domains/<name>/`: holder maps, role and rule texts, vocabulary, repairs,
corpus, locks); the generic stages receive a `Domain` and name none. Across domains a task is
named by its qualified id `<domain>/<upstream id>` (`retail/46`), so two domains never collide;
inside a domain's own artifacts (its cards, golden trajectories, coordination reference,
corpus) the upstream id alone is unambiguous and is what they record.

The mechanism: `REGISTRY` maps a name to its package, imported on first use, as tau2's own
registry maps a name to its constructors (lazily here: a retail job never imports another
domain). The package's `DOMAIN` attribute is a `Domain`: a few facts (tool roles, subject
arguments, seed namespace) and the modules of its parts, each imported when a stage first asks
for it and each satisfying one of the protocols below, which say what a domain must provide.
`DomainFiles` is the fixed layout of its config folder and source copy, read without importing
the package.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from incognita.common.io import InputError, read_yaml

# Each registered domain and the package that holds its knowledge (DOMAIN).
REGISTRY = {
    "retail": "incognita.access.domains.retail",
    "mock": "incognita.access.domains.mock",
    "airline": "incognita.access.domains.airline",
}
CONFIG_ROOT = "config/domains"  # <root>/<name>/: the domain's config folder
SOURCE_ROOT = "data/source"  # <root>/<name>/: its files copied out of the pinned package
SEPARATOR = "/"
# An upstream task id as it may appear in a path and a wildcard: letters, digits, '_', '-', '.'.
LOCAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
EXAMPLE_TASK = "retail/46"  # how a qualified id looks, for help texts and errors


# --------------------------------------------------------------------------- what a domain provides

# Roles a tool may play that the generic machinery treats apart from reads and writes:
#   identity    its arguments identify the customer: only the customer's own words may supply them
#   arithmetic  its `expression` is computed from numbers earlier results hold
#   handoff     a transfer to a human: its free-text summary is composed from the customer's request,
#               and the call counts for its own sake like a write
TOOL_ROLES = ("identity", "arithmetic", "handoff")


class Upstream(Protocol):
    """The domain's classes in the pinned tau2 package (imported when the part is first used)."""

    def classes(self) -> tuple[type, type]:
        """(database model, toolkit): tau2's `DB` subclass and `ToolKitBase` subclass."""

    def environment(self, db: Any = None, solo_mode: bool = False) -> Any:
        """tau2's environment constructor of the domain (the harness's registered one)."""


class CardRules(Protocol):
    """How a source task becomes a task card (incognita.access.cards.card) and what the card
    audit checks beyond the generic checks (incognita.access.cards.audit)."""

    def build_card(self, task: dict, db: dict, source_meta: dict) -> dict:
        """The rule-built (version 1) card of one upstream task."""

    def source_text(self, instructions: Any) -> str:
        """The text of the user scenario's instructions that fields must be found in."""

    def audit_checks(self, card: dict, db: dict, vocabulary: dict, ambiguities: dict) -> list[tuple[str, str, str]]:
        """The domain's own checks of a card: (check, verdict, detail) rows."""


class GoldenRules(Protocol):
    """The golden builder's domain rules (incognita.access.golden.trajectory)."""

    RULES: type  # a mixin of the builder: entity scope, read insertion, element selectors, derived values
    FIELD_PLANS: list  # (part, transform) forms a card field takes to equal an argument, in order
    TRANSFORMS: dict  # transform name -> what it means (recorded in the golden schema's docs)

    def field_form(self, field: dict, part: str | None, transform: str | None, value: str) -> bool:
        """Does the field, in that form, equal the value?"""

    def field_value(self, value: str, part: str | None, transform: str | None) -> str:
        """The value an agent writes from a field's released value in that form."""


@dataclass(frozen=True)
class Domain:
    """One registered domain: its facts, and the modules of its parts (imported on first use)."""

    name: str
    # Prefix of the task in a cell's seed material (incognita.access.episodes.harness.cell_seed);
    # retail's is empty: its cells were seeded by the upstream id alone before domains had
    # names, and keeping that keeps every result built then valid. `check_registry` allows one.
    seed_namespace: str
    tool_roles: Mapping[str, str]  # tool -> one of TOOL_ROLES
    subject_arguments: tuple[str, ...]  # arguments naming the record a call acts on, resolved first
    parts: Mapping[str, str] = field(default_factory=dict)  # part -> module (see PARTS)

    def part(self, name: str) -> ModuleType:
        if name not in self.parts:
            raise InputError(f"domain {self.name}: it provides no {name!r} part (it has {', '.join(self.parts)})")
        return importlib.import_module(self.parts[name])

    @property
    def upstream(self) -> Upstream:
        return self.part("upstream")

    @property
    def cards(self) -> CardRules:
        return self.part("cards")

    @property
    def golden(self) -> GoldenRules:
        return self.part("golden")

    def tools_with(self, role: str) -> frozenset[str]:
        return frozenset(t for t, r in self.tool_roles.items() if r == role)

    def write_tools(self) -> frozenset[str]:
        """The tools that change the domain's database, from tau2's own tool metadata (no
        database needed; read once per process)."""
        return _write_tools(self.name)

    def files(self, config_root: str | Path = None, source_root: str | Path = None) -> DomainFiles:
        return domain_files(self.name, config_root or CONFIG_ROOT, source_root or SOURCE_ROOT)


class ReaderRules(Protocol):
    """The participant-fidelity audit's knowledge of the domain (incognita.access.reader.participant_audit)."""

    VALUE_SHAPES: Any  # a ValueShapes: how its identifiers look in a reply, and which the customer may know

    def invented_id(self, n: int) -> tuple[str, str]:
        """(what it is, value): an identifier of one of VALUE_SHAPES' shapes made from `n`, which a
        faulty scripted customer invents (incognita.access.episodes.scripted.participant_faults)."""


class ScriptedRules(Protocol):
    """How the scripted participants choose among the domain's records (optional: without it a
    scripted agent is the plain one, incognita.access.episodes.scripted.scripted_agent.PlainAgent)."""

    AGENT: type  # the scripted agent class (a ScriptedAgent subclass with the domain's choosing rules)
    CHANGE_WORDS: Mapping[str, str]  # write tool -> the plain words a desk restates that change in


# The parts every domain's `parts` names, and the protocol each module satisfies; then the parts a
# domain may leave out.
PARTS: dict[str, Callable] = {"upstream": Upstream, "cards": CardRules, "golden": GoldenRules, "reader": ReaderRules}
OPTIONAL_PARTS: dict[str, Callable] = {"scripted": ScriptedRules}


def check_domain(name: str, where: str = "domain") -> str:
    if name not in REGISTRY:
        raise InputError(f"{where}: unknown domain {name!r} (registered: {', '.join(REGISTRY)})")
    return name


@functools.cache
def get_domain(name: str) -> Domain:
    """The registered domain's knowledge, its package imported on first use."""
    module = importlib.import_module(REGISTRY[check_domain(name)])
    domain = module.DOMAIN
    if domain.name != name:
        raise RuntimeError(f"{module.__name__}: DOMAIN.name is {domain.name!r}, registered as {name!r}")
    missing = [p for p in PARTS if p not in domain.parts]
    unknown = [p for p in domain.parts if p not in PARTS and p not in OPTIONAL_PARTS]
    if missing or unknown:
        raise RuntimeError(
            f"{module.__name__}: DOMAIN.parts: "
            + "; ".join(
                filter(None, [missing and f"missing {', '.join(missing)}", unknown and f"unknown {', '.join(unknown)}"])
            )
            + f" (parts: {', '.join(PARTS)}; optional: {', '.join(OPTIONAL_PARTS)})"
        )
    return domain


# --------------------------------------------------------------------------- task ids


@functools.cache
def _write_tools(name: str) -> frozenset[str]:
    _, toolkit = get_domain(name).upstream.classes()
    probe = toolkit(None)
    return frozenset(tool for tool in probe.tools if probe.tool_type(tool).value == "write")


def qualify(domain: str, local: str) -> str:
    """`retail/46`: a task named across domains."""
    return f"{domain}{SEPARATOR}{local}"


def split_task(task: str, where: str = "task") -> tuple[str, str]:
    """(domain, upstream id) of a qualified id; an InputError naming `where` otherwise."""
    domain, sep, local = str(task).partition(SEPARATOR)
    if not sep or domain not in REGISTRY or not LOCAL_ID.fullmatch(local):
        raise InputError(
            f"{where}: {task!r} is not a qualified task id <domain>/<upstream id> "
            f"(domains: {', '.join(REGISTRY)}; for example {EXAMPLE_TASK!r})"
        )
    return domain, local


def local_id(task: str) -> str:
    return split_task(task)[1]


def id_order(local: str) -> tuple:
    """Upstream ids in their natural order: numbers numerically, then the rest by name."""
    return (0, int(local), "") if local.isdigit() else (1, 0, local)


def task_order(task: str) -> tuple:
    """Qualified ids: by domain in registry order, then by `id_order`."""
    domain, local = split_task(task)
    return (list(REGISTRY).index(domain), *id_order(local))


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class DomainFiles:
    """Where a domain's data lives: its config folder (fixed layout, written by hand and frozen
    by `incognita freeze`) and its copy of the upstream files (written by the source stage)."""

    name: str
    root: Path  # config/domains/<name>
    source: Path  # data/source/<name>

    @property
    def partition(self) -> Path:
        return self.root / "partition.yaml"

    @property
    def vocabulary(self) -> Path:
        return self.root / "vocabulary.yaml"

    @property
    def repairs(self) -> Path:
        return self.root / "repairs"

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.yaml"

    @property
    def locks(self) -> Path:
        return self.root / "locks.yaml"

    @property
    def interpretation(self) -> Path:
        return self.root / "interpretation.yaml"

    @property
    def ambiguities(self) -> Path:
        return self.root / "upstream_ambiguities.yaml"

    @property
    def prompts(self) -> Path:
        """The domain's prompt files (role and rule texts, desks, request blocks), beside the
        generic ones of the workflow's `prompts` folder (incognita.access.episodes.loop.prompts)."""
        return self.root / "prompts"

    @property
    def reader_validation(self) -> Path:
        return self.root / "reader_validation"

    @property
    def settings_file(self) -> Path:
        return self.root / "domain.yaml"

    @property
    def db(self) -> Path:
        return self.source / "db.json"

    @property
    def tasks(self) -> Path:
        return self.source / "tasks.json"

    def corpus_rule(self) -> dict:
        """The selection rule of `incognita corpus` (domain.yaml, `corpus`), checked."""
        doc = read_yaml(self.settings_file) if self.settings_file.exists() else None
        rule = (doc or {}).get("corpus") if isinstance(doc, dict) else None
        where = f"{self.settings_file}: corpus"
        if not isinstance(rule, dict):
            raise InputError(f"{where}: missing (seed, per_level, levels, include)")
        for key, kind in (("seed", int), ("per_level", int), ("levels", list), ("include", list)):
            if not isinstance(rule.get(key), kind) or isinstance(rule.get(key), bool):
                raise InputError(f"{where}.{key}: expected {kind.__name__}, got {rule.get(key)!r}")
        if not all(isinstance(v, int) and v >= 1 for v in rule["levels"]):
            raise InputError(f"{where}.levels: expected positive integers, got {rule['levels']}")
        bad = [t for t in rule["include"] if not isinstance(t, str) or not LOCAL_ID.fullmatch(t)]
        if bad:
            raise InputError(f"{where}.include: not upstream task ids (strings): {bad}")
        return rule

    def published_totals(self) -> dict[str, int] | None:
        """The totals a paper reports over its corpus of this domain (domain.yaml, `published`),
        printed beside ours and recorded in the corpus file; None when no paper used the domain."""
        doc = read_yaml(self.settings_file) if self.settings_file.exists() else None
        published = (doc or {}).get("published") if isinstance(doc, dict) else None
        if published is None:
            return None
        where = f"{self.settings_file}: published"
        if not isinstance(published, dict) or set(published) != set(PUBLISHED_TOTALS):
            raise InputError(f"{where}: expected the keys {', '.join(PUBLISHED_TOTALS)}, got {published!r}")
        for key in PUBLISHED_TOTALS:
            value = published[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(f"{where}.{key}: expected a whole number, got {value!r}")
        return {key: published[key] for key in PUBLISHED_TOTALS}


# The totals a domain.yaml may record as published (incognita.access.reference.coordination.totals).
PUBLISHED_TOTALS = ("tasks", "calls", "counted", "role_assignments", "information_items")


def domain_files(
    name: str, config_root: str | Path = CONFIG_ROOT, source_root: str | Path = SOURCE_ROOT
) -> DomainFiles:
    check_domain(name)
    return DomainFiles(name, Path(config_root) / name, Path(source_root) / name)
