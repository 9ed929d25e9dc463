"""The hash from cached record text equals upstream's `get_db_hash`, and a database given back
to the world is clean again (incognita.access.golden.db_hashing, World.release).

Upstream's own hash (tau2's `get_db_hash`, `get_dict_hash`) is the reference throughout:
nothing here compares the fast hash with itself."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from tau2.utils.utils import get_dict_hash

from incognita.access.domain import get_domain
from incognita.access.golden.db_hashing import CleanDbHasher
from incognita.access.golden.upstream_replay import World


@pytest.fixture(scope="module")
def world(source_dir) -> World:
    return World(get_domain("retail"), source_dir / "db.json")


def test_clean_hash_is_upstreams(world):
    assert world.clean_hash() == world.fresh_db().get_hash()


def test_every_tasks_gold_actions_hash_as_upstream_and_restore(world, tasks):
    """All 114 tasks' reference actions, one task after another on the same pooled database:
    each final state hashes as upstream hashes it, and each release leaves it clean."""
    toolkit = world.private_toolkit()
    writes = 0
    for task_id, task in tasks.items():
        for action in task["evaluation_criteria"]["actions"]:
            try:
                toolkit.use_tool(action["name"], **action["arguments"])
                writes += world.tool_types[action["name"]] == "write"
            except Exception:  # noqa: BLE001 - upstream's evaluator skips gold actions that raise
                pass
        expected = toolkit.get_db_hash()
        assert world.release(toolkit) == expected, f"task {task_id}"
        again = world.private_toolkit()
        assert again is toolkit  # the same database, restored
    assert writes > 100  # the walk exercised the write tools, not only reads
    assert toolkit.get_db_hash() == world.fresh_db().get_hash()


def test_added_removed_and_nested_changes(world):
    toolkit = world.private_toolkit()
    db = toolkit.db
    order_id, order = next(iter(db.orders.items()))
    user_id = next(iter(db.users))
    order.items[0].price = order.items[0].price + 1.5  # nested, in place
    order.status = "cancelled"
    db.orders["#W_added"] = order.model_copy(deep=True)  # a record no clean table has
    del db.users[user_id]
    expected = toolkit.get_db_hash()
    assert world.release(toolkit) == expected
    assert "#W_added" not in db.orders and user_id in db.users and db.orders[order_id].status != "cancelled"
    assert db.get_hash() == world.clean_hash()


def test_a_run_database_looks_only_at_the_records_it_handed_out(world, monkeypatch):
    """A pooled database's tables note what they hand out: the hash looks again only at those
    records (counted), and a change made through an index, `get` or an iteration is still seen.
    The expected hashes are upstream's, of a fresh database with the same changes."""
    from incognita.access.golden import db_hashing

    looked = []
    fingerprint = db_hashing._fingerprint
    monkeypatch.setattr(db_hashing, "_fingerprint", lambda record: looked.append(record) or fingerprint(record))
    world.release(world.private_toolkit())  # the hasher's clean fingerprints are taken before counting
    looked.clear()

    toolkit, fresh = world.private_toolkit(), world.fresh_db()
    assert isinstance(toolkit.db.orders, db_hashing.HandedOutTable)
    first, second = sorted(dict.keys(toolkit.db.orders))[5:7]
    for db in (toolkit.db, fresh):
        db.orders[first].status = "cancelled"
        db.orders.get(second).items[0].price += 1.0
    assert world.release(toolkit) == fresh.get_hash()
    assert len(looked) == 2  # the two orders handed out; no other record was fingerprinted
    assert toolkit.db.orders.handed == set()  # clean again, nothing handed out

    looked.clear()
    toolkit, fresh = world.private_toolkit(), world.fresh_db()
    user_id = min(fresh.users)
    for db in (toolkit.db, fresh):
        next(user for key, user in db.users.items() if key == user_id).name.first_name = "Iterated"
    assert toolkit.db.users.whole
    assert world.release(toolkit) == fresh.get_hash()
    assert len(looked) == len(fresh.users)  # iterated: every user looked at
    assert toolkit.db.get_hash() == world.clean_hash()


class _Item(BaseModel):
    name: str
    tags: list[str]


class _Db(BaseModel):
    items: dict[str, _Item]
    note: str
    counts: dict[int, int]  # not string keys: dumped whole, never restored record by record


def _db() -> _Db:
    return _Db(
        items={"b": _Item(name="two", tags=["x"]), "a": _Item(name="one", tags=[])}, note="n", counts={2: 1, 1: 2}
    )


def test_generic_fields_hash_as_upstream():
    hasher = CleanDbHasher(_db())
    assert hasher.clean_digest == get_dict_hash(_db().model_dump())
    db = _db()
    db.items["a"].tags.append("y")
    digest, changed = hasher.hexdigest(db)
    assert digest == get_dict_hash(db.model_dump()) and changed == {"items": ["a"]}
    db.note = "changed"
    digest, changed = hasher.hexdigest(db)
    assert digest == get_dict_hash(db.model_dump()) and changed is None  # cannot be restored by record
    assert hasher.record_type("items", "a") is _Item and hasher.record_type("items", "zz") is None


def test_a_database_with_other_changes_is_not_pooled(world, monkeypatch):
    world.clean_hash()  # builds the hasher
    toolkit = world.private_toolkit()
    monkeypatch.setattr(world._hasher, "hexdigest", lambda db: ("digest", None))
    assert world.release(toolkit) == "digest"
    monkeypatch.undo()
    assert world.private_toolkit() is not toolkit
