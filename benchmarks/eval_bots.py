"""False alarms on honest rooms of simple bots that are not this project's simulator.

Run: ``python benchmarks/eval_bots.py [--jobs 2]`` (from the checkout to measure).

Each player of a room keeps one fixed policy for the whole room (none of them the simulator's strategy or noise):
``random`` (a uniformly random legal move), ``low`` / ``high`` (the lowest / highest rank first, plays and covers),
``hoard`` (play the card farthest from the 7, cover the fewest points: blocks suits) and ``open`` (play the card
nearest the 7, cover the fewest points: opens suits for everyone). Tables are four players drawn at random that sit
for an exponential number of hands (mean ``run``); think times are lognormal. Nobody colludes, so every pair the
audit flags or marks for review is a false alarm, and so is every player the player table flags. Prints per room:
hands, pairs, flagged, review, top score, players flagged and the smallest player ``signal_q`` (a flag: <= 0.01).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from analyzer.cards import points, rank_of
from analyzer.logs import format_record
from analyzer.variants.bieqi import COVER, State, make_record, random_deal

#: (name, hands, players, seed, policies dealt round the players, mean hands a table sits)
ROOMS = (("five policies", 2500, 16, 1, ("random", "low", "high", "hoard", "open"), 30.0),
         ("four, sticky tables", 2500, 8, 2, ("low", "hoard", "open", "high"), 150.0),
         ("all hoarders", 2000, 12, 3, ("hoard",), 20.0),
         ("random and openers", 2500, 20, 4, ("random", "open"), 10.0))


def pick(policy: str, st: State, rng: random.Random) -> int:
    acts = st.legal_actions()
    if policy == "random":
        return rng.choice(acts)
    if policy == "low":
        return min(acts, key=lambda a: (rank_of(a % COVER), a))
    if policy == "high":
        return max(acts, key=lambda a: (rank_of(a % COVER), a))
    if acts[0] >= COVER:  # hoard and open cover the fewest points
        return min(acts, key=lambda a: (points(a % COVER), a))
    if policy == "hoard":
        return max(acts, key=lambda a: (abs(rank_of(a) - 6), a))
    return min(acts, key=lambda a: (abs(rank_of(a) - 6), a))  # open


def room(path: Path, hands: int, players: int, seed: int, policies: tuple[str, ...], run: float) -> None:
    rng = random.Random(seed)
    names = [f"b{i:02d}" for i in range(1, players + 1)]
    policy = {n: policies[i % len(policies)] for i, n in enumerate(names)}
    with open(path, "wb") as f:
        h = t = 0
        while h < hands:
            table, t = rng.sample(names, 4), t + 1
            for _ in range(max(1, int(rng.expovariate(1.0 / run)))):
                if h >= hands:
                    break
                deal = random_deal(rng)
                st, ms, clock = State(deal), [], 0
                while not st.is_terminal():
                    st.push(pick(policy[table[st.current_player()]], st, rng))
                    clock += int(rng.lognormvariate(7.0, 0.5))
                    ms.append(clock)
                rec = make_record(st, deal, hand_id=f"r{seed}-{h}", players=table, table_id=f"t{t}", ms=ms)
                f.write(format_record(rec) + b"\n")
                h += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    print(f"honest rooms of fixed-policy bots; load {os.getloadavg()[0]:.1f}")
    print(f"{'room':<22}{'hands':>7}{'pairs':>7}{'flagged':>9}{'review':>8}{'top score':>11}"
          f"{'players flagged':>17}{'least player q':>16}")
    with tempfile.TemporaryDirectory(prefix="eval-bots-") as tmp:
        for name, hands, players, seed, policies, run in ROOMS:
            log, out = Path(tmp) / f"room-{seed}.jsonl", Path(tmp) / f"out-{seed}"
            room(log, hands, players, seed, policies, run)
            r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "audit", str(log),
                                "--out", str(out), "--jobs", str(args.jobs)], capture_output=True, text=True)
            if r.returncode not in (0, 1):
                raise SystemExit(f"audit failed ({r.returncode}): {r.stderr[-2000:]}")
            pairs, players = pd.read_csv(out / "pairs.csv"), pd.read_csv(out / "players.csv")
            print(f"{name:<22}{hands:>7}{len(pairs):>7}{int((pairs['verdict'] == 'flagged').sum()):>9}"
                  f"{int((pairs['verdict'] == 'review').sum()):>8}{pairs['score'].max():>11.2f}"
                  f"{int(players['flag'].sum()):>17}{players['signal_q'].min():>16.3f}")


if __name__ == "__main__":
    main()
