"""The serial chain before a ``--dask local`` audit's first batch: what the forkserver its workers are forked from does.

Run: ``python benchmarks/bench_worker_start.py [--repeat N]`` (from the checkout to measure, ``PYTHONPATH`` set to it).
Each repeat is a fresh process that does what the audit's forkserver does (``execute.start_forkserver`` with
``commands.audit.AUDIT_MODULES`` and ``AUDIT_PREFORK``): import distributed, numpy and pandas, then the audit's modules,
then warm (``analyzer.audit.warm.warm``: the shipped hands analysed, their chunk, think sums and one player row) and
settle the collector. It prints each step's wall and CPU seconds, the median over the repeats. No worker takes a batch
before this chain ends, in a 1-worker run as in a 2-worker one: it is part of the fixed start-up that bounds the
2-worker speed-up at 4,000 hands (docs/scale.md, "What bounds the 4,000-hand goal, and why #13 is blocked on it").
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, time
t0, c0 = time.perf_counter(), time.process_time()
marks = []
def mark(name):
    marks.append((name, time.perf_counter() - t0, time.process_time() - c0))
import distributed, numpy, pandas  # noqa: E401,F401  (the forkserver's first imports)
mark("distributed, numpy, pandas")
import importlib
from analyzer.commands.audit import AUDIT_MODULES
for m in AUDIT_MODULES:
    importlib.import_module(m)
mark("the audit's modules (numba, scipy, kernels)")
from analyzer.audit import warm
warm.warm()
mark("the warm-up (analysis of the shipped hands, a player row)")
from analyzer.running import collector
collector.settle()
mark("the collector settled")
print(json.dumps(marks))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes to time (default 5; the median is shown)")
    args = ap.parse_args()
    runs = []
    for _ in range(max(1, args.repeat)):
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    print(f"the forkserver's chain, median of {len(runs)} fresh processes (s since the process' start):")
    print(f"  {'step':60s} {'wall':>6s} {'CPU':>6s} {'step wall':>10s}")
    prev = 0.0
    for i, (name, _, _) in enumerate(runs[0]):
        wall = statistics.median(r[i][1] for r in runs)
        cpu = statistics.median(r[i][2] for r in runs)
        print(f"  {name:60s} {wall:6.2f} {cpu:6.2f} {wall - prev:10.2f}")
        prev = wall


if __name__ == "__main__":
    main()
