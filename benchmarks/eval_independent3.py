#!/usr/bin/env python3
"""Measure `analyzer audit` and `analyzer players` on the rooms of benchmarks/independent_sim3.py.

    nice -n 19 python benchmarks/eval_independent3.py [--sizes 1000,3000] [--rooms a,b] [--fresh]

Logs, decision stores and outputs are cached under /tmp/indep3 (--cache). For each room and size:
simulate (1,000 hands: seed 11; 3,000 hands: seed 31 -- independent rooms), validate (must be clean),
`analyzer decisions` once, then `analyzer audit --decisions` and `analyzer players --decisions`
(the same rows both commands would compute), one command at a time, with this checkout's code
(PYTHONPATH = the repository root). Prints per room: each true pair's verdict, score, rank among all
pairs and hands together; the honest pairs flagged or marked for review (false alarms), split into
pairs of two honest players and pairs with one cheater in them; the players flagged by `players`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIM = os.path.join(HERE, "independent_sim3.py")
ROOMS = ["honest-mix", "honest-friends", "honest-noisy", "soft", "highmult", "rotating",
         "occasional", "feeder", "coverinfo", "noisy-pair", "lone"]
SEEDS = {1000: 11, 3000: 31}


def run(cmd, ok=(0,), **kw):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    if r.returncode not in ok:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r


def analyzer(*args, ok=(0,)):
    return run(["nice", "-n", "19", sys.executable, "-m", "analyzer.cli", *args], ok=ok)


def prepare(room, n, cache, fresh):
    seed = SEEDS.get(n, 7 + n)
    base = os.path.join(cache, "%s-%d-s%d" % (room, n, seed))
    log = base + ".jsonl.gz"
    if not os.path.exists(log) or fresh:
        run(["nice", "-n", "19", sys.executable, SIM, "--room", room, "--hands", str(n),
             "--seed", str(seed), "--out", log])
    out = os.path.join(cache, "out", "%s-%d-s%d" % (room, n, seed))
    os.makedirs(out, exist_ok=True)
    aud = os.path.join(out, "audit")
    pls = os.path.join(out, "players.json")
    t0 = time.time()
    if fresh or not os.path.exists(os.path.join(aud, "audit.json")) or not os.path.exists(pls):
        v = analyzer("validate", "--format", "json", log, ok=(0, 1))
        vj = json.loads(v.stdout)
        if vj["n_problems"]:
            sys.exit("%s: validator problems %s" % (log, vj["problem_counts"]))
        store = os.path.join(out, "store")
        if fresh or not os.path.exists(store):
            analyzer("decisions", log, "-o", store)
        analyzer("audit", log, "--decisions", store, "--out", aud, ok=(0, 1))
        analyzer("players", log, "--decisions", store, "-o", pls)
    return log, base + ".truth.json", aud, pls, time.time() - t0


def evaluate(room, n, cache, fresh):
    log, tpath, aud, pls, secs = prepare(room, n, cache, fresh)
    truth = json.load(open(tpath))
    audit = json.load(open(os.path.join(aud, "audit.json")))
    players = json.load(open(pls))
    role = {p: v["role"] for p, v in truth["players"].items()}
    pairs = audit["pairs"]
    rank = {}
    for i, p in enumerate(pairs):
        rank[tuple(sorted(p["players"]))] = p.get("rank", i + 1)
    by = {tuple(sorted(p["players"])): p for p in pairs}
    true_pairs = {tuple(p["players"]): p for p in truth["colluding_pairs"]}
    friends = {tuple(p["players"]) for p in truth["friend_pairs"]}
    rows = []
    for key, tp in true_pairs.items():
        p = by.get(key)
        if p is None:
            rows.append(dict(pair=key, style=tp["style"], verdict="absent", score=None, rank=None,
                             together=tp["hands_together"], on=tp["colluding_hands"]))
            continue
        rows.append(dict(pair=key, style=tp["style"], verdict=p["verdict"], score=p["score"],
                         rank=rank[key], together=p["hands_together"], on=tp["colluding_hands"],
                         signal=p.get("main_signal")))
    alarms = []
    cheat = {q for k in true_pairs for q in k} | set(truth["lone_cheaters"])
    n_honest = n_mixed = 0
    for p in pairs:
        key = tuple(sorted(p["players"]))
        if key in true_pairs:
            continue
        kind = "honest" if not (set(key) & cheat) else "with-cheater"
        if kind == "honest":
            n_honest += 1
        else:
            n_mixed += 1
        if p["verdict"] != "clear":
            alarms.append(dict(pair=key, kind=kind, friend=key in friends, verdict=p["verdict"],
                               score=p["score"], rank=rank[key], together=p["hands_together"],
                               signal=p.get("main_signal"),
                               case=p.get("case", {}).get("lead") if isinstance(p.get("case"), dict) else None))
    friend_rows = []
    for key in friends:
        p = by.get(key)
        if p:
            friend_rows.append(dict(pair=key, verdict=p["verdict"], score=p["score"], rank=rank[key],
                                    together=p["hands_together"]))
    flagged_players = [dict(player=r["player"], role=role.get(r["player"], "?"), p=r.get("signal_p"),
                            q=r.get("signal_q"), skill=r.get("skill"), partner=r.get("partner"))
                       for r in players if r.get("flag")]
    lone = []
    for pid in truth["lone_cheaters"]:
        r = next((r for r in players if r["player"] == pid), None)
        if r:
            lone.append(dict(player=pid, flag=r.get("flag"), p=r.get("signal_p"), q=r.get("signal_q"),
                             skill=r.get("skill"), dd_z=r.get("dd_z"), level_z=r.get("level_z")))
    return dict(room=room, n=n, secs=secs, pairs=len(pairs), n_honest=n_honest, n_mixed=n_mixed,
                true=rows, alarms=alarms, friends=friend_rows, flagged_players=flagged_players,
                lone=lone, top=[(tuple(sorted(p["players"])), p["verdict"], p["score"]) for p in pairs[:3]])


def fmt(x, d=2):
    return "-" if x is None else ("%.*f" % (d, x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,3000")
    ap.add_argument("--rooms", default=",".join(ROOMS))
    ap.add_argument("--cache", default="/tmp/indep3")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--seed", type=int, help="one seed for every size instead of 11 (1,000) / 31 (3,000)")
    ap.add_argument("--json", help="write all results here too")
    a = ap.parse_args()
    if a.seed is not None:
        for n in [int(x) for x in a.sizes.split(",")]:
            SEEDS[n] = a.seed
    results = []
    for n in [int(x) for x in a.sizes.split(",")]:
        for room in a.rooms.split(","):
            r = evaluate(room, n, a.cache, a.fresh)
            results.append(r)
            print("== %s, %d hands (seed %d): %d pairs (%d honest, %d with a cheater)%s"
                  % (room, n, SEEDS.get(n, 7 + n), r["pairs"], r["n_honest"], r["n_mixed"],
                     "  [%.0f s]" % r["secs"] if r["secs"] > 1 else ""))
            for t in r["true"]:
                print("  TRUE %-9s %-11s %-8s score %7s rank %4s  together %4d (colluding %d)  %s"
                      % ("+".join(t["pair"]), t["style"], t["verdict"], fmt(t["score"]), t["rank"],
                         t["together"], t["on"], t.get("signal") or ""))
            for f in r["friends"]:
                print("  FRIENDS %-9s %-8s score %7s rank %4s together %d"
                      % ("+".join(f["pair"]), f["verdict"], fmt(f["score"]), f["rank"], f["together"]))
            hon = [x for x in r["alarms"] if x["kind"] == "honest"]
            mix = [x for x in r["alarms"] if x["kind"] != "honest"]
            print("  false alarms: honest pairs flagged %d, review %d; pairs with one cheater flagged %d, review %d"
                  % (sum(x["verdict"] == "flagged" for x in hon), sum(x["verdict"] == "review" for x in hon),
                     sum(x["verdict"] == "flagged" for x in mix), sum(x["verdict"] == "review" for x in mix)))
            for x in r["alarms"]:
                print("    ALARM %-9s %-12s %-8s score %6s rank %3s together %4d signal %s%s"
                      % ("+".join(x["pair"]), x["kind"] + ("/friend" if x["friend"] else ""), x["verdict"],
                         fmt(x["score"]), x["rank"], x["together"], x["signal"],
                         ""))
            fp = r["flagged_players"]
            print("  players flagged: %s" % (", ".join("%s(%s, p=%.2g)" % (x["player"], x["role"], x["p"] or 0)
                                                     for x in fp) or "none"))
            for l in r["lone"]:
                print("  LONE %s flag %s p %s q %s skill %s dd_z %s level_z %s"
                      % (l["player"], l["flag"], fmt(l["p"], 4), fmt(l["q"], 3), fmt(l["skill"]),
                         fmt(l["dd_z"]), fmt(l["level_z"])))
            print("  top 3: %s" % "; ".join("%s %s %.2f" % ("+".join(k), v, s) for k, v, s in r["top"]))
            sys.stdout.flush()
    # summary
    print("\nSUMMARY")
    print("%-15s %5s  %-60s  %s  %s" % ("room", "hands", "true pairs verdict/score/rank", "honest FA (flag/rev)",
                                         "players flagged"))
    for r in results:
        tp = "; ".join("%s %.1f #%s" % (t["verdict"][:4], t["score"] or 0, t["rank"]) for t in r["true"]) or "-"
        hon = [x for x in r["alarms"] if x["kind"] == "honest"]
        fa = "%d/%d" % (sum(x["verdict"] == "flagged" for x in hon), sum(x["verdict"] == "review" for x in hon))
        fp = ",".join("%s:%s" % (x["player"], x["role"]) for x in r["flagged_players"]) or "-"
        print("%-15s %5d  %-60s  %-20s  %s" % (r["room"], r["n"], tp, fa, fp))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
