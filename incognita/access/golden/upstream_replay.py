"""Replay on a clean database of a domain, ours and upstream's way, with comparable hashes.

Two independent routes to a final database hash:

* `replay_calls` executes a golden trajectory's calls in order through the domain's upstream
  toolkit (`RetailTools` for retail). Errors of calls marked `intended_failure` are swallowed;
  any other error is reported (the call changed nothing, so the hash will usually disagree too).
* `upstream_hash` rebuilds the gold state the way tau2's `EnvironmentEvaluator` does: a
  fresh `Environment` of the domain, the task's initial state set by upstream's own
  `set_state`, then every reference action through `make_tool_call` inside try/except, then
  `get_db_hash()`.

Both hashes are upstream's `ToolKitBase.get_db_hash`: the second calls it, the first computes
the same string from cached per-record text (`World.release`, incognita.access.golden.db_hashing)
for a run that starts clean, and calls it for a run that starts from a task's initial state.
Equality means the golden trajectory reproduces upstream's gold state exactly, and every build
checks the fast hash against upstream's.

A `World` loads a domain's database file once per process; a clean copy is a new database
model validated from the parsed JSON, which is what `DB.load` does (without re-reading the
file). Runs that write take a private toolkit and give it back when they end
(`private_toolkit`, `release`): the hash of the final state is computed from cached
per-record text, and the few records the run changed are restored, so a copy of the whole
database is made once per process, not once per run. Validation is also the fastest exact
independent copy (bench/episodes.py, issue #25): a pickle round-trip takes about twice as
long, `model_copy(deep=True)` and `copy.deepcopy` longer still, and `model_validate_json` of
the file's bytes longer too. The cyclic garbage collector is paused while a copy is built: its million new objects would
otherwise set off young-generation collections that find nothing to free.

A task with an initial state (tau2's `initial_state`: initialization data, initialization
actions, a message history) starts from that state instead (`start`): upstream's own
`Environment.set_state` builds it on a fresh copy, and its final hash is upstream's own.
"""

from __future__ import annotations

import functools
import gc
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incognita.access.golden.db_hashing import HandedOutTable
from incognita.common.io import InputError, read_json, sha256_file

if TYPE_CHECKING:
    from incognita.access.domain import Domain


def import_quietly(load: Callable[[], Any]) -> Any:
    """Run `load` (a function that imports a domain's tau2 modules) with pandas hidden.

    Only a domain's own modules (about 0.3 s), never tau2.registry (which pulls in litellm).
    tau2's utilities import deepdiff, whose hashing module imports pandas (another 0.3 s, a
    fifth of an episodes job) for one purpose: to recognise a DataFrame it is asked to hash.
    Nothing here hands deepdiff a DataFrame (tau2 diffs dicts), so a process that has not
    loaded pandas imports these modules with pandas hidden; deepdiff then records pandas as
    absent, and a later `import pandas` in the same process works as usual.
    """
    quiet_upstream_logs()
    hide = "pandas" not in sys.modules
    if hide:
        sys.modules["pandas"] = None  # an import of it now raises ImportError, which deepdiff expects
    try:
        return load()
    finally:
        if hide and sys.modules.get("pandas", 0) is None:
            del sys.modules["pandas"]


@functools.cache
def quiet_upstream_logs() -> None:
    """tau2 logs every tool response and state change at DEBUG to stderr (through loguru): keep
    its warnings and errors only, once per process."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


# The origin of a golden call made in a task's initial state (its message history): its result
# is known, it is never run again (incognita.access.golden.trajectory).
INITIAL_STATE = "initial_state"


def result_to_json(value: Any) -> Any:
    """A tool's return value as plain JSON: pydantic models dumped, strings kept verbatim."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): result_to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [result_to_json(v) for v in value]
    return str(value)


