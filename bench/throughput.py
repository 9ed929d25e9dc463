"""Whole workflows against a rate-limited endpoint with a provider's latency (issue #26).

One in-process loopback server (incognita.common.loopback) plays the provider: every answer
waits a log-normal latency (median 2 s, sigma 0.5 by default) and the server enforces requests
and tokens per minute with 429s, as OpenAI does. Behind it scripted twins answer (the access
family's incognita.access.episodes.loopback_twins, CollabSim's incognita.collabsim.loopback_twins,
picked by the `family` of each request's X-Incognita-Cell header; the access twins hand native
runs to incognita.access.native.native_twins), so every episode and run, native runs included,
completes as it does offline while the calls cost what a real model's cost in time. Each row
runs Snakemake on a fresh copy of the workflow (the task stages copied in, fresh response cache
and pacing directories, so nothing is served from an earlier row) with every model entry pointed
at the server: `openai:scripted-<profile>` with `send_cell` and `send_seed` (a twin must see
every call of its cell: the seed keeps two cells' identical requests apart in the cache) and
the row's rpm and tpm as the entries' limits.

Each served model gets its own server with the row's limits, as a provider limits each model
and as the client paces each (endpoint, model) apart (incognita.common.pacing). `--shared` puts
every model behind one server whose limits they share: the clients together then send up to
that many times the limit, which tests the 429 handling more than the pace.

Snakemake's local executor runs at most --cores + 5 jobs at once, whatever they claim, so by
default a row's --cores is its API jobs minus 5 (at least 2): every API job can run at once
(they claim no core; docs/models.md, "Across jobs"). `--sequential` runs a row as before issue
#26: at most 4 API jobs at once (the profile's former api_calls), each one call at a time
(INCOGNITA_WORKERS=1), --cores 2.

Rows: each design at each condition (a provider's limits and latency). `--limits` gives one
condition per requests-per-minute value at the given latency; `--sweep N --seed S` draws N
conditions over the range a user meets (bench/throughput_rows.py: requests per minute
log-uniform 30-5,000, tokens per request of the tpm limit log-uniform 500-8,000, latency median
0.5-5 s, sigma 0.3-1.2, 0-30 ms per output token), and ends with the distribution over rows
(worst, median) of the share of the binding limit and of wall / ideal; `--rows` runs some of
them (a sweep split over several invocations). `--time-scale F` runs a row F times faster
(latencies / F, the loopback's and the pace's windows 60 / F s, the same limits per window);
the machine's own time per call does not shrink, so a faster row is a harsher test.

Designs:
  smoke      config/smoke.yaml's tasks, models and arms, native included: the native job runs
             the upstream harness's own LLM agent and user simulator, whose calls name their run
             and are answered by the native twins (a repaired task also runs unrepaired, archived)
  access72   3 arms x 2 models x 4 corpus tasks (levels 2, 3, 4, 6) x 3 repetitions = 72 cells
  collabsim  Shape Factory with 10 traders, simultaneous turns, a probe after every action
             (a condition file written into the copy), both agent designs, one seed: 2 runs of
             30 steps (--cs-steps; the baseline's 90 make the row about 9 times the tokens)

Per row: wall time of `snakemake <targets> --cores C --resources api_calls=<every API job>`;
calls answered and 429s (the servers' stats); calls per minute from the first request to the
last answer, against the limit (per model: the busiest model's server); the ideal
wall time max(calls / rpm, tokens / tpm, chain) (calls and tokens of the busiest server), where
the chain is the latency of the longest run of calls that had to wait for each other in the
order the run imposed (bench/call_log.py: an episode's or native run's calls one after another;
a CollabSim run's simultaneous turns one wave, its probes a wave with each agent's probes one
after another, round-robin turns one after another), from the latencies the server drew (drawn
here again), so wall / ideal >= 1; which term binds; wall / ideal; the peak resident memory of
Snakemake and all its descendants (sampled every 0.2 s); the CPU the row used (cores: CPU
seconds of this process and Snakemake's tree / wall) and the machine's load average at its
start and end. Targets (issue #26): where rpm or tpm binds, the achieved rate is at least 85%
of it; where the chain binds, wall <= 1.25 x ideal; peak memory < 4 GiB. Each row also writes
the calls its servers answered to calls.jsonl in its copy (kept with --keep), which
bench/order_replay.py plays again under other orders of waiting calls.

Usage: python bench/throughput.py [--designs smoke,access72,collabsim] [--limits 60,600,3000]
         [--tpm-per-request 2000] [--median 2.0] [--sigma 0.5] [--per-output-token 0]
         [--sweep N --seed S [--rows I,J]] [--time-scale F]
         [--cores N] [--shared] [--sequential] [--keep DIR] [--stages DIR] [--quick]
Rows take minutes each; at 60 per minute the 72-cell design (about 4,000 calls) and the
CollabSim design (about 10 M tokens) take over an hour each. --quick runs one small row (one
access cell at 600/min with 0.1 s latency) for CI; --quick --sweep N runs that cell at N drawn
conditions, 60 times faster.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from incognita.access.taxonomy import NATIVE  # noqa: E402 -- after the checkout is on the path
from incognita.collabsim.paths import MANIFEST, Cell  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))  # its modules, when this file is loaded by path (tests)
from call_log import Dispatch, run_orders  # noqa: E402
from throughput_rows import (  # noqa: E402
    CHAIN_TARGET,
    HEADER,
    RATE_TARGET,
    Budget,
    Condition,
    Row,
    cpu_seconds,
    draw,
    shortest_replay,
    stop_group,
    summary,
    table_line,
    tree_rss,
)

SEQUENTIAL_JOBS = 4  # the workflow profile's api_calls before issue #26
KEY_ENV = "INCOGNITA_BENCH_KEY"
MAX_IN_FLIGHT = 256  # generous: the endpoint's limits, not the client's cap, should bind
STAGE_DIRS = ("data/source", "results/cards", "results/golden", "results/reference")
CS_TASK, CS_CONDITION, CS_LABEL = "shape_factory", "bench_simultaneous_10", "loopback"
CS_CONDITION_FILE = """extends: baseline
variable: group_size
description: 10 traders, 5 shapes, orders of 5, simultaneous turns, {steps} steps (bench/throughput.py)
set:
  agents.0.count: 10
  task_params.shapes: [circle, square, triangle, rectangle, diamond]
  task_params.order_size: 5
  protocol.turn_taking: simultaneous
  protocol.max_steps: {steps}
