"""Issue #17, part 2: the pipeline under faults (items 4-12). None may lose or corrupt a
finished result, and none may pay for a model call twice.

"Paid" means answered by the model endpoint: here tests/stub_openai.py, a deterministic
OpenAI-compatible server in its own process that logs every answer with the sha256 of the
request body. Both paying roles sample (temperature 1) with the seed sent, so every request
of a design is different; a body answered twice is a call paid twice. The workflow tests run
`bin/run` on a copy of the workflow whose stages before the episodes are built once
(fault_helpers.build_base), on a design of one model x two tasks x three arms (6 cells, 2
episode jobs, 5 calls a cell). Every test that uses a key uses fault_helpers.FAKE_KEY, and the
last test greps everything the workflows wrote for it. The module prints the outcome table
(fault, runs tried, results lost, calls paid twice, recovered with one command) at the end;
bench/faults.py repeats the file and sums it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from fault_helpers import (
    ARMS,
    CALLS_PER_CELL,
    FAKE_KEY,
    TARGETS,
    StubServer,
    bin_run,
    build_base,
    clone,
    format_table,
    incognita,
    key_leaks,
    processes,
    record_outcome,
    records,
    snapshot,
    start_bin_run,
    temp_files,
    wait_for,
    write_design,
    written_by_workflow,
)
from workflow_helpers import default_domains, design_domains, planned_jobs, stable_episode

from incognita.cli import main as cli
from incognita.common.backends.base import ModelRequest, Runtime, Turn
from incognita.common.cache import ResponseCache, request_key
from incognita.common.commands import cache_group

if sys.platform != "linux":
    pytest.skip("the fault tests kill processes through /proc and mount a tmpfs (Linux only)", allow_module_level=True)

CELLS = 6
ROWS: list[dict] = []  # the outcome table, one row per fault
WRITTEN: list[Path] = []  # everything the workflows and backends wrote, for the key check


@pytest.fixture(scope="module", autouse=True)
def outcome_table(request):
    yield
    if ROWS:  # printed past pytest's capture, so it shows on a passing run too
        with request.config.pluginmanager.get_plugin("capturemanager").global_and_fixture_disabled():
            print("\n\nFaults (issue #17, items 4-12):\n" + format_table(ROWS), flush=True)


@pytest.fixture(scope="module")
def base(tmp_path_factory, task_stages) -> Path:
    return build_base(tmp_path_factory.mktemp("faults") / "base", task_stages)


@pytest.fixture(scope="module")
def finished(base, tmp_path_factory) -> Path:
    """The fault design built to the trials table, with its report, by one bin/run."""
    tmp = tmp_path_factory.mktemp("finished")
    wf = clone(base, tmp / "wf")
    stub = StubServer(tmp)
    try:
        write_design(wf, stub.base_url)
        bin_run(wf)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "--report",
                "report.html",
                "results/episodes/manifest.tsv",
                "results/trials.parquet",
                "--configfile",
                "config/faults.yaml",
            ],
            cwd=wf,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        stub.stop()
    assert stub.answered() == CELLS * CALLS_PER_CELL and stub.paid_twice() == 0
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))
    return wf


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def usage_total(record: dict, field: str) -> int:
    return sum(u[field] for u in record["usage"].values())


def trials(wf: Path) -> pd.DataFrame:
    return pd.read_parquet(wf / "results" / "trials.parquet")


def assert_no_key(wf: Path) -> None:
    """Nothing the run wrote holds the key, and nothing tried to leave the machine."""
    scanned, hits = key_leaks(*written_by_workflow(wf))
    assert scanned > 0 and hits == [], hits
    net_log = wf.parent / f"{wf.name}.net.log"  # tests/netguard records any non-loopback connection
    assert not net_log.exists(), net_log.read_text()


# --------------------------------------------------------------------------- item 4


def test_kill_9_of_the_workflow_then_one_bin_run_finishes(base, tmp_path):
    """kill -9 of the whole workflow (its process group) in the middle of the episodes stage:
    the first job has finished, the second has written one cell and paid two calls of the next.
    A plain `bin/run` then removes Snakemake's stale lock itself and finishes the design; the
    finished job is not re-run, and the interrupted job gets its paid calls from the cache."""
    wf = clone(base, tmp_path / "wf")
    paid_at_kill = 3 * CALLS_PER_CELL + CALLS_PER_CELL + 2
    stub = StubServer(tmp_path, hold_after=paid_at_kill)
    try:
        write_design(wf, stub.base_url)
        run = start_bin_run(wf, tmp_path / "killed.log", cores=1)  # one job at a time: a known point
        try:
            wait_for(lambda: stub.events("held"), 180, "the request after the kill point")
        finally:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(30)
        stub.release_held()  # the request in flight when its client died is dropped, never answered
        assert stub.answered() == paid_at_kill
        before = snapshot(records(wf))
        by_task = {t: sorted(k for k in before if f"/stub/{t}/" in k) for t in ("retail/11", "retail/46")}
        done = next(t for t, keys in by_task.items() if len(keys) == 3)
        cut = next(t for t, keys in by_task.items() if len(keys) == 1)
        # The killed run's lock names the files Snakemake refuses to touch until it is removed.
        locked = "".join(p.read_text() for p in (wf / ".snakemake" / "locks").glob("*.lock"))
        assert all(
            f"results/episodes/{arm}/stub/{t}/r0.json" in locked for arm in ARMS for t in ("retail/11", "retail/46")
        )

        proc = bin_run(wf)
        assert "removing the lock of a Snakemake run that was killed" in proc.stderr
        after = snapshot(records(wf))
        assert len(after) == CELLS
        for key in by_task[done]:  # finished job: not re-run (same bytes, same modification time)
            assert after[key] == before[key], key
        cell = by_task[cut][0]  # the cell finished inside the killed job: re-run wholly from the cache
        again = load(wf / cell)
        assert stable_episode(again) == stable_episode(json.loads(before[cell][0]))
        assert usage_total(again, "cache_misses") == 0
        resumed = [load(wf / k) for k in after if f"/stub/{cut}/" in k]
        assert sum(usage_total(r, "cache_hits") for r in resumed) == paid_at_kill - 3 * CALLS_PER_CELL
        assert stub.answered() == CELLS * CALLS_PER_CELL and stub.paid_twice() == 0
        table = trials(wf)
        assert len(table) == CELLS and not table["excluded"].any()
        assert not temp_files(wf / "results", wf / "cache")
        lost = sum(
            1
            for k in before
            if k not in after or stable_episode(json.loads(after[k][0])) != stable_episode(json.loads(before[k][0]))
        )
    finally:
        stub.stop()
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))
    record_outcome(ROWS, "kill -9 of the workflow during episodes", 1, lost, stub.paid_twice(), "yes (bin/run)")


def test_bin_run_leaves_the_lock_of_a_live_snakemake_alone(tmp_path):
    """The other half of the lock rule: while a Snakemake process works in the directory, its
    lock is not stale and bin/run must not remove it (here a stand-in named snakemake)."""
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    helper = [sys.executable, str(Path(__file__).resolve().parents[1] / "bin" / "_stale_lock.py")]
    live = subprocess.Popen(["bash", "-c", "exec -a snakemake sleep 60"], cwd=tmp_path)
    try:
        wait_for(lambda: processes(tmp_path, "snakemake"), 10, "the stand-in")
        held = subprocess.run(helper, cwd=tmp_path, capture_output=True, text=True)
        assert held.returncode == 1 and f"pid {live.pid}" in held.stderr and "its lock stays" in held.stderr
    finally:
        live.kill()
        live.wait()
    stale = subprocess.run(helper, cwd=tmp_path, capture_output=True, text=True)
    assert stale.returncode == 0 and "removing the lock" in stale.stderr


# --------------------------------------------------------------------------- item 5


def test_sigterm_to_one_episode_job_leaves_no_partial_record_and_the_retry_completes(base, tmp_path):
    """SIGTERM to the `incognita episodes` process of a job that has written one cell and is
    waiting on the model in the next: Snakemake removes the job's outputs and its `retries: 1`
    re-runs it in the same invocation, from the cache where calls were paid."""
    wf = clone(base, tmp_path / "wf")
    paid_at_term = CALLS_PER_CELL + 2
    stub = StubServer(tmp_path, hold_after=paid_at_term)
    try:
        write_design(wf, stub.base_url, tasks=("retail/11",))
        run = start_bin_run(wf, tmp_path / "run.log", cores=1)
        try:
            wait_for(lambda: stub.events("held"), 180, "the held request")
            job = wait_for(lambda: processes(wf, "incognita", "episodes"), 10, "the episodes process")
            assert len(records(wf)) == 1  # one finished cell, the next one in flight
            os.kill(job[0], signal.SIGTERM)
            wait_for(lambda: not Path(f"/proc/{job[0]}").exists(), 30, "the job to end")
            stub.release_held()
            assert run.wait(240) == 0
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        log = (tmp_path / "run.log").read_text()
        assert "Removing output files of failed job episodes" in log and "Trying to restart job" in log
        final = [load(p) for p in records(wf).values()]
        assert len(final) == 3 and all(r["termination"] == "final" and r["error"] is None for r in final)
        assert all(usage_total(r, "calls") == CALLS_PER_CELL for r in final)
        assert sum(usage_total(r, "cache_hits") for r in final) == paid_at_term
        assert stub.answered() == 3 * CALLS_PER_CELL and stub.paid_twice() == 0
        assert not temp_files(wf / "results", wf / "cache")
    finally:
        stub.stop()
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))

    # SIGTERM in the middle of an atomic write: the CLI turns it into an exit that removes the
    # temp file; Python's default handler (the control) would leave it behind.
    probe = textwrap.dedent("""
        import os, signal, sys, time
        import click
        from incognita.cli import main
        from incognita.common.io import atomic_write

        def write(tmp):
            with open(tmp, "w") as fh:
                fh.write('{"half": ')
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(20)

        if sys.argv[2] == "cli":
            main.command("probe")(lambda: atomic_write(sys.argv[1], write))
            main(["probe"])
        atomic_write(sys.argv[1], write)
    """)
    outcomes = {}
    for mode in ("cli", "default"):
        out = tmp_path / mode
        out.mkdir()
        proc = subprocess.run(
            [sys.executable, "-c", probe, str(out / "r0.json"), mode], capture_output=True, timeout=60
        )
        outcomes[mode] = (proc.returncode, sorted(p.name for p in out.iterdir()))
    assert outcomes["cli"] == (128 + signal.SIGTERM, [])
    assert outcomes["default"][0] == -signal.SIGTERM and len(outcomes["default"][1]) == 1  # the control
    record_outcome(
        ROWS, "SIGTERM to one episode job (+ one mid-write)", 2, 0, stub.paid_twice(), "yes (Snakemake retries: 1)"
    )


def test_the_fault_design_runs_only_its_tasks_domain(tmp_path):
    """Every run of this file builds the stages after the ones it is given for each design domain:
    a default design of more domains must not add theirs."""
    wf = default_domains(tmp_path, ["retail", "mock"])
    assert design_domains(write_design(wf, "http://127.0.0.1:9/v1")) == ("retail",)


# --------------------------------------------------------------------------- item 6


def test_a_damaged_cache_entry_is_reported_refetched_once_and_never_returned(tmp_path, monkeypatch, capfd):
    from incognita.access.episodes.scripted import make_backend
    from incognita.common.backends.entry import ModelEntry

    stub = StubServer(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    settings = {"base_url": stub.base_url, "temperature": 0, "max_retries": 0, "timeout": 20}
    cache_dir = tmp_path / "cache"
    backend = make_backend(
        ModelEntry("openai:stub-agent", settings), "agent", runtime=Runtime(cache_dir=str(cache_dir))
    )
    request = ModelRequest(role="agent", system="You are a test.", messages=(Turn("user", "From USER: hello"),))
    try:
        first = backend.respond(request)
        assert stub.answered() == 1 and first.usage.cache_misses == 1
        (path,) = [p for p in cache_dir.rglob("*.json")]
        key = path.stem
        good = path.read_text()
        other = json.loads(good) | {"key": request_key({"another": "request"}, None)}
        damage = {
            "truncated JSON": lambda: path.write_text(good[: len(good) // 2]),
            "another key inside": lambda: path.write_text(json.dumps(other)),
            "binary garbage": lambda: path.write_bytes(b"\xff\xfe\x00garbage\x9c" * 40),
            "unreadable (symlink loop)": lambda: (path.unlink(), path.symlink_to(path.name)),
            "no response inside": lambda: path.write_text(
                json.dumps({k: v for k, v in json.loads(good).items() if k != "response"})
            ),
        }
        refetched = 0
        for kind, spoil in damage.items():
            spoil()
            capfd.readouterr()
            listed = CliRunner().invoke(cache_group, ["stats", "--dir", str(cache_dir)])
            assert listed.exit_code == 0 and "0 entries" in listed.output and f"damaged {path}" in listed.output, kind
            paid = stub.answered()
            resp = backend.respond(request)
            err = capfd.readouterr().err
            assert f"cache entry {path} is damaged" in err and "treating it as a miss" in err, kind
            assert (resp.text, resp.usage.cache_misses) == (first.text, 1), kind  # the stub's answer, not the damage
            assert stub.answered() == paid + 1, kind
            refetched += 1
            assert not path.is_symlink() and ResponseCache(cache_dir).read(key)[1] is None, kind  # rewritten
            hit = backend.respond(request)
            assert (hit.text, hit.usage.cache_hits, stub.answered()) == (first.text, 1, paid + 1), kind
        assert refetched == len(damage) and stub.paid_twice() == len(damage)  # one re-fetch per destroyed answer
    finally:
        stub.stop()
    scanned, hits = key_leaks(cache_dir)
    assert scanned == 1 and hits == []
    WRITTEN.append(cache_dir)
    # Every request body the stub answered twice is one of the destroyed answers, fetched once more.
    record_outcome(
        ROWS,
        "damaged response-cache entry (5 kinds)",
        len(damage),
        0,
        stub.paid_twice() - refetched,
        "yes (automatic)",
        refetched=refetched,
    )


# --------------------------------------------------------------------------- item 7


def test_a_damaged_record_stops_the_reader_and_errors_lists_it_for_rebuild(finished, tmp_path, monkeypatch):
    wf = clone(finished, tmp_path / "wf")
    monkeypatch.chdir(wf)
    paths = records(wf)
    good = {k: p.read_bytes() for k, p in paths.items()}
    victim = next(k for k in paths if k.startswith("results/episodes/social/"))
    native_doc = {
        "simulations": [
            {
                "reward_info": {
                    "info": {"incognita": {"model": "stub", "task": "retail/11", "rep": 0, "seed": 1, "error": None}}
                },
                "messages": [],
            }
        ]
    }
    native_path = wf / "results" / "native" / "stub" / "retail" / "11" / "r0.json"
    native_path.parent.mkdir(parents=True)
    record = json.loads(good[victim])
    damage = {
        "truncated record": (victim, good[victim][: len(good[victim]) // 3]),
        "empty record": (victim, b""),
        "binary garbage": (victim, b"\x00\xff\x13" * 100),
        "a JSON list": (victim, b"[1, 2, 3]"),
        "an event damaged inside": (victim, json.dumps(record | {"events": [{"type": "telepathy"}]}).encode()),
        "native result truncated": (native_path, json.dumps(native_doc).encode()[:70]),
        "native result without its fields": (native_path, json.dumps(native_doc).encode()),
    }
    trials_before = (wf / "results" / "trials.parquet").read_bytes()
    reader_args = [
        "trials",
        "--out",
        "results/trials.parquet",
        "--csv",
        "results/trials.csv",
        "--validation",
        "results/stats/reader_validation.csv",
        "--no-labelled",
        "--domains",
        "retail",
    ]
    stopped = 0
    for kind, (where, content) in damage.items():
        target = wf / where
        target.write_bytes(content)
        inputs = [str(p) for p in paths.values()] + ([str(native_path)] if target == native_path else [])
        out = CliRunner().invoke(cli, [*reader_args, *inputs])
        assert out.exit_code == 2, (kind, out.output)
        assert f"error: {target}" in out.output or f"error: {target.relative_to(wf)}" in out.output, (kind, out.output)
        assert "Traceback" not in out.output, kind
        assert (wf / "results" / "trials.parquet").read_bytes() == trials_before, kind  # nothing half-replaced
        listed = incognita(wf, "errors", "results/episodes", "results/native")
        assert listed.returncode == 2 and "damaged:" in listed.stdout and str(target.relative_to(wf)) in listed.stdout
        assert "1 record(s) with an error (1 damaged)" in listed.stdout, (kind, listed.stdout)
        stopped += 1
        target.write_bytes(good[victim]) if target != native_path else target.unlink()
    # With the damaged record in place, errors --delete and one bin/run rebuild its cell; every
    # call it needs is in the cache, so no endpoint is running at all.
    (wf / victim).write_bytes(good[victim][:100])
    unchanged = snapshot({k: p for k, p in paths.items() if k != victim})
    assert "1 record(s) with an error (1 damaged) deleted" in incognita(wf, "errors", "--delete").stdout
    bin_run(wf)
    rebuilt = records(wf)
    assert rebuilt.keys() == paths.keys()
    for key, path in rebuilt.items():
        assert stable_episode(load(path)) == stable_episode(json.loads(good[key])), key
    rerun = [k for k in rebuilt if k == victim or snapshot({k: rebuilt[k]})[k] != unchanged[k]]
    assert victim in rerun and len(rerun) == 3  # the victim's job: its three cells
    paid = sum(usage_total(load(rebuilt[k]), "cache_misses") for k in rerun)
    assert paid == 0
    assert len(trials(wf)) == CELLS and not trials(wf)["excluded"].any()
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))
    record_outcome(
        ROWS, "damaged episode record or native result (7 kinds)", stopped, 0, paid, "yes: errors --delete + bin/run"
    )


# --------------------------------------------------------------------------- item 8


PAYLOAD = 48_000  # bytes per entry: far more than one write() needs to be atomic by luck


def _writer(root: str, worker: int, keys: list[str], report: str) -> None:
    import hashlib

    cache = ResponseCache(root)
    seen = bad = 0
    for round_ in range(3):
        for i, key in enumerate(keys):
            text = f"w{worker}r{round_}k{i}:" + chr(65 + worker) * PAYLOAD
            cache.put(
                key,
                {
                    "model": "m",
                    "role": f"w{worker}",
                    "response": {"message": {"content": text}},
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                    "cost_usd": 0.0,
                    "check": hashlib.sha256(text.encode()).hexdigest(),
                },
            )
            other = cache.get(keys[(i * 7 + worker) % len(keys)])  # read what the others are writing
            if other is not None:
                seen += 1
                body = other["response"]["message"]["content"]
                bad += hashlib.sha256(body.encode()).hexdigest() != other["check"] or body[1] != other["role"][1]
    Path(report).write_text(json.dumps({"seen": seen, "bad": bad}))


def test_eight_processes_writing_overlapping_keys_never_tear_or_mix_an_entry(tmp_path, capfd):
    import hashlib

    root = tmp_path / "cache"
    shared = [request_key({"shared": i}, None) for i in range(24)]
    ctx = multiprocessing.get_context("fork")
    reports = [tmp_path / f"w{w}.json" for w in range(8)]
    procs = [
        ctx.Process(target=_writer, args=(str(root), w, shared[w % 3 :] + shared[: w % 3], str(reports[w])))
        for w in range(8)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 8
    stats = [json.loads(r.read_text()) for r in reports]
    assert sum(s["seen"] for s in stats) > 8 * 24 and sum(s["bad"] for s in stats) == 0
    assert "damaged" not in capfd.readouterr().err  # no reader ever met a torn entry
    cache = ResponseCache(root)
    final = list(cache.scan())
    assert len(final) == len(shared) and all(problem is None for _, _, problem in final)
    for path, entry, _ in final:
        body = entry["response"]["message"]["content"]
        assert hashlib.sha256(body.encode()).hexdigest() == entry["check"] and body[1] == entry["role"][1], path
    assert not temp_files(root)
    record_outcome(ROWS, "8 processes writing overlapping cache keys", 8 * 3 * len(shared), 0, 0, "n/a (no damage)")


# --------------------------------------------------------------------------- item 9


def test_the_endpoint_dies_mid_run_and_comes_back(base, tmp_path):
    """The model server is SIGKILLed after its 22nd answer (both jobs running). The cells it
    leaves become error records, which the reader excludes; with the server back on the same
    port, `incognita errors --delete` and `bin/run` complete them, paying only what was never
    answered."""
    wf = clone(base, tmp_path / "wf")
    dies_after = 22
    stub = StubServer(tmp_path, die_after=dies_after)
    back = None
    try:
        write_design(wf, stub.base_url)
        # Error records are results: the design completes, with exclusions; bin/run counts them,
        # says how to retry them and exits 3.
        run = bin_run(wf, check=False)
        assert stub.proc.wait(10) == -signal.SIGKILL and stub.answered() == dies_after
        broken = {k for k, p in records(wf).items() if load(p)["error"]}
        assert run.returncode == 3 and f"{len(broken)} record(s) written since " in run.stdout, run.stdout[-3000:]
        assert broken and all("connection error" in load(wf / k)["error"] for k in broken)
        table = trials(wf)
        assert len(table) == CELLS and int(table["excluded"].sum()) == len(broken)
        assert table.loc[table["excluded"], "success"].isna().all()  # excluded, never scored

        back = StubServer(tmp_path, port=stub.port)  # same port, same log: one account of what was paid
        listed = incognita(wf, "errors")
        assert listed.returncode == 1 and f"{len(broken)} record(s) with an error" in listed.stdout
        assert incognita(wf, "errors", "--delete").returncode == 0
        before = snapshot(records(wf))
        bin_run(wf)
        after = {k: load(p) for k, p in records(wf).items()}
        assert len(after) == CELLS and not any(r["error"] for r in after.values())
        rerun = [k for k in after if k not in before or snapshot({k: wf / k})[k] != before[k]]
        assert set(broken) <= set(rerun)
        assert back.answered() == CELLS * CALLS_PER_CELL and back.paid_twice() == 0  # the log spans both lives
        hits = sum(usage_total(after[k], "cache_hits") for k in rerun)
        assert hits == len(rerun) * CALLS_PER_CELL - (CELLS * CALLS_PER_CELL - dies_after)
        table = trials(wf)
        assert len(table) == CELLS and not table["excluded"].any()
        lost = sum(
            1
            for k, v in before.items()
            if k not in broken and stable_episode(after[k]) != stable_episode(json.loads(v[0]))
        )
    finally:
        stub.stop()
        if back:
            back.stop()
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))
    record_outcome(
        ROWS, "model endpoint killed mid-run, then back", 1, lost, back.paid_twice(), "yes: errors --delete + bin/run"
    )


def test_a_run_whose_every_call_fails_says_how_many_cells_to_retry_and_exits_3(base, tmp_path):
    """An endpoint that answers every call with HTTP 500 (issue #55, item 9): each cell ends as
    an error record after its retries and the tables are built with every trial excluded, as
    designed; bin/run used to end there with exit 0 and "(100%) done". It now ends with one line
    counting the error records this run wrote, naming the command that lists them and the one
    that retries them, and exit status 3. A rerun that writes none exits 0; the retry, with the
    endpoint well again, completes the design."""
    wf = clone(base, tmp_path / "wf")
    failing = StubServer(tmp_path, status=500)
    well = None
    try:
        write_design(wf, failing.base_url)
        run = bin_run(wf, check=False)
        attempts = len(failing.events("failed"))
        failing.stop()
        assert run.returncode == 3, run.stdout[-3000:] + run.stderr[-3000:]
        assert "(100%) done" in run.stdout  # what Snakemake says: the run "succeeded"
        last = run.stdout.strip().splitlines()[-1]
        assert last.startswith(f"{CELLS} record(s) written since ") and last.endswith(
            "with an error: `incognita errors` lists them; `incognita errors --delete`, then `bin/run`, "
            "retries them (calls answered before come from the cache)"
        ), last
        assert attempts == CELLS * 3  # each cell's first call, 1 + max_retries attempts
        assert trials(wf)["excluded"].all()
        again = bin_run(wf, check=False)
        assert again.returncode == 0 and "record(s)" not in again.stdout
        well = StubServer(tmp_path, port=failing.port)
        assert incognita(wf, "errors", "--delete").returncode == 0
        bin_run(wf)
        assert well.answered() == CELLS * CALLS_PER_CELL and well.paid_twice() == 0
        table = trials(wf)
        lost = CELLS - int((~table["excluded"]).sum())
        assert lost == 0
    finally:
        failing.stop()
        if well:
            well.stop()
    assert_no_key(wf)
    WRITTEN.extend(written_by_workflow(wf))
    record_outcome(ROWS, "every call answered HTTP 500", 1, lost, well.paid_twice(), "yes: errors --delete + bin/run")


# --------------------------------------------------------------------------- item 10


def _mount_tmpfs(where: Path, size: str) -> str | None:
    where.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"mount exited {proc.returncode}")


def _fill(where: Path) -> Path:
    """Fill the file system to the last byte (unbuffered: a buffered file would fail again on close)."""
    filler = where / "filler"
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def test_a_full_disk_fails_the_job_clearly_and_leaves_no_half_written_output(base, tmp_path, monkeypatch):
    wf = clone(base, tmp_path / "wf")
    episodes = wf / "results" / "episodes"
    why = _mount_tmpfs(episodes, "256k")
    if why:
        pytest.skip(f"cannot mount a size-limited tmpfs here ({why})")
    stub = StubServer(tmp_path)
    try:
        filler = _fill(episodes)
        write_design(wf, stub.base_url)
        proc = bin_run(wf, check=False)
        assert proc.returncode != 0
        logs = {p.stem: p.read_text() for p in (wf / "logs" / "episodes" / "stub").glob("*/*.log")}  # <domain>/<id>.log
        assert logs and all("No space left on device" in text for text in logs.values())
        for text in logs.values():
            assert "Traceback" not in text
            line = next(x for x in text.splitlines() if x.startswith("error: "))
            assert line.startswith("error: results/episodes/") and line.endswith(
                "/r0.json: cannot write (No space left on device)"
            ), line
        left = [p for p in episodes.rglob("*") if p.is_file() and p != filler]
        assert left == []  # no record, no temp file
        paid = stub.answered()
        assert paid > 0 and stub.paid_twice() == 0

        filler.unlink()
        bin_run(wf)
        final = [load(p) for p in records(wf).values()]
        assert len(final) == CELLS and not any(r["error"] for r in final)
        assert stub.answered() == CELLS * CALLS_PER_CELL and stub.paid_twice() == 0

        # The reader's table on a full disk: the same clear line, and the old table untouched.
        table_before = (wf / "results" / "trials.parquet").read_bytes()
        present = {p: p.read_bytes() for p in episodes.rglob("*") if p.is_file()}
        filler = _fill(episodes)
        out = incognita(
            wf,
            "trials",
            "--out",
            "results/episodes/trials.parquet",
            "--csv",
            "results/trials.csv",
            "--validation",
            "results/stats/reader_validation.csv",
            "--no-labelled",
            "--domains",
            "retail",
            *records(wf).keys(),
        )
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert "error: results/episodes/trials.parquet: cannot write (" in out.stderr and "[errno 28]" in out.stderr
        assert {p: p.read_bytes() for p in episodes.rglob("*") if p.is_file() and p != filler} == present
        assert (wf / "results" / "trials.parquet").read_bytes() == table_before

        # The response cache on a full disk: the call's answer cannot be kept, so the job stops at
        # that write, with the entry named; the answer is fetched again once there is room.
        from incognita.access.episodes.scripted import make_backend
        from incognita.common.backends.entry import ModelEntry
        from incognita.common.io import WriteError

        cache_dir = episodes / "cache"
        settings = {"base_url": stub.base_url, "temperature": 0, "max_retries": 0, "timeout": 20}
        monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
        backend = make_backend(
            ModelEntry("openai:stub-agent", settings), "agent", runtime=Runtime(cache_dir=str(cache_dir))
        )
        request = ModelRequest(role="agent", system="Disk full.", messages=(Turn("user", "From USER: hi"),))
        paid = stub.answered()
        with pytest.raises(WriteError, match=r"/cache/[0-9a-f]{2}/[0-9a-f]{64}\.json: cannot write \(No space left"):
            backend.respond(request)
        assert stub.answered() == paid + 1 and not [p for p in cache_dir.rglob("*") if p.is_file()]
        filler.unlink()
        assert backend.respond(request).usage.cache_misses == 1 and backend.respond(request).usage.cache_hits == 1
        refetched = stub.paid_twice()
        assert refetched == 1 and stub.answered() == paid + 2
        assert_no_key(wf)  # while the tmpfs still holds the records
    finally:
        stub.stop()
        subprocess.run(["umount", str(episodes)], capture_output=True)
        if episodes.is_mount():
            subprocess.run(["umount", "-l", str(episodes)], capture_output=True)
    assert not episodes.is_mount()
    WRITTEN.extend(written_by_workflow(wf))
    record_outcome(
        ROWS,
        "disk full (records, trials table, cache entry)",
        3,
        0,
        stub.paid_twice() - refetched,
        "yes: free space + bin/run",
        refetched=refetched,
    )


# --------------------------------------------------------------------------- item 11


def test_no_file_anything_wrote_holds_the_key(finished):
    """Last: the fake key, which every paying call above sent, appears in nothing the workflows
    and backends wrote (results, logs, cache, .snakemake, benchmarks, the report)."""
    roots = [*dict.fromkeys(WRITTEN)]
    assert finished / "report.html" in roots and (finished / "report.html").stat().st_size > 0
    scanned, hits = key_leaks(*roots)
    assert hits == [], hits
    assert scanned > 100
    record_outcome(
        ROWS, "secrets: fake key grepped in every file written", scanned, len(hits), 0, "n/a (no file holds it)"
    )


def test_editing_a_rate_limit_reruns_nothing_and_a_sampling_setting_reruns_its_cells(finished, tmp_path):
    """rpm, tpm, max_in_flight and reserve change how fast calls go, not what they return: a built design
    plans nothing after they are added; a changed temperature plans the model's episodes again."""
    doc = yaml.safe_load((finished / "config" / "faults.yaml").read_text())

    def plan(edit) -> dict[str, int]:
        changed = json.loads(json.dumps(doc))
        edit(changed)
        path = finished / "config" / f"edited-{tmp_path.name}.yaml"
        path.write_text(yaml.safe_dump(changed, sort_keys=False))
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "snakemake", "-n", "--cores", "2", *TARGETS, "--configfile", str(path)],
                cwd=finished,
                capture_output=True,
                text=True,
            )
        finally:
            path.unlink()
        assert proc.returncode == 0, proc.stderr[-3000:]
        return {} if "Nothing to be done" in proc.stdout + proc.stderr else planned_jobs(proc)

    def limits(cfg):
        cfg["models"]["stub"].update(rpm=120, tpm=400_000, max_in_flight=3, reserve=0.25)
        cfg["participants"]["customer"]["rpm"] = 60

    assert plan(limits) == {}
    assert plan(lambda cfg: cfg["models"]["stub"].update(temperature=0.5))["episodes"] == 2  # retail/11 and retail/46
