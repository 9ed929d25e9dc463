"""The coordination reference: each golden trajectory projected onto each registered arm.

Projection changes only who executes a call, as the arm's entry in the arm registry says
(incognita.access.arm_registry): the evaluated agent (direct), Vega (indirect) or the desk
that holds the tool (social). From the projection we read, per task and arm, the items the
trajectory reader scores against:

- required calls: the golden calls marked `counted`. Intended failures and reads that only
  explore stay in the call list (with their executors) but are never required; since
  golden generator 3 that includes identity lookups whose result nothing uses. A read
  that a traced information-channel answer rests on (including a collection whose size is
  the answer, `match: count` / `count_available`, and reads the golden stage inserted at
  the end of the trajectory for an item no other result holds) is counted by the golden
  stage and so required; a golden file where it is not is refused.
- role assignments (arms whose holders are undeclared: social): one per distinct (desk, tool)
  pair among the required calls, listing the calls it covers. Finding the desk that holds a
  tool and getting it to use that tool is one piece of coordination however often the tool
  is used afterwards. The process does not exist where the holder is declared (direct,
  indirect), so there it is null (absent), never zero.
- information items, identical in every arm:
  * customer facts: the distinct disclosure-gate tokens that the provenance of any required
    call consumes, including the tokens that select an element from a policy vocabulary or
    from a read's result (`selected_by`);
  * service facts: each golden read whose result a required call consumes, identified by
    the read's call index, tool and arguments (the reader credits it when that read is
    accepted with those arguments). A call of the task's message history (golden origin
    `initial_state`) is none: its result is in the conversation the agent is shown.
  Values from the opening line or from the customer's own request block are not gated and
  leave no token, so they are not items.
- desks engaged: the distinct holders of the required calls in the paper's six-desk map
  (LEVEL_MAP); its size is the task's stratification level for corpus selection.

See docs/reference.md for the definitions and for how totals compare with the paper's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from incognita.access.arm_registry import DEFAULT_PATH as ARM_REGISTRY
from incognita.access.arm_registry import ArmRegistry, arm_registry
from incognita.access.domain import LOCAL_ID, id_order
from incognita.access.golden.upstream_replay import INITIAL_STATE
from incognita.access.reference.partition import DESK_MAP, Partition, load_partition
from incognita.access.taxonomy import SOCIAL
from incognita.common.io import (
    InputError,
    read_json,
    sha256_file,
    sha256_obj,
    write_json,
)

SCHEMA_VERSION = 1
GOLDEN_SCHEMA_VERSIONS = {1}
# Bumped when a definition above changes meaning (documented in docs/reference.md).
DEFINITIONS_VERSION = 1

# The holder map whose desks define a task's level (the paper's stratification), and the arm
# whose role assignments the paper totals (a domain's published totals: DomainFiles.published_totals).
LEVEL_MAP = DESK_MAP
PAPER_ROLE_ARM = SOCIAL

# The golden format is read in either of two layouts: the one first agreed (card and replay
# facts at top level, `outcome` per call) and the one incognita.access.golden.trajectory writes (a `card`
# block, a `replay` block, failures shown by a non-null `error`). `_normalise` maps both to
# the first.
_GOLDEN_KEYS = ("schema_version", "task_id", "calls", "information_channel")
_NESTED = {
    "card_sha256": ("card", "sha256"),
    "card_version": ("card", "card_version"),
    "final_hash": ("replay", "final_hash"),
    "upstream_hash": ("replay", "upstream_hash"),
    "match": ("replay", "match"),
}
_CALL_KEYS = (
    "index",
    "name",
    "arguments",
    "origin",
    "action_id",
    "tool_type",
    "error",
    "counted",
    "why_not_counted",
    "provenance",
)
# `unsourced` marks an argument of an intended failure that no rule can trace.
_PROV_KINDS = {"opening", "field", "request", "policy", "read", "computed", "derived", "unsourced"}
_TASK_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.json$")  # {upstream id}.json (incognita.access.domain.LOCAL_ID)


# --------------------------------------------------------------------------- loading


def _bad(path: Path | str, key: str, message: str) -> InputError:
    return InputError(f"{path}: {key}: {message}")


def load_golden(path: str | Path) -> dict:
    """Read one golden trajectory and check the parts of the agreed format this stage uses."""
    path = Path(path)
    g = read_json(path)
    if not isinstance(g, dict):
        raise _bad(path, "<top level>", "expected a JSON object")
    for key in _GOLDEN_KEYS:
        if key not in g:
            raise _bad(path, key, "missing")
    for key, (block, inner) in _NESTED.items():
        if key not in g:
            if not isinstance(g.get(block), dict) or inner not in g[block]:
                raise _bad(path, key, f"missing (looked for {key} and {block}.{inner})")
            g[key] = g[block][inner]
    if g["schema_version"] not in GOLDEN_SCHEMA_VERSIONS:
        raise _bad(
            path,
            "schema_version",
            f"unsupported version {g['schema_version']!r} (this stage reads {sorted(GOLDEN_SCHEMA_VERSIONS)})",
        )
    if not isinstance(g["task_id"], str) or not LOCAL_ID.fullmatch(g["task_id"]):
        raise _bad(path, "task_id", "expected an upstream task id (letters, digits, '_', '-', '.')")
    if path.stem != g["task_id"]:
        raise _bad(path, "task_id", f"{g['task_id']!r} does not match the file name")
    if not isinstance(g["calls"], list):
        raise _bad(path, "calls", "expected a list")
    if not isinstance(g["information_channel"], list):
        raise _bad(path, "information_channel", "expected a list")
    for pos, call in enumerate(g["calls"]):
        where = f"calls[{pos}]"
        if not isinstance(call, dict):
            raise _bad(path, where, "expected an object")
        for key in _CALL_KEYS:
            if key not in call:
                raise _bad(path, f"{where}.{key}", "missing")
        if "outcome" not in call:
            call["outcome"] = "ok" if call["error"] is None else "error"
        if call["index"] != pos:
            raise _bad(path, f"{where}.index", f"is {call['index']!r}, expected {pos}")
        if not isinstance(call["counted"], bool):
            raise _bad(path, f"{where}.counted", "expected true or false")
        if call["counted"] and call["why_not_counted"] is not None:
            raise _bad(path, f"{where}.why_not_counted", "must be null for a counted call")
        if not call["counted"] and call["why_not_counted"] not in (
            "intended_failure",
            "exploration_only",
            INITIAL_STATE,
        ):
            raise _bad(
                path,
                f"{where}.why_not_counted",
                f"an uncounted call needs 'intended_failure', 'exploration_only' or '{INITIAL_STATE}'",
            )
        if call["tool_type"] not in ("read", "write", "generic"):
            raise _bad(path, f"{where}.tool_type", f"unknown tool type {call['tool_type']!r}")
        if not isinstance(call["provenance"], dict):
            raise _bad(path, f"{where}.provenance", "expected an object {argument: provenance}")
    return g


def load_card_flags(cards_dir: str | Path, golden: dict, golden_path: str | Path) -> dict:
    """The card facts this stage needs, after checking the golden was built from this card."""
    path = Path(cards_dir) / f"{golden['task_id']}.json"
    card = read_json(path)
    if not isinstance(card, dict):
        raise _bad(path, "<top level>", "expected a JSON object")
    if not isinstance(card.get("withholds_disclosure"), bool):
        raise _bad(path, "withholds_disclosure", "missing or not a boolean")
    if card.get("task_id") != golden["task_id"]:
        raise _bad(path, "task_id", f"{card.get('task_id')!r} does not match golden task {golden['task_id']!r}")
    if golden["card_sha256"] not in (sha256_file(path), sha256_obj(card)):
        raise InputError(
            f"{golden_path}: card_sha256: the golden trajectory was built from a different version of "
            f"{path}; rebuild the golden trajectory (incognita golden) before the reference"
        )
    return {"withholds_disclosure": card["withholds_disclosure"], "card_version": card.get("card_version")}


def golden_files(golden_dir: str | Path) -> list[Path]:
    golden_dir = Path(golden_dir)
    if not golden_dir.is_dir():
        raise InputError(f"{golden_dir}: golden directory not found")
    files = [p for p in golden_dir.iterdir() if _TASK_FILE.match(p.name)]
    if not files:
        raise InputError(f"{golden_dir}: no golden trajectories ({{task}}.json) found")
    return sorted(files, key=lambda p: id_order(p.stem))


# --------------------------------------------------------------------------- provenance


class _Sources:
    """What one provenance tree draws on: gate tokens and (read call, pointer) pairs."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.reads: list[tuple[int, str]] = []
        self.untraced = 0

    def add_token(self, token: str) -> None:
        if token not in self.tokens:
            self.tokens.append(token)

    def add_read(self, call: int, pointer: str) -> None:
        if (call, pointer) not in self.reads:
            self.reads.append((call, pointer))


