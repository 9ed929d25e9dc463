"""The mock domain's classes in the pinned tau2 package: `MockDB`, `MockTools` and its environment
constructor (incognita.access.domain.Upstream)."""

from __future__ import annotations

from typing import Any

from incognita.access.golden.upstream_replay import import_quietly


def classes() -> tuple[type, type]:
    def load():
        from tau2.domains.mock.data_model import MockDB
        from tau2.domains.mock.tools import MockTools

        return MockDB, MockTools

    return import_quietly(load)


def environment(db: Any = None, solo_mode: bool = False) -> Any:
    from tau2.domains.mock.environment import get_environment

    return get_environment(db=db, solo_mode=solo_mode)
