"""The harness's own cost per model call, excluding the model's latency.

A loopback OpenAI-compatible server (incognita.common.loopback) answers instantly with a fixed
reply, so what remains is transport plus client-side work. For the same realistic request
(the direct-arm agent prompt, its 15 tool schemas, a conversation of N turns) it times:

  typed    the plain openai client as usually called: `client.chat.completions.create(...)`,
           which runs every message through the client's typed transform and parses the result
  raw      the same client's generic `client.post("/chat/completions", ...)` with the body as
           built, returning the HTTP response: the transport floor our backend sits on
  miss     our backend on a cache miss: request building, cache key, the same client call,
           response mapping, cost, and the atomic cache write
  nocache  our backend with the cache switched off
  hit      our backend answering the same request from the cache (no network)

and prints microseconds per call (median of the repeats) with the ratios against raw.
The server's own handling time is in every network path alike.

Usage: python bench/model_overhead.py [--calls 300] [--turns 20] [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPLY = '{"recipient": "USER", "message": "Could you tell me your order id?", "message_type": "MESSAGE"}'


def build_request(turns: int, tools: list[dict], system: str):
    from incognita.common.backends.base import ModelRequest, ToolCall, Turn

    messages = [Turn("user", "From USER: Hi, I want to change the address of my pending order.")]
    for i in range(turns):
        call = ToolCall(f"t{i}", "get_order_details", {"order_id": f"#W{1000000 + i}"})
        messages += [
            Turn("assistant", None, tool_calls=(call,)),
            Turn("tool", f'{{"order_id": "#W{1000000 + i}", "status": "pending", "items": []}}', tool_call_id=call.id),
        ]
    return ModelRequest(role="agent", system=system, messages=tuple(messages), tools=tuple(tools), seed=1)


def variant(request, i: int):
    """The same request with a distinct last user line, so every miss is a real miss."""
    from dataclasses import replace

    from incognita.common.backends.base import Turn

    return replace(request, messages=(*request.messages, Turn("user", f"From USER: question {i}")))


def per_call_us(fn, items: list, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        for item in items:
            fn(item)
        runs.append((time.perf_counter() - t) / len(items) * 1e6)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--turns", type=int, default=20, help="tool-call/result pairs in the conversation")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="20 calls, 1 repeat: seconds (what CI runs)")
    args = ap.parse_args()
    if args.quick:
        args.calls, args.repeats = 20, 1

    import httpx
    import openai

    from incognita.access.arm_registry import arm_registry
    from incognita.access.cards.source import upstream_dir
    from incognita.access.domain import get_domain
    from incognita.access.episodes.loop.prompts import PromptSet
    from incognita.access.golden.upstream_replay import World
    from incognita.access.reference.partition import load_partition
    from incognita.common.backends import openai as ob
    from incognita.common.backends.transport import Transport
    from incognita.common.cache import ResponseCache
    from incognita.common.loopback import LoopbackServer
    from incognita.common.prices import load_prices

    # Only the tool schemas are needed: the source stage's copy, or the pinned package's own file.
    db = ROOT / "data/source/retail/db.json"
    world = World(get_domain("retail"), db if db.exists() else upstream_dir("retail") / "db.json")
    tools = [s.openai_schema for _, s in sorted(world.tool_schemas().items())]
    retail = ROOT / "config/domains/retail"
    prompts = PromptSet(ROOT / "config/prompts", retail / "prompts", load_partition(retail / "partition.yaml"))
    direct = arm_registry(ROOT / "config/arms.yaml").arm("direct")
    base = build_request(args.turns, tools, prompts.agent(direct, ["USER"]))
    requests = [variant(base, i) for i in range(args.calls)]
    settings = ob.Settings.from_dict("bench-model", {"temperature": 0}, "bench")
    bodies = [ob.request_body(settings, r) for r in requests]

    with LoopbackServer(lambda model, body: REPLY) as server, tempfile.TemporaryDirectory() as tmp:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-key")
        client = openai.OpenAI(base_url=server.base_url, api_key="bench-not-a-key", max_retries=0)
        prices = load_prices(ROOT / "config/prices.yaml")
        cached = Transport(ob.PROTOCOL, settings, "agent", ResponseCache(Path(tmp) / "c"), prices)
        uncached = Transport(ob.PROTOCOL, settings, "agent", None, prices)
        for r in requests[:20]:  # warm up connections and imports
            uncached.respond(r)

        typed = per_call_us(
            lambda b: client.chat.completions.create(
                model=b["model"], messages=b["messages"], tools=b["tools"], temperature=0
            ),
            bodies,
            args.repeats,
        )
        raw = per_call_us(
            lambda b: client.post("/chat/completions", cast_to=httpx.Response, body=b).json(), bodies, args.repeats
        )
        nocache = per_call_us(uncached.respond, requests, args.repeats)
        miss_runs = []
        for k in range(args.repeats):  # a fresh cache each repeat keeps every call a miss
            backend = Transport(ob.PROTOCOL, settings, "agent", ResponseCache(Path(tmp) / f"m{k}"), prices)
            miss_runs.append(per_call_us(backend.respond, requests, 1))
        miss = statistics.median(miss_runs)
        for r in requests:
            cached.respond(r)
        hit = per_call_us(cached.respond, requests, args.repeats)
        served = server.requests

    size = len(ob.json.dumps(bodies[0]))
    print(
        f"request: {size / 1024:.1f} KiB ({len(base.messages) + 1} messages, {len(tools)} tools); "
        f"{args.calls} calls x {args.repeats} repeats; server answered {served} requests"
    )
    print(f"{'path':<9}{'us/call':>10}{'vs raw':>9}")
    for name, value in (("typed", typed), ("raw", raw), ("nocache", nocache), ("miss", miss), ("hit", hit)):
        print(f"{name:<9}{value:>10.0f}{value / raw:>9.2f}")
    print(
        f"harness overhead over the raw client call: {miss - raw:+.0f} us on a miss (cache write included), "
        f"{nocache - raw:+.0f} us without the cache; a hit costs {hit:.0f} us, {hit / raw:.2f} of a raw call"
    )


if __name__ == "__main__":
    main()
