"""Validation speed against the ceiling, bare JSON parsing: prints both rates and their ratio.

    python -m benchmarks.bench_validate [--hands 20000] [--seed 1] [--small-runs 5] [--runs 3] [--fifo]

Writes results/validation.json.

First the start-up: ``analyzer validate samples/legal.jsonl`` (7 hands) in a fresh process, the best
and the median of a few runs (goal: <= 0.4 s wall). Then makes a corpus of legal hands (seeded random
play), times orjson.loads on every line, the in-process ``validate()`` on one core, and ``analyzer
validate`` as a user runs it (a fresh process, start-up and its worker processes included). Bare
parsing and the CLI are timed in turn ``--runs`` times and the ratio is taken within each pair (the
median is printed), so a load that comes and goes moves both sides of a ratio alike. CPU time is
printed beside wall time because a busy machine stretches wall time for both sides unevenly.
``--fifo`` (Linux, as root) times those pairs at real-time priority, ahead of every other process: on
a shared machine it stands in for a quiet one (the other work waits the few seconds they take).
Goals: a small file in <= 0.4 s wall; 20,000 hands end to end (the CLI, start-up
included) at least half as fast as bare parsing (ratio >= 0.5).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.logs import write_records  # noqa: E402
from analyzer.validate import validate  # noqa: E402
from analyzer.variants.bieqi import FAST_PATH_MIN, make_record, play_random, random_deal  # noqa: E402


def corpus(n: int, seed: int):
    rng = random.Random(seed)
    for k in range(n):
        deal = random_deal(rng)
        st = play_random(deal, rng)
        ms = [700 * (i + 1) for i in range(52)]
        yield make_record(st, deal, hand_id=f"b{k}", players=[f"u{x}" for x in rng.sample(range(500), 4)],
                          table_id=f"t{k // 20}", ms=ms)


def breakdown(path: Path, batch: int = 1024) -> dict[str, float]:
    """CPU microseconds per hand of the check's main parts, in this (warm) process."""
    import gc

    import numpy as np

    from analyzer.kernels.bieqi import check_lines, scan_hands
    from analyzer.kernels.tables import NEXT, RANK_OF, SUIT_OF
    from analyzer.logs import decoder
    from analyzer.variants.base import HandCheck

    lines = [line.rstrip(b"\n") for line in open(path, "rb")]
    dec = decoder(lines=True)
    gc.disable()  # as validate runs the collector rarely: 20,000 records held at once would trigger it often
    c = time.process_time()
    recs = [dec.decode(line) for line in lines]
    decode = time.process_time() - c
    c = time.process_time()
    for i in range(0, len(lines), batch):
        part = lines[i:i + batch]
        n = len(part)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum([len(x) for x in part], out=offsets[1:])
        scan_hands(np.frombuffer(b"".join(part), np.uint8), offsets, NEXT, RANK_OF, SUIT_OF,
                   np.zeros((n, 4), np.int64), np.zeros((n, 4), np.bool_), np.zeros(n, np.int64))
    scan = time.process_time() - c
    c = time.process_time()
    for i in range(0, len(lines), batch):
        check_lines(recs[i:i + batch], lines[i:i + batch], HandCheck)
    fast = time.process_time() - c
    gc.enable()
    n = len(lines) / 1e6
    return {"decode (deal and actions left raw)": decode / n,
            "compiled scan (repeated keys, deal and actions read from the bytes, replay)": scan / n,
            "results settled and compared": (fast - scan) / n}


STARTUP_PARTS = """
import atexit, gc, os, sys, time
if FREEZE:  # as the command does: the heap frozen at exit, numpy's BLAS on one thread
    atexit.register(gc.freeze)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
t = [time.process_time()]
import analyzer.cli, analyzer.validate
t.append(time.process_time())
from analyzer.logs import decoder
decoder(lines=True)
t.append(time.process_time())
import numpy
t.append(time.process_time())
import numba
t.append(time.process_time())
import analyzer.kernels.bieqi as k
t.append(time.process_time())
if FULL_SETUP:  # what numba does before its first cached load or compile, and kernels.load_cached skips
    from numba.core.registry import cpu_target
    cpu_target.target_context.refresh()
k._ready("_scan", "settle_hands")
t.append(time.process_time())
print(" ".join(f"{b - a:.3f}" for a, b in zip(t, t[1:])))
"""
STARTUP_NAMES = ["interpreter start and exit", "the command's imports", "the variants and the decoder", "numpy",
                 "numba", "the kernels' modules", "the kernels loaded from the cache"]


