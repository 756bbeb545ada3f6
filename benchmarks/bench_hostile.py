"""A hostile input's cost: a small gzip of millions of bad lines through ``analyzer validate``.

    python benchmarks/bench_hostile.py [--lines 10500000] [--format json]
    python benchmarks/bench_hostile.py --wide 3 [--items 500000]

Prints the compressed size, the time to the first problem on standard output, the whole run's wall
time, the lines explained per second, and the peak memory (max RSS) of the validating process: with
problems streamed out and a bounded summary, memory stays flat however many lines (issue 15, item 4).

``--wide N``: N lines just under the 1 MB line limit, each a hand whose first seat's deal is ``--items`` bad items
(0, not a card code): every line is parsed and explained against the schema, which finds an error an item; the
explainer draws at most ``explain.MAX_SCHEMA_ERRORS`` of them (it once drew and sorted all: ~20 s and ~1.9 GB a
line). Prints the wall time a line and the peak memory.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_500_000)
    ap.add_argument("--format", choices=["text", "json"], default="json")
    ap.add_argument("--wide", type=int, default=0, help="lines of --items bad items each, instead")
    ap.add_argument("--items", type=int, default=500_000)
    args = ap.parse_args()
    if args.wide:
        wide(args.wide, args.items)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bad.jsonl.gz"
        with gzip.open(path, "wb", compresslevel=9) as f:
            chunk = b"x\n" * 100_000
            for _ in range(args.lines // 100_000):
                f.write(chunk)
            f.write(b"x\n" * (args.lines % 100_000))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "analyzer.cli", "validate", str(path), "--format", args.format],
                                stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        proc.stdout.read(1)
        first = time.perf_counter() - t0
        size = 1
        while block := proc.stdout.read(1 << 20):
            size += len(block)
        proc.wait()
        wall = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        print(f"input: {args.lines:,} bad lines, {path.stat().st_size / 1024:.0f} KiB gzipped")
        print(f"exit code {proc.returncode}; output {size / 2**20:.0f} MiB ({args.format})")
        print(f"first byte of output after {first:.2f} s; whole run {wall:.1f} s "
              f"({args.lines / wall:,.0f} lines/s)")
        print(f"peak memory of the validating process: {rss / 1024:.0f} MiB")
        print(f"load average: {os.getloadavg()[0]:.1f}")


def wide(lines: int, items: int) -> None:
    """``lines`` lines of a hand whose deal's first seat holds ``items`` zeros, validated in a fresh process."""
    import json

    sample = json.loads((ROOT / "samples" / "legal.jsonl").read_text(encoding="utf-8").splitlines()[0])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "wide.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for n in range(lines):
                sample["hand_id"] = f"wide-{n}"
                sample["deal"][0] = [0] * items
                f.write(json.dumps(sample, separators=(",", ":")) + "\n")
        size = path.stat().st_size / lines
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", str(path)], env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        said = proc.stdout.strip().splitlines()[-1]
        print(f"input: {lines} lines of {size / 1e6:.2f} MB, {items:,} bad items each")
        print(f"exit code {proc.returncode}; {said}")
        print(f"whole run {wall:.2f} s ({wall / lines:.2f} s a line, the start-up included)")
        print(f"peak memory of the validating process: {rss / 1024:.0f} MiB")
        print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