class World:
    """The clean database of one domain's source file, loaded once, handed out fresh."""

    def __init__(self, domain: Domain, db_path: str | Path):
        db_path = Path(db_path)
        if not db_path.exists():
            raise InputError(f"{db_path}: {domain.name} database not found (run the source stage first)")
        self.domain = domain
        self._db_cls, self._tools_cls = domain.upstream.classes()  # deferred to here: a second of imports
        self.path = db_path
        self.db_sha256 = sha256_file(db_path)
        self._raw = read_json(db_path)
        self._hasher = None  # built on first use (incognita.access.golden.db_hashing)
        self._pool: list = []  # private toolkits given back by finished runs, clean again
        self._lock = threading.RLock()  # runs may start and finish on several threads
        self._stateful: set[int] = set()  # toolkits that started from a task's initial state (`start`)
        probe = self._tools_cls(None)  # tool metadata needs no database
        self.tool_types = {name: probe.tool_type(name).value for name in probe.tools}
        # The parsed database is about a million long-lived objects; without this, every
        # full collection of the cyclic garbage collector walks them again while replays
        # allocate and free whole databases, which costs about a third of the run time.
        gc.freeze()

    def fresh_db(self):
        """A new, independent clean database (tools mutate it in place)."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._db_cls.model_validate(self._raw)
        finally:
            if enabled:
                gc.enable()

    def toolkit(self, db=None):
        return self._tools_cls(db if db is not None else self.fresh_db())

    def shared_toolkit(self):
        """A toolkit on one clean database shared by every caller: for reads only."""
        with self._lock:
            if getattr(self, "_shared", None) is None:
                self._shared = self.toolkit()
                gc.freeze()  # it lives as long as the process, like the parsed file
            return self._shared

    def tool_schemas(self) -> dict:
        """Upstream Tool objects by name (function-calling schemas, argument models), built once."""
        if getattr(self, "_schemas", None) is None:
            self._schemas = self.shared_toolkit().get_tools()
        return self._schemas

    def openai_schemas(self) -> dict[str, dict]:
        """Each tool's function-calling schema by name, computed once per world: upstream's
        `Tool.openai_schema` rebuilds the JSON schema from the argument model on every access
        (about 0.4 ms each, over a thousand times per episodes job). The dicts are shared:
        callers must not change them."""
        if getattr(self, "_openai", None) is None:
            self._openai = {name: tool.openai_schema for name, tool in self.tool_schemas().items()}
        return self._openai

    def clean_hash(self) -> str:
        """Upstream's hash of the clean database (from the cached record text)."""
        return self._clean_hasher().clean_digest

    def _clean_hasher(self):
        with self._lock:
            if self._hasher is None:
                from incognita.access.golden.db_hashing import CleanDbHasher

                # The shared database is clean: only reads run on it.
                self._hasher = CleanDbHasher(self.shared_toolkit().db)
            return self._hasher

    def db_hash(self, db) -> str:
        """Upstream's hash of a database that started as a clean copy of this world's, from the
        cached record text (incognita.access.golden.db_hashing); the database is not changed."""
        return self._clean_hasher().hexdigest(db)[0]

    def upstream_clean_hash(self) -> str:
        """Upstream's hash of the clean database as upstream computes it (a fresh environment's
        `get_db_hash`), once per world: the gold state of a task whose actions only read."""
        with self._lock:
            if getattr(self, "_upstream_clean", None) is None:
                self._upstream_clean = self.domain.upstream.environment(db=self.fresh_db()).get_db_hash()
            return self._upstream_clean

    def private_toolkit(self):
        """A toolkit on a clean database of its own, for one run that writes: one that an
        earlier run gave back (`release`) or a new copy."""
        with self._lock:
            if self._pool:
                return self._pool.pop()
        toolkit = self.toolkit()
        # Tables that note the records they hand out: `release` then looks only at those.
        for name, value in list(toolkit.db.__dict__.items()):
            if isinstance(value, dict):
                setattr(toolkit.db, name, HandedOutTable(value))
        gc.freeze()  # it will be given back and reused: keep the collector from walking it
        return toolkit

    def release(self, toolkit) -> str:
        """The final hash of a run's private database, which the run no longer uses; the
        database is restored to clean (the records that differ from the clean ones validated
        again from the file's data, records a run added dropped) and kept for the next run,
        which saves a copy of the whole database per run. A database whose other fields
        changed is dropped instead."""
        digest, changed = self._clean_hasher().hexdigest(toolkit.db)
        if changed is not None:
            for name, keys in changed.items():
                table = getattr(toolkit.db, name)
                for key in keys:
                    record_type = self._hasher.record_type(name, key)
                    if record_type is None:
                        del table[key]
                    else:
                        table[key] = record_type.model_validate(self._raw[name][key])
            for value in toolkit.db.__dict__.values():
                if isinstance(value, HandedOutTable):
                    value.reset()  # clean again: nothing handed out
            with self._lock:
                self._pool.append(toolkit)
        return digest

    def start(self, initial_state: dict | None = None):
        """A toolkit for one run that writes: clean (`private_toolkit`), or, for a task with an
        initial state, a fresh copy brought to that state by upstream's `Environment.set_state`.
        Give it back with `finish`, which returns the final hash."""
        if not initial_state:
            return self.private_toolkit()
        env = self.domain.upstream.environment(db=self.fresh_db())
        env.set_state(**_parsed_state(initial_state))
        toolkit = env.tools  # set_state may have replaced its database (initialization data)
        with self._lock:
            self._stateful.add(id(toolkit))
        return toolkit

    def finish(self, toolkit) -> str:
        """The final hash of a run's toolkit from `start`; a clean one is given back (`release`)."""
        with self._lock:
            stateful = id(toolkit) in self._stateful
            self._stateful.discard(id(toolkit))
        return toolkit.get_db_hash() if stateful else self.release(toolkit)

    def initial_hash(self, initial_state: dict | None = None) -> str:
        """Upstream's hash of the database a task starts from."""
        if not initial_state:
            return self.clean_hash()
        return self.finish(self.start(initial_state))

    def check_tool(self, name: str, where: str) -> None:
        if name not in self.tool_types:
            raise InputError(f"{where}: unknown {self.domain.name} tool {name!r}")


