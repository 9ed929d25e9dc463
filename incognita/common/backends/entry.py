"""A model entry, parsed once: the spec and its per-role settings as one frozen value.

Who writes it: `ModelEntry.parse`, from a config value (a spec string such as `openai:gpt-5`, or
a mapping `{spec: ..., temperature: ...}`) or from its one-string form on the command line (the
spec alone, or the mapping as compact JSON). The commands parse `--spec`, `--customer`,
`--service` and `--judge` with `entry_type()` (a click type), CollabSim's `--models` entry by
entry, and the config checks parse the config's values; the settings dataclasses of a run (the
episodes' HarnessSettings, the native job, CollabSim's agents) hold entries, and
`backends.base.make_backend` takes one. Who reads it: every one of those, through its fields;
nobody splits a string or a mapping again.

The invariant: `entry.param`, the one-string form, is what the workflow hands a job and what
records keep (`models` of an episode record, a CollabSim manifest), byte for byte as it always
was: the spec alone when there are no settings, else compact JSON with sorted keys, so that a
changed setting changes the job's params and nothing else does. `ModelEntry.parse(e.param) == e`.

Pacing settings (rpm, tpm, max_in_flight, reserve: incognita.common.pacing.Limits) are settings
of the entry like any other, and the records keep them; only the workflow moves them apart,
since they change how fast calls go and never what they return: a job's compared param holds the
entry `without_pacing()`, and one `--pacing` map (`pacing_map`, a param Snakemake does not
compare) holds the settings, which the command puts back with `with_pacing`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from incognita.common.io import InputError
from incognita.common.pacing import PACING_KEYS

# The family of each environment family's own offline participants (not built by the shared registry).
SCRIPTED = "scripted"
NONE = "none"  # the one-string form of an absent role (`--judge none`)


@dataclass(frozen=True, eq=False)
class ModelEntry:
    """`spec` is `<family>:<name>`; `settings` the entry's other keys, in the order given (a
    read-only mapping of JSON values, copied from the config). Equal entries have equal `param`."""

    spec: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.spec, str) or self.spec.lstrip().startswith("{"):
            raise TypeError(
                "a model entry's spec is a string such as openai:gpt-5 (ModelEntry.parse reads an "
                f"entry's other forms), got {self.spec!r}"
            )
        # A private deep copy: the entry is frozen, and a caller's config dict stays its own.
        object.__setattr__(self, "settings", MappingProxyType(copy.deepcopy(dict(self.settings))))

    @classmethod
    def parse(cls, value: object, where: str = "model entry") -> ModelEntry:
        """The entry of a config value or its one-string form; an entry is returned as it is.
        InputError names `where` (a config key, a command-line option)."""
        if isinstance(value, ModelEntry):
            return value
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: not a valid JSON model entry ({exc.msg})") from None
        if isinstance(value, str):
            return cls(value)
        spec = value.get("spec") if isinstance(value, Mapping) else None
        if not isinstance(spec, str) or spec.lstrip().startswith("{"):
            raise InputError(f"{where}: expected a spec string or a mapping with a 'spec' string, got {value!r}")
        return cls(spec, {k: v for k, v in value.items() if k != "spec"})

    @classmethod
    def optional(cls, value: object, where: str = "model entry") -> ModelEntry | None:
        """As `parse`, for a role that may be absent: None, "" and "none" are no entry."""
        return None if value in (None, "", NONE) else cls.parse(value, where)

    # ------------------------------------------------------------------ what it names
    @property
    def family(self) -> str:
        return self.spec.partition(":")[0]

    @property
    def name(self) -> str:
        return self.spec.partition(":")[2]

    @property
    def calls_api(self) -> bool:
        """Whether it reaches a model over the network: anything but a scripted participant."""
        return self.family != SCRIPTED

    # ------------------------------------------------------------------ its forms
    @property
    def param(self) -> str:
        """The one-string form for the command line, workflow params and records."""
        if not self.settings:
            return self.spec
        return json.dumps({"spec": self.spec, **self.settings}, sort_keys=True, separators=(",", ":"))

    def mapping(self) -> dict:
        """`{spec, **settings}`, settings in their order (the native harness's llm_args)."""
        return {"spec": self.spec, **copy.deepcopy(dict(self.settings))}

    def to_config(self) -> str | dict:
        """As a config value: the spec alone without settings, else the mapping (CollabSim's
        resolved experiment and manifest, which a replay parses back)."""
        return self.mapping() if self.settings else self.spec

    # ------------------------------------------------------------------ pacing apart
    @property
    def pacing(self) -> dict:
        """Its pacing settings (those it sets; the rest keep Limits' defaults)."""
        return {k: self.settings[k] for k in PACING_KEYS if k in self.settings}

    def without_pacing(self) -> ModelEntry:
        if not self.pacing:
            return self
        return ModelEntry(self.spec, {k: v for k, v in self.settings.items() if k not in PACING_KEYS})

    def with_pacing(self, pacing_map: Mapping[str, Mapping]) -> ModelEntry:
        """This entry as a job received it, with its settings from the `--pacing` map put back
        (keyed by the entry's one-string form); its settings then come in sorted order, as the
        one-string form they always made."""
        extra = pacing_map.get(self.param)
        if not extra:
            return self
        merged = {**self.settings, **extra}
        return ModelEntry(self.spec, {k: merged[k] for k in sorted(merged)})

    # ------------------------------------------------------------------ a value
    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelEntry) and other.param == self.param

    def __hash__(self) -> int:
        return hash(self.param)

    def __reduce__(self):
        # The read-only mapping does not pickle; the entry is rebuilt from a plain copy.
        return (ModelEntry, (self.spec, dict(self.settings)))

    def __str__(self) -> str:
        return self.param


def entry_param(entry: object) -> str:
    """The one-string form of a config value, an entry, or None ("none")."""
    if entry is None:
        return NONE
    return ModelEntry.parse(entry).param


def calls_api(entries: Iterable[object]) -> bool:
    """Whether any of these entries (config values, one-string forms, ModelEntry; None or "none"
    for an absent role) reaches a model over the network."""
    return any(e.calls_api for e in (ModelEntry.optional(x) for x in entries) if e is not None)


def pacing_map(entries: Iterable[object], forecast: Mapping[str, Mapping] | None = None) -> str:
    """The `--pacing` value for these config entries: compact JSON mapping each paced entry's
    one-string form without pacing (as the job receives it) to its settings; "{}" when none is.
    `forecast` maps such forms to settings the workflow chose for them (the reserve), each added
    where the entry does not set it itself."""
    out = {}
    for value in entries:
        entry = ModelEntry.optional(value)
        if entry is None:
            continue
        key = entry.without_pacing().param
        pacing = {**(forecast or {}).get(key, {}), **entry.pacing}
        if pacing:
            out[key] = pacing
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def entry_type(optional: bool = False):
    """The click type of `--spec`, `--customer`, `--service`, `--judge`: a ModelEntry from its
    one-string form; with `optional`, "none" is no entry (None). A bad value is a usage error
    naming the option (click's) and the value."""
    import click  # the commands' dependency: the workflow's parse-time imports of this module skip it

    class EntryType(click.ParamType):
        name = "entry"

        def convert(self, value, param, ctx):
            try:
                return (ModelEntry.optional if optional else ModelEntry.parse)(value, repr(value)[:200])
            except InputError as exc:
                self.fail(str(exc), param, ctx)

    return EntryType()