def _walk(prov: Any, out: _Sources, where: str, path: Path) -> None:
    if prov is None:
        out.untraced += 1
        return
    if isinstance(prov, list):
        for i, item in enumerate(prov):
            _walk(item, out, f"{where}[{i}]", path)
        return
    if not isinstance(prov, dict):
        raise _bad(path, where, f"expected a provenance object, got {type(prov).__name__}")
    if "kind" not in prov:
        # A structured argument (a mapping of sub-arguments), each with its own provenance.
        for key, sub in prov.items():
            _walk(sub, out, f"{where}.{key}", path)
        return
    kind = prov["kind"]
    if kind not in _PROV_KINDS:
        raise _bad(path, f"{where}.kind", f"unknown provenance kind {kind!r}")
    for token in prov.get("selected_by") or []:
        out.add_token(token)
    if kind == "unsourced":
        out.untraced += 1
    elif kind == "field":
        if not isinstance(prov.get("token"), str):
            raise _bad(path, f"{where}.token", "a field provenance needs its gate token")
        out.add_token(prov["token"])
    elif kind == "read":
        if not isinstance(prov.get("call"), int):
            raise _bad(path, f"{where}.call", "a read provenance needs the index of the read call")
        out.add_read(prov["call"], prov.get("path") or "")
    elif kind in ("computed", "derived"):  # a derived value consumes what it is derived from
        _walk(prov.get("from") or [], out, f"{where}.from", path)


