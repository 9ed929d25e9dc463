"""A domain's environment in the native stage: upstream's own, with the database read once per process.

Upstream's registered constructor of a domain (for retail `tau2.domains.retail.environment.
get_environment`) reads and validates the domain's database JSON (`RetailDB.load`, about
0.1-0.15 s for retail) every time it is called, and one harness run calls it three times:
`run_task` builds the run's environment, and the evaluator builds a predicted and a gold
environment. The job's `results_document` needed a fourth, only to read the environment's info.

So we *register* one more domain in the harness's registry per domain a job runs,
`incognita_<domain>` (`harness_name`), nothing is patched: its constructor is upstream's, given
a fresh database model validated from the database file's parsed JSON, which is read once per
process. Validating the cached dict is the fastest exact fresh copy we measured (retail: about
55 ms against 85 ms for `RetailDB.load`, 70 ms for a pickle round-trip, 85 ms for
`model_copy(deep=True)`; bench numbers in docs/native.md), and it is what upstream's load does
minus reading and parsing the file. Each environment gets its own copy: runs write to their
database. The first build checks that the copy's hash equals upstream's own load of the file.

The environment is upstream's (its `domain_name`, policy and tools), so the result files record
the same `environment_info` as with upstream's registered domain. A task's initial state is set
by the harness itself (the orchestrator and the evaluator call `set_state`).
"""

from __future__ import annotations

import functools
import gc

from incognita.access.domain import get_domain

PREFIX = "incognita_"  # the harness registry name of our copy of a domain: incognita_<domain>


def harness_name(domain: str) -> str:
    return f"{PREFIX}{domain}"


@functools.cache
def _parsed_db(domain: str) -> dict:
    """The domain's upstream database file, parsed, read once per process; never handed out, only validated."""
    from incognita.access.cards.source import upstream_dir
    from incognita.common.io import read_json

    path = upstream_dir(domain) / "db.json"
    db_model, _ = get_domain(domain).upstream.classes()
    data = read_json(path)
    if db_model.model_validate(data).get_hash() != db_model.load(str(path)).get_hash():
        raise RuntimeError(f"{path}: the cached database differs from upstream's own load")
    return data


def fresh_db(domain: str):
    """A new, independent database model of the domain with upstream's content.

    The cyclic garbage collector is paused while it is built: validation allocates some
    40,000 objects (retail), none of them in a reference cycle, and the collections they would
    trigger (each traversing the whole heap: litellm, the cached database) took about 70% of the time."""
    db_model, _ = get_domain(domain).upstream.classes()
    data = _parsed_db(domain)
    paused = gc.isenabled()
    gc.disable()
    try:
        return db_model.model_validate(data)
    finally:
        if paused:
            gc.enable()


def register_domain(domain: str) -> str:
    """Register `incognita_<domain>` in the harness's registry (once per process); returns its name."""
    from tau2.registry import registry

    name = harness_name(domain)
    if name not in registry.get_domains():
        upstream = get_domain(domain).upstream

        def get_environment(solo_mode: bool = False):
            return upstream.environment(db=fresh_db(domain), solo_mode=solo_mode)

        registry.register_domain(get_environment, name)
    return name


@functools.cache
def environment_info(harness_domain: str):
    """The harness's `get_environment_info(domain)`, computed once per process: it is constant,
    and computing it builds a whole environment."""
    from tau2.run import get_environment_info

    return get_environment_info(harness_domain, include_tool_info=False)


# Collect the youngest generation after 50,000 net allocations instead of Python's 700, and
# the older ones rarely. Each run validates, dumps and hashes databases of some 40,000
# objects, none in a reference cycle (reference counting frees them), and with Python's
# defaults the collector's passes over them took about a third of a native job's CPU
# (38 s against 26 s for one model's 81 runs, peak memory 3% higher).
GC_THRESHOLDS = (50_000, 20, 1_000)


def settle(domains) -> None:
    """Read the domains' databases now, move everything alive (the harness, litellm, the parsed
    databases) out of the garbage collector's sight (`gc.freeze`: it lives for the whole job,
    and every full collection during the runs would traverse it again), and collect rarely."""
    for domain in domains:
        _parsed_db(domain)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
