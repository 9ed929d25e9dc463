"""Model backends: one small interface for every role a language model can play.

`make_backend(spec, role, context)` turns a spec such as `scripted:oracle` into a Backend.
Scripted backends are the offline default; `openai:<model>` (added later) talks to any
OpenAI-compatible endpoint. Scripted backends receive `context`, the private knowledge
their role has (the card for the customer, the held tools for a desk, the plan for an
agent); real models ignore it and see only their prompt and conversation.
"""

from incognita.backends.base import Backend, BackendError, ModelRequest, ModelResponse, ToolCall, Turn, make_backend, register

__all__ = ["Backend", "BackendError", "ModelRequest", "ModelResponse", "ToolCall", "Turn", "make_backend", "register"]