"""


# --------------------------------------------------------------------------- designs


@dataclass
class Design:
    name: str
    family: str  # access | collabsim
    arms: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)  # access: model names, each its scripted profile
    tasks: list[str] = field(default_factory=list)
    reps: int = 1
    cs_designs: list[str] = field(default_factory=list)

    @property
    def cells(self) -> int:
        if self.family == "access":
            return len(self.arms) * len(self.models) * len(self.tasks) * self.reps
        return len(self.cs_designs)

    @property
    def native(self) -> bool:
        return NATIVE in self.arms

    def api_jobs(self) -> int:
        """Jobs that call the endpoint: one `episodes` job per (model, task) and one `native` job per
        model (rules/episodes.smk, rules/native.smk), or one `collabsim_run` job per agent design."""
        if self.family != "access":
            return len(self.cs_designs)
        episodes = len(self.models) * len(self.tasks) if any(a != NATIVE for a in self.arms) else 0
        return episodes + (len(self.models) if self.native else 0)

    def native_results(self) -> list[str]:
        """The native results the workflow writes: one per native cell, plus the archived run of
        each repaired task when the config archives them (`native.archive_unrepaired`)."""
        from incognita.access.cells import repaired_tasks
        from incognita.access.domain import domain_files, qualify, split_task
        from incognita.access.paths import native_result
        from incognita.common.io import read_yaml

        if not self.native:
            return []
        archive = read_yaml(ROOT / "config/config.yaml")["native"]["archive_unrepaired"]
        domains = {split_task(t)[0] for t in self.tasks}
        repaired = {
            qualify(d, t) for d in domains for t in repaired_tasks(domain_files(d, ROOT / "config/domains").repairs)
        }
        repaired = repaired if archive else set()
        runs = [(m, t, r, False) for m in self.models for t in self.tasks for r in range(self.reps)]
        runs += [(m, t, r, True) for m, t, r, _ in runs if t in repaired]
        return [str(native_result(m, t, r, unrepaired=u)) for m, t, r, u in runs]


def designs(quick: bool) -> dict[str, Design]:
    from incognita.common.io import read_yaml

    if quick:
        return {"quick": Design("quick", "access", ["direct"], ["surveyor"], ["retail/59"], 1)}
    smoke = read_yaml(ROOT / "config/smoke.yaml")["design"]
    return {
        "smoke": Design("smoke", "access", smoke["arms"], smoke["models"], smoke["tasks"], 1),
        # 72 cells: tasks of corpus levels 2, 3, 4 and 6 (the social arm engages that many desks).
        "access72": Design(
            "access72",
            "access",
            ["direct", "indirect", "social"],
            ["surveyor", "prober"],
            ["retail/59", "retail/11", "retail/3", "retail/100"],
            3,
        ),
        "collabsim": Design("collabsim", "collabsim", cs_designs=["persona", "theory"]),
    }


def entry(profile: str, base_url: str, rpm: int, tpm: int) -> dict:
    return {
        "spec": f"openai:scripted-{profile}",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "send_cell": True,
        "send_seed": True,
        "rpm": rpm,
        "tpm": tpm,
        "max_in_flight": MAX_IN_FLIGHT,
        "temperature": 0,
    }


def profiles(d: Design) -> list[str]:
    """The scripted profiles the design's entries serve (`scripted-<profile>`)."""
    return [*d.models, "customer", "desk"] if d.family == "access" else ["default"]


