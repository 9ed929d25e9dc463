"""The backend interface and its registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from incognita.records import Usage


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


@dataclass(frozen=True)
class ModelResponse:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)


class Backend(Protocol):
    spec: str

    def respond(self, request: ModelRequest) -> ModelResponse: ...


Factory = Callable[[str, str, dict], Backend]
_REGISTRY: dict[str, Factory] = {}


def register(family: str) -> Callable[[Factory], Factory]:
    """Register a backend family: `family:<name>` specs are built by the decorated factory."""

    def wrap(factory: Factory) -> Factory:
        _REGISTRY[family] = factory
        return factory

    return wrap


def make_backend(spec: str, role: str, context: dict | None = None) -> Backend:
    family, _, name = spec.partition(":")
    if family not in _REGISTRY:
        _load_family(family)
    if family not in _REGISTRY or not name:
        known = ", ".join(sorted(_REGISTRY)) or "none loaded"
        raise ValueError(f"unknown backend spec {spec!r} for role {role}: expected <family>:<name>, families: {known}")
    return _REGISTRY[family](name, role, context or {})


def _load_family(family: str) -> None:
    # Families live in their own modules and register on import; import only what is asked for.
    import importlib

    try:
        importlib.import_module(f"incognita.backends.{family}")
    except ModuleNotFoundError:
        pass
