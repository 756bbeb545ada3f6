"""A hostile input's cost: a small gzip of millions of bad lines through ``analyzer validate``.

    python -m benchmarks.bench_hostile [--lines 10500000] [--format json]      # results/hostile.json
    python -m benchmarks.bench_hostile --wide 3 [--items 500000]               # results/hostile_wide.json

Prints the compressed size, the time to the first problem on standard output, the whole run's wall
time, the lines explained per second, and the peak memory (max RSS) of the validating process: with
problems streamed out and a bounded summary, memory stays flat however many lines.

``--wide N``: N lines just under the 1 MB line limit, each a hand whose first seat's deal is ``--items`` bad items
(0, not a card code): every line is parsed and explained against the schema, which finds an error an item; the
explainer draws at most ``explain.MAX_SCHEMA_ERRORS`` of them. Prints the wall time a line and the peak memory.
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

from benchmarks.results import Results, command_line

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_500_000)
    ap.add_argument("--format", choices=["text", "json"], default="json")
    ap.add_argument("--wide", type=int, default=0, help="lines of --items bad items each, instead")
    ap.add_argument("--items", type=int, default=500_000)
    args = ap.parse_args(argv)
    if args.wide:
        wide(args.wide, args.items, argv)
        return
    res = Results("hostile", "A hostile input: millions of bad lines", "hostile",
                  command_line("benchmarks.bench_hostile", argv), parameters={"lines": args.lines, "format": args.format},
                  about="A small gzip of lines that are no JSON through `analyzer validate` in a fresh process: every "
                        "line explained, problems streamed out, the summary bounded.")
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
        res.figure("input_kib", path.stat().st_size / 1024, "KiB", f"the input: {args.lines:,} bad lines, gzipped")
        res.figure("exit", proc.returncode, "", "exit code")
        res.figure("first_problem_s", first, "s", "time to the first byte of output")
        res.figure("wall_s", wall, "s", "the whole run")
        res.figure("lines_a_second", args.lines / wall, "lines/s", "bad lines explained a second")
        res.figure("peak_mib", rss / 1024, "MiB", "peak memory of the validating process")
    res.write()


def wide(lines: int, items: int, argv: list[str] | None) -> None:
    """``lines`` lines of a hand whose deal's first seat holds ``items`` zeros, validated in a fresh process."""
    import json

    res = Results("hostile_wide", "A hostile input: lines just under the length limit", "hostile",
                  command_line("benchmarks.bench_hostile", argv), parameters={"wide": lines, "items": items},
                  about="Lines just under the 1 MB limit, each a hand whose first seat holds hundreds of thousands "
                        "of bad items: every line parsed and explained against the schema.")
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
        res.note(f"exit code {proc.returncode}; {said}")
        res.figure("line_mb", size / 1e6, "MB", "a line's size")
        res.figure("s_a_line", wall / lines, "s", "wall time a line, the start-up included")
        res.figure("peak_mib", rss / 1024, "MiB", "peak memory of the validating process")
    res.write()


if __name__ == "__main__":
    main()
