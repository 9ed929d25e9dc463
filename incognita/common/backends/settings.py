"""An API entry's settings, typed and checked: the transport's part and the chat protocols' part.

Who writes them: a provider protocol's settings class (`openai.Settings`, `anthropic.AnthropicSettings`,
each a subclass of `ChatSettings` here) built by `from_dict` from a ModelEntry's settings, when a
backend is made and when a config is checked (`backends.base.check_settings`). Who reads them:
the transport (`transport.Transport`: timeouts, retries (timed-out ones apart) and backoff, the endpoint and its key's
variable, the pace's limits, `send_cell`, whether the call is deterministic for the cache key) and
the protocol that builds the request body (the chat part, and its own fields).

The invariant: an entry that sets a field its family does not have, or a value of the wrong
type, is refused with one line naming `where` (the config key or the role) before anything is
sent; the settings never hold a key, only the name of the variable that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from incognita.common.io import InputError
from incognita.common.pacing import Limits


@dataclass(frozen=True)
class TransportSettings:
    """What the transport reads. A protocol's subclass gives `base_url_env` and `api_key_env` the
    provider's own defaults."""

    model: str
    timeout: float = 120.0  # seconds per attempt, the whole attempt (incognita.common.backends.deadline)
    max_retries: int = 6
    # Of those retries, how many may follow an attempt that timed out: an endpoint silent for a whole
    # attempt seldom answers the next, and each such attempt costs `timeout` seconds.
    timeout_retries: int = 1
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    base_url: str | None = None
    base_url_env: str = ""
    api_key_env: str = ""
    # The endpoint's budget, shared by every job on the machine (incognita.common.pacing); null = no limit.
    rpm: int | None = Limits.rpm
    tpm: int | None = Limits.tpm
    max_in_flight: int = Limits.max_in_flight
    reserve: float = Limits.reserve  # the share of rpm kept for the longest chains' calls (pacing.Limits)
    # Send the cell's identity in an X-Incognita-Cell header, for a loopback that answers with scripted
    # twins (bench/throughput.py). A transport header: never part of the request body or its cache key.
    send_cell: bool = False

    @classmethod
    def from_dict(cls, model: str, values: dict, where: str):
        known = {f for f in cls.__dataclass_fields__ if f != "model"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(f"{where}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        s = cls(model=model, **values)
        s._check(where)
        return s

    def _bad(self, where: str, name: str, expected: str) -> InputError:
        return InputError(f"{where}: {name}: expected {expected}, got {getattr(self, name)!r}")

    def _check(self, where: str) -> None:
        for name in ("timeout", "backoff_base", "backoff_max"):
            if not (isinstance(getattr(self, name), (int, float)) and getattr(self, name) > 0):
                raise self._bad(where, name, "a positive number of seconds")
        for name in ("max_retries", "timeout_retries"):
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                raise self._bad(where, name, "an integer >= 0")
        self.limits.check(where)
        if not isinstance(self.send_cell, bool):
            raise self._bad(where, "send_cell", "true or false")
        if re.match(r"^(sk-|Bearer )", str(self.base_url_env)) or re.match(r"^(sk-|Bearer )", str(self.api_key_env)):
            raise InputError(f"{where}: base_url_env / api_key_env name an environment variable, not its value")

    @property
    def limits(self) -> Limits:
        return Limits(rpm=self.rpm, tpm=self.tpm, max_in_flight=self.max_in_flight, reserve=self.reserve)

    @property
    def deterministic(self) -> bool:
        """Whether the answer is fixed by the request alone: the trial's seed then stays out of the
        cache key. Sampling protocols say when (ChatSettings: temperature 0)."""
        return False


@dataclass(frozen=True)
class ChatSettings(TransportSettings):
    """The settings every chat protocol shares: sampling temperature, output cap, extra request
    fields, and the answer's schema (structured output)."""

    temperature: float | None = None
    max_tokens: int | None = None
    extra_body: dict = field(default_factory=dict)
    # Constrain answers to the role's schema (the protocol's STRUCTURED_OUTPUT kinds); it changes the
    # condition, so it is part of the entry (records, manifests) and of the cache key. Unconstrained by
    # default, as in the paper.
    structured_output: str | None = None

    STRUCTURED_OUTPUT: ClassVar[tuple[str, ...]] = ()
    OWNED_FIELDS: ClassVar[tuple[str, ...]] = ()  # request fields the protocol sets (extra_body may not)

    def _check(self, where: str) -> None:
        t = self.temperature
        if t is not None and not (isinstance(t, (int, float)) and t >= 0):
            raise self._bad(where, "temperature", "a number >= 0 or null")
        if self.max_tokens is not None and not (isinstance(self.max_tokens, int) and self.max_tokens > 0):
            raise self._bad(where, "max_tokens", "a positive integer or null")
        if not isinstance(self.extra_body, dict):
            raise self._bad(where, "extra_body", "a mapping of extra request fields")
        if self.structured_output is not None and self.structured_output not in self.STRUCTURED_OUTPUT:
            raise self._bad(where, "structured_output", f"one of {', '.join(self.STRUCTURED_OUTPUT)} or null")
        clash = sorted(set(self.extra_body) & {"model", "messages", "tools", "stream", "n", *self.OWNED_FIELDS})
        if clash:
            raise InputError(f"{where}: extra_body may not set {', '.join(clash)} (the harness owns them)")
        super()._check(where)

    @property
    def deterministic(self) -> bool:
        """Greedy decoding: the trial's seed then stays out of the cache key."""
        return self.temperature == 0
