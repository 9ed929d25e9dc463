"""Our scripted participants behind the upstream harness's own agent and user interfaces.

The native stage (incognita.access.native.native_run) runs the unmodified harness; for the
offline default it *registers* two classes in the harness's registry, nothing is patched:

- `incognita_scripted_agent` (a subclass of the harness's `LLMAgent`): our scripted
  evaluated agent, playing the direct arm's part: it holds the tools, calls them through
  the harness's environment and talks to the user;
- `incognita_scripted_user` (a subclass of the harness's `UserSimulator`): our scripted
  customer, answering from the task card through a disclosure gate of its own.

Both are thin adapters over plain classes, `NativeAgentLogic` and `NativeUserLogic`, which turn
the harness's new messages into our scripted backend's reply. The loopback twin of a native run
(incognita.access.native.native_twins) uses the same two classes, so a run whose calls go to an
endpoint answered by twins plays out as the offline run does.

The native results' reader (incognita.access.native.native_results) recognises the scripted
agent by its registered name.
"""

from __future__ import annotations

import copy
import functools
import json
import threading

from incognita.access.taxonomy import DIRECT
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall, Turn
from incognita.common.io import InputError, read_json, read_yaml

_LATEST = threading.local()  # each thread's latest scripted agent (ScriptedNativeAgent.latest)
AGENT_NAME = "incognita_scripted_agent"
USER_NAME = "incognita_scripted_user"
# What the scripted agent says once it would send FINAL in our harness; the scripted user
# answers it with the harness's stop token, which is how native episodes end.
CLOSING = "That is everything for your request. Thank you for contacting us."


class NativeAgentLogic:
    """Our scripted agent's side of a native run, free of the harness's types: the harness's new
    messages in (tool results, the user's text), the harness's next assistant message out. The
    registered agent class and the loopback twin (incognita.access.native.native_twins) both use it.

    `args` are the agent's `llm_args` (profile, profiles file, golden trajectory, seed, optionally
    vocabulary: default the domain's, the domain being the golden file's, incognita.access.paths.
    domain_of); `schemas` the OpenAI schemas of the harness's tools."""

    def __init__(self, args: dict, schemas: list[dict]):
        from incognita.access.domain import domain_files, get_domain
        from incognita.access.episodes.loop.agent_plan import plan_from_golden
        from incognita.access.episodes.loop.episode_loop import USER
        from incognita.access.episodes.scripted import make_backend
        from incognita.access.episodes.scripted.scripted_agent import tool_catalog
        from incognita.access.paths import domain_of

        domain = domain_of(args["golden"])
        profiles = profile_files(args["profiles"])
        if args["profile"] not in profiles:
            raise InputError(f"{args['profiles']}: no scripted agent profile {args['profile']!r}")
        self.seed = int(args["seed"])
        context = {
            "arm": DIRECT,
            "domain": get_domain(domain),
            "agent_executes": True,  # the native harness's agent holds the tools, as in the direct arm
            "holders_declared": True,
            "seed": self.seed,
            "recipients": [USER],
            "holders": {},
            "plan": plan_from_golden(read_json(args["golden"])),
            "profile": {"name": args["profile"], **copy.deepcopy(profiles[args["profile"]])},
            "tools": tool_catalog(schemas, get_domain(domain).write_tools()),
            "vocabulary": _vocabulary(str(args.get("vocabulary") or domain_files(domain).vocabulary)),
        }
        self.backend = make_backend(f"scripted:{args['profile']}", "agent", context)
        self.history: list[Turn] = []
        self.schemas = tuple(schemas)

    def reply(self, incoming: list[Turn], system: str) -> ModelResponse:
        """The next assistant message for the harness's new messages since our last one: `tool`
        turns (results, with their call's id) and `user` turns (what the user said). The answer
        is either one tool call or a text (CLOSING once our agent would end the episode)."""
        from incognita.access.episodes.loop.episode_loop import USER, parse_agent_output

        for turn in incoming:
            if turn.role == "tool":
                self.history.append(Turn("tool", _as_json_result(turn.content), tool_call_id=turn.tool_call_id))
            else:
                self.history.append(Turn("user", f"From {USER}: {turn.content}"))
        resp = self.backend.respond(
            ModelRequest(role="agent", system=system, messages=tuple(self.history), tools=self.schemas, seed=self.seed)
        )
        self.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
        action = parse_agent_output(resp, [USER])
        if action.kind == "tool":
            call = action.call
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            return ModelResponse(tool_calls=(ToolCall(call.id, call.name, arguments),))
        if action.kind == "message" and action.message_type == "FINAL":
            return ModelResponse(text=CLOSING)
        # a message to the user, or output our protocol rejects: the harness sees the text
        return ModelResponse(text=action.text or resp.text or "")

    @property
    def ground_truth(self) -> dict:
        return dict(getattr(self.backend, "ground_truth", {}) or {})


