"""The response cache: keys, atomic entries under concurrency, inspection and pruning."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.common import cache as cache_module
from incognita.common.backends import openai as ob
from incognita.common.backends.base import ModelRequest, Runtime, Turn, make_backend
from incognita.common.backends.entry import ModelEntry
from incognita.common.cache import (
    CACHE_FORMAT,
    ResponseCache,
    prune,
    request_key,
    resolve_dir,
    select,
    stats,
)
from incognita.common.commands import cache_group
from incognita.common.io import InputError
from incognita.common.loopback import LoopbackServer


def body(settings: dict, seed: int = 3, text: str = "hello") -> tuple[dict, int | None]:
    s = ob.Settings.from_dict("gpt-x", settings, "test")
    req = ModelRequest(role="agent", system="sys", messages=(Turn("user", text),), seed=seed)
    return ob.request_body(s, req), (None if s.deterministic else seed)


def key(settings: dict, **kw) -> str:
    return request_key(*body(settings, **kw))


def entry(model: str = "gpt-x", role: str = "agent", cost: float = 0.01) -> dict:
    return {
        "model": model,
        "role": role,
        "response": {"message": {"content": "hi"}},
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        "cost_usd": cost,
    }


# --------------------------------------------------------------------------- keys


def test_key_covers_what_changes_the_answer_and_nothing_else():
    k = key({"temperature": 0})
    assert k == key({"temperature": 0}) and len(k) == 64
    # Transport-only settings leave the key alone.
    assert k == key(
        {
            "temperature": 0,
            "timeout": 5,
            "max_retries": 1,
            "backoff_base": 9,
            "base_url": "http://x",
            "api_key_env": "OTHER_KEY",
            "base_url_env": "OTHER_URL",
        }
    )
    # Anything that can change the answer changes it.
    for changed in (
        {"temperature": 0.2},
        {"temperature": 0, "reasoning_effort": "low"},
        {"temperature": 0, "max_tokens": 50},
        {"temperature": 0, "extra_body": {"top_p": 0.5}},
    ):
        assert key(changed) != k, changed
    assert key({"temperature": 0}, text="other") != k


def test_seed_enters_the_key_only_when_sampling():
    assert key({"temperature": 0}, seed=1) == key({"temperature": 0}, seed=2)
    assert key({"temperature": 1}, seed=1) != key({"temperature": 1}, seed=2)
    assert key({}, seed=1) != key({}, seed=2)  # provider default temperature: sampling


# --------------------------------------------------------------------------- entries


def test_put_get_and_bad_entries(tmp_path, capsys):
    cache = ResponseCache(tmp_path)
    k = key({"temperature": 0})
    assert cache.get(k) is None
    path = cache.put(k, entry())
    assert path == tmp_path / k[:2] / f"{k}.json"
    got = cache.get(k)
    assert got["format"] == CACHE_FORMAT and got["key"] == k and got["response"]["message"]["content"] == "hi"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind
    path.write_text("{broken")
    assert cache.get(k) is None and "unreadable" in capsys.readouterr().err
    path.write_text(json.dumps({**entry(), "format": CACHE_FORMAT, "key": "another"}))
    assert cache.get(k) is None  # an entry under the wrong name is not trusted


def test_an_altered_entry_is_told_from_an_intact_one(tmp_path, capsys):
    cache = ResponseCache(tmp_path)
    k = key({"temperature": 0})
    path = cache.put(k, entry())
    stored = json.loads(path.read_text())
    assert len(stored["digest"]) == 64 and cache.get(k)["usage"]["completion_tokens"] == 2
    stored["usage"]["completion_tokens"] = 99_999  # still JSON, still the shape of an entry
    path.write_text(json.dumps(stored))
    assert cache.get(k) is None
    assert "does not match its digest" in capsys.readouterr().err
    assert [problem for _, problem in stats(cache).damaged] == [
        "its content does not match its digest: altered by hand or damaged on disk"
    ]


def test_an_entry_written_before_digests_is_served_with_one_note(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cache_module, "_LEGACY_NOTED", cache_module.threading.Event())
    cache = ResponseCache(tmp_path)
    keys = [key({"temperature": 0}, text=t) for t in ("one", "two")]
    for k in keys:
        path = cache.put(k, entry())
        old = {f: v for f, v in json.loads(path.read_text()).items() if f != "digest"}  # as written before #55
        path.write_text(json.dumps(old))
    assert all(cache.get(k)["usage"]["completion_tokens"] == 2 for k in keys)
    assert cache.get(keys[0]) is not None
    err = capsys.readouterr().err
    assert err.count("note: cache entry") == 1 and "has no digest" in err and "warning" not in err
    s = stats(cache)
    assert (s.entries, s.legacy, s.damaged) == (2, 2, [])
    out = CliRunner().invoke(cache_group, ["stats", "--dir", str(tmp_path)])
    assert "without a digest (written before entries carried one; served as they are): 2" in out.output


def test_an_altered_answer_is_reported_and_fetched_once(tmp_path, monkeypatch, capsys):
    """Issue #55, fault 7: an entry whose completion tokens were changed by hand is not served;
    the next call reports it, asks the endpoint once and rewrites the entry, which then serves."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-CACHEDIGEST-0123456789")
    with LoopbackServer(lambda model, request: "the answer") as server:
        settings = {"base_url": server.base_url, "temperature": 0, "max_retries": 0}
        backend = make_backend(ModelEntry("openai:m", settings), "agent", runtime=Runtime(cache_dir=str(tmp_path)))
        request = ModelRequest(role="agent", system="s", messages=(Turn("user", "hello"),))
        first = backend.respond(request)
        (path,) = tmp_path.rglob("*.json")
        altered = json.loads(path.read_text())
        altered["usage"]["completion_tokens"] = 99_999
        path.write_text(json.dumps(altered, sort_keys=True))
        capsys.readouterr()
        again = backend.respond(request)
        err = capsys.readouterr().err
        assert f"cache entry {path} is damaged (its content does not match its digest" in err
        assert again.usage.cache_misses == 1 and server.requests == 2  # fetched once
        assert again.usage.completion_tokens == first.usage.completion_tokens != 99_999
        third = backend.respond(request)
        assert third.usage.cache_hits == 1 and server.requests == 2  # the rewritten entry serves


