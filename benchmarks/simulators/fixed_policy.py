"""Honest rooms of simple fixed-policy bots: random, lowest or highest rank first, hoarders and openers.

Each player keeps one fixed policy for the whole room (none of them the analyzer's strategy or noise): ``random`` (a
uniformly random legal move), ``low`` / ``high`` (the lowest / highest rank first, plays and covers), ``hoard`` (play
the card farthest from the 7, cover the fewest points: blocks suits) and ``open`` (play the card nearest the 7, cover
the fewest points: opens suits for everyone). Tables are four players drawn at random that sit for an exponential
number of hands (mean ``run``); think times are lognormal. Nobody colludes: every pair an audit marks is a false
alarm. The hands are played by the analyzer's rules engine (the bots are not the analyzer's).

    python -m benchmarks.simulators.fixed_policy --style five-policies --hands 2500 --seed 1 --out room.jsonl

Writes room.jsonl and room.truth.json (each player's policy).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from analyzer.cards import points, rank_of
from analyzer.logs import format_record
from analyzer.variants.bieqi import COVER, State, make_record, random_deal

#: style: (players, policies dealt round the players, mean hands a table sits)
STYLES: dict[str, tuple[int, tuple[str, ...], float]] = {
    "five-policies": (16, ("random", "low", "high", "hoard", "open"), 30.0),
    "sticky-four": (8, ("low", "hoard", "open", "high"), 150.0),
    "all-hoarders": (12, ("hoard",), 20.0),
    "random-openers": (20, ("random", "open"), 10.0),
}


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


def room(path: Path, hands: int, players: int, seed: int, policies: tuple[str, ...], run: float) -> dict[str, str]:
    """Write the room's log; return each player's policy."""
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
    return policy


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--style", required=True, choices=sorted(STYLES))
    ap.add_argument("--hands", type=int, default=2500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--players", type=int, help="players in the room (default: the style's)")
    ap.add_argument("--out", required=True, type=Path, help="LOG.jsonl; the truth goes to LOG.truth.json")
    a = ap.parse_args(argv)
    players, policies, run = STYLES[a.style]
    players = a.players or players
    policy = room(a.out, a.hands, players, a.seed, policies, run)
    truth = {"style": a.style, "seed": a.seed, "hands": a.hands, "run": run, "policies": policy}
    a.out.with_name(a.out.name.removesuffix(".jsonl") + ".truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
