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
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def analyzer(*args, ok=(0,)):
    return run(["nice", "-n", "19", sys.executable, "-m", "analyzer.cli", *args], ok=ok)


def prepare(room, n, cache, fresh):
    seed = SEEDS.get(n, 7 + n)
    base = os.path.join(cache, f"{room}-{n}-s{seed}")
    log = base + ".jsonl.gz"
    if not os.path.exists(log) or fresh:
        run(["nice", "-n", "19", sys.executable, SIM, "--room", room, "--hands", str(n),
             "--seed", str(seed), "--out", log])
    out = os.path.join(cache, "out", f"{room}-{n}-s{seed}")
    os.makedirs(out, exist_ok=True)
    aud = os.path.join(out, "audit")
    pls = os.path.join(out, "players.json")
    t0 = time.time()
    if fresh or not os.path.exists(os.path.join(aud, "audit.json")) or not os.path.exists(pls):
        v = analyzer("validate", "--format", "json", log, ok=(0, 1))
        vj = json.loads(v.stdout)
        if vj["n_problems"]:
            sys.exit("{}: validator problems {}".format(log, vj["problem_counts"]))
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
    return "-" if x is None else f"{x:.{d}f}"


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
            took = f"  [{r['secs']:.0f} s]" if r["secs"] > 1 else ""
            print(f"== {room}, {n} hands (seed {SEEDS.get(n, 7 + n)}): {r['pairs']} pairs ({r['n_honest']} honest, "
                  f"{r['n_mixed']} with a cheater){took}")
            for t in r["true"]:
                print(f"  TRUE {'+'.join(t['pair']):9} {t['style']:11} {t['verdict']:8} score {fmt(t['score']):>7} "
                      f"rank {t['rank']!s:>4}  together {t['together']:4d} (colluding {t['on']})  {t.get('signal') or ''}")
            for f in r["friends"]:
                print(f"  FRIENDS {'+'.join(f['pair']):9} {f['verdict']:8} score {fmt(f['score']):>7} "
                      f"rank {f['rank']!s:>4} together {f['together']}")
            hon = [x for x in r["alarms"] if x["kind"] == "honest"]
            mix = [x for x in r["alarms"] if x["kind"] != "honest"]
            print(f"  false alarms: honest pairs flagged {sum(x['verdict'] == 'flagged' for x in hon)}, review "
                  f"{sum(x['verdict'] == 'review' for x in hon)}; pairs with one cheater flagged "
                  f"{sum(x['verdict'] == 'flagged' for x in mix)}, review {sum(x['verdict'] == 'review' for x in mix)}")
            for x in r["alarms"]:
                kind = x["kind"] + ("/friend" if x["friend"] else "")
                print(f"    ALARM {'+'.join(x['pair']):9} {kind:12} {x['verdict']:8} score {fmt(x['score']):>6} "
                      f"rank {x['rank']!s:>3} together {x['together']:4d} signal {x['signal']}")
            fp = r["flagged_players"]
            print("  players flagged: %s" % (", ".join("{}({}, p={:.2g})".format(x["player"], x["role"], x["p"] or 0)
                                                     for x in fp) or "none"))
            for lone in r["lone"]:
                print(f"  LONE {lone['player']} flag {lone['flag']} p {fmt(lone['p'], 4)} q {fmt(lone['q'], 3)} "
                      f"skill {fmt(lone['skill'])} dd_z {fmt(lone['dd_z'])} level_z {fmt(lone['level_z'])}")
            print("  top 3: {}".format("; ".join("{} {} {:.2f}".format("+".join(k), v, s) for k, v, s in r["top"])))
            sys.stdout.flush()
    # summary
    print("\nSUMMARY")
    print(f"{'room':15} {'hands':>5}  {'true pairs verdict/score/rank':60}  honest FA (flag/rev)  players flagged")
    for r in results:
        tp = "; ".join("{} {:.1f} #{}".format(t["verdict"][:4], t["score"] or 0, t["rank"]) for t in r["true"]) or "-"
        hon = [x for x in r["alarms"] if x["kind"] == "honest"]
        fa = f"{sum(x['verdict'] == 'flagged' for x in hon)}/{sum(x['verdict'] == 'review' for x in hon)}"
        fp = ",".join("{}:{}".format(x["player"], x["role"]) for x in r["flagged_players"]) or "-"
        print(f"{r['room']:15} {r['n']:5d}  {tp:60}  {fa:20}  {fp}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