def _writer(root: str, worker: int, keys: list[str]) -> None:
    cache = ResponseCache(root)
    for i, k in enumerate(keys):
        cache.put(k, entry(role=f"w{worker}", cost=i))
        assert cache.get(k) is not None


def test_concurrent_writers_never_leave_half_entries(tmp_path):
    shared = [request_key({"n": i}, None) for i in range(40)]
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(
            target=_writer, args=(str(tmp_path), w, shared + [request_key({"w": w, "n": i}, None) for i in range(20)])
        )
        for w in range(8)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0] * 8
    cache = ResponseCache(tmp_path)
    assert stats(cache).entries == 40 + 8 * 20
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".json")]
    assert not list(tmp_path.rglob(".*.tmp"))


def test_resolve_dir(monkeypatch):
    monkeypatch.delenv("INCOGNITA_CACHE_DIR", raising=False)
    assert resolve_dir(None) == Path("cache/responses")
    monkeypatch.setenv("INCOGNITA_CACHE_DIR", "/x/y")
    assert resolve_dir(None) == Path("/x/y") and resolve_dir("z") == Path("z")


# --------------------------------------------------------------------------- inspection and pruning


@pytest.fixture
def filled(tmp_path) -> ResponseCache:
    cache = ResponseCache(tmp_path / "c")
    for i in range(3):
        cache.put(request_key({"a": i}, None), entry("gpt-a", cost=0.5))
    for i in range(2):
        cache.put(request_key({"b": i}, None), entry("gpt-b", role="USER", cost=0.25))
    return cache


def test_stats_and_select(filled):
    s = stats(filled)
    assert (s.entries, dict(s.models), dict(s.roles)) == (5, {"gpt-a": 3, "gpt-b": 2}, {"agent": 3, "USER": 2})
    assert s.cost_usd == pytest.approx(2.0) and s.bytes > 0
    assert len(select(filled, model="gpt-b")) == 2
    assert select(filled, older_than_days=1) == []
    assert len(select(filled, older_than_days=1, now=time.time() + 2 * 86400)) == 5


def test_prune_by_model_and_age(filled):
    assert len(prune(filled, model="gpt-a", dry_run=True)) == 3 and stats(filled).entries == 5
    assert len(prune(filled, model="gpt-a")) == 3 and dict(stats(filled).models) == {"gpt-b": 2}
    assert prune(filled, older_than_days=1) == []
    assert len(prune(filled, older_than_days=1, now=time.time() + 2 * 86400)) == 2
    with pytest.raises(InputError, match="needs --older-than"):
        prune(filled)


def test_cache_commands(filled):
    run = CliRunner().invoke
    root = str(filled.root)
    out = run(cache_group, ["stats", "--dir", root])
    assert out.exit_code == 0 and "5 entries" in out.output and "model gpt-a: 3" in out.output
    out = run(cache_group, ["ls", "--dir", root, "--model", "gpt-b"])
    assert out.exit_code == 0 and out.output.count("gpt-b") == 2
    out = run(cache_group, ["prune", "--dir", root, "--model", "gpt-b", "--dry-run"])
    assert "would delete 2 entries" in out.output and stats(filled).entries == 5
    out = run(cache_group, ["prune", "--dir", root, "--older-than", "0"])
    assert "deleted 5 entries" in out.output and stats(filled).entries == 0
