"""Incognita's participants behind the shared backend interface.

`make_backend(entry, role, knowledge, runtime)` turns a model entry (a parsed ModelEntry, or a bare spec
such as `scripted:oracle` that code names) into a Backend.
`scripted:` specs are Incognita's offline participants (this package); every other family
(`openai:<model>`) is shared and built by `incognita.common.backends`. Scripted backends
receive `knowledge`, the private knowledge their role has (the card for the customer, the held
tools for a desk, the plan for an agent); real models never receive it and see only their prompt
and conversation, their transport only the `runtime` (cache, price table, cell served).
"""

from incognita.common.backends import base
from incognita.common.backends.base import (
    Backend,
    BackendError,
    ModelRequest,
    ModelResponse,
    Runtime,
    ToolCall,
    Turn,
)
from incognita.common.backends.entry import ModelEntry


def make_backend(
    entry: ModelEntry | str, role: str, knowledge: dict | None = None, runtime: Runtime | None = None
) -> Backend:
    from incognita.access.episodes.scripted.scripted_family import make_scripted

    # A string is a spec without settings (never an entry's JSON form: those are parsed where they arrive).
    entry = entry if isinstance(entry, ModelEntry) else ModelEntry(entry)
    return base.make_backend(entry, role, knowledge, runtime, scripted=make_scripted)


__all__ = ["Backend", "BackendError", "ModelRequest", "ModelResponse", "Runtime", "ToolCall", "Turn", "make_backend"]
