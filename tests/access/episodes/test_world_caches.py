"""What the speed-ups of issue #25 must keep: the cached tool schemas are upstream's, and
every fresh database is an independent clean copy."""

from __future__ import annotations

import gc

import pytest

from incognita.access.episodes.loop.tool_gateway import Gateway


@pytest.fixture(scope="module")
def world(source_dir):
    from incognita.access.domain import get_domain
    from incognita.access.golden.upstream_replay import World

    return World(get_domain("retail"), source_dir / "db.json")


def test_cached_schemas_are_upstreams(world):
    schemas = world.openai_schemas()
    assert schemas is world.openai_schemas()  # built once per world
    assert schemas == {name: tool.openai_schema for name, tool in world.tool_schemas().items()}


def test_gateway_tools_sorted_and_stable(world):
    tools = frozenset(world.tool_types)
    gateway = Gateway(world, {"agent": tools, "Vega": frozenset(sorted(tools)[:3])})
    first = gateway.openai_tools("agent")
    assert [t["function"]["name"] for t in first] == sorted(tools)
    assert first == [world.tool_schemas()[n].openai_schema for n in sorted(tools)]
    assert gateway.openai_tools("agent") == first
    assert [t["function"]["name"] for t in gateway.openai_tools("Vega")] == sorted(tools)[:3]
    assert gateway.openai_tools("nobody") == []


def test_fresh_db_is_an_independent_clean_copy(world):
    a, b = world.fresh_db(), world.fresh_db()
    assert a is not b and a.get_hash() == b.get_hash() == world.clean_hash()
    user = next(iter(a.users.values()))
    user.address.city = user.address.city + " (moved)"
    assert a.get_hash() != world.clean_hash()
    assert b.get_hash() == world.fresh_db().get_hash() == world.clean_hash()


def test_fresh_db_restores_the_collector(world):
    assert gc.isenabled()
    world.fresh_db()
    assert gc.isenabled()
    gc.disable()
    try:
        world.fresh_db()
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_gateway_ends_with_its_final_hash(world):
    tools = frozenset(world.tool_types)
    reader = Gateway(world, {"agent": tools})
    assert reader.final_hash() == world.clean_hash()  # never wrote: no private copy
    writer = Gateway(world, {"agent": tools})
    user_id, user = next(iter(world.shared_toolkit().db.users.items()))
    address = user.address.model_dump() | {"city": "Elsewhere"}
    decision = writer.propose("agent", "modify_user_address", {"user_id": user_id, **address}, turn=1)
    assert decision.status == "accepted", decision.reason
    digest = writer.final_hash()
    assert digest != world.clean_hash()
    assert world._pool[-1].db.get_hash() == world.clean_hash()  # given back, restored
    for ended in (reader, writer):
        with pytest.raises(RuntimeError, match="already ended"):
            ended.propose("agent", "get_user_details", {"user_id": user_id}, turn=2)
        with pytest.raises(RuntimeError, match="already ended"):
            ended.final_hash()
