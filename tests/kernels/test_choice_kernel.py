"""The compiled sums of the choice model (analyzer.kernels.choice) against the same sums written in numpy: the
softmax over each row's offered options, its log normaliser, the expected losses and their covariance, and the
grid of log-likelihoods the audit's choice weights read."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analyzer.analysis.skill import fit_choice
from analyzer.audit.burst import CHOICE_GRID, choice_loglik
from analyzer.kernels import choice


def _rows(seed: int, n: int, ref_zero: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Padded decision rows as the callers make them: 1-7 offered options of 13 (inf padding), one of them the
    best (loss 0), reference losses with some missing (nan), the chosen option among the offered ones."""
    rng = np.random.default_rng(seed)
    loss = rng.exponential(1.0, (n, 13))
    ref = np.zeros((n, 13)) if ref_zero else rng.exponential(0.5, (n, 13))
    k = rng.integers(1, 8, n)
    for i in range(n):
        loss[i, k[i]:] = np.inf
        loss[i, rng.integers(0, k[i])] = 0.0
        ref[i, k[i]:] = np.nan
    ref[rng.random((n, 13)) < 0.05] = np.nan
    chosen = np.array([rng.integers(0, k[i]) for i in range(n)], np.int64)
    return loss, ref, chosen


def _padded(loss: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fin = np.isfinite(loss)
    return fin, np.where(fin, loss, 0.0), np.where(fin, np.nan_to_num(ref, nan=0.0, posinf=0.0, neginf=0.0), 0.0)


def _numpy_terms(fin, x, y, a, b):
    z = np.where(fin, -(a * x + b * y), -np.inf)
    m = z.max(axis=1)
    e = np.exp(z - m[:, None])
    s = e.sum(axis=1)
    p = e / s[:, None]
    mx, my = (p * x).sum(1), (p * y).sum(1)
    return ((m + np.log(s)).sum(), mx.sum(), my.sum(), ((p * x * x).sum(1) - mx * mx).sum(),
            ((p * x * y).sum(1) - mx * my).sum(), ((p * y * y).sum(1) - my * my).sum())


@pytest.mark.parametrize("seed", range(6))
def test_fit_terms_are_numpys_softmax_sums(seed):
    loss, ref, _ = _rows(seed, 300, ref_zero=seed == 0)
    fin, x, y = _padded(loss, ref)
    choice.ready("fit_terms")
    for a, b in ((0.0, 0.0), (0.5, 0.5), (3.0, 0.1), (50.0, 50.0)):
        got = choice.fit_terms(x, y, fin, a, b)
        want = _numpy_terms(fin, x, y, a, b)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-9), (a, b, got, want)


def test_a_row_without_options_adds_nothing():
    loss, ref, _ = _rows(1, 20)
    fin, x, y = _padded(loss, ref)
    with_empty = np.vstack([x, np.zeros((1, 13))]), np.vstack([y, np.zeros((1, 13))]), np.vstack([fin, np.zeros((1, 13), bool)])
    assert choice.fit_terms(*with_empty, 0.7, 0.2) == pytest.approx(choice.fit_terms(x, y, fin, 0.7, 0.2), rel=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_grid_loglik_is_numpys_per_group_sum(seed):
    loss, ref, chosen = _rows(10 + seed, 400, ref_zero=seed == 0)
    groups = np.random.default_rng(seed).integers(0, 5, len(loss))
    got = choice_loglik(loss, ref, chosen, groups, 5)
    fin, x, y = _padded(loss, ref)
    want = np.zeros((5, len(CHOICE_GRID) ** 2))
    ar = np.arange(len(x))
    multi = fin.sum(1) > 1  # a decision with one option adds 0
    for i, a in enumerate(CHOICE_GRID):
        for j, b in enumerate(CHOICE_GRID):
            z = np.where(fin, -(a * x + b * y), -np.inf)
            top = z.max(1)
            ll = z[ar, chosen] - (top + np.log(np.exp(z - top[:, None]).sum(1)))
            np.add.at(want[:, i * len(CHOICE_GRID) + j], groups[multi], ll[multi])
    assert np.allclose(got, want, rtol=1e-12, atol=1e-9)
    if seed == 0:  # no reference losses: b changes nothing, every b of one a reads the same
        g = len(CHOICE_GRID)
        assert np.array_equal(got.reshape(5, g, g), np.repeat(got.reshape(5, g, g)[:, :, :1], g, axis=2))


@pytest.mark.parametrize("seed", range(4))
def test_the_fit_is_a_stationary_point_of_numpys_likelihood(seed):
    """The Newton fit on the kernel's sums ends where numpy's gradient of the log-likelihood vanishes (interior
    optimum) or pushes out of the box (a bound held)."""
    rng = np.random.default_rng(100 + seed)
    loss, ref, _ = _rows(100 + seed, 600)
    fin, x, y = _padded(loss, ref)
    # choices drawn from a known model (a, b) = (1.5, 0.7), so the optimum is inside the box
    z = np.where(fin, -(1.5 * x + 0.7 * y), -np.inf)
    p = np.exp(z - z.max(1)[:, None])
    p /= p.sum(1)[:, None]
    chosen = (p.cumsum(1) < rng.random(len(p))[:, None]).sum(1)
    chosen = np.minimum(chosen, fin.sum(1) - 1)
    c = fit_choice(loss, ref, chosen)
    _, ex, ey, hxx, hxy, hyy = _numpy_terms(fin, x, y, c.a, c.b)
    ar = np.arange(len(x))
    grad = np.array([x[ar, chosen].sum() - ex, y[ar, chosen].sum() - ey])
    assert np.abs(grad).max() < 1e-4 * len(x)
    assert 0.5 < c.a < 3.0 and 0.1 < c.b < 2.0
    assert np.allclose(np.linalg.inv(np.array([[hxx, hxy], [hxy, hyy]])), c.cov, rtol=1e-6)
    assert math.isclose(c.decisions, len(x))


def test_a_fresh_process_loads_the_choice_kernels_from_the_cache():
    """Each kernel holds one compiled version, of the declared signature (the calls pass exactly those types), loaded
    from numba's cache (warmed by the first process)."""
    code = ("import numpy as np; from analyzer.analysis.skill import fit_choice; "
            "from analyzer.audit.burst import choice_loglik; import analyzer.kernels.choice as k; "
            "loss = np.array([[0.0, 1.0, np.inf], [0.5, 0.0, 2.0]] * 20); ref = np.zeros_like(loss); "
            "chosen = np.array([0, 1] * 20); fit_choice(loss, ref, chosen); "
            "choice_loglik(loss, ref, chosen, np.zeros(40, np.int64), 1); "
            "print([(list(d.overloads) == [k.SIGNATURES[n]], sum(d.stats.cache_hits.values())) "
            "for n in ('fit_terms', 'grid_loglik') for d in [getattr(k, n)]])")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "[(True, 1), (True, 1)]"


def test_indices_out_of_range_are_an_error_not_a_read_past_the_arrays():
    loss, ref, chosen = _rows(3, 10)
    bad = chosen.copy()
    bad[4] = 13
    with pytest.raises(IndexError, match="chosen"):
        choice_loglik(loss, ref, bad, np.zeros(10, np.int64), 1)
    with pytest.raises(IndexError, match="groups"):
        choice_loglik(loss, ref, chosen, np.full(10, 2, np.int64), 2)
    with pytest.raises(IndexError, match="groups"):
        choice_loglik(loss, ref, chosen, np.zeros(9, np.int64), 1)
