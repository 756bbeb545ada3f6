"""Variants of the per-player choice model, side by side on the same honest rooms: why the headline is what it is.

Run: ``python3 benchmarks/skill_variants.py [--models softmax,blunder,other_softmax] [--seed 1,2,3]
[--players 40] [--hands 150]``.

For each room (``analyzer.simulate.noise.noisy_room``, analysed with the library's defaults) the
Spearman between the known noise and each variant (1 = perfect order), and the room's log-likelihood
where the variant is a choice model of its own:

- ``headline``: :func:`analyzer.analysis.skill.rate` (two directions, read on the shipped reference set);
- ``own decisions``: the same fits read on each player's own decisions instead of the common set;
- ``c=0.5``, ``c=0.75``: Regan's consistency exponent, every loss to the power c (fit and reference);
- ``values only``: the one-parameter sensitivity on the evaluator's normalised losses (the former headline);
- ``gamma=0``, ``gamma=0.5``: the one-parameter model on regret / scale^gamma (relative to the room's median
  scale; gamma=1 is ``values only``), with the room's negative log-likelihood.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from analyzer.analysis.decisions import analyse
from analyzer.analysis.skill import (
    Reference,
    _best_nll,
    equivalent_skill,
    expected_loss,
    fit_by,
    loss_matrix,
    rate,
    reference,
)
from analyzer.simulate.noise import noisy_room
from eval_players import _items  # benchmarks/ is on the path when run as a script


def _power(x: np.ndarray, c: float) -> np.ndarray:
    fin = np.isfinite(x)
    return np.where(fin, np.power(np.where(fin, x, 0.0), c), np.inf)


def _groups(players: np.ndarray) -> list[tuple[str, np.ndarray]]:
    order = np.argsort(players, kind="stable")
    keys, starts = np.unique(players[order], return_index=True)
    return [(str(k), order[a:b]) for k, a, b in zip(keys, starts, list(starts[1:]) + [len(order)])]


def room_variants(model: str, seed: int, args: argparse.Namespace) -> dict[str, float]:
    room = noisy_room(model, players=args.players, hands_per_player=args.hands, seed=seed)
    df = analyse(_items(room.records), seed=0, reasons=False)
    loss, chosen = loss_matrix(df)
    ref, _ = loss_matrix(df, key="loss_ref")
    players = df["player"].astype(str).to_numpy()
    groups = _groups(players)
    noise = np.array([room.level[p] for p, _ in groups])
    base = reference()
    out: dict[str, float] = {"model": model, "room seed": seed}  # type: ignore[dict-item]

    def rho(values: list[float]) -> float:
        return float(-spearmanr(noise, values).statistic)

    fits = [rate(loss[i], ref[i], chosen[i], base) for _, i in groups]
    out["headline"] = rho([f.skill for f, _ in fits])
    own = []
    for (_, i), (_, c) in zip(groups, fits):
        mine = Reference(loss[i], ref[i])
        own.append(equivalent_skill(mine, expected_loss(mine, c.a, c.b)[0]))
    out["own decisions"] = rho(own)
    for c in (0.5, 0.75):
        rs = Reference(_power(base.loss, c), _power(base.ref, c))
        lc, rc = _power(loss, c), _power(ref, c)
        out[f"c={c}"] = rho([rate(lc[i], rc[i], chosen[i], rs)[0].skill for _, i in groups])
    scale = df["scale"].to_numpy(float)
    for gamma in (1.0, 0.0, 0.5):
        f = (scale / np.median(scale)) ** (1.0 - gamma)
        x = np.where(np.isfinite(loss), loss * f[:, None], np.inf)
        one = fit_by(x, chosen, players)
        name = "values only" if gamma == 1.0 else f"gamma={gamma}"
        out[name] = rho([one[p].skill for p, _ in groups])
        cl = x[np.arange(len(x)), chosen]
        out[f"{name}: room NLL"] = sum(_best_nll(x[i], cl[i]) for _, i in groups)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="softmax,blunder,other_softmax")
    ap.add_argument("--seed", default="1,2,3", help="room seeds, comma-separated")
    ap.add_argument("--players", type=int, default=40)
    ap.add_argument("--hands", type=int, default=150, help="hands per player")
    args = ap.parse_args()
    rows = []
    for seed in (int(x) for x in args.seed.split(",")):
        for m in args.models.split(","):
            rows.append(room_variants(m, seed, args))
            print(pd.Series(rows[-1]).to_string(float_format=lambda x: f"{x:.3f}"), "\n", flush=True)
    table = pd.DataFrame(rows)
    table["room"] = table["model"] + " s" + table["room seed"].astype(str)
    print(table.drop(columns=["model", "room seed"]).set_index("room").T.to_string(float_format=lambda x: f"{x:.3f}"))
    figs = [c for c in table.columns if c not in ("model", "room seed", "room") and "NLL" not in c]
    print("\nsmallest over the rooms of each model:")
    print(table.groupby("model", sort=False)[figs].min().T.to_string(float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
