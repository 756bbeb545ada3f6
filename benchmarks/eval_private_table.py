"""A private table of four: the audit and the player table on rooms where the same four people play every hand.

    python -m benchmarks.eval_private_table                    # 400 hands, 8 honest seeds, 3 seeds a style
    python -m benchmarks.eval_private_table --honest-seeds 2 --seeds 1     # the small run

Serious players check their own games: four friends, one table, a few hundred hands. Nobody ever sits apart from
anybody, so every comparison "with the partner / without" has no "without", and the room is six pairs and four
players, too few for any reading against the room's own spread. Two simulators write such rooms: planner_sampler's
``honest-four`` and ``four-<style>`` (its bots drawn as its standard mix draws them; one colluding pair of a style,
or ``four-lone``: one player who sees every hand) and ``analyzer simulate --players 4 --friends 0`` (honest, or one
pair of share). Each room goes through the harness (validate, decisions, audit); the tables are eval_simulators'.
Writes benchmarks/results/private_table.json.
"""

from __future__ import annotations

import argparse

from benchmarks import harness as h
from benchmarks.eval_simulators import evaluate
from benchmarks.results import Results, command_line
from benchmarks.simulators import SIMULATORS


def plan(hands: int, honest_seeds: int, seeds: int) -> list[h.Room]:
    four = [s.name for s in SIMULATORS["planner_sampler"].styles if s.name.startswith("four-")]
    out = [h.Room("planner_sampler", "honest-four", hands, s) for s in range(1, honest_seeds + 1)]
    out += [h.Room("planner_sampler", st, hands, s) for st in four for s in range(1, seeds + 1)]
    out += [h.Room("analyzer", "honest", hands, s, players=4, options=(("friends", 0),))
            for s in range(1, honest_seeds + 1)]
    out += [h.Room("analyzer", "share", hands, s, players=4, options=(("colluders", 1), ("friends", 0)))
            for s in range(1, seeds + 1)]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=400)
    ap.add_argument("--honest-seeds", type=int, default=8, help="honest rooms of each simulator")
    ap.add_argument("--seeds", type=int, default=3, help="rooms of each collusion style")
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    res = Results("private_table", "A private table of four", "private-table",
                  command_line("benchmarks.eval_private_table", argv),
                  parameters={"hands": a.hands, "honest_seeds": a.honest_seeds, "seeds": a.seeds},
                  about="Rooms where the same four people play every hand: the colluding pair's verdicts, honest "
                        "pairs flagged or for review, and the honest players the player table flags.")
    evaluate(res, plan(a.hands, a.honest_seeds, a.seeds), a.workers, calibration=False)
    res.write()


if __name__ == "__main__":
    main()
