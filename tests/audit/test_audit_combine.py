"""The pair score's combination: its null is calibrated on an honest room, it finds a sparse pair that the best
single signal (x 5) left among the honest, and its parts' nulls are exact."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analyzer.audit.calibrate import DIRECTED, Alarm, calibrate
from analyzer.audit.combine import (
    Params,
    combine,
    contrasts,
    floored,
    log_sf_max,
    orthant,
    per_hand_weights,
    shipped,
)

#: An honest room's correlation of the directed z's, as the simulators' rooms have it (the exact favour and the
#: rank of the per-hand favour go together; the rollout favour less; think time apart).
CORR = {("imm_marginal", "burst"): 0.6, ("imm_marginal", "dd_marginal"): 0.4, ("burst", "dd_marginal"): 0.3,
        ("imm_marginal", "marginal"): 0.4, ("dd_marginal", "pooled"): 0.3}


def honest_room(n: int, seed: int) -> pd.DataFrame:
    """n honest pairs: every directed z standard normal with CORR within a direction, 200 hands together."""
    rng = np.random.default_rng(seed)
    names = sorted({*DIRECTED, "burst"})
    c = np.eye(len(names))
    for (x, y), r in CORR.items():
        i, j = names.index(x), names.index(y)
        c[i, j] = c[j, i] = r
    t = pd.DataFrame({"a": [f"a{i:04d}" for i in range(n)], "b": [f"b{i:04d}" for i in range(n)],
                      "hands_together": 200, "codev_z": rng.normal(0.0, 1.0, n)})
    for tag in ("ab", "ba"):
        z = rng.multivariate_normal(np.zeros(len(names)), c, n)
        for k, name in enumerate(names):
            t[f"{name}_{tag}_z_mean" if name == "burst" else f"{name}_{tag}_z"] = z[:, k]
        # the count look: most honest pairs have no hand above the actor's top levels (p 1)
        t[f"burst_{tag}_z_count"] = np.where(rng.random(n) < 0.1, rng.normal(0.0, 1.0, n), -7.0)
    return t


def test_the_combinations_null_is_calibrated_on_an_honest_room() -> None:
    """Five honest rooms of 1,000 pairs: the share of p at or below 0.01, 0.05 and 0.5 within 1.5x of nominal."""
    p = np.concatenate([calibrate(honest_room(1000, seed), Alarm())["p_value"].to_numpy() for seed in range(5)])
    for level in (0.01, 0.05, 0.5):
        share = float((p <= level).mean())
        assert level / 1.5 <= share <= level * 1.5, (level, share)
    # the weighted Bonferroni pays little: a pair's p is at least its linear p over the linear part's weight, so the
    # share at 0.5 is about that weight's half; with most of the weight there it is within 10% of nominal
    assert float((p <= 0.5).mean()) >= 0.45
    out = calibrate(honest_room(1000, 9), Alarm())
    assert (out["verdict"] == "clear").all()


def test_a_sparse_pair_the_best_signal_missed_is_ranked_above_every_honest_pair() -> None:
    """A pair partner-aware in a third of its few hands: every favour signal a little up both ways (the per-hand
    ranks z 2.4, the exact favour 1.5, the rollout favour 1.2), none far out. The previous score (the best
    signal's p x 5, each over both directions x 2) left it among the honest pairs; the combination reads the
    signals together, with their correlation, and ranks it first."""
    t = honest_room(300, 3)
    for tag in ("ab", "ba"):
        t.loc[0, [f"burst_{tag}_z_mean", f"imm_marginal_{tag}_z", f"dd_marginal_{tag}_z"]] = [2.4, 1.5, 1.2]
    out = calibrate(t, Alarm())
    previous = math.log(5) + out[[f"{s}_logp" for s in ("favour", "imm_marginal", "codev", "think", "burst")]].min(
        axis=1)
    assert (previous.iloc[1:] < previous.iloc[0]).sum() >= 2  # honest pairs above it before
    assert (out["score"].iloc[1:] < out["score"].iloc[0]).all()  # above every honest pair now
    assert (out["verdict"].iloc[1:] == "clear").all()


def test_one_way_help_is_read_in_its_direction() -> None:
    t = honest_room(300, 4)
    t.loc[0, "burst_ab_z_mean"] = 6.0
    t.loc[1, "burst_ba_z_mean"] = 6.0
    out = calibrate(t, Alarm())
    assert out.loc[0, "combined_ab_t"] > out.loc[0, "combined_ba_t"] + 3
    assert out.loc[1, "combined_ba_t"] > out.loc[1, "combined_ab_t"] + 3
    assert out.loc[0, "p_value"] == pytest.approx(out.loc[1, "p_value"], rel=1e-6)
    assert (out.loc[:1, "verdict"] == "flagged").all() and (out.loc[:1, "main_signal"] == "burst").all()


def test_the_maximum_of_the_contrasts_has_its_exact_null() -> None:
    """Bivariate orthants are Owen's T (against scipy's multivariate normal); the maximum's tail and body against a
    large sample of the maximum."""
    for rho in (-0.3, 0.2, 0.7, 0.95):
        for t in (0.0, 1.0, 2.5):
            want = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf([-t, -t])
            assert orthant(np.array([t]), rho)[0] == pytest.approx(want, abs=2e-5)
    corr = np.array([[1.0, 0.4, 0.7], [0.4, 1.0, 0.7], [0.7, 0.7, 1.0]])
    rng = np.random.default_rng(11)
    m = (rng.standard_normal((2_000_000, 3)) @ np.linalg.cholesky(corr).T).max(axis=1)
    for t in (-1.0, 0.5, 2.0, 3.0, 3.6):
        got = math.exp(log_sf_max(np.array([t]), corr)[0])
        assert got == pytest.approx(float((m > t).mean()), rel=0.05, abs=2e-5), t
    far = log_sf_max(np.array([6.0, 8.0]), corr)
    assert np.all(far <= np.log(3) + stats.norm.logsf([6.0, 8.0]) + 1e-12)  # never beyond the union bound
    assert np.all(far >= stats.norm.logsf([6.0, 8.0]))  # nor below one contrast's


def test_the_rooms_variance_is_widened_never_narrowed() -> None:
    cov = np.array([[0.25, 0.1], [0.1, 4.0]])
    f = floored(cov)
    assert f[0, 0] == pytest.approx(1.0) and f[1, 1] == pytest.approx(4.0)
    assert f[0, 1] / math.sqrt(f[0, 0] * f[1, 1]) == pytest.approx(0.1 / math.sqrt(0.25 * 4.0))
    z = floored(np.zeros((2, 2)))
    assert np.allclose(z, np.eye(2))  # no evidence at all: the theoretical null


def test_the_shipped_weights_and_their_per_hand_form() -> None:
    p = shipped()
    assert (p.w_dir >= 0).all() and (p.w_both >= 0).all() and sum(p.weights.values()) == pytest.approx(1.0)
    w = per_hand_weights(p)
    assert list(w.index)[:3] == ["a_to_b", "b_to_a", "both"] and np.allclose(w.to_numpy(), contrasts(p))
    k = len(p.signals)
    assert np.allclose(w.loc["b_to_a"].to_numpy(), np.r_[p.w_dir[k:], p.w_dir[:k]])
    with pytest.raises(ValueError, match="weights"):
        Params.from_dict({**p.to_dict(), "weights": {"linear": 0.5, "burst_count": 0.1, "codev": 0.1}})


def test_a_small_room_reads_the_fitted_null_and_an_empty_one_gives_nothing() -> None:
    t = honest_room(12, 5)
    c = combine(t, 10)
    assert not c.room.own and c.logp.shape == (12,) and np.all(c.logp <= 0)
    empty = calibrate(t.iloc[:0], Alarm())
    assert len(empty) == 0
