"""Simulator speed on one core: heuristic rooms (records produced, and written as .jsonl.gz), the
compiled kernel alone, and the search player. Prints hands/s, and the search player's strength
(``--strength``: its mean score a hand against three temperature-1 players, docs/simulate.md). ``--crowd 10000
100000``: only the time of a few hands in rooms of that many players (each round forms every table first)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from analyzer.logs import write_records
from analyzer.simulate.kernel import play_batch
from analyzer.simulate.room import _deals, simulate
from analyzer.strategy import HONEST, NF

HEURISTIC_MIX = "novice:0.2,casual:0.3,regular:0.3,strong:0.2"


def rate(label: str, hands: int, seconds: float) -> None:
    print(f"{label:<52} {hands:>7} hands {seconds:7.2f} s {hands / seconds:10,.0f} hands/s")


def strength(hands: int, samples: int, seed: int) -> None:
    """Mean own score (± standard error) of seat 0 against three temperature-1 players on the same deals:
    greedy heuristic, then the search player (``samples`` determinized deals per option)."""
    deals = _deals(hands, np.random.default_rng(seed))
    w = np.broadcast_to(HONEST, (hands, 4, NF))
    temps = np.ones((hands, 4))
    temps[:, 0] = 0.0
    s = np.zeros((hands, 4), np.int64)
    for label, n in (("greedy heuristic", 0), (f"search player ({samples} deals/option)", samples)):
        s[:, 0] = n
        x = play_batch(deals, w, temps, samples=s, seed=seed).scores()[:, 0]
        print(f"seat 0 {label:<36} {x.mean():+7.1f} ± {x.std() / np.sqrt(hands):.1f} a hand over {hands:,} hands")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--strength", action="store_true", help="only the search player's strength")
    ap.add_argument("--hands", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--crowd", type=int, nargs="*", metavar="PLAYERS",
                    help="only rooms of this many players, 3 hands each (the tables' forming dominates)")
    args = ap.parse_args()
    if args.strength:
        strength(args.hands, 16, args.seed)
        return
    if args.crowd:
        for players in args.crowd:
            t = time.perf_counter()
            list(simulate(hands=3, players=players, seed=args.seed).records)
            print(f"{players:>9,} players, 3 hands: {time.perf_counter() - t:6.2f} s")
        return
    list(simulate(hands=600, players=16, seed=0, skill_mix="casual:0.5,expert:0.5").records)  # compile (cached)

    n = 20_000
    deals = _deals(n, np.random.default_rng(1))
    w = np.broadcast_to(HONEST, (n, 4, NF))
    t = time.perf_counter()
    play_batch(deals, w, np.ones((n, 4)), seed=1)
    rate("kernel only (4 heuristic players)", n, time.perf_counter() - t)

    n = 10_000
    t = time.perf_counter()
    recs = list(simulate(hands=n, players=16, seed=1, colluders=1, skill_mix=HEURISTIC_MIX).records)
    rate("heuristic room -> log v1 records", n, time.perf_counter() - t)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        write_records(Path(d) / "room.jsonl.gz", simulate(hands=n, players=16, seed=1, colluders=1,
                                                          skill_mix=HEURISTIC_MIX).records)
        rate("heuristic room -> .jsonl.gz (incl. gzip)", len(recs), time.perf_counter() - t)

    for samples in (8, 16):
        n = 300
        s = np.zeros((n, 4), np.int64)
        s[:, 0] = samples
        t = time.perf_counter()
        play_batch(deals[:n], w[:n], np.ones((n, 4)), samples=s, seed=1)
        rate(f"one search player ({samples} rollouts/option) + 3 heuristic", n, time.perf_counter() - t)

    n = 4_000
    t = time.perf_counter()
    list(simulate(hands=n, players=16, seed=2).records)
    rate("default room (5% experts)", n, time.perf_counter() - t)


if __name__ == "__main__":
    main()
