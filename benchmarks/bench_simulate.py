"""Simulator speed on one core: heuristic rooms (records produced, and written as .jsonl.gz), the
compiled kernel alone, and the search player. Prints hands/s, and the search player's strength
(``--strength``: its mean score a hand against three temperature-1 players). ``--crowd 10000
100000``: only the time of a few hands in rooms of that many players (each round forms every table first).

    python -m benchmarks.bench_simulate                      # results/simulation.json
    python -m benchmarks.bench_simulate --crowd 10000 100000 # results/simulation_crowd.json
    python -m benchmarks.bench_simulate --strength --seed 7  # results/simulation_strength.json
"""

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
from benchmarks.results import Results, command_line

HEURISTIC_MIX = "novice:0.2,casual:0.3,regular:0.3,strong:0.2"


def rate(res: Results, key: str, label: str, hands: int, seconds: float) -> None:
    res.figure(key, hands / seconds, "hands/s", f"{label} ({hands:,} hands)")


def strength(res: Results, hands: int, samples: int, seed: int) -> None:
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
        key = "search" if n else "greedy"
        res.figure(f"{key}_score", float(x.mean()), "points a hand", f"seat 0, {label}: mean score a hand")
        res.figure(f"{key}_se", float(x.std() / np.sqrt(hands)), "points", f"seat 0, {label}: its standard error")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strength", action="store_true", help="only the search player's strength")
    ap.add_argument("--hands", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--crowd", type=int, nargs="*", metavar="PLAYERS",
                    help="only rooms of this many players, 3 hands each (the tables' forming dominates)")
    args = ap.parse_args(argv)
    cmd = command_line("benchmarks.bench_simulate", argv)
    if args.strength:
        res = Results("simulation_strength", "The search player's strength", "simulation", cmd,
                      parameters={"hands": args.hands, "seed": args.seed, "samples": 16},
                      about="Seat 0's mean score a hand against three temperature-1 heuristic players on the same "
                            "deals: the greedy heuristic, then the search player.")
        strength(res, args.hands, 16, args.seed)
        res.write()
        return
    if args.crowd:
        res = Results("simulation_crowd", "Seating crowds", "simulation", cmd,
                      parameters={"crowd": args.crowd, "seed": args.seed},
                      about="Three hands in rooms of that many players: the time is the tables' forming.")
        for players in args.crowd:
            t = time.perf_counter()
            list(simulate(hands=3, players=players, seed=args.seed).records)
            res.figure(f"crowd_{players}_s", time.perf_counter() - t, "s", f"{players:,} players, 3 hands")
        res.write()
        return
    res = Results("simulation", "Simulation speed on one core", "simulation", cmd, parameters={},
                  about="`analyzer.simulate` on one core, after a warm-up that compiles the kernels.")
    list(simulate(hands=600, players=16, seed=0, skill_mix="casual:0.5,expert:0.5").records)  # compile (cached)

    n = 20_000
    deals = _deals(n, np.random.default_rng(1))
    w = np.broadcast_to(HONEST, (n, 4, NF))
    t = time.perf_counter()
    play_batch(deals, w, np.ones((n, 4)), seed=1)
    rate(res, "kernel", "kernel only (4 heuristic players)", n, time.perf_counter() - t)

    n = 10_000
    t = time.perf_counter()
    recs = list(simulate(hands=n, players=16, seed=1, colluders=1, skill_mix=HEURISTIC_MIX).records)
    rate(res, "records", "heuristic room -> log v1 records", n, time.perf_counter() - t)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        write_records(Path(d) / "room.jsonl.gz", simulate(hands=n, players=16, seed=1, colluders=1,
                                                          skill_mix=HEURISTIC_MIX).records)
        rate(res, "gzip", "heuristic room -> .jsonl.gz (incl. gzip)", len(recs), time.perf_counter() - t)

    for samples in (8, 16):
        n = 300
        s = np.zeros((n, 4), np.int64)
        s[:, 0] = samples
        t = time.perf_counter()
        play_batch(deals[:n], w[:n], np.ones((n, 4)), samples=s, seed=1)
        rate(res, f"search_{samples}", f"one search player ({samples} rollouts/option) + 3 heuristic", n,
             time.perf_counter() - t)

    n = 4_000
    t = time.perf_counter()
    list(simulate(hands=n, players=16, seed=2).records)
    rate(res, "default_room", "default room (5% experts)", n, time.perf_counter() - t)
    res.write()


if __name__ == "__main__":
    main()