def _parsed_state(initial_state: dict) -> dict:
    """A task's `initial_state` as the keyword arguments of upstream's `Environment.set_state`,
    parsed by upstream's own models."""
    from tau2.data_model.tasks import InitialState

    state = InitialState.model_validate(initial_state)
    return {
        "initialization_data": state.initialization_data,
        "initialization_actions": state.initialization_actions,
        "message_history": state.message_history or [],
    }


def replay_calls(world: World, calls: Iterable[dict], initial_state: dict | None = None) -> dict:
    """Execute golden calls on a clean database (or the task's initial state).

    Returns the final hash, the errors that were not intended (index, tool, message), the
    intended failures that unexpectedly succeeded, and the indices of calls whose replayed
    result differs from the result stored in the trajectory.
    """
    tools = world.start(initial_state)
    unexpected_errors, unexpected_successes, result_diffs = [], [], []
    for i, call in enumerate(calls):
        if call.get("origin") == INITIAL_STATE:
            continue  # made before the task began: part of the initial state, not run again
        requestor = call.get("requestor", "assistant")
        if requestor != "assistant":
            raise InputError(f"call {i} ({call['name']}): requestor {requestor!r}: only the agent's tools are replayed")
        try:
            out = result_to_json(tools.use_tool(call["name"], **call["arguments"]))
        except Exception as exc:  # noqa: BLE001 - any tool error is data here
            if not call.get("intended_failure"):
                unexpected_errors.append({"call": i, "name": call["name"], "error": str(exc)})
            continue
        if call.get("intended_failure"):
            unexpected_successes.append(i)
        if "result" in call and call["result"] != out:
            result_diffs.append(i)
    return {
        "final_hash": world.finish(tools),
        "unexpected_errors": unexpected_errors,
        "unexpected_successes": unexpected_successes,
        "result_diffs": result_diffs,
    }


def upstream_hash(world: World, reference_actions: Iterable[dict], initial_state: dict | None = None) -> str:
    """The gold-state hash as tau2's EnvironmentEvaluator builds it, from the reference actions.

    A task that starts clean and whose actions are all reads (tau2 marks each tool read or write)
    ends on the clean database, whose upstream hash the world computes once: an environment and a
    full dump per such task would cost about a second on the airline's 7 MB database. The other
    route (`replay_calls`) still runs every read, so a read that changed the database would
    show as a mismatch."""
    reference_actions = list(reference_actions)
    if not initial_state and all(world.tool_types.get(a["name"]) == "read" for a in reference_actions):
        return world.upstream_clean_hash()
    env = world.domain.upstream.environment(db=world.fresh_db())
    if initial_state:
        env.set_state(**_parsed_state(initial_state))
    for action in reference_actions:
        try:
            env.make_tool_call(
                tool_name=action["name"],
                requestor=action.get("requestor") or "assistant",
                **action["arguments"],
            )
        except Exception:  # noqa: BLE001, S110 - upstream skips gold actions that raise
            pass
    return env.get_db_hash()


def verify(world: World, golden: dict, reference_actions: list[dict], initial_state: dict | None = None) -> dict:
    """Replay the golden calls and compare with the upstream gold state; the `replay` block."""
    ours = replay_calls(world, golden["calls"], initial_state)
    theirs = upstream_hash(world, reference_actions, initial_state)
    return {
        "final_hash": ours["final_hash"],
        "upstream_hash": theirs,
        "match": ours["final_hash"] == theirs,
        "unexpected_errors": ours["unexpected_errors"],
        "unexpected_successes": ours["unexpected_successes"],
        "result_diffs": ours["result_diffs"],
    }


def reference_actions_of(golden: dict) -> list[dict]:
    """The upstream reference actions, recovered from a golden trajectory's anchors."""
    return [
        {
            "action_id": c["action_id"],
            "name": c["name"],
            "arguments": c["arguments"],
            "requestor": c.get("requestor") or "assistant",
        }
        for c in golden["calls"]
        if c["origin"] == "reference"
    ]


REPLAY_HEADER = ["task", "our_hash", "upstream_hash", "match"]


def replay_rows(golden_docs: Iterable[tuple[str, dict]]) -> list[list[Any]]:
    """One TSV row per golden document, sorted by upstream id (numeric where possible)."""
    from incognita.access.domain import id_order

    rows = []
    for where, doc in golden_docs:
        rep = doc.get("replay")
        if not isinstance(rep, dict) or "final_hash" not in rep:
            raise InputError(f"{where}: no replay block; is this a golden trajectory file?")
        rows.append([doc["task_id"], rep["final_hash"], rep["upstream_hash"], str(bool(rep["match"])).lower()])
    rows.sort(key=lambda r: id_order(str(r[0])))
    return rows
