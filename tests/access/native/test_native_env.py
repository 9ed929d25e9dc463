"""Our registered copy of a domain (retail here): upstream's environment over a database read once per process."""

from __future__ import annotations


def test_fresh_db_is_upstreams_and_independent():
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.utils import RETAIL_DB_PATH

    from incognita.access.native import native_env

    reference = RetailDB.load(RETAIL_DB_PATH)
    one, two = native_env.fresh_db("retail"), native_env.fresh_db("retail")
    assert one.get_hash() == reference.get_hash() == two.get_hash()
    user = next(iter(one.users))
    one.users[user].address.city = "Elsewhere"
    one.orders.clear()
    assert two.get_hash() == reference.get_hash() == native_env.fresh_db("retail").get_hash()


def test_registered_domain_builds_upstreams_environment():
    from tau2.registry import registry
    from tau2.run import get_environment_info

    from incognita.access.native import native_env

    name = native_env.register_domain("retail")
    assert name == native_env.register_domain("retail") == native_env.harness_name("retail") == "incognita_retail"
    env = registry.get_env_constructor(name)()
    assert env.domain_name == "retail"
    assert native_env.environment_info(name) == get_environment_info("retail", include_tool_info=False)
