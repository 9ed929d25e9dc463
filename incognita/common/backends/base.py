"""The backend interface and its registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from incognita.common.io import InputError
from incognita.common.usage import Usage


class BackendError(Exception):
    """A model call failed for reasons outside the agent (API errors after retries, timeouts).
    The episode is recorded with this error and excluded or retried, never scored."""


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
    # its entry sets `structured_output` (incognita.common.backends.openai.response_format).
    output_schema: dict | None = None


@dataclass(frozen=True)
class ModelResponse:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


class Backend(Protocol):
    spec: str

    def respond(self, request: ModelRequest) -> ModelResponse: ...


Factory = Callable[[str, str, dict], Backend]
# A family's check of a config entry's settings: (model name, settings, where) -> None, raising
# InputError naming `where`. Both families' config checks call it, so a family's settings rules
# live in the family's module and nowhere else.
SettingsCheck = Callable[[str, dict, str], object]
_REGISTRY: dict[str, Factory] = {}
_SETTINGS_CHECKS: dict[str, SettingsCheck] = {}
# The modules under incognita/common/backends that register a shared family when imported.
# `scripted` is not among them: each environment family resolves its own scripted participants.
FAMILIES = ("openai", "anthropic")
SCRIPTED = "scripted"


def register(family: str, settings_check: SettingsCheck | None = None) -> Callable[[Factory], Factory]:
    """Register a backend family: `family:<name>` specs are built by the decorated factory, and a
    config entry's settings for it are checked by `settings_check` (none: it takes no settings)."""

    def wrap(factory: Factory) -> Factory:
        _REGISTRY[family] = factory
        if settings_check is not None:
            _SETTINGS_CHECKS[family] = settings_check
        return factory

    return wrap


def check_settings(family: str, name: str, settings: dict, where: str) -> None:
    """Check a config entry's settings for a shared family (loaded on demand); InputError names `where`."""
    if family not in _REGISTRY:
        _load_family(family)
    check = _SETTINGS_CHECKS.get(family)
    if check is not None:
        check(name, dict(settings), where)
    elif settings:
        raise InputError(f"{where}: {family}: entries take no settings (got {', '.join(sorted(settings))})")


def make_backend(spec: str, role: str, context: dict | None = None, scripted: Factory | None = None) -> Backend:
    """Build the backend for `spec`; `scripted` is the calling family's factory for `scripted:` specs."""
    family, _, name = spec.partition(":")
    if family == SCRIPTED and name:
        if scripted is None:
            raise ValueError(
                f"{spec!r} for role {role}: scripted participants belong to an environment family; "
                "build them through that family's make_backend"
            )
        return scripted(name, role, context or {})
    if family not in _REGISTRY:
        _load_family(family)
    if family not in _REGISTRY or not name:
        raise ValueError(
            f"unknown backend spec {spec!r} for role {role}: expected <family>:<name>, "
            f"families: {', '.join(known_families())}"
        )
    return _REGISTRY[family](name, role, context or {})


def known_families() -> list[str]:
    """Every family a spec may name: the shared ones (loaded first) and `scripted`."""
    for family in FAMILIES:
        if family not in _REGISTRY:
            _load_family(family)
    return sorted({*_REGISTRY, SCRIPTED})


def split_entry(entry: str | dict, where: str = "model entry") -> tuple[str, dict]:
    """A config model entry -> (spec, per-role settings).

    An entry is a spec string (`openai:gpt-5`), a mapping `{spec: ..., temperature: ...}`, or
    that mapping as a JSON string, which is how the workflow hands it to the command line.
    """
    if isinstance(entry, str) and entry.lstrip().startswith("{"):
        import json

        try:
            entry = json.loads(entry)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not a valid JSON model entry ({exc.msg})") from None
    if isinstance(entry, str):
        return entry, {}
    if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
        raise TypeError(f"{where}: expected a spec string or a mapping with a 'spec' string, got {entry!r}")
    return entry["spec"], {k: v for k, v in entry.items() if k != "spec"}


def calls_api(entries) -> bool:
    """Whether any of these model entries (config entries, their one-string forms, or "none"/None
    for an absent role) reaches a model over the network: anything but a scripted participant."""
    return any(split_entry(e)[0].partition(":")[0] != SCRIPTED for e in entries if e and e != "none")


def entry_param(entry: str | dict | None) -> str:
    """The one-string form of a model entry for the command line and workflow params: the spec
    alone when there are no settings, else compact sorted JSON (so a changed setting changes it)."""
    if entry is None:
        return "none"
    spec, settings = split_entry(entry)
    if not settings:
        return spec
    import json

    return json.dumps({"spec": spec, **settings}, sort_keys=True, separators=(",", ":"))


def _load_family(family: str) -> None:
    # Families live in their own modules and register on import; import only what is asked for.
    import importlib

    try:
        importlib.import_module(f"incognita.common.backends.{family}")
    except ModuleNotFoundError:
        pass
