"""Bytes validation holds for every hand it has read.

Run: ``python -m benchmarks.bench_validate_memory [--hands 1024 4096]`` (writes results/validation_memory.json).
Builds a log of copies of a simulated 借牌 room (every copy at tables and with people of its own, so no hand repeats
another), streams it through ``generate_checked`` as ``analyzer validate`` does, and fits the memory traced
(tracemalloc) against the hands read over the second half of the run: the slope is what each further hand costs
(hash ids, deal keys, tables).
"""

from __future__ import annotations

import argparse
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import orjson

from analyzer.logs import format_record
from analyzer.simulate.borrow import simulate
from analyzer.validate import generate_checked
from benchmarks.results import Results, command_line

BATCH = 64


def write_log(path: Path, n: int) -> None:
    base = [orjson.loads(format_record(r)) for r in simulate(hands=64, players=8, seed=1).records]
    with path.open("wb") as f:
        for k in range(n):
            copy = k // len(base)
            obj = dict(base[k % len(base)], hand_id=f"h{k}")
            obj["table_id"] = f"r{copy}-{obj['table_id']}"
            obj["players"] = [f"{p}r{copy}" for p in obj["players"]]
            f.write(orjson.dumps(obj) + b"\n")


def bytes_per_hand(path: Path, n: int) -> float:
    xs: list[int] = []
    ys: list[int] = []
    tracemalloc.start()
    try:
        for i, _ in enumerate(generate_checked([str(path)], batch_size=BATCH, keep_records=False)):
            if (i + 1) % BATCH == 0 and i + 1 >= n // 2:
                xs.append(i + 1)
                ys.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    return float(np.polyfit(xs, ys, 1)[0])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, nargs="+", default=[1024, 4096])
    args = ap.parse_args(argv)
    res = Results("validation_memory", "Memory validation keeps a hand", "validation-memory",
                  command_line("benchmarks.bench_validate_memory", argv), parameters={"hands": args.hands},
                  about="Bytes validation holds for every further hand it reads (ids, deal keys, tables for the "
                        "cross-hand checks): the slope of traced memory over the second half of a log of distinct "
                        "借牌 hands, streamed as `analyzer validate` streams it.")
    with tempfile.TemporaryDirectory() as d:
        for n in args.hands:
            path = Path(d) / f"room-{n}.jsonl"
            write_log(path, n)
            res.figure(f"bytes_a_hand_{n}", bytes_per_hand(path, n), "bytes", f"bytes held a further hand, {n:,} hands",
                       goal="<= 600")
    res.write()


if __name__ == "__main__":
    main()
