"""The think-time model from its normal equations equals the dense per-column least squares it replaced."""

from __future__ import annotations

import numpy as np
import pandas as pd
from audit_synth import synthetic_room
from scipy import stats

from analyzer.audit.signals import MIN_SEPARATE_HANDS, P_MAX, _separable, _think, links


def _dense_separable(x: np.ndarray) -> np.ndarray:
    """The former definition: per co-player column, least squares on the other co-player columns."""
    co = x[:, :-1]
    out = np.zeros(co.shape[1])
    for j in range(len(out)):
        rest = np.delete(co, j, axis=1)
        coef = np.linalg.lstsq(rest, co[:, j], rcond=None)[0]
        out[j] = float(((co[:, j] - rest @ coef) ** 2).sum())
    return out


def _dense_think(lk: pd.DataFrame) -> pd.DataFrame:
    """The former think-time model: a dense hands-by-co-players design per actor."""
    t = lk[lk["offset"] == 1].dropna(subset=["think_ms"])
    lt = np.log1p(t["think_ms"].clip(lower=0).to_numpy(np.float64))
    x = t["difficulty"].fillna(0.0).to_numpy(np.float64)
    by = t["actor"]
    n = by.map(by.value_counts()).to_numpy(np.float64)
    mx = pd.Series(x, t.index).groupby(by).transform("mean").to_numpy()
    my = pd.Series(lt, t.index).groupby(by).transform("mean").to_numpy()
    sxy = pd.Series((x - mx) * (lt - my), t.index).groupby(by).transform("sum").to_numpy()
    sxx = pd.Series((x - mx) ** 2, t.index).groupby(by).transform("sum").to_numpy()
    slope = np.where((sxx > 1e-12) & (n > 2), sxy / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
    hand_r = pd.DataFrame({"actor": by, "hand_id": t["hand_id"], "r": lt - my - slope * (x - mx)}).groupby(
        ["actor", "hand_id"])["r"].mean().reset_index()
    seats = lk[["actor", "other", "hand_id"]].drop_duplicates().merge(hand_r, on=["actor", "hand_id"])
    rows = []
    for actor, g in seats.groupby("actor"):
        hands, hi = np.unique(g["hand_id"].to_numpy(object), return_inverse=True)
        others, oi = np.unique(g["other"].to_numpy(object), return_inverse=True)
        d = np.zeros((len(hands), len(others) + 1))
        d[:, -1] = 1.0
        d[hi, oi] = 1.0
        y = np.zeros(len(hands))
        y[hi] = g["r"].to_numpy()
        counts = d[:, :-1].sum(axis=0)
        dof = len(hands) - np.linalg.matrix_rank(d)
        inv = np.linalg.pinv(d.T @ d)
        beta = inv @ d.T @ y
        se = np.sqrt(np.maximum(np.diag(inv)[:-1] * float(((y - d @ beta) ** 2).sum() / dof), 1e-300))
        ok = (counts >= 2) & (len(hands) - counts >= 2) & (_dense_separable(d) >= MIN_SEPARATE_HANDS)
        z = stats.norm.isf(np.clip(stats.t.sf(beta[:-1] / se, dof), 1e-300, P_MAX))
        rows.extend((actor, o, float(zz) if k else 0.0, c) for o, zz, c, k in zip(others, z, counts, ok))
    return pd.DataFrame(rows, columns=["actor", "other", "z", "hands_with"])


def test_separable_from_the_gram_matrix_equals_least_squares() -> None:
    rng = np.random.default_rng(3)
    for hands, cols in ((40, 6), (200, 15), (12, 9)):  # the last: more columns than the data can separate
        x = np.zeros((hands, cols + 1))
        x[:, -1] = 1.0
        for h in range(hands):
            x[h, rng.choice(cols, 3, replace=False)] = 1.0
        x[:, 1] = x[:, 0]  # two co-players who always sat together: neither is separable
        dense = _dense_separable(x)
        fast = _separable(x[:, :-1].T @ x[:, :-1])
        assert np.allclose(fast, dense, atol=1e-6)
        assert fast[0] == 0 and fast[1] == 0 and fast.max() > 0


def test_think_from_normal_equations_equals_the_dense_model() -> None:
    df = synthetic_room(players=10, hands=300, run=5, colluders=(("p00", "p01"),), seed=7)
    lk = links(df)
    fast = _think(lk).set_index(["actor", "other"]).sort_index()
    dense = _dense_think(lk).set_index(["actor", "other"]).sort_index()
    assert fast.index.equals(dense.index)
    assert (dense["z"] != 0).sum() > len(dense) // 2  # the comparison is not between zeros
    assert np.allclose(fast["z"], dense["z"], atol=1e-6)
    assert np.array_equal(fast["hands_with"], dense["hands_with"])


def test_think_statistics_added_batch_by_batch_equal_one_pass() -> None:
    from analyzer.audit.signals import ThinkStats

    df = synthetic_room(players=10, hands=300, run=5, colluders=(("p00", "p01"),), seed=7)
    once = _think(links(df)).set_index(["actor", "other"]).sort_index()
    acc = ThinkStats()
    hands = df["hand_id"].unique()
    for part in (hands[:70], hands[70:71], hands[71:]):  # whole hands a batch, one batch of a single hand
        acc.add_decisions(df[df["hand_id"].isin(part)])
    batched = acc.result().set_index(["actor", "other"]).sort_index()
    assert batched.index.equals(once.index) and (once["z"] != 0).any()
    assert np.allclose(batched["z"], once["z"], atol=1e-8)
    assert np.allclose(batched["slower_ms_ratio"], once["slower_ms_ratio"], atol=1e-10)
