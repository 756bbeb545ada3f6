"""What a nightly look costs on night 1 and on night N, timed interleaved on the same load: from a store of N days
(``benchmarks/nightly_looks.py``'s work folder), night 1 is a copy holding day 1's parts and no ledger, night N a copy
holding every part and the ledger of days 1..N-1; each repetition looks at a fresh copy of each, one after the other.

    python benchmarks/nightly_look_cost.py --work /tmp/bieqi-nightly-XXXX --reps 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nightly_common import Results, analyzer  # noqa: E402


def _night_one(store: Path, dst: Path) -> None:
    """A copy of ``store`` with only its first addition's parts (the ledger's day 1), and no ledger."""
    import orjson

    day1 = orjson.loads((store / "_ledger" / "day-000001" / "day.json").read_bytes())["parts"]
    dst.mkdir()
    for name in os.listdir(store):
        if name == "_common_metadata" or name in day1:
            shutil.copy2(store / name, dst / name)


def _night_last(store: Path, dst: Path) -> int:
    """A copy of ``store`` whose ledger lacks its last day (the look then adds it); the night's number."""
    shutil.copytree(store, dst)
    days = sorted((dst / "_ledger").glob("day-*"))
    shutil.rmtree(days[-1])
    return len(days)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="a nightly_looks.py work folder (its store and ledger)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    res = Results("nightly_look_cost", {"work": str(args.work), "reps": args.reps})
    store = args.work / "store"
    tmp = Path(tempfile.mkdtemp(prefix="bieqi-lookcost-"))
    walls: dict[str, list[float]] = {"first": [], "last": []}
    cpus: dict[str, list[float]] = {"first": [], "last": []}
    loads = []
    night = 0
    try:
        for r in range(args.reps):
            for which in ("first", "last"):
                dst = tmp / f"{which}{r}"
                if which == "first":
                    _night_one(store, dst)
                else:
                    night = _night_last(store, dst)
                loads.append(round(os.getloadavg()[0], 2))
                _, wall, cpu = analyzer("audit", "--decisions", str(dst), "--out", str(tmp / f"out-{which}{r}"),
                                        ok=(0, 1))
                walls[which].append(wall)
                cpus[which].append(cpu)
                print(which, round(wall, 2), round(cpu, 2), flush=True)
                shutil.rmtree(dst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res.table("looks", [{"night": k, "wall_s": [round(x, 2) for x in walls[k]], "cpu_s": [round(x, 2) for x in cpus[k]]}
                        for k in walls], page=False)
    res.figure("loads", loads, "", "1-minute load before each look")
    w1, wn = statistics.median(walls["first"]), statistics.median(walls["last"])
    c1, cn = statistics.median(cpus["first"]), statistics.median(cpus["last"])
    res.figure("look_wall_first_s", round(w1, 2), "s", "night 1's look, wall, median")
    res.figure("look_wall_last_s", round(wn, 2), "s", f"night {night}'s look, wall, median")
    res.figure("look_wall_ratio", round(wn / w1, 2), "x", f"night {night} over night 1, wall (goal <= 1.5)")
    res.figure("look_cpu_first_s", round(c1, 2), "s", "night 1's look, CPU, median")
    res.figure("look_cpu_last_s", round(cn, 2), "s", f"night {night}'s look, CPU, median")
    res.figure("look_cpu_ratio", round(cn / c1, 2), "x", f"night {night} over night 1, CPU")
    res.write()


if __name__ == "__main__":
    main()