class NativeUserLogic:
    """Our scripted customer's side of a native run, free of the harness's types: the agent's text
    in, the user's reply out. It answers the harness's greeting with the card's opening line,
    answers from the card through a disclosure gate, and answers CLOSING with the harness's stop
    token. The registered user class and the loopback twin both use it."""

    def __init__(self, card: dict):
        from tau2.user.base import STOP

        from incognita.access.episodes.loop.disclosure_gate import DisclosureGate
        from incognita.access.episodes.loop.episode_loop import USER
        from incognita.access.episodes.scripted import make_backend

        self.card, self.stop = card, STOP
        self.gate = DisclosureGate(card)
        self.backend = make_backend("scripted:customer", USER, {"card": card})
        self.history: list[Turn] = []

    def reply(self, agent_text: str) -> str:
        from incognita.access.episodes.loop.disclosure_gate import release_field_schema

        if not self.history:  # the harness's fixed greeting: answer with the card's opening line
            self.history.append(Turn("assistant", self.card["opening_line"]))
            return self.card["opening_line"]
        if agent_text == CLOSING:
            return self.stop
        self.history.append(Turn("user", agent_text))
        tools = (release_field_schema(self.gate.tokens),)
        with self.gate.reply_to_agent():
            return self._answer(tools)

    def _answer(self, tools) -> str:
        from incognita.access.episodes.loop.episode_loop import USER

        for _ in range(8):
            resp = self.backend.respond(ModelRequest(role=USER, system="", messages=tuple(self.history), tools=tools))
            self.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
            if not resp.tool_calls:
                return resp.text or ""
            for call in resp.tool_calls:
                event = self.gate.request(call.arguments.get("token", ""), 0)
                self.history.append(
                    Turn(
                        "tool",
                        json.dumps({"token": event.token, "status": event.status, "value": event.value}),
                        tool_call_id=call.id,
                    )
                )
        raise RuntimeError("scripted customer gave no reply within 8 steps")


