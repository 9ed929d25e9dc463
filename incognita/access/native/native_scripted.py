"""Our scripted participants behind the upstream harness's own agent and user interfaces.

The native stage (incognita.access.native.native_run) runs the unmodified harness; for the
offline default it *registers* two classes in the harness's registry, nothing is patched:

- `incognita_scripted_agent` (a subclass of the harness's `LLMAgent`): our scripted
  evaluated agent, playing the direct arm's part: it holds the tools, calls them through
  the harness's environment and talks to the user;
- `incognita_scripted_user` (a subclass of the harness's `UserSimulator`): our scripted
  customer, answering from the task card through a disclosure gate of its own.

The native results' reader (incognita.access.native.native_results) recognises the scripted
agent by its registered name.
"""

from __future__ import annotations

import copy
import functools
import json
import threading

from incognita.common.backends.base import ModelRequest, Turn
from incognita.common.io import InputError, read_json, read_yaml

_LATEST = threading.local()  # each thread's latest scripted agent (ScriptedNativeAgent.latest)
AGENT_NAME = "incognita_scripted_agent"
USER_NAME = "incognita_scripted_user"
# What the scripted agent says once it would send FINAL in our harness; the scripted user
# answers it with the harness's stop token, which is how native episodes end.
CLOSING = "That is everything for your request. Thank you for contacting us."


def _scripted_classes():
    """Build the two scripted classes (imports the harness, so only when a native run needs them)."""
    from tau2.agent.llm_agent import LLMAgent, LLMAgentState
    from tau2.data_model.message import (
        AssistantMessage,
        MultiToolMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from tau2.domains.retail.tools import RetailTools
    from tau2.user.base import STOP, UserState
    from tau2.user.user_simulator import UserSimulator

    from incognita.access.episodes.agent_plan import plan_from_golden
    from incognita.access.episodes.disclosure_gate import DisclosureGate, release_field_schema
    from incognita.access.episodes.episode_loop import USER, parse_agent_output
    from incognita.access.episodes.scripted import make_backend
    from incognita.access.episodes.scripted.scripted_agent import tool_catalog
    from incognita.access.golden.provenance import load_vocabulary

    # What every run's agent is told about the tools and the policy, built once per process.
    probe = RetailTools(None)  # tool metadata needs no database
    writes = {name for name in probe.tools if probe.tool_type(name).value == "write"}
    vocabularies = functools.cache(load_vocabulary)

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
            args = self.llm_args
            profiles = profile_files(args["profiles"])
            if args["profile"] not in profiles:
                raise InputError(f"{args['profiles']}: no scripted agent profile {args['profile']!r}")
            self.seed = int(args["seed"])
            schemas = [tool_schema(t) for t in tools]
            context = {
                "arm": "direct",
                "agent_executes": True,  # the native harness's agent holds the tools, as in the direct arm
                "holders_declared": True,
                "seed": self.seed,
                "recipients": [USER],
                "holders": {},
                "plan": plan_from_golden(read_json(args["golden"])),
                "profile": {"name": args["profile"], **copy.deepcopy(profiles[args["profile"]])},
                "tools": tool_catalog(schemas, writes),
                "vocabulary": vocabularies(args.get("vocabulary", "config/vocabulary.yaml")),
            }
            self.backend = make_backend(f"scripted:{args['profile']}", "agent", context)
            self.history: list[Turn] = []
            self.schemas = tuple(schemas)

        def get_init_state(self, message_history=None):
            return LLMAgentState(system_messages=[], messages=list(message_history or []))

        def set_seed(self, seed: int) -> None:
            pass  # seeded from llm_args; the harness's own seed is recorded in the run

        def generate_next_message(self, message, state):
            incoming = message.tool_messages if isinstance(message, MultiToolMessage) else [message]
            state.messages.extend(incoming)
            for m in incoming:
                if isinstance(m, ToolMessage):
                    self.history.append(Turn("tool", _as_json_result(m.content), tool_call_id=m.id))
                else:
                    self.history.append(Turn("user", f"From {USER}: {m.content}"))
            resp = self.backend.respond(
                ModelRequest(
                    role="agent",
                    system=self.system_prompt,
                    messages=tuple(self.history),
                    tools=self.schemas,
                    seed=self.seed,
                )
            )
            self.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
            action = parse_agent_output(resp, [USER])
            if action.kind == "tool":
                call = action.call
                out = AssistantMessage(
                    role="assistant",
                    tool_calls=[
                        ToolCall(
                            id=call.id,
                            name=call.name,
                            arguments=call.arguments if isinstance(call.arguments, dict) else {},
                        )
                    ],
                )
            elif action.kind == "message" and action.message_type == "FINAL":
                out = AssistantMessage(role="assistant", content=CLOSING)
            else:  # a message to the user, or output our protocol rejects: the harness sees the text
                out = AssistantMessage(role="assistant", content=action.text or resp.text or "")
            state.messages.append(out)
            return out, state

        @property
        def ground_truth(self) -> dict:
            return dict(getattr(self.backend, "ground_truth", {}) or {})

    class ScriptedNativeUser(UserSimulator):
        """Our scripted customer behind the harness's user interface. It answers from the task
        card named in `llm_args` through a disclosure gate and stops once the agent closes."""

        def __init__(self, tools=None, instructions=None, llm=None, llm_args=None):
            super().__init__(tools=tools, instructions=instructions, llm=llm, llm_args=llm_args)
            self.card = read_json(self.llm_args["card"])
            self.gate = DisclosureGate(self.card)
            self.backend = make_backend("scripted:customer", USER, {"card": self.card})
            self.history: list[Turn] = []

        def set_seed(self, seed: int) -> None:
            pass  # deterministic

        def get_init_state(self, message_history=None):
            return UserState(system_messages=[], messages=list(message_history or []))

        def generate_next_message(self, message, state):
            state.messages.append(message)
            text = self._reply(message.content or "")
            out = UserMessage(role="user", content=text)
            state.messages.append(out)
            return out, state

        def _reply(self, agent_text: str) -> str:
            if not self.history:  # the harness's fixed greeting: answer with the card's opening line
                self.history.append(Turn("assistant", self.card["opening_line"]))
                return self.card["opening_line"]
            if agent_text == CLOSING:
                return STOP
            self.history.append(Turn("user", agent_text))
            tools = (release_field_schema(self.gate.tokens),)
            with self.gate.reply_to_agent():
                return self._answer(tools)

        def _answer(self, tools) -> str:
            for _ in range(8):
                resp = self.backend.respond(
                    ModelRequest(role=USER, system="", messages=tuple(self.history), tools=tools)
                )
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

    return ScriptedNativeAgent, ScriptedNativeUser


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
