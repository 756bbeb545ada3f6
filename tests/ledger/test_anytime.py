"""The e-process and e-BH: the closed form against its integral, and the promise under optional stopping: honest
pairs looked at every night are ever alarmed at most alpha of the time, where a fixed-sample test looked at as often
is not."""

from __future__ import annotations

import numpy as np
from scipy import integrate

from analyzer.audit.anytime import RHO, e_bh, log_mean_e, log_mixture_e, robust_v


def test_mixture_is_the_integral_over_a_half_normal() -> None:
    for s, v in ((0.0, 1.0), (3.0, 10.0), (-2.0, 5.0), (12.0, 40.0)):
        def integrand(lam: float, s: float = s, v: float = v) -> float:
            return float(np.exp(lam * s - lam * lam * v / 2) * 2 * np.sqrt(RHO / (2 * np.pi)) * np.exp(-RHO * lam * lam / 2))

        want, _ = integrate.quad(integrand, 0, np.inf)
        assert np.isclose(np.exp(log_mixture_e(np.array(s), np.array(v))), want, rtol=1e-7)
    assert np.isclose(log_mixture_e(np.array(0.0), np.array(0.0)), 0.0)  # E starts at 1


def test_e_bh_rejects_the_largest_k_that_pass() -> None:
    e = np.array([400.0, 1.0, 90.0, 30.0, 0.5])
    # K = 5, level 0.1: the k-th largest must reach 50 / k: 400 >= 50, 90 >= 25, 30 >= 16.7, 1 < 12.5
    assert e_bh(np.log(e), 0.1).tolist() == [True, False, True, True, False]
    assert not e_bh(np.log(np.ones(5)), 0.1).any()
    assert np.isclose(np.exp(log_mean_e(np.log(np.array([[1.0, 3.0]])), axis=1)), 2.0)


def _honest_nights(pairs: int, nights: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pair and night the standardised score sums: a few hands a night (0..6), each hand's score skewed and
    heavy-tailed (a centred exponential, or a centred t with 3 degrees of freedom), mean 0, variance 1."""
    rng = np.random.default_rng(seed)
    hands = rng.integers(0, 7, size=(pairs, nights))
    total = int(hands.sum())
    kind = rng.random(total) < 0.5
    x = np.where(kind, rng.exponential(1.0, total) - 1.0, rng.standard_t(3, total) / np.sqrt(3.0))
    owner = np.repeat(np.arange(pairs * nights), hands.ravel())
    s = np.bincount(owner, x, pairs * nights).reshape(pairs, nights)
    q = np.bincount(owner, x * x, pairs * nights).reshape(pairs, nights)
    return np.cumsum(s, axis=1), np.stack([np.cumsum(q, axis=1), np.cumsum(hands, axis=1)])


def test_optional_stopping_keeps_the_alarm_rate() -> None:
    """Every night a look; an honest pair is alarmed if any night's e-value reaches 1/alpha. The share ever alarmed
    stays at or below alpha (within three standard errors); the fixed-sample z test read at the same looks is
    alarmed far more often (it promises alpha at one look only)."""
    alpha, pairs, nights = 0.01, 4000, 60
    s, (q, n) = _honest_nights(pairs, nights, seed=7)
    log_e = log_mixture_e(s, robust_v(q, n))
    ever = (log_e >= np.log(1 / alpha)).any(axis=1).mean()
    assert ever <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / pairs)
    z = s / np.sqrt(np.maximum(n, 1))
    fixed_ever = (z >= 2.3263).any(axis=1).mean()  # one-sided normal quantile at alpha
    fixed_last = (z[:, -1] >= 2.3263).mean()
    print(f"ever alarmed at alpha {alpha}: e-process {ever:.4f}, fixed-sample z {fixed_ever:.4f} "
          f"(at the last night alone {fixed_last:.4f})")
    assert fixed_ever > 3 * alpha  # the looks inflate a fixed-sample test: the simulation can tell
    # and a favouring pair (0.5 of a hand's spread in its favour) is still found by the e-process
    rng = np.random.default_rng(8)
    h = rng.integers(0, 7, size=(500, nights))
    x_s = np.cumsum(0.5 * h + rng.normal(0, np.sqrt(np.maximum(h, 1e-12))), axis=1)
    x_q = np.cumsum(h * 1.25, axis=1)
    found = (log_mixture_e(x_s, robust_v(x_q, np.cumsum(h, axis=1))) >= np.log(1 / alpha)).any(axis=1).mean()
    assert found > 0.95
