"""The nightly job, night after night: a simulated room cut into days by hand order; each night
``analyzer decisions DAY --out STORE`` then ``analyzer audit --decisions STORE --out NIGHT`` (the look: the ledger
and the new rows). Prints and records what each look costs (night N's against night 1's) and, with ``--compare``,
the fixed-sample audit of every day's logs that night (``analyzer audit DAY1..DAYn --decisions STORE``): which
colluding pairs each flags, on which night and after how many hands together; honest pairs flagged or marked.

    python benchmarks/nightly_looks.py --nights 20 --per-night 300 --players 60 --colluders 3 --compare
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nightly_common import Results, analyzer, cut_days  # noqa: E402


def _key(players: list[str]) -> tuple[str, str]:
    a, b = sorted(players)
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nights", type=int, default=20)
    ap.add_argument("--per-night", type=int, default=300)
    ap.add_argument("--players", type=int, default=60)
    ap.add_argument("--colluders", type=int, default=3)
    ap.add_argument("--friends", type=int, default=2)
    ap.add_argument("--style", default="share")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--compare", action="store_true", help="also the fixed-sample audit of every day's logs, nightly")
    ap.add_argument("--compare-nights", type=int, default=None,
                    help="with --compare: the fixed-sample audit on nights 1..N and the last night only")
    ap.add_argument("--work", type=Path, default=None, help="folder for the room, store and outputs (default: temp)")
    ap.add_argument("--name", default=None, help="results file name (default nightly_looks[_compare]_<colluders>)")
    args = ap.parse_args()
    name = args.name or f"nightly_looks_c{args.colluders}" + ("_compare" if args.compare else "")
    res = Results(name, vars(args) | {"work": str(args.work)})
    work = args.work or Path(tempfile.mkdtemp(prefix="bieqi-nightly-"))
    work.mkdir(parents=True, exist_ok=True)
    log, truth_path = work / "room.jsonl.gz", work / "room.truth.json"
    if not log.exists():
        analyzer("simulate", "--hands", str(args.nights * args.per_night), "--players", str(args.players),
                 "--colluders", str(args.colluders), "--friends", str(args.friends), "--style", args.style,
                 "--seed", str(args.seed), "-o", str(log), "--truth", str(truth_path))
    truth = json.loads(truth_path.read_text())
    colluding = {_key(p["players"]) for p in truth["colluding_pairs"]}
    days = cut_days(log, work / "days", args.per_night, args.nights)
    store = work / "store"
    shutil.rmtree(store, ignore_errors=True)
    nights: list[dict[str, Any]] = []
    first_nightly: dict[tuple[str, str], tuple[int, int]] = {}
    first_fixed: dict[tuple[str, str], tuple[int, int]] = {}
    honest_marked: set[tuple[str, str]] = set()
    honest_flagged: set[tuple[str, str]] = set()
    final_fixed: set[tuple[str, str]] = set()
    for n, day in enumerate(days, 1):
        _, d_wall, d_cpu = analyzer("decisions", str(day), "--out", str(store), "--jobs", "1")
        out = work / f"night{n:03d}"
        _, l_wall, l_cpu = analyzer("audit", "--decisions", str(store), "--out", str(out), ok=(0, 1))
        doc = json.loads((out / "audit.json").read_text())
        row: dict[str, Any] = {"night": n, "decisions_wall_s": round(d_wall, 2), "look_wall_s": round(l_wall, 2),
                               "look_cpu_s": round(l_cpu, 2), "flagged": doc["flagged"], "review": doc["review"]}
        for p in doc["pairs"]:
            k = _key(p["players"])
            if p["verdict"] == "flagged" and k not in first_nightly:
                first_nightly[k] = (n, p["hands_together"])
            if p["verdict"] != "clear" and k not in colluding:
                honest_marked.add(k)
                if p["verdict"] == "flagged":
                    honest_flagged.add(k)
        due = args.compare_nights is None or n <= args.compare_nights or n == len(days)
        if args.compare and due:
            # the fixed-sample audit does not read the ledger: one written by an earlier run in this folder (whole:
            # the audit writes its files together) is read again, not rerun
            fixed = work / f"fixed{n:03d}"
            f_wall = f_cpu = None
            if not (fixed / "audit.json").exists():
                _, f_wall, f_cpu = analyzer("audit", *map(str, days[:n]), "--decisions", str(store), "--out",
                                            str(fixed), "--jobs", "1", ok=(0, 1))
            audit = json.loads((fixed / "audit.json").read_text())
            row |= {"fixed_wall_s": None if f_wall is None else round(f_wall, 2),
                    "fixed_cpu_s": None if f_cpu is None else round(f_cpu, 2)}
            flagged_now = set()
            for p in audit["pairs"]:
                if p["flagged"]:
                    k = _key(p["players"])
                    flagged_now.add(k)
                    first_fixed.setdefault(k, (n, p["hands_together"]))
            final_fixed = flagged_now
        nights.append(row)
        print(row, flush=True)
    res.table("nights", nights, page=False)
    first, last = nights[0], nights[-1]
    res.figure("look_wall_first_s", first["look_wall_s"], "s", "night 1's look, wall")
    res.figure("look_wall_last_s", last["look_wall_s"], "s", f"night {last['night']}'s look, wall")
    res.figure("look_ratio", round(last["look_wall_s"] / first["look_wall_s"], 2), "x",
               f"night {last['night']}'s look over night 1's (wall; goal <= 1.5)")
    res.figure("look_cpu_ratio", round(last["look_cpu_s"] / max(first["look_cpu_s"], 1e-9), 2), "x",
               f"night {last['night']}'s look over night 1's (CPU)")
    res.figure("honest_marked", len(honest_marked), "pairs", "honest pairs ever flagged or for review by a look")
    res.figure("honest_flagged", len(honest_flagged), "pairs", "honest pairs ever flagged by a look")
    pairs = []
    for k in sorted(colluding | set(first_fixed)):
        pairs.append({"pair": list(k), "colluding": k in colluding,
                      "nightly_night": first_nightly.get(k, (None, None))[0],
                      "nightly_hands": first_nightly.get(k, (None, None))[1],
                      "fixed_night": first_fixed.get(k, (None, None))[0],
                      "fixed_hands": first_fixed.get(k, (None, None))[1],
                      "fixed_final_flagged": k in final_fixed})
    res.table("pairs", pairs)
    for p in pairs:
        print(p)
    res.figure("colluding_flagged_nightly", sum(p["nightly_night"] is not None for p in pairs if p["colluding"]),
               f"of {len(colluding)}", "colluding pairs flagged by the nightly looks")
    if args.compare and first.get("fixed_wall_s") is not None:
        res.figure("fixed_look_wall_first_s", first["fixed_wall_s"], "s", "night 1's fixed-sample audit, wall")
        res.figure("fixed_look_wall_last_s", last["fixed_wall_s"], "s",
                   f"night {last['night']}'s fixed-sample audit of every day's logs, wall")
    if args.compare:
        missed = [p for p in pairs if p["fixed_final_flagged"] and p["nightly_night"] is None]
        res.figure("final_fixed_flagged", len(final_fixed), "pairs", "pairs the final night's fixed-sample audit flags")
        res.figure("final_fixed_missed_by_nightly", len(missed), "pairs",
                   "of those, never flagged by a nightly look (goal 0)")
        ratios = [p["nightly_hands"] / p["fixed_hands"] for p in pairs
                  if p["fixed_final_flagged"] and p["nightly_hands"] and p["fixed_hands"]]
        if ratios:
            res.figure("hands_ratio_max", round(max(ratios), 2), "x",
                       "hands together at the nightly alarm over those at the fixed-sample test's first flag, worst "
                       "pair (goal <= ~1.5)")
    res.write()


if __name__ == "__main__":
    main()
