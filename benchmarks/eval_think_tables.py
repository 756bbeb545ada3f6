"""Think time in rooms of long sittings: the per-co-player fallback and the two directions' correlation.

Synthetic rooms (``tests/audit_synth.synthetic_room``, the pair signals' test room: tables re-formed every ``run``
hands, think times lognormal) with a lag per sitting (one factor for a table's ``run`` hands, sd 0.5 in log time:
a slow connection, a slow evening). Two shapes: 16 players, 480 hands, sittings of 40 (each actor at 12 tables with 15
co-players: the joint fit has no degrees of freedom, each co-player is read on its own, ``signals._one_at_a_time``)
and 16 players, 1,200 hands (30 tables: the joint fit). Printed per shape over 10 rooms: honest directed think z's
above 3 and 2.5 (against the normal's expectation), and the pairs' 'both sides' z, (z_ab + z_ba) / sqrt(2), next to
the same over sqrt(2 (1 + rho)) with rho the room's correlation of the directions
(``calibrate.direction_correlation``). Then the colluders' z in the first shape when they are 1.6x slower together.

    python benchmarks/eval_think_tables.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from audit_synth import synthetic_room  # noqa: E402

from analyzer.analysis.dist import norm_sf  # noqa: E402
from analyzer.audit.calibrate import direction_correlation  # noqa: E402
from analyzer.audit.think import think_table  # noqa: E402


def lagged(df: pd.DataFrame, run: int, seed: int, sd: float = 0.5) -> pd.DataFrame:
    """The room with one lag factor per sitting (``run`` consecutive hands of one table)."""
    rng = np.random.default_rng(seed)
    ids = df["hand_id"].drop_duplicates().to_numpy()
    lag = pd.Series(np.exp(rng.normal(0.0, sd, len(ids) // run + 1)).repeat(run)[:len(ids)], index=ids)
    return df.assign(think_ms=df["think_ms"] * df["hand_id"].map(lag).to_numpy())


def shape(players: int, hands: int, run: int, rooms: int = 10) -> None:
    directed: list[float] = []
    naive: list[float] = []
    fixed: list[float] = []
    rhos: list[float] = []
    for k in range(rooms):
        df = lagged(synthetic_room(players=players, hands=hands, run=run, seed=100 + k), run, k)
        z = think_table(df).set_index(["actor", "other"])["z"]
        directed += z[z != 0].tolist()
        ab, ba = [], []
        for (a, b), v in z.items():
            if a < b and (b, a) in z.index:
                ab.append(v)
                ba.append(z[(b, a)])
        ab_, ba_ = np.array(ab), np.array(ba)
        rho = direction_correlation(ab_, ba_)
        rhos.append(rho)
        naive += ((ab_ + ba_) / np.sqrt(2.0)).tolist()
        fixed += ((ab_ + ba_) / np.sqrt(2.0 * (1.0 + rho))).tolist()
    d, n, f = np.array(directed), np.array(naive), np.array(fixed)
    print(f"{players} players, {hands} hands, sittings of {run}, a lag per sitting (sd 0.5), {rooms} rooms:")
    print(f"  directed honest z's read: {len(d)}; > 3: {(d > 3).sum()} (normal: {norm_sf(3.0) * len(d):.1f}), "
          f"> 2.5: {(d > 2.5).sum()} (normal: {norm_sf(2.5) * len(d):.1f}), largest {d.max():.2f}")
    print(f"  directions' correlation rho per room: {min(rhos):.2f}-{max(rhos):.2f}")
    print(f"  both sides over sqrt(2): > 3: {(n > 3).sum()} of {len(n)} (normal: {norm_sf(3.0) * len(n):.1f}), largest "
          f"{n.max():.2f}; over sqrt(2 (1 + rho)): > 3: {(f > 3).sum()}, largest {f.max():.2f}")


def colluders() -> None:
    print("colluders 1.6x slower together, 16 players, 480 hands, sittings of 40 (each co-player on its own):")
    for seed in range(4):
        df = synthetic_room(players=16, hands=480, run=40, seed=seed)
        seated = df.groupby("hand_id")[["p0", "p1", "p2", "p3"]].first()
        both = seated.apply(lambda r: {"p00", "p01"} <= set(r), axis=1)
        slow = df["hand_id"].map(both).to_numpy() & df["player"].isin(["p00", "p01"]).to_numpy()
        room = df.assign(think_ms=df["think_ms"] * np.where(slow, 1.6, 1.0))
        t = think_table(room).set_index(["actor", "other"])
        pair = t.index.isin([("p00", "p01"), ("p01", "p00")])
        print(f"  seed {seed}: sittings together {int(both.sum()) // 40}; colluders' z "
              f"{', '.join(f'{v:.2f}' for v in t.loc[pair, 'z'])}; largest honest z {t.loc[~pair, 'z'].max():.2f}")


if __name__ == "__main__":
    shape(16, 480, 40)
    shape(16, 1200, 40)
    colluders()