def _scripted_classes():
    """Build the two registered classes (imports the harness, so only when a native run needs them):
    thin adapters between the harness's message types and the logic classes above."""
    from tau2.agent.llm_agent import LLMAgent, LLMAgentState
    from tau2.data_model.message import AssistantMessage, MultiToolMessage, ToolMessage, UserMessage
    from tau2.data_model.message import ToolCall as HarnessToolCall
    from tau2.user.base import UserState
    from tau2.user.user_simulator import UserSimulator

    class ScriptedNativeAgent(LLMAgent):
        """Our scripted agent behind the harness's agent interface. `llm_args` names its inputs
        (profile, golden trajectory, seed), so the harness's own run record says what it was given."""

        @staticmethod
        def latest():
            """This thread's latest instance, so the runner can read its run's ground truth (a job
            runs its cells on several threads, each cell's harness on one)."""
            return getattr(_LATEST, "agent", None)

        def __init__(self, tools, domain_policy, llm=None, llm_args=None):
            super().__init__(tools=tools, domain_policy=domain_policy, llm=llm, llm_args=llm_args)
            _LATEST.agent = self
            self.logic = NativeAgentLogic(self.llm_args, [tool_schema(t) for t in tools])

        def get_init_state(self, message_history=None):
            return LLMAgentState(system_messages=[], messages=list(message_history or []))

        def set_seed(self, seed: int) -> None:
            pass  # seeded from llm_args; the harness's own seed is recorded in the run

        def generate_next_message(self, message, state):
            incoming = message.tool_messages if isinstance(message, MultiToolMessage) else [message]
            state.messages.extend(incoming)
            turns = [
                Turn("tool", m.content, tool_call_id=m.id) if isinstance(m, ToolMessage) else Turn("user", m.content)
                for m in incoming
            ]
            resp = self.logic.reply(turns, self.system_prompt)
            if resp.tool_calls:
                calls = [HarnessToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in resp.tool_calls]
                out = AssistantMessage(role="assistant", tool_calls=calls)
            else:
                out = AssistantMessage(role="assistant", content=resp.text)
            state.messages.append(out)
            return out, state

        @property
        def ground_truth(self) -> dict:
            return self.logic.ground_truth

    class ScriptedNativeUser(UserSimulator):
        """Our scripted customer behind the harness's user interface. It answers from the task
        card named in `llm_args` through a disclosure gate and stops once the agent closes."""

        def __init__(self, tools=None, instructions=None, llm=None, llm_args=None):
            super().__init__(tools=tools, instructions=instructions, llm=llm, llm_args=llm_args)
            self.logic = NativeUserLogic(read_json(self.llm_args["card"]))

        def set_seed(self, seed: int) -> None:
            pass  # deterministic

        def get_init_state(self, message_history=None):
            return UserState(system_messages=[], messages=list(message_history or []))

        def generate_next_message(self, message, state):
            state.messages.append(message)
            out = UserMessage(role="user", content=self.logic.reply(message.content or ""))
            state.messages.append(out)
            return out, state

    return ScriptedNativeAgent, ScriptedNativeUser


@functools.cache
def _vocabulary(path: str) -> dict:
    from incognita.access.golden.provenance import load_vocabulary

    return load_vocabulary(path)


# Per-process caches of what every run's agent reads again: the profiles file, and each tool's
# OpenAI schema (the harness's `Tool.openai_schema` rebuilds a pydantic JSON schema on every
# access, about 1 ms a tool, 15 tools a run). Both are constant during a job.
def profile_files(path: str) -> dict:
    """The scripted agent profiles file, parsed once per process and file version (callers copy what they keep)."""
    from pathlib import Path

    stat = Path(path).stat()
    return _profiles(str(path), stat.st_mtime_ns, stat.st_size)


@functools.cache
def _profiles(path: str, _mtime_ns: int, _size: int) -> dict:
    return read_yaml(path) or {}


_SCHEMAS: dict[tuple, dict] = {}


def tool_schema(tool) -> dict:
    """`tool.openai_schema`, computed once per process for a tool of the same name, signature and
    docstring (the schema depends on nothing else); a fresh copy each time."""
    key = (tool.name, str(tool.__signature__), tool.__doc__, getattr(tool, "_use_short_desc", None))
    if key not in _SCHEMAS:
        _SCHEMAS[key] = tool.openai_schema
    return copy.deepcopy(_SCHEMAS[key])


def _as_json_result(content: str | None) -> str:
    """The harness returns a tool's plain-string result unquoted (a user id, say); our scripted
    agent reads results as JSON, as our own arms deliver them."""
    content = content or ""
    if content.startswith("Error:"):
        return content
    try:
        json.loads(content)
        return content
    except json.JSONDecodeError:
        return json.dumps(content)


def register_scripted() -> None:
    """Register the scripted classes in the harness's registry (once per process)."""
    from tau2.registry import registry

    if AGENT_NAME in registry.get_agents():
        return
    agent_cls, user_cls = _scripted_classes()
    registry.register_agent(agent_cls, AGENT_NAME)
    registry.register_user(user_cls, USER_NAME)
