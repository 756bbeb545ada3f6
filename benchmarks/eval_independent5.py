"""Audit every room of benchmarks/independent_sim5.py at 1,000 and 3,000 hands and print the measured tables.

    nice -n 19 python benchmarks/eval_independent5.py                       # 1,000 hands seed 51, 3,000 seed 53
    nice -n 19 python benchmarks/eval_independent5.py --seed 57             # both sizes with seed 57
    nice -n 19 python benchmarks/eval_independent5.py --rooms c-camo --sizes 1000

Each room is generated (cached under --work), validated (`analyzer validate`: must be 0 problems) and
audited (`analyzer audit --jobs 1`) with PYTHONPATH at this checkout. For each true pair: verdict, score,
rank among the room's pairs by score, hands together (and hands the help was in use); for pairs of two honest
players (friends included): flagged / review of how many and the top score; pairs of a colluder and an honest
player: flagged / review; honest players flagged in players.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import independent_sim5 as sim  # noqa: E402

DEFAULT_SEEDS = {1000: 51, 3000: 53}


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(["nice", "-n", "19", *cmd], env=env, capture_output=True, text=True)


def one(room: str, hands: int, seed: int, work: str) -> dict:
    base = os.path.join(work, f"{room}-{hands}-s{seed}")
    log = base + ".jsonl.gz"
    if not os.path.exists(log) or not os.path.exists(base + ".truth.json"):
        sim.write_room(room, hands, seed, log)
    truth = json.load(open(base + ".truth.json", encoding="utf-8"))
    v = run([sys.executable, "-m", "analyzer.cli", "validate", log, "--format", "json"])
    vj = json.loads(v.stdout)
    if vj["n_problems"] != 0 or vj["valid_hands"] != hands:
        raise SystemExit(f"{log}: {vj['n_problems']} problems, {vj['valid_hands']} valid of {hands}")
    out = base + ".audit"
    t0 = time.time()
    if not os.path.exists(os.path.join(out, "audit.json")):
        a = run([sys.executable, "-m", "analyzer.cli", "audit", log, "--out", out, "--jobs", "1"])
        if a.returncode not in (0, 1):
            raise SystemExit(f"audit {log}: exit {a.returncode}\n{a.stderr[-2000:]}")
    secs = time.time() - t0
    with open(os.path.join(out, "pairs.csv"), newline="", encoding="utf-8") as f:
        pairs = list(csv.DictReader(f))
    with open(os.path.join(out, "players.csv"), newline="", encoding="utf-8") as f:
        players = list(csv.DictReader(f))
    aj = json.load(open(os.path.join(out, "audit.json"), encoding="utf-8"))
    scores = sorted((float(p["score"]) for p in pairs), reverse=True)
    by = {frozenset((p["a"], p["b"])): p for p in pairs}

    def rank(sc: float) -> int:
        return 1 + sum(1 for x in scores if x > sc)

    colluders = set(truth["colluders"])
    res = {"room": room, "hands": hands, "seed": seed, "audit_seconds": round(secs, 1), "n_pairs": len(pairs),
           "n_players": len(players), "n_honest_players": sum(p["player"] not in colluders for p in players),
           "true": [], "friends": [], "groups": aj.get("groups", [])}
    for cp in truth["colluding_pairs"]:
        p = by.get(frozenset(cp["players"]))
        row = {"players": cp["players"], "hands_together": cp["hands_together"],
               "help_active_hands": cp["help_active_hands"], "colluding_hands": cp["colluding_hands"]}
        if p is None:
            row.update(verdict="(never together)" if cp["hands_together"] == 0 else "(not in pairs.csv)",
                       score=None, rank=None)
        else:
            sc = float(p["score"])
            row.update(verdict=p["verdict"], score=sc, rank=rank(sc), main=p["main_signal"],
                       audit_hands=int(p["hands_together"]))
        res["true"].append(row)
    for fp in truth["friend_pairs"]:
        p = by.get(frozenset(fp["players"]))
        res["friends"].append({"players": fp["players"], "hands_together": fp["hands_together"],
                               "verdict": p["verdict"] if p else None, "score": float(p["score"]) if p else None})
    hon = [p for p in pairs if p["a"] not in colluders and p["b"] not in colluders]
    mixed = [p for p in pairs if (p["a"] in colluders) != (p["b"] in colluders)]
    true_set = {frozenset(cp["players"]) for cp in truth["colluding_pairs"]}
    other_coll = [p for p in pairs if p["a"] in colluders and p["b"] in colluders
                  and frozenset((p["a"], p["b"])) not in true_set]
    top = max(hon, key=lambda p: float(p["score"])) if hon else None
    res["honest"] = {"n": len(hon), "flagged": sum(p["verdict"] == "flagged" for p in hon),
                     "review": sum(p["verdict"] == "review" for p in hon),
                     "top": float(top["score"]) if top else None,
                     "top_pair": [top["a"], top["b"], int(top["hands_together"]), top["main_signal"]] if top else None,
                     "marked": [[p["a"], p["b"], p["verdict"], float(p["score"]), int(p["hands_together"]),
                                 p["main_signal"]] for p in hon if p["verdict"] != "clear"]}
    res["mixed"] = {"n": len(mixed), "flagged": sum(p["verdict"] == "flagged" for p in mixed),
                    "review": sum(p["verdict"] == "review" for p in mixed),
                    "marked": [[p["a"], p["b"], p["verdict"], float(p["score"]), int(p["hands_together"])]
                               for p in mixed if p["verdict"] != "clear"]}
    res["colluders_not_true_pair"] = [[p["a"], p["b"], p["verdict"], float(p["score"]), int(p["hands_together"])]
                                      for p in other_coll]
    flagcol = "flag"
    res["players_flagged_honest"] = [[p["player"], p["hands"], p["signal_p"], p["dd_z"], p["level_z"]]
                                     for p in players if p[flagcol] == "True" and p["player"] not in colluders]
    res["players_flagged_colluders"] = [p["player"] for p in players if p[flagcol] == "True"
                                        and p["player"] in colluders]
    return res


def fmt_true(r: dict) -> str:
    cells = []
    for t in r["true"]:
        if t["score"] is None:
            cells.append(f"{t['verdict']} ({t['hands_together']})")
        else:
            cells.append(f"{t['verdict']} {t['score']:.1f} #{t['rank']} ({t['hands_together']}; "
                         f"help {t['help_active_hands']}; {t['main']})")
    return "; ".join(cells)


def fmt_false(r: dict) -> str:
    h = r["honest"]
    s = f"{h['flagged']} / {h['review']} of {h['n']} (top {h['top']:.2f})"
    m = r["mixed"]
    s += f"; mixed {m['flagged']} / {m['review']} of {m['n']}"
    s += f"; players {len(r['players_flagged_honest'])}"
    return s


def combine(paths: list[str]) -> None:
    """Compact tables over several runs: one table per size, a column per seed."""
    results = [r for p in paths for r in json.load(open(p, encoding="utf-8"))]
    short = {"flagged": "F", "review": "R", "clear": "c"}
    for size in sorted({r["hands"] for r in results}):
        rs = [r for r in results if r["hands"] == size]
        seeds = sorted({r["seed"] for r in rs})
        rooms = list(dict.fromkeys(r["room"] for r in rs))
        print(f"\n{size:,} hands. True pairs: F flagged / R review / c clear, score, #rank among the room's pairs "
              "(hands together / hands the help was used)\n")
        print("| room | " + " | ".join(f"seed {s}" for s in seeds) + " |")
        print("|---|" + "---|" * len(seeds))
        for room in rooms:
            cells = []
            for sd in seeds:
                r = next((x for x in rs if x["room"] == room and x["seed"] == sd), None)
                if r is None or not r["true"]:
                    cells.append("")
                    continue
                cells.append(", ".join(
                    f"{short.get(t['verdict'], t['verdict'])} {t['score']:.1f} #{t['rank']} "
                    f"({t['hands_together']}/{t['help_active_hands']})" if t["score"] is not None
                    else f"{t['verdict']} ({t['hands_together']})" for t in r["true"]))
            if any(cells):
                print(f"| {room} | " + " | ".join(cells) + " |")
        print(f"\n{size:,} hands. Pairs of two honest players: flagged / review of N (top score); pairs of a colluder "
              "and an honest player: flagged / review of N; honest players flagged in players.csv\n")
        print("| room | " + " | ".join(f"seed {s}" for s in seeds) + " |")
        print("|---|" + "---|" * len(seeds))
        for room in rooms:
            cells = []
            for sd in seeds:
                r = next((x for x in rs if x["room"] == room and x["seed"] == sd), None)
                if r is None:
                    cells.append("")
                    continue
                h, m = r["honest"], r["mixed"]
                c = f"{h['flagged']} / {h['review']} of {h['n']} ({h['top']:.2f})"
                if m["n"]:
                    c += f"; {m['flagged']} / {m['review']} of {m['n']}"
                c += f"; {len(r['players_flagged_honest'])}"
                cells.append(c)
            print(f"| {room} | " + " | ".join(cells) + " |")
        tot = {k: sum(r["honest"][k] for r in rs) for k in ("n", "flagged", "review")}
        mt = {k: sum(r["mixed"][k] for r in rs) for k in ("n", "flagged", "review")}
        fr = [f for r in rs for f in r["friends"]]
        tp = [t for r in rs for t in r["true"] if t["score"] is not None]
        print(f"\nIn all at {size:,}: honest pairs {tot['flagged']} flagged / {tot['review']} review of {tot['n']}; "
              f"colluder+honest pairs {mt['flagged']} / {mt['review']} of {mt['n']}; friend pairs "
              f"{sum(f['verdict'] != 'clear' for f in fr)} marked of {len(fr)} (max {max(f['score'] for f in fr):.2f}); "
              f"true pairs {sum(t['verdict'] == 'flagged' for t in tp)} flagged / "
              f"{sum(t['verdict'] == 'review' for t in tp)} review of {len(tp)}; honest players flagged "
              f"{sum(len(r['players_flagged_honest']) for r in rs)} of "
              f"{sum(r.get('n_honest_players', 0) for r in rs) or '?'} honest player-rooms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, help="one seed for every size (default 51 at 1,000, 53 at 3,000)")
    ap.add_argument("--sizes", default="1000,3000")
    ap.add_argument("--rooms", default=",".join(sim.ROOMS))
    ap.add_argument("--work", default="/tmp/indep5")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--combine", nargs="+", metavar="JSON", help="only print compact tables of earlier --json files")
    a = ap.parse_args(argv)
    if a.combine:
        combine(a.combine)
        return 0
    os.makedirs(a.work, exist_ok=True)
    sizes = [int(x) for x in a.sizes.split(",")]
    rooms = a.rooms.split(",")
    results = []
    for size in sizes:
        seed = a.seed if a.seed is not None else DEFAULT_SEEDS.get(size, 51)
        for room in rooms:
            r = one(room, size, seed, a.work)
            results.append(r)
            print(f"[{room} {size} s{seed}: {r['n_pairs']} pairs, audit {r['audit_seconds']} s] "
                  f"true: {fmt_true(r)} | honest: {fmt_false(r)}", file=sys.stderr, flush=True)
    cols = [(s, a.seed if a.seed is not None else DEFAULT_SEEDS.get(s, 51)) for s in sizes]
    head = " | ".join(f"{s:,} (seed {sd})" for s, sd in cols)
    print("\nTrue pairs: verdict score #rank among the room's pairs (hands together; hands the help was used)\n")
    print(f"| room | {head} |")
    print("|---|" + "---|" * len(cols))
    for room in rooms:
        rr = [next(r for r in results if r["room"] == room and r["hands"] == s) for s, _ in cols]
        if not rr[0]["true"]:
            continue
        print(f"| {room} | " + " | ".join(fmt_true(r) for r in rr) + " |")
    print("\nPairs of two honest players flagged / review of how many (top honest score); pairs of a colluder and an"
          " honest player flagged / review; honest players flagged in players.csv\n")
    print(f"| room | {head} |")
    print("|---|" + "---|" * len(cols))
    for room in rooms:
        rr = [next(r for r in results if r["room"] == room and r["hands"] == s) for s, _ in cols]
        print(f"| {room} | " + " | ".join(fmt_false(r) for r in rr) + " |")
    print("\nDetails: friend pairs, marked honest pairs, flagged players, groups")
    for r in results:
        extra = []
        if r["friends"]:
            extra.append("friends " + ", ".join(f"{'+'.join(f['players'])} {f['verdict']} {f['score']:.2f} "
                                                 f"({f['hands_together']})" for f in r["friends"]))
        if r["honest"]["marked"]:
            extra.append(f"honest marked {r['honest']['marked']}")
        if r["mixed"]["marked"]:
            extra.append(f"mixed marked {r['mixed']['marked']}")
        if r["colluders_not_true_pair"]:
            extra.append(f"colluder pairs not helping {r['colluders_not_true_pair']}")
        if r["players_flagged_honest"]:
            extra.append(f"honest players flagged {r['players_flagged_honest']}")
        if r["players_flagged_colluders"]:
            extra.append(f"colluders flagged in players.csv {r['players_flagged_colluders']}")
        if r["groups"]:
            extra.append("groups " + json.dumps(r["groups"])[:300])
        extra.append(f"top honest pair {r['honest']['top_pair']}")
        print(f"- {r['room']} {r['hands']} s{r['seed']}: " + "; ".join(extra))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
