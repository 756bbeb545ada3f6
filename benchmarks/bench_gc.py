"""What the cyclic garbage collector costs a command's own process, with the collector as it is settled
(:func:`analyzer.running.collector.settle`) and at CPython's defaults.

Run: ``python benchmarks/bench_gc.py [LOG] [--rounds 2] [--args "audit --jobs 1"] ...``

Each run is the command line (``analyzer.cli.main``) in a fresh process with a ``gc.callbacks`` timer: wall seconds,
the process' own CPU seconds, the seconds spent collecting by generation and the number of collections, and the
process' peak RSS. ``default`` replaces ``relax`` and ``settle`` by nothing in that process (with ``--dask local`` the
workers, forked from a process that settled, are not changed: the figures are the command's own process). The audit's
outputs (audit.json, pairs.csv, players.csv) are checked byte for byte the same under both settings. LOG defaults to
the first 4,000 hands of ``bench_audit_scale.py``'s room (made on first use); each ``--args`` is one command line
without its log and output (``-o`` is added for the commands that write a folder). Runs alternate between the two
settings, round by round, so the load hits both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_scale import ROOT, cut, room  # noqa: E402

_HARNESS = r"""
import gc, json, os, resource, sys, time
import analyzer.running.collector
if os.environ["BENCH_GC"] == "default":
    analyzer.running.collector.settle = analyzer.running.collector.relax = lambda: None
spent, count, start = [0.0, 0.0, 0.0], [0, 0, 0], [0.0]
def timer(phase, info):
    if phase == "start":
        start[0] = time.perf_counter()
    else:
        spent[info["generation"]] += time.perf_counter() - start[0]
        count[info["generation"]] += 1
gc.callbacks.append(timer)
t0 = time.perf_counter()
from analyzer.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print("BENCH_GC " + json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "spent": spent, "count": count,
      "rss_mb": ru.ru_maxrss / 1024}), file=sys.stderr)
"""


def run_once(argv: list[str], setting: str) -> dict[str, float]:
    env = {**os.environ, "BENCH_GC": setting, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", _HARNESS, *argv], env=env, capture_output=True, text=True, cwd=ROOT)
    for line in p.stderr.splitlines():
        if line.startswith("BENCH_GC "):
            return json.loads(line[len("BENCH_GC "):])
    raise SystemExit(f"no figures from {argv}:\n{p.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", nargs="?")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--args", action="append", default=None,
                    help='a command without its log, e.g. "audit --jobs 1" (repeatable)')
    a = ap.parse_args()
    cache = Path(tempfile.gettempdir()) / "bench_audit_scale"  # bench_audit_scale.py's default
    cache.mkdir(exist_ok=True)
    log = a.log or str(cut(room(cache, 64, 16000, 3), 4000, cache))
    commands = a.args or ["audit --jobs 1", "audit --dask local --jobs 2", "players --jobs 1"]
    for command in commands:
        for r in range(a.rounds):
            written: dict[str, bytes] = {}
            for setting in ("default", "settled"):
                argv = shlex.split(command)
                argv.insert(1, log)
                out = Path(tempfile.mkdtemp(prefix="bench-gc-"))
                if argv[0] == "audit":
                    argv += ["-o", str(out)]
                f = run_once(argv, setting)
                if argv[0] == "audit":  # what it computes does not depend on the collector
                    got = b"".join((out / n).read_bytes() for n in ("audit.json", "pairs.csv", "players.csv"))
                    if written and got != next(iter(written.values())):
                        raise SystemExit(f"{command}: the outputs differ between the collector's settings")
                    written[setting] = got
                print(f"{command!r:32} round {r} {setting:8}: wall {f['wall']:6.1f} s, CPU {f['cpu']:6.1f} s, collecting "
                      f"{sum(f['spent']):5.2f} s (by generation {f['spent'][0]:.2f} / {f['spent'][1]:.2f} / "
                      f"{f['spent'][2]:.2f}; {f['count'][0]} / {f['count'][1]} / {f['count'][2]} collections), "
                      f"peak RSS {f['rss_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
