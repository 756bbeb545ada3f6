"""Does the audit change with the number of true-deal rollouts? Prints whether audit.json is the same
for each --dd-samples and the time each run took (the reference policy is deterministic at noise 0).

Run: ``python benchmarks/check_dd_samples.py [--hands 150] [--dd 1 8]`` (reads samples/demo-room.jsonl.gz).
"""

from __future__ import annotations

import argparse
import gzip
import os
import tempfile
import time
from pathlib import Path

from analyzer.audit.core import run_audit

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=150)
    ap.add_argument("--dd", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--samples", type=int, default=16)
    args = ap.parse_args()
    with gzip.open(ROOT / "samples" / "demo-room.jsonl.gz", "rb") as f:
        lines = [f.readline() for _ in range(args.hands)]
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "room.jsonl")
        Path(log).write_bytes(b"".join(lines))
        results = {}
        for dd in args.dd:
            t = time.perf_counter()
            audit = run_audit([log], samples=args.samples, dd_samples=dd).result
            print(f"dd_samples={dd}: {time.perf_counter() - t:.1f} s (load {os.getloadavg()[0]:.1f})")
            audit.pop("options")
            results[dd] = audit
    first = results[args.dd[0]]
    print("audit.json identical for every dd_samples:", all(r == first for r in results.values()))


if __name__ == "__main__":
    main()
