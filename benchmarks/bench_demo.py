"""The README's main job, timed: ``analyzer audit samples/demo-room.jsonl.gz --out DIR`` in a fresh process, as the
Quick start runs it (every core, the default settings), after one warm-up run that fills numba's cache as a first
run would.

Run: ``python benchmarks/bench_demo.py [--runs 3]``. Prints each run's wall time, CPU time (the command and every
worker process it started), peak resident memory of the largest process and the machine's load, then the medians:
the figures the README's Quick start quotes. Walls at a load above ~1.5 do not compare with a quiet machine's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_scale import ROOT, audit_once  # noqa: E402

DEMO = ROOT / "samples" / "demo-room.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up")
    args = ap.parse_args()
    audit_once(DEMO, [])  # the warm-up: numba's cache, the page cache
    runs = []
    print(f"{'run':>4} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'load':>5}")
    for i in range(args.runs):
        r = audit_once(DEMO, [])
        runs.append(r)
        print(f"{i + 1:>4} {r['wall']:>7.1f} {r['cpu']:>7.1f} {r['rss_mb']:>8.0f} {r['load']:>5.1f}", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "rss_mb", "load")}
    print(f"median: {med['wall']:.1f} s wall, {med['cpu']:.1f} CPU-s, {med['rss_mb']:.0f} MB peak "
          f"(load {med['load']:.1f})")


if __name__ == "__main__":
    main()