def sources_of(call: dict, path: Path | str = "<golden>") -> _Sources:
    out = _Sources()
    _walk(call["provenance"], out, f"calls[{call['index']}].provenance", Path(path))
    return out


# --------------------------------------------------------------------------- projection


def project_task(
    golden: dict, flags: dict, partition: Partition, registry: ArmRegistry, path: str | Path = "<golden>"
) -> dict:
    """Project one golden trajectory onto every registered arm (see the module docstring)."""
    path = Path(path)
    calls = golden["calls"]
    holder_of = {name: arm.holder_of(partition) for name, arm in registry.arms.items()}
    executors: list[dict[str, str]] = []
    for call in calls:
        if call["name"] not in partition.tools:
            raise _bad(
                path,
                f"calls[{call['index']}].name",
                f"tool {call['name']!r} is not in the partition ({partition.path})",
            )
        executors.append({name: holder_of[name][call["name"]] for name in registry.names})

    required = [c for c in calls if c["counted"]]
    customer: dict[str, list[int]] = {}
    service: dict[int, dict] = {}
    diagnostics = {
        "untraced_arguments": 0,
        "consumed_uncounted_reads": [],
        "consumed_failed_reads": [],
        "untraced_information": [],
    }
    for call in required:
        src = sources_of(call, path)
        diagnostics["untraced_arguments"] += src.untraced
        for token in src.tokens:
            customer.setdefault(token, []).append(call["index"])
        for j, pointer in src.reads:
            if not 0 <= j < call["index"]:
                raise _bad(
                    path,
                    f"calls[{call['index']}].provenance",
                    f"reads the result of call {j}, which does not come before it",
                )
            read = calls[j]
            if read["origin"] == INITIAL_STATE:
                continue  # a result of the task's message history: the agent is shown it, not an item to obtain
            item = service.setdefault(
                j,
                {
                    "read_call": j,
                    "name": read["name"],
                    "arguments": read["arguments"],
                    "read_counted": read["counted"],
                    "executor": executors[j],
                    "paths": [],
                    "consumed_by": [],
                },
            )
            if pointer not in item["paths"]:
                item["paths"].append(pointer)
            if call["index"] not in item["consumed_by"]:
                item["consumed_by"].append(call["index"])
            if not read["counted"] and j not in diagnostics["consumed_uncounted_reads"]:
                diagnostics["consumed_uncounted_reads"].append(j)
            if read["outcome"] != "ok" and j not in diagnostics["consumed_failed_reads"]:
                diagnostics["consumed_failed_reads"].append(j)

    customer_items = [{"token": t, "consumed_by": sorted(idx)} for t, idx in sorted(customer.items())]
    service_items = [{**item, "paths": sorted(item["paths"])} for _, item in sorted(service.items())]
    for item in service_items:
        item["consumed_by"].sort()
    n_items = len(customer_items) + len(service_items)

    # What the customer must be told (communicate_info) may rest on reads too; recorded for
    # the reader, not part of the item counts (no required call consumes them).
    channel = _Sources()
    for k, entry in enumerate(golden["information_channel"]):
        if not isinstance(entry, dict) or "provenance" not in entry:
            raise _bad(path, f"information_channel[{k}]", "expected {info, provenance}")
        if entry["provenance"] is not None:
            _walk(entry["provenance"], channel, f"information_channel[{k}].provenance", path)
        else:  # no result within reach holds it (a sum the agent works out, say): not observable
            diagnostics["untraced_information"].append(k)
    # A read that a traced answer rests on (a leaf, or a collection whose size is the answer)
    # is required like any read a required call consumes; the golden stage marks it counted.
    for j in sorted({j for j, _ in channel.reads}):
        if not 0 <= j < len(calls):
            raise _bad(path, "information_channel", f"draws on call {j}, which is not in the trajectory")
        if not calls[j]["counted"]:
            raise _bad(
                path,
                "information_channel",
                f"draws on call {j} ({calls[j]['name']}), which is not counted; a read the customer's "
                "answer rests on is required (rebuild the golden trajectory with incognita golden)",
            )

    arms: dict[str, dict] = {}
    for arm in registry.names:
        req = [
            {
                "index": c["index"],
                "name": c["name"],
                "arguments": c["arguments"],
                "tool_type": c["tool_type"],
                "executor": executors[c["index"]][arm],
            }
            for c in required
        ]
        arm_executors = sorted({r["executor"] for r in req})
        if not registry.arm(arm).declared:
            pairs: dict[tuple[str, str], list[int]] = {}
            for r in req:
                pairs.setdefault((r["executor"], r["name"]), []).append(r["index"])
            roles: list[dict] | None = [{"desk": d, "tool": t, "calls": idx} for (d, t), idx in sorted(pairs.items())]
        else:
            roles = None
        arms[arm] = {
            "required_calls": req,
            "executors": arm_executors,
            "role_assignments": roles,
            "n_required_calls": len(req),
            "n_role_assignments": None if roles is None else len(roles),
            "n_information_items": n_items,
        }

    desks = sorted({partition.holder(c["name"], LEVEL_MAP) for c in required})
    writes = [c["name"] for c in required if c["tool_type"] == "write"]
    return {
        "task_id": golden["task_id"],
        "match": bool(golden["match"]),
        "final_hash": golden["final_hash"],
        "withholds_disclosure": flags["withholds_disclosure"],
        "n_calls": len(calls),
        "n_counted": len(required),
        "has_write": bool(writes),
        "writes": writes,
        "calls": [
            {
                "index": c["index"],
                "name": c["name"],
                "tool_type": c["tool_type"],
                "origin": c["origin"],
                "action_id": c["action_id"],
                "outcome": c["outcome"],
                "counted": c["counted"],
                "why_not_counted": c["why_not_counted"],
                "executor": executors[c["index"]],
            }
            for c in calls
        ],
        "information_items": {"customer": customer_items, "service": service_items},
        "channel_sources": {"tokens": sorted(channel.tokens), "reads": sorted({j for j, _ in channel.reads})},
        "arms": arms,
        "desks_engaged": desks,
        "level": len(desks),
        "diagnostics": diagnostics,
    }