def overlay(d: Design, url: dict[str, str], rpm: int, tpm: int) -> tuple[dict, list[str]]:
    """The row's config overlay and its Snakemake targets; `url` maps each profile to its endpoint."""
    from incognita.access.domain import split_task
    from incognita.access.paths import native_result

    if d.family == "access":
        cfg = {
            # The tasks' domains, in the order they come: a design domain without trials stops the stats.
            "domains": list(dict.fromkeys(split_task(t)[0] for t in d.tasks)),
            "design": {"arms": d.arms, "repetitions": d.reps, "tasks": d.tasks, "models": d.models},
            "side_checks": False,
            "models": {m: entry(m, url[m], rpm, tpm) for m in d.models},
            "participants": {
                "customer": entry("customer", url["customer"], rpm, tpm),
                "service": entry("desk", url["desk"], rpm, tpm),
                "judge": None,
            },
            # Not a target: the smallest CollabSim design keeps the workflow's parse short.
            "collabsim": {"tasks": {"daytrader": ["baseline"]}, "designs": ["persona"], "seeds": 1},
        }
        native = [str(native_result(m, t, r)) for m in d.models for t in d.tasks for r in range(d.reps)]
        return cfg, ["results/episodes/manifest.tsv", *(native if d.native else [])]
    cfg = {
        "collabsim": {
            "seeds": 1,
            "first_seed": 1,
            "tasks": {CS_TASK: [CS_CONDITION]},
            "models": {CS_LABEL: {"*": entry("default", url["default"], rpm, tpm)}},
            "designs": d.cs_designs,
        }
    }
    return cfg, [str(p) for p in cs_manifests(d)]


def cs_manifests(d: Design) -> list[Path]:
    """The manifest of each CollabSim run of the row (seed 1 of each design)."""
    return [Cell(CS_TASK, CS_CONDITION, CS_LABEL, x).run(1).dir() / MANIFEST for x in d.cs_designs]


# --------------------------------------------------------------------------- the workflow copy


