"""`incognita collabsim run` when a model call fails for good: an endpoint that answers every call
with a body that is not an answer (status 200, not JSON).

The run must end as a configuration error does: one line naming the endpoint and the failure,
no traceback. It also leaves an error record in the run's directory, and the job's retry
(Snakemake's `retries: 1` runs the same command again) is refused before any call, so the
failing request is paid for once, with its own retries (1 + max_retries attempts), not twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.paths import ERROR, RUN_FILES, Cell
from incognita.common.loopback import LoopbackServer

KEY_ENV = "INCOGNITA_MALFORMED_TEST_KEY"
RETRIES = 2


def run(entry: dict, out, env: dict) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "incognita",
        "collabsim",
        "run",
        str(CONFIG / "daytrader/baseline.yaml"),
        "--seeds",
        "1",
        "--models",
        json.dumps({"*": entry}),
        "--model-label",
        "broken",
        "--design",
        "persona",
        "--workers",
        "1",  # one call at a time: the first call is the one that fails
        "--out-root",
        str(out),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_a_body_that_stays_malformed_ends_the_run_with_one_line_a_record_and_no_second_round(family, tmp_path):
    env = {
        **os.environ,
        KEY_ENV: "local",
        "INCOGNITA_CACHE_DIR": str(tmp_path / "cache"),
        "INCOGNITA_PACING_DIR": str(tmp_path / "pacing"),
    }
    with LoopbackServer(lambda model, body: "never sent", faults=lambda n, body: "malformed") as server:
        url = server.base_url if family == "openai" else server.root_url
        entry = {
            "spec": f"{family}:broken-model",
            "base_url": url,
            "api_key_env": KEY_ENV,
            "temperature": 0,
            "max_retries": RETRIES,
            "backoff_base": 0.001,
            "backoff_max": 0.01,
        }
        out = tmp_path / "results"
        first = run(entry, out, env)
        paid = server.requests
        retried = run(entry, out, env)  # what Snakemake's retry of the job does
        again = server.requests

    run_dir = Cell("daytrader", "baseline", "broken", "persona").run(1).dir(out)
    assert first.returncode == 2 and "Traceback" not in first.stderr, first.stderr
    errors = [line for line in first.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, first.stderr
    assert f"{family}:broken-model (player) at {url}: gave up after {RETRIES + 1} attempts" in errors[0]
    assert "malformed response body" in errors[0] and str(run_dir / ERROR) in errors[0]
    assert paid == RETRIES + 1

    record = json.loads((run_dir / ERROR).read_text())
    assert record["error"] in errors[0] and "malformed response body" in record["error"]
    assert (record["task"], record["seed"], record["step"], record["calls_answered"]) == ("daytrader", 1, 0, 0)
    assert not any((run_dir / name).exists() for name in RUN_FILES)

    assert retried.returncode == 2 and "Traceback" not in retried.stderr, retried.stderr
    assert again == paid  # the retry sent nothing
    assert retried.stderr.strip().splitlines() == [
        line for line in retried.stderr.strip().splitlines() if line.startswith("error:")
    ]
    assert (
        f"{run_dir / ERROR}: this run failed before" in retried.stderr and "malformed response body" in retried.stderr
    )
