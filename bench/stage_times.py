"""The stage times of a build, from the benchmark files its jobs wrote.

Every rule declares `benchmark: benchmarks/<rule>.tsv` (or `benchmarks/<stage>/<wildcards>.tsv`
for rules with one job per cell or per domain), where Snakemake records each job's wall time, CPU time and
peak memory. This prints one row per rule: how many jobs ran, their summed wall and CPU
seconds, the longest job, and the largest peak RSS; then the totals. Sorted by CPU time, the
first rows are where a faster build has to come from.

Usage: python bench/stage_times.py [WORKDIR] [--quick]
  WORKDIR  the workflow directory whose benchmarks/ to read (default: this checkout)
  --quick  build the source, cards and card-audit stages into a scratch copy first and report
           those (seconds; what CI runs so this script cannot rot)
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rule_of(path: Path, bench_dir: Path) -> str:
    """benchmarks/<rule>.tsv or benchmarks/<rule>/...: the first path component names the rule."""
    parts = path.relative_to(bench_dir).parts
    return parts[0] if len(parts) > 1 else path.stem


def stage_table(bench_dir: Path) -> list[dict]:
    rows: dict[str, dict] = defaultdict(
        lambda: {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0, "max_s": 0.0, "max_rss_mb": 0.0}
    )
    for path in sorted(bench_dir.rglob("*.tsv")):
        with path.open() as fh:
            records = list(csv.DictReader(fh, delimiter="\t"))
        if not records:
            raise SystemExit(f"error: {path}: empty benchmark file")
        rec = records[-1]  # a repeated benchmark keeps one line per repeat; the last is the newest
        try:
            wall, cpu = float(rec["s"]), float(rec["cpu_time"])
            rss = float(rec["max_rss"]) if rec.get("max_rss") not in (None, "", "-") else 0.0
        except (KeyError, ValueError) as exc:
            raise SystemExit(f"error: {path}: not a Snakemake benchmark file ({exc})") from None
        row = rows[rule_of(path, bench_dir)]
        row["jobs"] += 1
        row["wall_s"] += wall
        row["cpu_s"] += cpu
        row["max_s"] = max(row["max_s"], wall)
        row["max_rss_mb"] = max(row["max_rss_mb"], rss)
    return sorted(({"rule": k, **v} for k, v in rows.items()), key=lambda r: -r["cpu_s"])


def print_table(rows: list[dict]) -> None:
    print(f"{'rule':<22}{'jobs':>6}{'wall s':>10}{'cpu s':>10}{'longest s':>11}{'peak MB':>9}")
    for r in rows:
        print(
            f"{r['rule']:<22}{r['jobs']:>6}{r['wall_s']:>10.1f}{r['cpu_s']:>10.1f}"
            f"{r['max_s']:>11.1f}{r['max_rss_mb']:>9.0f}"
        )
    print(
        f"{'total':<22}{sum(r['jobs'] for r in rows):>6}{sum(r['wall_s'] for r in rows):>10.1f}"
        f"{sum(r['cpu_s'] for r in rows):>10.1f}"
    )


def quick_build(scratch: Path) -> Path:
    """The cards stage and its audit in a copy of the workflow (the source copied, not rebuilt)."""
    for name in ("Snakefile", "rules", "config", "incognita", "profiles", "envs", "report"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, scratch / name)
    source = ROOT / "data" / "source"
    if source.is_dir():
        shutil.copytree(source, scratch / "data" / "source")
    # The retail domain's card audit (rule audit_retail; incognita.access.paths.audit_table).
    cmd = [sys.executable, "-m", "snakemake", "results/audit/retail/cards.tsv", "--cores", "2", "--quiet", "all"]
    subprocess.run(cmd, cwd=scratch, check=True)
    return scratch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", nargs="?", type=Path, default=ROOT)
    ap.add_argument(
        "--quick", action="store_true", help="build the cards and their audit in a scratch copy and report them"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="stage-times-") as tmp:
        workdir = quick_build(Path(tmp)) if args.quick else args.workdir
        bench_dir = workdir / "benchmarks"
        if not bench_dir.is_dir():
            raise SystemExit(f"error: {bench_dir}: no benchmark files (build first: bin/run)")
        print_table(stage_table(bench_dir))


if __name__ == "__main__":
    main()