def locks_checks() -> list[str]:
    """The lock check of each domain of the default design (config/config.yaml), whose task
    stages every row's copy needs: a row's overlay sets no `domains`."""
    from incognita.access.paths import locks_verified
    from incognita.common.io import read_yaml

    return [str(locks_verified(d)) for d in read_yaml(ROOT / "config/config.yaml")["domains"]]


def task_stages(scratch: Path, given: str | None) -> Path:
    """A directory holding the built task stages: --stages, else the checkout's own, else one build."""
    for root in [Path(given)] if given else [ROOT]:
        if all((root / p).exists() for p in (*STAGE_DIRS, *locks_checks())):
            return root
        if given:
            raise SystemExit(f"--stages {given}: not built (needs {', '.join(STAGE_DIRS)} and the lock check)")
    from workflow_helpers import build_task_stages

    print("building the task stages (source, cards, golden, reference) once ...", flush=True)
    return build_task_stages(scratch / "stages")


def workflow_copy(dest: Path, stages: Path, d: Design, cs_steps: int = 0) -> Path:
    from workflow_helpers import copy_workflow

    shutil.rmtree(dest, ignore_errors=True)  # a kept copy of an earlier run: every row starts clean
    copy_workflow(dest)
    if d.family == "access":
        # Stage by stage, each newer than what it was built from and all newer than the copied config, so
        # Snakemake takes them as built whatever their times were in the source tree.
        now = time.time()
        for i, rel in enumerate(STAGE_DIRS):
            shutil.copytree(stages / rel, dest / rel, dirs_exist_ok=True)
            for path in (dest / rel).rglob("*"):
                os.utime(path, (now + i, now + i))
        for checked in locks_checks():
            os.utime(dest / checked, (now + len(STAGE_DIRS),) * 2)
    else:
        (dest / "config/collabsim" / CS_TASK / f"{CS_CONDITION}.yaml").write_text(
            CS_CONDITION_FILE.format(steps=cs_steps)
        )
    return dest


# --------------------------------------------------------------------------- one row


