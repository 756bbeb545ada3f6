"""A hostile input's cost: a small gzip of millions of bad lines through ``analyzer validate``.

    python benchmarks/bench_hostile.py [--lines 10500000] [--format json]

Prints the compressed size, the time to the first problem on standard output, the whole run's wall
time, the lines explained per second, and the peak memory (max RSS) of the validating process: with
problems streamed out and a bounded summary, memory stays flat however many lines (issue 15, item 4).
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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
