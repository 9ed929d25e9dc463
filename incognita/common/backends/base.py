"""The backend interface and its registry.

Who uses it: every environment family builds its participants with `make_backend(entry, role,
knowledge, runtime)` from a parsed ModelEntry (incognita.common.backends.entry); each shared family's module
registers its factory here when imported (`transport.register_protocol`), and the config checks
call `check_settings`. The invariant: a family is named by the spec's prefix, and its module is
imported only when an entry names it; `scripted:` specs are never built here but by the calling
environment family's own factory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from incognita.common.backends.entry import SCRIPTED, ModelEntry
from incognita.common.io import InputError
from incognita.common.usage import Usage


class BackendError(Exception):
    """A model call failed for reasons outside the agent (API errors after retries, timeouts).
    The episode is recorded with this error and excluded or retried, never scored."""


class BackendConfigError(InputError):
    """The endpoint refuses the configuration itself (no key, bad key, unknown model, no credit):
    the command stops instead of writing hundreds of error records."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # a dict when the model produced valid JSON, else the raw string


@dataclass(frozen=True)
class Turn:
    """One chat turn in OpenAI's shape: role system/user/assistant/tool."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ModelRequest:
    role: str  # who is speaking: agent, customer, Vega, Aster, ...
    system: str
    messages: tuple[Turn, ...]
    tools: tuple[dict, ...] = ()  # OpenAI function schemas the role may call
    seed: int = 0
    # The JSON schema a valid answer satisfies, {"name": ..., "schema": ..., optionally
    # "grammar_schema": ...}, from the code that parses the answer. Sent to the model only when
    # its entry sets `structured_output` (each protocol's request body, e.g. openai.response_format).
    output_schema: dict | None = None


@dataclass(frozen=True)
class ModelResponse:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


class Backend(Protocol):
    spec: str

    def respond(self, request: ModelRequest) -> ModelResponse: ...


@dataclass(frozen=True)
class Runtime:
    """What a run adds to a model entry for a shared family's transport (cache, price table,
    the cell served, the pace's reserve). A participant never sees it: a scripted participant is
    built from its private knowledge alone, and a real model from its prompt and conversation."""

    cache_dir: str | Literal[False] | None = None  # None: $INCOGNITA_CACHE_DIR or cache/responses; False: no cache
    prices: str | None = None  # the price table's path; None: $INCOGNITA_PRICES or the default
    cell: Mapping[str, Any] | None = None  # what the backend serves (sent to a loopback that asks: send_cell)
    critical: bool = False  # its calls belong to the design's longest chains: they may use the reserve


# A shared family's factory: (entry, role, runtime) -> Backend (incognita.common.backends.transport.make).
Factory = Callable[[ModelEntry, str, Runtime], Backend]
# An environment family's factory for its `scripted:` participants: (profile name, role, knowledge),
# the knowledge being what that participant privately knows, with the entry's settings (a scripted
# customer's faults) added under "settings".
ScriptedFactory = Callable[[str, str, dict], Backend]
# A family's check of a config entry's settings: (model name, settings, where) -> None, raising
# InputError naming `where`. Both families' config checks call it, so a family's settings rules
# live in the family's module and nowhere else.
SettingsCheck = Callable[[str, dict, str], object]
_REGISTRY: dict[str, Factory] = {}
_SETTINGS_CHECKS: dict[str, SettingsCheck] = {}
# The modules under incognita/common/backends that register a shared family when imported (one
# protocol module each: incognita.common.backends.transport). `scripted` is not among them: each
# environment family resolves its own scripted participants.
FAMILIES = ("openai", "anthropic")


def register(family: str, settings_check: SettingsCheck | None = None) -> Callable[[Factory], Factory]:
    """Register a backend family: `family:<name>` entries are built by the decorated factory, and a
    config entry's settings for it are checked by `settings_check` (none: it takes no settings)."""

    def wrap(factory: Factory) -> Factory:
        _REGISTRY[family] = factory
        if settings_check is not None:
            _SETTINGS_CHECKS[family] = settings_check
        return factory

    return wrap


def check_settings(entry: ModelEntry, where: str) -> None:
    """Check a config entry's settings for its shared family (loaded on demand); InputError names `where`."""
    family = entry.family
    if family not in _REGISTRY:
        _load_family(family)
    check = _SETTINGS_CHECKS.get(family)
    if check is not None:
        check(entry.name, dict(entry.settings), where)
    elif entry.settings:
        raise InputError(f"{where}: {family}: entries take no settings (got {', '.join(sorted(entry.settings))})")


def make_backend(
    entry: ModelEntry,
    role: str,
    knowledge: dict | None = None,
    runtime: Runtime | None = None,
    scripted: ScriptedFactory | None = None,
) -> Backend:
    """Build the backend for `entry`. A `scripted:` entry is built by the calling family's factory
    `scripted` from `knowledge` (what that participant privately knows); a shared family's from
    `runtime` alone, so no participant's knowledge can reach a provider, a cache entry or a log."""
    if not isinstance(entry, ModelEntry):
        raise TypeError(f"make_backend takes a ModelEntry (ModelEntry.parse), got {entry!r}")
    misplaced = sorted(set(knowledge or ()) & set(Runtime.__dataclass_fields__))
    if misplaced:  # it would be ignored: a cache or price table the caller meant would go unused
        raise TypeError(f"make_backend: {', '.join(misplaced)} belong in runtime=Runtime(...), not in the knowledge")
    family, name = entry.family, entry.name
    if family == SCRIPTED and name:
        if scripted is None:
            raise ValueError(
                f"{entry.spec!r} for role {role}: scripted participants belong to an environment family; "
                "build them through that family's make_backend"
            )
        return scripted(name, role, {**(knowledge or {}), "settings": dict(entry.settings)})
    if family not in _REGISTRY:
        _load_family(family)
    if family not in _REGISTRY or not name:
        raise ValueError(
            f"unknown backend spec {entry.spec!r} for role {role}: expected <family>:<name>, "
            f"families: {', '.join(known_families())}"
        )
    return _REGISTRY[family](entry, role, runtime or Runtime())


def known_families() -> list[str]:
    """Every family a spec may name: the shared ones (loaded first) and `scripted`."""
    for family in FAMILIES:
        if family not in _REGISTRY:
            _load_family(family)
    return sorted({*_REGISTRY, SCRIPTED})


def _load_family(family: str) -> None:
    # Families live in their own modules and register on import; import only what is asked for.
    import importlib

    try:
        importlib.import_module(f"incognita.common.backends.{family}")
    except ModuleNotFoundError:
        pass