# --------------------------------------------------------------------------- the whole reference


def task_totals(task: dict) -> dict:
    items = task["information_items"]
    return {
        "tasks": 1,
        "calls": task["n_calls"],
        "counted": task["n_counted"],
        "role_assignments": task["arms"][PAPER_ROLE_ARM]["n_role_assignments"],
        "information_items": len(items["customer"]) + len(items["service"]),
        "customer_facts": len(items["customer"]),
        "service_facts": len(items["service"]),
        "desks_engaged": task["level"],
    }


def totals(reference: dict, task_ids: Iterable[str] | None = None) -> dict:
    """Sum the per-task counts over `task_ids` (default: every task in the reference)."""
    tasks = reference["tasks"]
    ids = list(tasks) if task_ids is None else [str(t) for t in task_ids]
    missing = [t for t in ids if t not in tasks]
    if missing:
        raise InputError(f"coordination reference: no task(s) {', '.join(missing)}")
    out = {
        k: 0
        for k in (
            "tasks",
            "calls",
            "counted",
            "role_assignments",
            "information_items",
            "customer_facts",
            "service_facts",
            "desks_engaged",
        )
    }
    for t in ids:
        for k, v in task_totals(tasks[t]).items():
            out[k] += v
    levels: dict[str, int] = {}
    for t in ids:
        key = str(tasks[t]["level"])
        levels[key] = levels.get(key, 0) + 1
    out["levels"] = dict(sorted(levels.items(), key=lambda kv: int(kv[0])))
    return out


