"""The NumPy MiniLM encoder against sentence-transformers, and the embedding cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from incognita.collabsim.sbert import EmbeddingCache, MiniLM

FIXTURE = Path(__file__).parent / "fixtures" / "sbert_reference.json"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


def test_embeddings_match_sentence_transformers(model):
    ref = json.loads(FIXTURE.read_text())
    ours = model.encode(ref["sentences"])
    theirs = np.array(ref["embeddings"], dtype=np.float64)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    cosines = (ours.astype(np.float64) * theirs).sum(1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.9999, f"{ref['sentences'][worst][:60]!r}: cosine {cosines[worst]:.6f}"
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


def test_batching_does_not_change_a_vector(model):
    texts = ["short", "a much longer sentence with many more tokens in it than the first"]
    together = model.encode(texts)
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


class Counting:
    def __init__(self, model):
        self.model, self.seen = model, []

    def encode(self, texts):
        self.seen += texts
        return self.model.encode(texts)


def test_the_cache_encodes_each_text_once_and_survives_a_damaged_shard(tmp_path, model):
    cache = EmbeddingCache(tmp_path)
    cache.__dict__["model"] = counting = Counting(model)
    first = cache.embed(["alpha", "beta", "alpha"])
    assert sorted(counting.seen) == ["alpha", "beta"]
    assert np.allclose(first[0], first[2])

    again = EmbeddingCache(tmp_path)  # a later analysis reads the shard
    again.__dict__["model"] = counting2 = Counting(model)
    assert np.allclose(again.embed(["beta", "alpha"]), first[[1, 0]])
    assert counting2.seen == []

    (tmp_path / "broken.npz").write_bytes(b"not a zip file")
    third = EmbeddingCache(tmp_path)
    assert not (tmp_path / "broken.npz").exists() and len(third.vectors) == 2
