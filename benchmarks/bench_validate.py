"""Validation speed against the ceiling, bare JSON parsing: prints both rates and their ratio.

    python benchmarks/bench_validate.py [--hands 100000] [--seed 1]

Makes a corpus of legal hands (seeded random play), times orjson.loads on every line, then times
``analyzer validate`` (a fresh process, start-up included) and the in-process ``validate()``.
Goal (issue 2): validation at least half as fast as bare parsing (ratio >= 0.5).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.logs import write_records  # noqa: E402
from analyzer.validate import validate  # noqa: E402
from analyzer.variants.bieqi import make_record, play_random, random_deal  # noqa: E402


def corpus(n: int, seed: int):
    rng = random.Random(seed)
    for k in range(n):
        deal = random_deal(rng)
        st = play_random(deal, rng)
        ms = [700 * (i + 1) for i in range(52)]
        yield make_record(st, deal, hand_id=f"b{k}", players=[f"u{x}" for x in rng.sample(range(500), 4)],
                          table_id=f"t{k // 20}", ms=ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        t = time.perf_counter()
        write_records(path, corpus(args.hands, args.seed))
        size = path.stat().st_size
        print(f"corpus: {args.hands} legal hands, {size / 1e6:.1f} MB, made in {time.perf_counter() - t:.1f} s")
        # warm the compiled kernel's on-disk cache so the timed run measures validation, not compiling
        subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", str(path)], capture_output=True,
                       check=False, cwd=Path(__file__).resolve().parents[1])

        t = time.perf_counter()
        with open(path, "rb") as f:
            n = sum(1 for line in f if orjson.loads(line) is not None)
        parse_s = time.perf_counter() - t

        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", str(path)], capture_output=True,
                              text=True, check=False, cwd=Path(__file__).resolve().parents[1])
        cli_s = time.perf_counter() - t
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

        t = time.perf_counter()
        s = validate([str(path)])
        api_s = time.perf_counter() - t
        assert s.valid_hands == n == args.hands
    print(f"orjson parse only : {n / parse_s:10,.0f} hands/s  ({parse_s:.2f} s)")
    print(f"analyzer validate : {n / cli_s:10,.0f} hands/s  ({cli_s:.2f} s, new process incl. start-up)")
    print(f"validate() in-proc: {n / api_s:10,.0f} hands/s  ({api_s:.2f} s)")
    print(f"ratio validate/parse: CLI {parse_s / cli_s:.2f}, in-process {parse_s / api_s:.2f} (goal >= 0.5)")


if __name__ == "__main__":
    main()
