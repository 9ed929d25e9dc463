"""The retail domain's classes in the pinned tau2 package: `RetailDB`, `RetailTools` and its
environment constructor (incognita.access.domain.Upstream)."""

from __future__ import annotations

from typing import Any

from incognita.access.golden.upstream_replay import import_quietly


def classes() -> tuple[type, type]:
    def load():
        from tau2.domains.retail.data_model import RetailDB
        from tau2.domains.retail.tools import RetailTools

        return RetailDB, RetailTools

    return import_quietly(load)


def environment(db: Any = None, solo_mode: bool = False) -> Any:
    from tau2.domains.retail.environment import get_environment

    return get_environment(db=db, solo_mode=solo_mode)
