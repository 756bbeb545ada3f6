"""The player table's partner signal reads each table (the four at a hand) as one observation as well as each hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analyzer.analysis.players import _partner_z

OTHERS = ["b", "c", "d", "e", "f", "g", "h"]


def _room(sittings: list[tuple[list[str], int, float]], rng: np.random.Generator, with_b: float = 0.0,
          noise: float = 0.3) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Per-hand surplus of player "me" over sittings (three co-players, hands, the sitting's own offset), plus
    ``with_b`` in every hand where b sits."""
    rows, hands, excess = [], [], []
    for co, n, offset in sittings:
        for _ in range(n):
            h = f"h{len(hands)}"
            rows.append({"hand_id": h, "p0": "me", "p1": co[0], "p2": co[1], "p3": co[2]})
            hands.append(h)
            excess.append(offset + (with_b if "b" in co else 0.0) + rng.normal(0.0, noise))
    return np.array(excess), np.array(hands), pd.DataFrame(rows).set_index("hand_id")


def test_a_few_long_sittings_are_a_few_observations() -> None:
    """Honest: each sitting has its own offset (how its games go), b happens to sit in two long, lucky ones. Hand by
    hand b reads as a partner with z ~ 9; table by table, two tables say little."""
    rng = np.random.default_rng(3)
    sittings = [(["b", "c", "d"], 40, 0.8), (["b", "e", "f"], 40, 0.6)]
    sittings += [(list(rng.choice(OTHERS[1:], 3, replace=False)), 40, float(rng.normal(0.0, 0.5))) for _ in range(8)]
    excess, hands, seats = _room(sittings, rng)
    partner, together, z, tested = _partner_z(excess, hands, "me", seats)
    a, b = excess[seats["p1"].to_numpy() == "b"], excess[seats["p1"].to_numpy() != "b"]
    welch = (a.mean() - b.mean()) / math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    assert welch > 5  # what the hand-by-hand reading alone said
    assert tested >= 1 and (partner != "b" or z < 2.5), (partner, z)


def test_a_partner_seen_at_many_tables_still_stands_out() -> None:
    """A real surplus with b, at many tables each with its own offset: found, with a large z."""
    rng = np.random.default_rng(4)
    sittings = [(["b", *rng.choice(OTHERS[1:], 2, replace=False)] if k % 2 else
                 list(rng.choice(OTHERS[1:], 3, replace=False)), 20, float(rng.normal(0.0, 0.2))) for k in range(30)]
    excess, hands, seats = _room(sittings, rng, with_b=0.6)
    partner, together, z, _ = _partner_z(excess, hands, "me", seats)
    assert partner == "b" and together == 300 and z > 3, (partner, together, z)


def test_with_a_hand_a_table_it_is_welchs_z() -> None:
    """Every hand at a table of its own (a room that reseats every hand): the tables' reading is the hands', up to
    the t's tail, so the z is Welch's or a little less (the t's tail, with as many degrees of freedom as b's tables)."""
    import itertools

    rng = np.random.default_rng(5)
    names = [f"o{i}" for i in range(30)] + ["b"]
    triples = list(itertools.combinations(names, 3))
    picked = [list(triples[i]) for i in rng.choice(len(triples), 300, replace=False)]
    excess, hands, seats = _room([(co, 1, 0.0) for co in picked], rng, with_b=1.0, noise=1.0)
    assert len({tuple(sorted(r)) for r in seats.to_numpy().tolist()}) == len(seats)
    partner, together, z, _ = _partner_z(excess, hands, "me", seats)
    mask = (seats.to_numpy() == partner).any(axis=1)
    a, b = excess[mask], excess[~mask]
    welch = (a.mean() - b.mean()) / math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    assert partner == "b" and welch > 3
    assert welch * 0.8 < z <= welch + 1e-9, (z, welch)  # a t with ~28 degrees of freedom: its tail at ~5
