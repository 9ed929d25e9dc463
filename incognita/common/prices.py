"""The versioned price table (config/prices.yaml): USD per million tokens per model."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from incognita.common.io import InputError, read_yaml

DEFAULT_PRICES = "config/prices.yaml"
PRICES_ENV = "INCOGNITA_PRICES"


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None  # a prompt token read from the provider's cache
    cache_write_input: float | None = None  # a prompt token written to it, where that costs more (Anthropic)

    def cost(
        self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, written_tokens: int = 0
    ) -> float:
        cached = min(cached_tokens, prompt_tokens) if self.cached_input is not None else 0
        written = min(written_tokens, prompt_tokens - cached) if self.cache_write_input is not None else 0
        usd = (
            (prompt_tokens - cached - written) * self.input
            + cached * (self.cached_input or 0.0)
            + written * (self.cache_write_input or 0.0)
            + completion_tokens * self.output
        )
        return round(usd / 1e6, 8)


@dataclass(frozen=True)
class PriceTable:
    version: int
    retrieved: str
    models: dict[str, Price]
    path: str = ""

    def lookup(self, model: str) -> Price | None:
        """Exact name first, else the longest entry that prefixes the name up to a '-'."""
        if model in self.models:
            return self.models[model]
        best = max((m for m in self.models if model.startswith(m + "-")), key=len, default=None)
        return self.models[best] if best else None

    def cost(
        self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, written_tokens: int = 0
    ) -> float:
        price = self.lookup(model)
        if price is None:
            _warn_unpriced(model, self.path)
            return 0.0
        return price.cost(prompt_tokens, completion_tokens, cached_tokens, written_tokens)


@functools.cache
def _warn_unpriced(model: str, path: str) -> None:
    # Once per model and process: a local model legitimately has no price, a paid one should.
    print(
        f"warning: no price for model {model!r} in {path or 'the price table'}; its cost is recorded as 0",
        file=sys.stderr,
    )


def resolve_path(configured: str | None = None) -> Path:
    """The configured table, else $INCOGNITA_PRICES, else config/prices.yaml in the working directory."""
    return Path(configured or os.environ.get(PRICES_ENV) or DEFAULT_PRICES)


@functools.cache
def load_prices(path: str | os.PathLike) -> PriceTable:
    doc = read_yaml(path)
    where = str(path)
    if not isinstance(doc, dict):
        raise InputError(f"{where}: not a price table (expected a mapping)")
    for key in ("version", "retrieved", "models"):
        if key not in doc:
            raise InputError(f"{where}: {key}: missing")
    if not isinstance(doc["models"], dict):
        raise InputError(f"{where}: models: expected a mapping of model name -> prices")
    models = {str(name): _price(entry, f"{where}: models.{name}") for name, entry in doc["models"].items()}
    return PriceTable(version=int(doc["version"]), retrieved=str(doc["retrieved"]), models=models, path=where)


def _price(entry: object, where: str) -> Price:
    if not isinstance(entry, dict) or not {"input", "output"} <= set(entry):
        raise InputError(
            f"{where}: expected {{input: <usd per 1M>, output: <usd per 1M>[, cached_input][, cache_write_input]}}"
        )
    keys = ("input", "output", "cached_input", "cache_write_input")
    unknown = set(entry) - set(keys)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    values = {k: entry[k] for k in keys if entry.get(k) is not None}
    for key, value in values.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise InputError(f"{where}.{key}: expected a non-negative number, got {value!r}")
    return Price(**{k: float(v) for k, v in values.items()})


def empty_table() -> PriceTable:
    return PriceTable(version=0, retrieved="", models={}, path="(no price table)")
