"""Honest rooms of the analyzer's players with a known amount of noise, one noise model a room (for the skill read-out).

A thin command over :func:`analyzer.simulate.noise.noisy_room`: every player follows the style's noise model
(``softmax``: a temperature; ``blunder``: a random move's rate; ``rankcover``, ``no_tong``, ``other_softmax``) at a
level drawn across the model's range, so the Spearman between the known level and a skill figure says how well the
figure orders players. ``--hands`` is the room's total: each player plays about ``4 x hands / players`` hands.

    python -m benchmarks.simulators.analyzer_noise --style softmax --players 40 --hands 1500 --seed 1 --out room.jsonl

Writes room.jsonl and room.truth.json (each player's model and level).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from analyzer.logs import write_records
from analyzer.simulate.noise import MODELS, noisy_room


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--style", required=True, choices=MODELS, help="the noise model")
    ap.add_argument("--hands", type=int, default=1500)
    ap.add_argument("--players", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--search", type=int, default=0, help="blunder's base player searches this many deals (0: greedy)")
    ap.add_argument("--out", required=True, type=Path, help="LOG.jsonl; the truth goes to LOG.truth.json")
    a = ap.parse_args(argv)
    room = noisy_room(a.style, players=a.players, hands_per_player=a.hands * 4 // a.players, seed=a.seed,
                      search=a.search)
    write_records(a.out, room.records)
    truth = {"style": a.style, "seed": a.seed, "hands": len(room.records), "model": room.model, "level": room.level}
    a.out.with_name(a.out.name.removesuffix(".jsonl") + ".truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
