"""The README's main job, timed: ``analyzer audit samples/demo-room.jsonl.gz --out DIR`` in a fresh process, as the
Quick start runs it (every core, the default settings), after one warm-up run that fills numba's cache as a first
run would.

Run: ``python -m benchmarks.bench_demo [--runs 3]``. Prints each run's wall time, CPU time (the command and every
worker process it started), peak resident memory of the largest process and the machine's load, then the medians,
and the audit's outcome (the pairs flagged with their scores, the pairs marked for review); writes
benchmarks/results/demo.json. Walls at a load above ~1.5 do not compare with a quiet machine's.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_scale import ROOT, _env, audit_once  # noqa: E402

from benchmarks.results import Results, command_line  # noqa: E402

DEMO = ROOT / "samples" / "demo-room.jsonl.gz"


def outcome() -> list[dict[str, str]]:
    """The demo audit's pairs (pairs.csv), as the Quick start's command writes them."""
    import subprocess

    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "analyzer.cli", "audit", str(DEMO), "--out", out], cwd=ROOT, env=_env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(Path(out) / "pairs.csv", newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up")
    args = ap.parse_args(argv)
    res = Results("demo", "The Quick start's audit of the demo room", "demo", command_line("benchmarks.bench_demo", argv),
                  parameters={"runs": args.runs},
                  about="`analyzer audit samples/demo-room.jsonl.gz` in a fresh process at the defaults (every core), "
                        "after one warm-up run; medians of the timed runs, CPU of the command and its workers.")
    audit_once(DEMO, [])  # the warm-up: numba's cache, the page cache
    runs = []
    print(f"{'run':>4} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'load':>5}")
    for i in range(args.runs):
        r = audit_once(DEMO, [])
        runs.append(r)
        print(f"{i + 1:>4} {r['wall']:>7.1f} {r['cpu']:>7.1f} {r['rss_mb']:>8.0f} {r['load']:>5.1f}", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "rss_mb", "load")}
    res.figure("wall_s", med["wall"], "s", "wall time, median")
    res.figure("cpu_s", med["cpu"], "s", "CPU time, median")
    res.figure("peak_mb", med["rss_mb"], "MB", "peak resident memory of the largest process, median")
    res.figure("load", med["load"], "", "the machine's load during the runs, median")
    pairs = outcome()
    marked = [p for p in pairs if p["verdict"] != "clear"]
    res.table("marked", "The pairs flagged or for review", ["pair", "verdict", "score", "main signal"],
              [[f"{p['a']} + {p['b']}", p["verdict"], float(p["score"]), p["main_signal"]] for p in marked])
    res.figure("pairs", len(pairs), "pairs", "pairs audited")
    res.write()


if __name__ == "__main__":
    main()
