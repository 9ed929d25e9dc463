"""The gateway: the deterministic layer between a proposed tool call and the database.

Every proposal is checked for ownership (does the proposer hold this tool in this arm?)
and admissibility (a known tool, a JSON object of arguments with the right names and
types), then executed through the domain's upstream toolkit. Each outcome is one
GatewayDecision event: accepted, not_owner, inadmissible or error (the tool refused, e.g.
an order that is not pending). Writes are irreversible: no operation restores a state.
"""

from __future__ import annotations

import itertools
from typing import Any

from incognita.access.episodes.loop.records import GatewayDecision, ToolProposal
from incognita.access.golden.upstream_replay import result_to_json


class Gateway:
    def __init__(self, world: Any, owners: dict[str, frozenset[str]], initial_state: dict | None = None):
        """`world` is an incognita.access.golden.upstream_replay.World; `owners` maps each participant that may
        act to the tools it holds; `initial_state` is the task's (its card's), if it has one.

        Reads run on the world's shared clean database; the first write switches this episode
        to a private copy, so episodes that never write cost no copy and no re-hash. A task with
        an initial state runs on a private copy in that state from the start.
        """
        self._world = world
        self._private = bool(initial_state)
        self._toolkit = world.start(initial_state) if initial_state else world.shared_toolkit()
        self._closed = False  # set by final_hash: the private database is no longer this episode's
        self._schemas = world.tool_schemas()
        self._openai = world.openai_schemas()
        self._tool_lists: dict[str, list[dict]] = {}
        self._owners = owners
        self._ids = itertools.count(1)
        self.events: list[ToolProposal | GatewayDecision] = []

    def tools_of(self, participant: str) -> frozenset[str]:
        return self._owners.get(participant, frozenset())

    def openai_tools(self, participant: str) -> list[dict]:
        """Function-calling schemas of the tools this participant holds (upstream descriptions),
        sorted by name; built once per participant from the world's cached schemas. The list
        and its dicts are shared: callers must not change them."""
        tools = self._tool_lists.get(participant)
        if tools is None:
            tools = self._tool_lists[participant] = [self._openai[name] for name in sorted(self.tools_of(participant))]
        return tools

    def is_write(self, tool: str) -> bool:
        return self._world.tool_types.get(tool) == "write"

    def propose(self, proposer: str, tool: str, arguments: Any, turn: int) -> GatewayDecision:
        if self._closed:
            raise RuntimeError("the gateway's episode has already ended")
        call_id = f"c{next(self._ids)}"
        self.events.append(ToolProposal(turn=turn, call_id=call_id, proposer=proposer, tool=tool, arguments=arguments))
        decision = self._decide(call_id, proposer, tool, arguments, turn)
        self.events.append(decision)
        return decision

    def _decide(self, call_id: str, proposer: str, tool: str, arguments: Any, turn: int) -> GatewayDecision:
        def decision(status: str, reason: str | None = None, result: Any = None) -> GatewayDecision:
            return GatewayDecision(
                turn=turn,
                call_id=call_id,
                proposer=proposer,
                tool=tool,
                arguments=arguments,
                status=status,
                reason=reason,
                result=result,
                write=self.is_write(tool),
            )

        if tool not in self._schemas:
            return decision("inadmissible", f"unknown tool {tool!r}")
        if tool not in self.tools_of(proposer):
            return decision("not_owner", f"{proposer} does not hold {tool}")
        problem = self._inadmissible(tool, arguments)
        if problem:
            return decision("inadmissible", problem)
        if self.is_write(tool) and not self._private:
            self._toolkit, self._private = self._world.private_toolkit(), True
        try:
            result = self._toolkit.use_tool(tool, **arguments)
        except Exception as exc:  # the upstream tool refused; the database is unchanged
            return decision("error", f"{type(exc).__name__}: {exc}")
        return decision("accepted", result=result_to_json(result))

    def _inadmissible(self, tool: str, arguments: Any) -> str | None:
        if not isinstance(arguments, dict):
            return f"arguments must be a JSON object, got {type(arguments).__name__}"
        params = self._schemas[tool].params
        unknown = sorted(set(arguments) - set(params.model_fields))
        if unknown:
            return f"unknown argument(s) for {tool}: {', '.join(unknown)}"
        try:
            params.model_validate(arguments, strict=True)
        except Exception as exc:
            errors = getattr(exc, "errors", lambda: [])()
            detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors) or str(exc)
            return f"bad arguments for {tool}: {detail}"
        return None

    def assertions_hold(self, assertions: list[dict]) -> list[bool]:
        """Upstream's environment assertions checked on the database as it stands (before
        `final_hash`): each function of the agent's toolkit called with its arguments, its
        boolean result compared with `assert_value` (true unless the assertion says otherwise).
        An assertion whose function raises (it names a record the episode never made) does not
        hold; upstream's evaluator lets the exception end its run instead (docs/episodes.md,
        deviations). An assertion on another toolkit than the agent's is an error: no domain of
        ours has one."""
        if self._closed:
            raise RuntimeError("the gateway's episode has already ended")
        out = []
        for a in assertions:
            if a.get("env_type", "assistant") != "assistant":
                raise ValueError(f"environment assertion {a.get('func_name')}: only the agent's toolkit is supported")
            try:
                result = getattr(self._toolkit, a["func_name"])(**(a.get("arguments") or {}))
            except Exception:  # noqa: BLE001 - the assertion's function refused: it does not hold
                out.append(False)
                continue
            if not isinstance(result, bool):
                raise ValueError(f"environment assertion {a['func_name']} returned {type(result).__name__}, not a bool")
            out.append(result == a.get("assert_value", True))
        return out

    def final_hash(self) -> str:
        """The hash of the database at the end of the episode. Ends the gateway: a private
        database goes back to the world (restored to clean) for the next episode."""
        if self._closed:
            raise RuntimeError("the gateway's episode has already ended")
        self._closed = True
        if not self._private:
            return self._world.clean_hash()
        toolkit, self._toolkit = self._toolkit, None
        return self._world.finish(toolkit)
