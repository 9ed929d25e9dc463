"""The retail environment of the native stage: upstream's own, with the database read once per process.

Upstream's registered `retail` constructor (`tau2.domains.retail.environment.get_environment`)
reads and validates the retail database JSON (`RetailDB.load`, about 0.1-0.15 s) every time
it is called, and one harness run calls it three times: `run_task` builds the run's
environment, and the evaluator builds a predicted and a gold environment. The job's
`results_document` needed a fourth, only to read the environment's info.

So we *register* one more domain in the harness's registry, `incognita_retail`
(`DOMAIN`), nothing is patched: its constructor is upstream's `get_environment`, given a
fresh `RetailDB` validated from the database file's parsed JSON, which is read once per
process. Validating the cached dict is the fastest exact fresh copy we measured (about 55 ms
against 85 ms for `RetailDB.load`, 70 ms for a pickle round-trip, 85 ms for
`model_copy(deep=True)`; bench numbers in docs/native.md), and it is what upstream's load
does minus reading and parsing the file. Each environment gets its own copy: runs write to
their database. The first build checks that the copy's hash equals upstream's own
`RetailDB.load(RETAIL_DB_PATH).get_hash()`.

The environment is upstream's (`domain_name` "retail", upstream's policy and tools), so the
result files record the same `environment_info` as with the `retail` domain.
"""

from __future__ import annotations

import functools
import gc

# The harness registry name of our retail domain: upstream's retail environment over a
# database parsed once per process (see the module docstring).
DOMAIN = "incognita_retail"


@functools.cache
def _parsed_db() -> dict:
    """The retail database file's parsed JSON, read once per process; never handed out, only validated."""
    from tau2.domains.retail.data_model import RetailDB
    from tau2.domains.retail.utils import RETAIL_DB_PATH
    from tau2.utils import load_file

    data = load_file(RETAIL_DB_PATH)
    reference = RetailDB.load(RETAIL_DB_PATH).get_hash()
    if RetailDB.model_validate(data).get_hash() != reference:
        raise RuntimeError(f"{RETAIL_DB_PATH}: the cached database differs from upstream's own load")
    return data


def fresh_db():
    """A new, independent `RetailDB` with upstream's database content.

    The cyclic garbage collector is paused while it is built: validation allocates some
    40,000 objects, none of them in a reference cycle, and the collections they would trigger
    (each traversing the whole heap: litellm, the cached database) took about 70% of the time."""
    from tau2.domains.retail.data_model import RetailDB

    data = _parsed_db()
    paused = gc.isenabled()
    gc.disable()
    try:
        return RetailDB.model_validate(data)
    finally:
        if paused:
            gc.enable()


def get_environment(solo_mode: bool = False):
    """Upstream's retail environment over a fresh copy of the once-read database."""
    from tau2.domains.retail.environment import get_environment as upstream

    return upstream(db=fresh_db(), solo_mode=solo_mode)


def register_domain() -> str:
    """Register `DOMAIN` in the harness's registry (once per process); returns its name."""
    from tau2.registry import registry

    if DOMAIN not in registry.get_domains():
        registry.register_domain(get_environment, DOMAIN)
    return DOMAIN


@functools.cache
def environment_info(domain: str):
    """The harness's `get_environment_info(domain)`, computed once per process: it is constant,
    and computing it builds a whole environment."""
    from tau2.run import get_environment_info

    return get_environment_info(domain, include_tool_info=False)


# Collect the youngest generation after 50,000 net allocations instead of Python's 700, and
# the older ones rarely. Each run validates, dumps and hashes databases of some 40,000
# objects, none in a reference cycle (reference counting frees them), and with Python's
# defaults the collector's passes over them took about a third of a native job's CPU
# (38 s against 26 s for one model's 81 runs, peak memory 3% higher).
GC_THRESHOLDS = (50_000, 20, 1_000)


def settle() -> None:
    """Read the database now, move everything alive (the harness, litellm, the parsed
    database) out of the garbage collector's sight (`gc.freeze`: it lives for the whole job,
    and every full collection during the runs would traverse it again), and collect rarely."""
    _parsed_db()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
