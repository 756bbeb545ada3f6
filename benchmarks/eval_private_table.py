"""A private table of four: the audit and the player table on rooms where the same four people play every hand.

Run: ``python benchmarks/eval_private_table.py [--hands 400] [--honest-seeds 8] [--seeds 3] [--cache DIR]``
(~10 min on 2 cores; rooms and audits are cached in ``--cache``, default /tmp/eval-private-table).

Serious players check their own games: four friends, one table, a few hundred hands. Nobody ever sits apart from
anybody, so every comparison "with the partner / without" has no "without", and the room is six pairs and four
players, too few for any reading against the room's own spread. Two simulators write such rooms:

- ``indep3``: the independent simulator 3 (``independent_sim3.py``, its own bots, think times and collusion styles),
  its rooms cut to 4 players (all five bot kinds drawn as its standard mix draws them): ``honest`` and one pair of
  ``soft``, ``highmult``, ``feeder``, ``coverinfo``, ``occasional`` (15% of the hands), and ``lone`` (one player
  who sees every hand, for the player table);
- ``ours``: ``analyzer simulate --players 4 --friends 0`` (``--colluders 0`` for honest rooms; else one pair of the
  simulator's default style, share).

Each room is audited by ``analyzer audit`` (the defaults); the script prints, per room kind: the colluding pair's
verdicts (flagged / review / clear) and scores, honest pairs flagged or for review, and players flagged by the
player table (``players.csv``'s ``flag``: honest ones, colluders left out, and the lone cheater).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

STYLES = {"honest": {}, "soft": {"pairs": [("soft", {})]}, "highmult": {"pairs": [("highmult", {})]},
          "feeder": {"pairs": [("feeder", {})]}, "coverinfo": {"pairs": [("coverinfo", {})]},
          "occasional": {"pairs": [("occasional", {"rate": 0.15})]}, "lone": {"lone": True}}


def indep3_room(kind: str, hands: int, seed: int, out: Path) -> None:
    import independent_sim3 as sim3

    name = "honest-four" if kind == "honest" else f"four-{kind}"
    sim3.ROOMS[name] = dict(n=4, mix=sim3.STD_MIX, desc="4 players at one table", **STYLES[kind])
    sim3.simulate(name, hands, seed, str(out))


def our_room(kind: str, hands: int, seed: int, out: Path) -> None:
    more = ["--colluders", "0"] if kind == "honest" else []
    subprocess.run([sys.executable, "-m", "analyzer.cli", "simulate", "--players", "4", "--friends", "0", "--hands",
                    str(hands), "--seed", str(seed), "--out", str(out), "--truth", str(truth_of(out)), *more],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def truth_of(log: Path) -> Path:
    return log.with_name(log.name.replace(".jsonl.gz", ".truth.json"))


def audited(log: Path) -> Path:
    out = log.with_name(log.name.replace(".jsonl.gz", "-audit"))
    if not (out / "audit.json").exists():
        r = subprocess.run([sys.executable, "-m", "analyzer.cli", "audit", str(log), "--out", str(out)], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode not in (0, 1):
            raise SystemExit(f"audit of {log} failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
    return out


def judge(log: Path) -> dict:
    truth = json.loads(truth_of(log).read_text())
    true = {frozenset(p["players"]) for p in truth.get("colluding_pairs", [])}
    lone = {x if isinstance(x, str) else x.get("player") for x in truth.get("lone_cheaters", [])}
    out = audited(log)
    audit = json.loads((out / "audit.json").read_text())
    with open(out / "players.csv", newline="") as f:
        players = list(csv.DictReader(f))
    cheats = [(p["verdict"], float(p["score"])) for p in audit["pairs"] if frozenset(p["players"]) in true]
    honest = [p for p in audit["pairs"] if frozenset(p["players"]) not in true]
    flagged = {r["player"] for r in players if r["flag"] == "True"}
    cheaters = lone | {x for pair in true for x in pair}
    return {"cheats": cheats, "honest_flagged": sum(p["verdict"] == "flagged" for p in honest),
            "honest_review": sum(p["verdict"] == "review" for p in honest), "honest_pairs": len(honest),
            "top_honest": max((float(p["score"]) for p in honest), default=0.0),
            "players_flagged_honest": len(flagged - cheaters),
            "honest_players": len({r["player"] for r in players} - cheaters),
            "lone_flagged": f"{len(flagged & lone)} of {len(lone)}" if lone else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=400)
    ap.add_argument("--honest-seeds", type=int, default=8)
    ap.add_argument("--seeds", type=int, default=3, help="rooms per collusion style")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/eval-private-table"))
    ap.add_argument("--only", default="", help="comma-separated simulators (indep3, ours) or kinds to run")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    only = {x for x in args.only.split(",") if x}
    plan = [("indep3", k) for k in STYLES] + [("ours", "honest"), ("ours", "share")]
    print(f"{'simulator':<8} {'room':<11} {'rooms':>5}  colluding pair: verdicts (scores)          honest pairs "
          "flagged/review of (top score)   players flagged: honest / lone cheater")
    for simulator, kind in plan:
        if only and not ({simulator, kind} & only):
            continue
        n = args.honest_seeds if kind == "honest" else args.seeds
        results = []
        for seed in range(1, n + 1):
            log = args.cache / f"{simulator}-{kind}-{args.hands}-s{seed}.jsonl.gz"
            if not log.exists():
                (indep3_room if simulator == "indep3" else our_room)(kind, args.hands, seed, log)
            results.append(judge(log))
        cheats = [c for r in results for c in r["cheats"]]
        verdicts = ", ".join(f"{v} {s:.1f}" for v, s in cheats) or "-"
        hp = sum(r["honest_pairs"] for r in results)
        print(f"{simulator:<8} {kind:<11} {n:>5}  {verdicts:<42} "
              f"{sum(r['honest_flagged'] for r in results)}/{sum(r['honest_review'] for r in results)} of {hp} "
              f"({max(r['top_honest'] for r in results):.2f})"
              f"{'':<14}{sum(r['players_flagged_honest'] for r in results)} of "
              f"{sum(r['honest_players'] for r in results)}"
              + (f" / {', '.join(r['lone_flagged'] for r in results)}" if any(r["lone_flagged"] for r in results)
                 else ""), flush=True)


if __name__ == "__main__":
    main()