def run_row(d: Design, c: Condition, args, stages: Path, scratch: Path, harness_box: dict) -> Row:
    from workflow_helpers import planned_jobs

    from incognita.common.fan_out import JOB_WORKERS, WORKERS_ENV
    from incognita.common.loopback import Latency, LoopbackServer, RateLimits
    from incognita.common.pacing import WINDOW_ENV

    scale = args.time_scale
    row = Row(d.name, d.cells, c, window=60.0 / scale, scale=scale)
    wf = workflow_copy(scratch / f"{d.name}-{c.label or c.rpm}", stages, d, args.cs_steps)
    if d.family == "access":
        from incognita.access.episodes.loopback_twins import AccessTwins
        from incognita.access.native.native_twins import NativeTwins

        # The harnesses (database, partition, prompts of each domain) are the same for every row; the
        # twins are per row.
        if "harnesses" not in harness_box:
            harness_box["harnesses"] = AccessTwins.from_workflow(wf).harnesses
        harnesses = harness_box["harnesses"]
        cards, golden = wf / "results/cards", wf / "results/golden"
        settings = next(iter(harnesses.values())).design
        vocabulary = {name: h.inputs.vocabulary for name, h in harnesses.items()}
        native = NativeTwins(settings.scripted_agents, settings.seed, cards, golden, vocabulary)
        twins = AccessTwins(harnesses, cards, golden, native)
    else:
        from incognita.collabsim.loopback_twins import CollabSimTwins

        twins = CollabSimTwins(wf / "config/collabsim")
    latency = Latency(median=c.median / scale, sigma=c.sigma, per_output_token=c.per_output_token / scale)
    workers = 1 if args.sequential else int(os.environ.get(WORKERS_ENV) or JOB_WORKERS)
    orders = run_orders(wf / "config/collabsim", workers)
    responder = Dispatch({d.family: twins}, latency, seed=c.seed, orders=orders)
    limits = RateLimits(rpm=c.rpm, tpm=c.tpm, window=row.window)
    # One server per served model, or with --shared one for the whole endpoint: a provider limits
    # each model apart, as the client's pacing does (incognita.common.pacing keys on endpoint and model).
    groups = [profiles(d)] if args.shared else [[p] for p in profiles(d)]
    servers = [
        LoopbackServer(responder, latency=latency, limits=limits, seed=c.seed, with_headers=True) for _ in groups
    ]
    with contextlib.ExitStack() as stack:
        for server in servers:
            stack.enter_context(server)
        url = {p: server.base_url for group, server in zip(groups, servers) for p in group}
        cfg, targets = overlay(d, url, c.rpm, c.tpm)
        (wf / "config/bench.yaml").write_text(json.dumps(cfg, indent=1))  # JSON is YAML
        env = {
            **os.environ,
            KEY_ENV: "local",
            "INCOGNITA_CACHE_DIR": str(wf / "bench-cache"),
            "INCOGNITA_PACING_DIR": str(wf / "bench-pacing"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        if args.sequential:
            env[WORKERS_ENV] = "1"
        if scale != 1:
            env[WINDOW_ENV] = repr(row.window)
        cmd = [sys.executable, "-m", "snakemake", *targets, "--configfile", "config/bench.yaml"]
        cmd += ["--cores", str(row_cores(d, args)), "--resources", f"api_calls={api_slots(d, args)}"]
        log = wf / "bench-snakemake.log"
        peak, done = [0], threading.Event()
        used = cpu_seconds()
        row.load = (os.getloadavg()[0], 0.0)
        start, started = time.perf_counter(), time.time()
        with log.open("w") as out:
            # Its own process group, ended with the row however the bench ends (a stopped sweep leaves
            # no Snakemake or job behind to load the machine).
            proc = subprocess.Popen(cmd, cwd=wf, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            stack.callback(stop_group, proc)

            def sample() -> None:
                while not done.wait(0.2):
                    peak[0] = max(peak[0], tree_rss(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            code = proc.wait()
            row.wall = time.perf_counter() - start
            row.cpu, row.load = cpu_seconds() - used, (row.load[0], os.getloadavg()[0])
            done.set()
            sampler.join()
    row.peak_rss = peak[0]
    firsts = [s.first_request for s in (server.stats() for server in servers) if s.first_request is not None]
    row.lead = max(0.0, min(firsts, default=started) - started)
    for server in servers:
        stats = server.stats()
        span = (stats.last_answer or 0.0) - (stats.first_request or 0.0)
        row.budgets.append(Budget(stats.answered, stats.tokens_admitted, span))
        row.rejected += stats.rejected_total
    row.chain, row.chain_seconds = responder.chain()
    # Every answered call, for bench/order_replay.py (kept with the row's copy under --keep).
    (wf / "calls.jsonl").write_text("".join(json.dumps(call) + "\n" for call in responder.calls))
    if row.binds in ("rpm", "tpm") and responder.calls:
        row.replayed = shortest_replay(wf / "calls.jsonl", row)
    text = log.read_text(errors="replace")
    if code != 0:
        row.errors.append(f"snakemake exited {code} (log: {log})")
        print("\n".join(text.splitlines()[-30:]), file=sys.stderr)
    row.errors += check_outputs(wf, d)
    try:
        jobs = planned_jobs(subprocess.CompletedProcess(cmd, code, "", text))
    except StopIteration:
        jobs = {}
    expected = {"episodes", "episodes_done", "native"} if d.family == "access" else {"collabsim_run"}
    if set(jobs) - expected:
        row.errors.append(f"unexpected jobs {sorted(set(jobs) - expected)} (the task stages were rebuilt?)")
    return row


def check_outputs(wf: Path, d: Design) -> list[str]:
    """Every cell ended: no error record, no missing run (the twins' tests check they end as offline)."""
    from incognita.access.paths import episode_records

    if d.family == "access":
        records = episode_records(wf / "results/episodes")
        broken = [p for p in records if json.loads(p.read_text()).get("error")]
        problems = [f"{len(broken)} error record(s), e.g. {broken[0]}"] if broken else []
        episode_cells = d.cells - (len(d.models) * len(d.tasks) * d.reps if d.native else 0)
        if len(records) != episode_cells:
            problems.append(f"{len(records)} records for {episode_cells} episode cells")
        native = [wf / p for p in d.native_results()]
        missing = [p for p in native if not p.exists()]
        failed = [p for p in native if p.exists() and native_error(p)]
        if missing:
            problems.append(f"{len(missing)} of {len(native)} native results missing, e.g. {missing[0]}")
        if failed:
            problems.append(f"{len(failed)} native run(s) broke, e.g. {failed[0]}: {native_error(failed[0])}")
        return problems
    found = [p for p in cs_manifests(d) if (wf / p).exists()]
    return [] if len(found) == d.cells else [f"{len(found)} of {d.cells} runs finished"]


def native_error(path: Path) -> str | None:
    """The reason a native run broke (our facts in the harness's result), or None."""
    sim = json.loads(path.read_text())["simulations"][0]
    return sim["reward_info"]["info"]["incognita"]["error"]


# --------------------------------------------------------------------------- the table


def row_cores(d: Design, args) -> int:
    """Snakemake runs at most --cores + 5 jobs at once (its local executor's pool), so every API job
    of the row can run at once from its API jobs - 5 on."""
    if args.sequential:
        return 2
    return args.cores or max(2, d.api_jobs() - 5)


def api_slots(d: Design, args) -> int:
    return SEQUENTIAL_JOBS if args.sequential else max(1, d.api_jobs())


def conditions(args, ap) -> list[Condition]:
    """The rows' conditions: drawn (--sweep), else one per --limits value at the given latency."""
    if args.sweep:
        drawn = draw(args.sweep, args.seed)
        if args.rows:
            try:
                picked = [int(x) for x in args.rows.split(",") if x]
            except ValueError:
                ap.error(f"--rows: expected comma-separated row numbers, got {args.rows!r}")
            bad = [i for i in picked if not 0 <= i < len(drawn)]
            if bad:
                ap.error(f"--rows: {bad} not among the sweep's rows 0-{len(drawn) - 1}")
            drawn = [drawn[i] for i in picked]
        return drawn
    if args.quick:
        return [Condition(600, args.tpm_per_request, 0.1, args.sigma, args.per_output_token)]
    return [
        Condition(int(x), args.tpm_per_request, args.median, args.sigma, args.per_output_token)
        for x in args.limits.split(",")
        if x
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", default="smoke,access72,collabsim", help="comma-separated: smoke, access72, collabsim")
    ap.add_argument("--limits", default="60,600,3000", help="requests per minute, one row per value")
    ap.add_argument("--tpm-per-request", type=int, default=2000, help="tokens per minute = rpm x this")
    ap.add_argument("--median", type=float, default=2.0, help="median latency of an answer, seconds")
    ap.add_argument("--sigma", type=float, default=0.5, help="log-normal sigma of the latency")
    ap.add_argument("--per-output-token", type=float, default=0.0, help="extra seconds per completion token")
    ap.add_argument(
        "--sweep",
        type=int,
        default=0,
        help="draw this many conditions over the range a user meets (bench/throughput_rows.py) instead of --limits",
    )
    ap.add_argument("--seed", type=int, default=0, help="the sweep's seed (the same seed draws the same rows)")
    ap.add_argument(
        "--rows", default="", help="with --sweep: run only these of the drawn rows (comma-separated, from 0)"
    )
    ap.add_argument(
        "--time-scale",
        type=float,
        default=0.0,
        help="run each row this many times faster: latencies / F, windows 60 / F s, same limits per window "
        "(default 1; 60 with --quick --sweep)",
    )
    ap.add_argument(
        "--cores", type=int, default=0, help="Snakemake's --cores (0: the row's API jobs - 5, at least 2; see above)"
    )
    ap.add_argument(
        "--sequential",
        action="store_true",
        help="as before issue #26: 4 API jobs at once, each one call at a time (--cores 2)",
    )
    ap.add_argument(
        "--cs-steps",
        type=int,
        default=30,
        help="steps of a CollabSim run (the baseline has 90; every call resends the agent's history, so a run's "
        "tokens grow with the square of its steps)",
    )
    ap.add_argument(
        "--shared",
        action="store_true",
        help="one server for every served model, its limits shared (default: one per model, as providers limit)",
    )
    ap.add_argument("--keep", default=None, help="keep the workflow copies (and their logs) under this directory")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="one access cell at 600/min, 0.1 s latency (what CI runs); with --sweep, that cell at each drawn row",
    )
    ap.add_argument(
        "--stages", default=None, help="a directory holding built task stages (default: the checkout's, else one build)"
    )
    args = ap.parse_args()
    # A SIGTERM ends the bench as Ctrl-C does: through the rows' cleanup (stop_group).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.sweep < 0 or args.time_scale < 0:
        ap.error("--sweep and --time-scale must not be negative")
    args.time_scale = args.time_scale or (60.0 if args.quick and args.sweep else 1.0)
    all_designs = designs(args.quick)
    if args.quick:
        chosen = ["quick"]
    else:
        chosen = [n for n in args.designs.split(",") if n]
        unknown = [n for n in chosen if n not in all_designs]
        if unknown:
            ap.error(f"unknown design(s) {unknown}; known: {', '.join(all_designs)}")
    rows_of = conditions(args, ap)

    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="throughput-"))
    scratch.mkdir(parents=True, exist_ok=True)
    rows, harness_box = [], {}
    try:
        stages = task_stages(scratch, args.stages) if any(all_designs[n].family == "access" for n in chosen) else ROOT
        # Condition by condition, every design at each: a sweep stopped early has whole conditions.
        for c in rows_of:
            for name in chosen:
                d = all_designs[name]
                tag = f"[{name} {c.label + ' ' if c.label else ''}rpm={c.rpm} tpm={c.tpm}]"
                print(
                    f"{tag} started: {d.cells} cell(s), latency median {c.median} s, sigma {c.sigma}, "
                    f"{c.per_output_token * 1000:.1f} ms per output token, time scale {args.time_scale:g}",
                    flush=True,
                )
                row = run_row(d, c, args, stages, scratch, harness_box)
                rows.append(row)
                # All three terms: when two are close, the wall time exceeds the larger one.
                terms = ", ".join(f"{k} {v:.1f} s" for k, v in row.ideal_terms.items())
                print(
                    f"{tag} finished in {row.wall:.1f} s: {row.calls} calls, {row.rejected} 429s, "
                    f"ideal terms {terms}; {row.verdict()}\n{tag} {table_line(row)}",
                    flush=True,
                )
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    drawn = f"{args.sweep} rows drawn with seed {args.seed}" if args.sweep else "rows at --limits"
    print(
        f"{drawn}; latency log-normal (median, sigma) + time per output token; time scale {args.time_scale:g} "
        f"(windows {60 / args.time_scale:g} s; times below in those seconds); "
        + ", ".join(
            f"{n}: --cores {row_cores(all_designs[n], args)} api_calls={api_slots(all_designs[n], args)}"
            for n in chosen
        )
        + ("; one call at a time per job (--sequential)" if args.sequential else "")
        + "; limits "
        + ("shared by every served model" if args.shared else "per served model (calls/min: the busiest model's)")
    )
    print(HEADER)
    for r in rows:
        print(table_line(r))
    print(
        f"targets: where rpm/tpm binds, >= {RATE_TARGET:.0%} of it; where the chain binds, wall <= "
        f"{CHAIN_TARGET} x ideal; peak memory < 4 GiB. ideal = max(calls/rpm, tokens/tpm, the chain's latency); "
        "chain: its waves (bench/call_log.py); cores: the row's CPU seconds / wall; load: the machine's 1-minute "
        "load average at the row's start and end"
    )
    if args.sweep:
        for line in summary(rows):
            print(line)
    if any(r.errors for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
