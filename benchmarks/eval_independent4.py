#!/usr/bin/env python3
"""Measure `analyzer audit` on the rooms of benchmarks/independent_sim4.py.

    nice -n 19 python benchmarks/eval_independent4.py [--sizes 1000,3000] [--rooms a,b] [--json FILE] [--fresh]

For each room and size: simulate (1,000 hands: seed 41; 3,000 hands: seed 43 -- independent rooms), validate
(must be clean), then `analyzer audit --jobs 1` with this checkout's code (PYTHONPATH = the repository root),
one command at a time; logs and audit outputs are cached under /tmp/indep4 (--cache). Prints per room: each
true pair's verdict, score, rank among all the room's pairs and hands together; the honest pairs (two honest
players) and the pairs with one cheater in them that were flagged or marked for review; the players flagged in
the audit's players.csv (honest ones are false alarms) and each colluder's own reading there.
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
SIM = os.path.join(HERE, "independent_sim4.py")
ROOMS = ["h-friends", "h-hetero", "h-noisy", "c-ring3", "c-weak", "c-endgame", "c-tongguard", "c-partial",
         "c-protect", "c-oneway", "c-kamikaze", "c-ghost"]
SEEDS = {1000: 41, 3000: 43}


def run(cmd, ok=(0,)):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode not in ok:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def analyzer(*args, ok=(0,)):
    return run(["nice", "-n", "19", sys.executable, "-m", "analyzer.cli", *args], ok=ok)


def prepare(room, n, cache, fresh):
    seed = SEEDS.get(n, 7 + n)
    base = os.path.join(cache, f"{room}-{n}-s{seed}")
    log = base + ".jsonl.gz"
    if fresh or not os.path.exists(log):
        run(["nice", "-n", "19", sys.executable, SIM, "--room", room, "--hands", str(n), "--seed", str(seed),
             "--out", log])
    aud = base + ".audit"
    t0 = time.time()
    if fresh or not os.path.exists(os.path.join(aud, "audit.json")):
        v = json.loads(analyzer("validate", "--format", "json", log, ok=(0, 1)).stdout)
        if v["n_problems"]:
            sys.exit("{}: validator problems {}".format(log, v["problem_counts"]))
        analyzer("audit", log, "--out", aud, "--jobs", "1", ok=(0, 1))
    return base + ".truth.json", aud, time.time() - t0, seed


def evaluate(room, n, cache, fresh):
    tpath, aud, secs, seed = prepare(room, n, cache, fresh)
    truth = json.load(open(tpath))
    audit = json.load(open(os.path.join(aud, "audit.json")))
    with open(os.path.join(aud, "players.csv"), newline="") as f:
        players = list(csv.DictReader(f))
    pairs = audit["pairs"]
    key = lambda p: tuple(sorted(p["players"]))  # noqa: E731
    rank = {key(p): i + 1 for i, p in enumerate(sorted(pairs, key=lambda p: -(p["score"] or 0)))}
    by = {key(p): p for p in pairs}
    true_pairs = {tuple(sorted(p["players"])): p for p in truth["colluding_pairs"]}
    friends = {tuple(sorted(p)) for p in truth["friend_pairs"]}
    cheat = set(truth["colluders"]) | set(truth["lone_cheaters"])
    rows = []
    for k, tp in true_pairs.items():
        p = by.get(k)
        rows.append(dict(pair=k, style=tp["style"], verdict=p["verdict"] if p else "absent",
                         score=p["score"] if p else None, rank=rank.get(k), together=tp["hands_together"],
                         changed=tp["hands_with_changed_choice"], signal=p.get("main_signal") if p else None,
                         hands_to_alarm=p.get("hands_to_alarm") if p else None))
    alarms = []
    n_honest = n_mixed = 0
    top_honest = None
    for p in pairs:
        k = key(p)
        if k in true_pairs:
            continue
        kind = "honest" if not (set(k) & cheat) else "with-cheater"
        if kind == "honest":
            n_honest += 1
            if top_honest is None or (p["score"] or 0) > top_honest[1]:
                top_honest = (k, p["score"] or 0)
        else:
            n_mixed += 1
        if p["verdict"] != "clear":
            alarms.append(dict(pair=k, kind=kind, friend=k in friends, verdict=p["verdict"], score=p["score"],
                               rank=rank[k], together=p["hands_together"], signal=p.get("main_signal")))
    friend_rows = [dict(pair=k, verdict=by[k]["verdict"], score=by[k]["score"], rank=rank[k],
                        together=by[k]["hands_together"]) for k in sorted(friends) if k in by]

    def num(x):
        try:
            return float(x)
        except (TypeError, ValueError):
            return None

    flagged = [dict(player=r["player"], cheater=r["player"] in cheat, p=num(r.get("signal_p")),
                    partner=r.get("partner")) for r in players if r.get("flag") == "True"]
    cheaters = [dict(player=r["player"], flag=r.get("flag"), p=num(r.get("signal_p")), q=num(r.get("signal_q")),
                     skill=num(r.get("skill")), dd_z=num(r.get("dd_z")), level_z=num(r.get("level_z")),
                     partner=r.get("partner"), partner_z=num(r.get("partner_z")), hands=r.get("hands"))
                for r in players if r["player"] in cheat]
    return dict(room=room, n=n, seed=seed, secs=secs, pairs=len(pairs), n_honest=n_honest, n_mixed=n_mixed,
                true=rows, alarms=alarms, friends=friend_rows, flagged_players=flagged, cheaters=cheaters,
                top_honest=top_honest, n_players=len(players))


def fmt(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,3000")
    ap.add_argument("--rooms", default=",".join(ROOMS))
    ap.add_argument("--cache", default="/tmp/indep4")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--json", help="write all results here too")
    ap.add_argument("--seed", type=int, help="one seed for every size instead of 41 (1,000) / 43 (3,000)")
    a = ap.parse_args()
    if a.seed is not None:
        for n in [int(x) for x in a.sizes.split(",")]:
            SEEDS[n] = a.seed
    os.makedirs(a.cache, exist_ok=True)
    results = []
    for n in [int(x) for x in a.sizes.split(",")]:
        for room in a.rooms.split(","):
            r = evaluate(room, n, a.cache, a.fresh)
            results.append(r)
            took = f"  [{r['secs']:.0f} s]" if r["secs"] > 1 else ""
            print(f"== {room}, {n} hands (seed {r['seed']}): {r['pairs']} pairs ({r['n_honest']} honest, "
                  f"{r['n_mixed']} with a cheater), {r['n_players']} players{took}")
            for t in r["true"]:
                print(f"  TRUE {'+'.join(t['pair']):10} {t['style']:9} {t['verdict']:8} score {fmt(t['score']):>7} "
                      f"rank {t['rank']!s:>4}  together {t['together']:4d} (choice changed in {t['changed']})  "
                      f"{t['signal'] or ''} to-alarm {t['hands_to_alarm']}")
            for f in r["friends"]:
                print(f"  FRIENDS {'+'.join(f['pair']):10} {f['verdict']:8} score {fmt(f['score']):>7} "
                      f"rank {f['rank']!s:>4} together {f['together']}")
            hon = [x for x in r["alarms"] if x["kind"] == "honest"]
            mix = [x for x in r["alarms"] if x["kind"] != "honest"]
            print(f"  honest pairs flagged {sum(x['verdict'] == 'flagged' for x in hon)}, review "
                  f"{sum(x['verdict'] == 'review' for x in hon)}; pairs with one cheater flagged "
                  f"{sum(x['verdict'] == 'flagged' for x in mix)}, review {sum(x['verdict'] == 'review' for x in mix)}"
                  f"; top honest pair {r['top_honest']}")
            for x in r["alarms"]:
                kind = x["kind"] + ("/friend" if x["friend"] else "")
                print(f"    ALARM {'+'.join(x['pair']):10} {kind:12} {x['verdict']:8} score {fmt(x['score']):>6} "
                      f"rank {x['rank']!s:>3} together {x['together']:4d} signal {x['signal']}")
            fp = r["flagged_players"]
            print("  players.csv flagged: %s" % (", ".join(
                "{}({}, p={:.2g})".format(x["player"], "cheater" if x["cheater"] else "HONEST", x["p"] or 0)
                for x in fp) or "none"))
            for c in r["cheaters"]:
                print(f"  CHEATER {c['player']} flag {c['flag']} p {fmt(c['p'], 4)} q {fmt(c['q'], 3)} "
                      f"skill {fmt(c['skill'])} dd_z {fmt(c['dd_z'])} level_z {fmt(c['level_z'])} "
                      f"partner {c['partner'] or '-'} partner_z {fmt(c['partner_z'])} hands {c['hands']}")
            sys.stdout.flush()
    print("\nSUMMARY")
    print(f"{'room':12} {'hands':>5}  {'true pairs: verdict score #rank (together)':58}  honest flag/rev  "
          "honest players flagged")
    for r in results:
        tp = "; ".join("{} {:.1f} #{} ({})".format(t["verdict"][:4], t["score"] or 0, t["rank"], t["together"])
                       for t in r["true"]) or "-"
        hon = [x for x in r["alarms"] if x["kind"] == "honest"]
        fa = f"{sum(x['verdict'] == 'flagged' for x in hon)}/{sum(x['verdict'] == 'review' for x in hon)}" \
             f" of {r['n_honest']}"
        hp = sum(1 for x in r["flagged_players"] if not x["cheater"])
        print(f"{r['room']:12} {r['n']:5d}  {tp:58}  {fa:15}  {hp}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
