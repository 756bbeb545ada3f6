"""What the duplicate-key scan costs the validator: in-process ``validate()`` with and without it, alternated.

    python benchmarks/bench_keyscan.py [--hands 20000] [--rounds 4]

Prints hands/s by CPU time (wall time on a shared machine is noise) for both, every round, and the
ratio of the best rounds. Legal hands of seeded random play, one core.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import analyzer.validate as v  # noqa: E402
from analyzer.logs import write_records  # noqa: E402
from conftest import legal_record  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "legal.jsonl")
        write_records(path, (legal_record(i) for i in range(args.hands)))
        scan = v._refuse_duplicate_keys
        v.validate([path], jobs=1)  # compile and warm up
        rates: dict[str, list[float]] = {"with the scan": [], "without": []}
        for _ in range(args.rounds):
            for name in rates:
                v._refuse_duplicate_keys = scan if name == "with the scan" else (lambda lines, decoded: None)
                t = time.process_time()
                s = v.validate([path], jobs=1)
                rates[name].append(args.hands / (time.process_time() - t))
                assert s.valid_hands == args.hands
        for name, xs in rates.items():
            print(f"{name}: {', '.join(f'{x:,.0f}' for x in xs)} hands/s (CPU time); best {max(xs):,.0f}")
        print(f"best with / best without: {max(rates['with the scan']) / max(rates['without']):.3f}")
        print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
