"""What looking for repeated keys costs the validator: the generic compiled scan against the standard game's fused one.

    python benchmarks/bench_keyscan.py [--hands 20000] [--rounds 4]

Prints CPU microseconds per hand (wall time on a shared machine is noise), every round, of
``kernels.jsonkeys.maybe_duplicate_keys`` (the scan every variant's lines get unless the variant reads
its lines itself) and of ``kernels.bieqi.scan_hands`` (the standard game's one pass: repeated keys,
the deal and actions read from the bytes, and the replay). Legal hands of seeded random play, one core.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from analyzer.kernels.bieqi import scan_hands  # noqa: E402
from analyzer.kernels.jsonkeys import maybe_duplicate_keys  # noqa: E402
from analyzer.kernels.tables import NEXT, RANK_OF, SUIT_OF  # noqa: E402
from analyzer.logs import format_record  # noqa: E402
from conftest import legal_record  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    lines = [format_record(legal_record(i)) for i in range(args.hands)]
    n = len(lines)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum([len(x) for x in lines], out=offsets[1:])
    blob = np.frombuffer(b"".join(lines), np.uint8)

    def fused() -> None:
        scan_hands(blob, offsets, NEXT, RANK_OF, SUIT_OF, np.zeros((n, 4), np.int64), np.zeros((n, 4), np.bool_),
                   np.zeros(n, np.int64))

    runs = {"repeated keys alone (jsonkeys)": lambda: maybe_duplicate_keys(blob, offsets),
            "the standard game's fused scan (keys, deal, actions, replay)": fused}
    for f in runs.values():
        f()  # load the compiled code
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, f in runs.items():
            t = time.process_time()
            f()
            times[name].append(1e6 * (time.process_time() - t) / n)
    for name, xs in times.items():
        print(f"{name}: {', '.join(f'{x:.1f}' for x in xs)} us of CPU a hand; best {min(xs):.1f}")
    print(f"{n} hands, {blob.size / n:,.0f} bytes a line; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
