"""The native harness's model calls, served by our own backends and response cache.

The upstream harness reaches models through litellm (`tau2.utils.llm_utils.generate`, which
calls `litellm.completion(model=llm, messages, tools, **llm_args)`). We register a litellm
*custom provider* named `incognita` and run the harness's own, unmodified `llm_agent` and
`user_simulator` with `llm = "incognita/<role>/<model>"`. The provider hands each call to the
same backend the episodes use (incognita.common.backends: the entry's protocol over the shared
transport), built from the model entry that travels in `llm_args["incognita"]`, so:

- an entry means the same thing in every stage: `base_url`, `base_url_env`, `api_key_env`,
  temperature, reasoning effort, the output cap and its field name, `extra_body`, timeouts
  and retries are all the backend's own settings, applied by the backend's own code;
- every call goes through `incognita.common.cache`: an unchanged native cell makes no model call
  on a rerun, and an interrupted job resumes without paying twice;
- usage, cost, cache hits and misses are counted per role, as in the episodes.

`llm_args` end up in the harness's run record, so they hold the entry (env variable names,
never their values) and nothing secret. The harness also sets `llm_args["seed"]` to the run's
seed; it reaches the provider with the call and keys the cache when sampling is not greedy.
"""

from __future__ import annotations

import json
import threading

from incognita.access.episodes.loop.records import Usage
from incognita.common.backends.base import BackendConfigError, ModelResponse, Runtime
from incognita.common.backends.entry import ModelEntry

PROVIDER = "incognita"
ROLES = ("agent", "user")


def llm_name(role: str, model: str) -> str:
    """The harness's `llm` string for a role: litellm routes `incognita/...` to our provider."""
    return f"{PROVIDER}/{role}/{model}"


def llm_args(entry: ModelEntry) -> dict:
    """The harness's `llm_args` for an `openai:` or `anthropic:` entry: the entry as a mapping, under
    one key that litellm passes through to the provider untouched (and the run record keeps)."""
    return {PROVIDER: entry.mapping()}


class _Bridge:
    """Per-process state of the provider: backends by (role, entry), the cell and usage by role of
    the run on this thread (a job runs its cells on several threads, and the backends are shared
    between them), and the first configuration error (bad key, unknown model), which must stop the
    job, not a run."""

    def __init__(self) -> None:
        self.cache_dir: str | None = None
        self.prices: str | None = None
        self.backends: dict[tuple[str, str], object] = {}
        self.fatal: Exception | None = None
        self._run = threading.local()
        self._lock = threading.Lock()

    @property
    def usage(self) -> dict[str, Usage]:
        if not hasattr(self._run, "usage"):
            self._run.usage = {role: Usage() for role in ROLES}
        return self._run.usage

    def configure(self, cache_dir: str | None, prices: str | None) -> None:
        if (cache_dir, prices) != (self.cache_dir, self.prices):
            self.backends.clear()
        self.cache_dir, self.prices = cache_dir, prices
        self.fatal = None  # a new job

    def start_run(self, cell: dict | None = None) -> None:
        """A run starts on this thread: its usage starts from zero, and its calls name `cell` (sent
        only by entries with `send_cell`, for a loopback's twins; never part of a request)."""
        self._run.usage = {role: Usage() for role in ROLES}
        self._run.cell = cell

    def backend(self, role: str, entry: dict):
        from incognita.access.episodes.scripted import make_backend

        key = (role, json.dumps(entry, sort_keys=True))
        with self._lock:
            if key not in self.backends:
                # The entry crossed litellm as llm_args' mapping (llm_args): read back once per backend.
                parsed = ModelEntry.parse(entry, f"native {role}")
                self.backends[key] = make_backend(parsed, role, runtime=Runtime(self.cache_dir, self.prices))
            return self.backends[key]

    def respond(self, role: str, messages: list[dict], params: dict) -> ModelResponse:
        from incognita.common.backends.openai import to_request

        entry = params.get(PROVIDER)
        if not isinstance(entry, dict):
            raise ValueError(f"native {role}: the harness call carries no '{PROVIDER}' model entry in its llm_args")
        request = to_request(
            {"messages": messages, "tools": params.get("tools") or []}, role, seed=int(params.get("seed") or 0)
        )
        try:
            # The run's cell travels with the call: the backend is shared by the job's threads.
            response = self.backend(role, entry).respond(request, cell=getattr(self._run, "cell", None))
        except BackendConfigError as exc:
            with self._lock:
                self.fatal = self.fatal or exc
            raise
        usage = self.usage.setdefault(role, Usage())
        usage.add(response.usage)
        usage.calls += 1
        return response


BRIDGE = _Bridge()


def _to_litellm(model: str, response: ModelResponse):
    """Our response as the litellm ModelResponse the harness reads."""
    from litellm.types.utils import ModelResponse as LiteLLMResponse

    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
            },
        }
        for c in response.tool_calls
    ]
    message = {"role": "assistant", "content": response.text, "tool_calls": calls or None}
    u = response.usage
    return LiteLLMResponse(
        model=model,
        choices=[{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        usage={
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
        },
    )


def register(cache_dir: str | None = None, prices: str | None = None) -> None:
    """Register the `incognita` provider with litellm (once per process) and set where its
    backends find the response cache and the price table (None: the environment's defaults)."""
    import litellm
    from litellm import CustomLLM

    BRIDGE.configure(cache_dir, prices)
    if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        return

    class IncognitaProvider(CustomLLM):
        def completion(self, model, messages, *args, optional_params=None, **kwargs):
            role, _, name = model.partition("/")
            return _to_litellm(name, BRIDGE.respond(role, messages, dict(optional_params or {})))

    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": IncognitaProvider()},
    ]