def format_totals(t: dict) -> str:
    """The paper's form: 'N calls, M counted, R role assignments, I information items'."""
    return (
        f"{t['calls']} calls, {t['counted']} counted, {t['role_assignments']} role assignments, "
        f"{t['information_items']} information items"
    )


def build_reference(
    golden_dir: str | Path, cards_dir: str | Path, partition_path: str | Path, registry_path: str | Path = ARM_REGISTRY
) -> dict:
    partition, arms = load_partition(partition_path), arm_registry(registry_path)
    tasks: dict[str, dict] = {}
    for gpath in golden_files(golden_dir):
        golden = load_golden(gpath)
        flags = load_card_flags(cards_dir, golden, gpath)
        tasks[golden["task_id"]] = project_task(golden, flags, partition, arms, gpath)
    reference = {
        "schema_version": SCHEMA_VERSION,
        "definitions_version": DEFINITIONS_VERSION,
        "arms": list(arms.names),
        "partition": {"version": partition.version, "sha256": partition.content_sha256},
        "tasks": tasks,
    }
    reference["totals"] = totals(reference)
    return reference


def write_reference(reference: dict, out: str | Path) -> None:
    write_json(out, reference)


def load_reference(path: str | Path, *, locks: str | Path | None = None, verify: bool = True) -> dict:
    """Read a domain's coordination.json; by default refuse it unless it matches its frozen lock
    in `locks` (the domain's locks.yaml)."""
    if verify:
        from incognita.access.freeze import verify_lock

        if locks is None:
            raise ValueError("load_reference: verify needs the domain's locks file")
        verify_lock("coordination", path, locks_path=locks)
    ref = read_json(path)
    if not isinstance(ref, dict) or ref.get("schema_version") != SCHEMA_VERSION or "tasks" not in ref:
        raise InputError(f"{path}: not a coordination reference (schema_version {SCHEMA_VERSION})")
    return ref