def startup_parts(root: Path, runs: int = 3, *, freeze: bool = True, full_setup: bool = False) -> list[float]:
    """CPU seconds of each part of a fresh process's start-up before its first compiled batch, and of its
    exit (medians): as the command runs (``freeze``: the heap frozen at exit and numpy's BLAS on one
    thread; no ``full_setup``)."""
    rows = []
    code = f"FREEZE = {freeze}\nFULL_SETUP = {full_setup}\n" + STARTUP_PARTS
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd=root).stdout.split()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        parts = [float(x) for x in out]
        rows.append([total - sum(parts), *parts])  # before the first mark: the interpreter; after the last: exit
    return [statistics.median(col) for col in zip(*rows)]


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small-runs", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="bare parsing and the CLI timed in turn this many times")
    ap.add_argument("--fifo", action="store_true", help="time the pairs at real-time priority (Linux, root)")
    args = ap.parse_args(argv)
    res = Results("validation", "Validation speed", "validation", command_line("benchmarks.bench_validate", argv),
                  parameters=dict(vars(args)),
                  about="`analyzer validate` on a small file in a fresh process; `validate()` in one process on one "
                        "core; and the command end to end on a corpus of legal hands against bare `orjson.loads` "
                        "parsing of the same lines, timed in turn (the ratio taken within each pair).")
    root = Path(__file__).resolve().parents[1]
    small, small_cpu = [], []
    for _ in range(args.small_runs):
        t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", "samples/legal.jsonl"],
                              capture_output=True, check=False, cwd=root)
        small.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        small_cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        assert proc.returncode == 0, proc.stderr
    # CPU time is what the wall time is on an idle machine (one process, no waiting on others)
    res.figure("small_wall_best", min(small), "s", "a small file (7 hands) in a fresh process: wall, best", goal="<= 0.4")
    res.figure("small_wall_median", statistics.median(small), "s", "a small file in a fresh process: wall, median")
    res.figure("small_cpu", statistics.median(small_cpu), "s", "a small file in a fresh process: CPU, median")
    parts = startup_parts(root)
    res.table("startup", "Start-up before the first compiled batch, CPU s (medians of 3 fresh processes)",
              [*STARTUP_NAMES, "in all"], [[*parts, sum(parts)]])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        t = time.perf_counter()
        write_records(path, corpus(args.hands, args.seed))
        size = path.stat().st_size
        print(f"corpus: {args.hands} legal hands, {size / 1e6:.1f} MB, made in {time.perf_counter() - t:.1f} s")
        # warm the compiled kernel's on-disk cache so the timed run measures validation, not compiling
        subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", str(path)], capture_output=True,
                       check=False, cwd=Path(__file__).resolve().parents[1])

        def parse() -> tuple[int, float, float]:
            t, c = time.perf_counter(), time.process_time()
            with open(path, "rb") as f:
                n = sum(1 for line in f if orjson.loads(line) is not None)
            return n, time.perf_counter() - t, time.process_time() - c

        n, parse_s, parse_cpu = parse()

        warm = Path(tmp) / "warm.jsonl"  # load the compiled kernels first: we time throughput here
        # enough hands for the compiled path (small batches skip it, and numba with it)
        warm.write_bytes(b"".join(line for _, line in zip(range(2 * FAST_PATH_MIN), open(path, "rb"))))
        validate([str(warm)], jobs=1)
        t, c = time.perf_counter(), time.process_time()
        s = validate([str(path)], jobs=1)
        one_s, one_cpu = time.perf_counter() - t, time.process_time() - c
        assert s.valid_hands == n == args.hands

        cpu: dict[str, float] = {}

        def cli(target: Path, *extra: str) -> float:
            t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", str(target), *extra],
                                  capture_output=True, text=True, check=False, cwd=Path(__file__).resolve().parents[1])
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its worker processes
            cpu[str(target)] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            return time.perf_counter() - t

        pairs = []  # (parse wall, parse CPU, CLI wall, CLI CPU), timed in turn
        if args.fifo:  # the command and its workers inherit it
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            for _ in range(args.runs):
                _, pw, pc = parse()
                cw = cli(path)
                pairs.append((pw, pc, cw, cpu[str(path)]))
            start_s = cli(warm, "--jobs", "2")  # start-up alone: a new process checking 128 hands (one range)
        finally:
            if args.fifo:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        parse_s, parse_cpu, cli_s, cli_cpu = (statistics.median(x) for x in zip(*pairs))
        ratios = [pw / cw for pw, _, cw, _ in pairs]
        parts = breakdown(path)

    res.figure("parse_hands_cpu", n / parse_cpu, "hands/CPU-s", "bare orjson parsing")
    res.figure("one_core_hands_cpu", n / one_cpu, "hands/CPU-s", "validate() on one core, warm")
    res.figure("one_core_hands_wall", n / one_s, "hands/s", "validate() on one core, warm: wall")
    res.figure("one_core_us", 1e6 * one_cpu / n, "µs", "validate() on one core: CPU a hand")
    res.figure("cli_hands_wall", n / cli_s, "hands/s", f"analyzer validate end to end, {n:,} hands: wall")
    res.figure("cli_wall", cli_s, "s", f"analyzer validate end to end, {n:,} hands (start-up {start_s:.2f} s)")
    res.figure("cli_cpu", cli_cpu, "s", "analyzer validate end to end: CPU of every process")
    res.figure("ratio_cli", statistics.median(ratios), "", "ratio to bare parsing, the command end to end (wall, "
               "median of the runs' ratios)", goal=">= 0.5")
    res.figure("ratio_one_core", parse_cpu / one_cpu, "", "ratio to bare parsing, validate() on one core (CPU)")
    res.table("per_hand", "Per hand, one process, CPU µs", [*parts, "whole check", "bare parsing"],
              [[*parts.values(), 1e6 * one_cpu / n, 1e6 * parse_cpu / n]])
    if args.fifo:
        res.note("The pairs were timed at real-time priority (--fifo).")
    res.write()


if __name__ == "__main__":
    main()
