"""analysis.dist gives scipy.stats' floats without importing scipy.stats (which costs ~1 CPU-s a process)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from analyzer.analysis import dist

RNG = np.random.default_rng(7)
X = np.concatenate([RNG.normal(0, 3, 500), [0.0, -0.0, 8.5, 40.0, -40.0, np.inf, -np.inf]])


def test_normal_tails_equal_scipy() -> None:
    q = np.concatenate([RNG.uniform(0, 1, 300), [1e-300, 1e-20, 0.5, 1 - 1e-12]])
    assert np.array_equal(dist.norm_sf(X), stats.norm.sf(X))
    assert np.array_equal(dist.norm_logsf(X), stats.norm.logsf(X))
    assert np.array_equal(dist.norm_isf(q), stats.norm.isf(q))
    assert dist.NORM_PDF0 == pytest.approx(stats.norm.pdf(0.0), rel=1e-15)
    assert dist.norm_logsf(40.0) < -800  # far out: the log, not log(0)


@pytest.mark.parametrize("dof", [1, 2, 3.5, 30, 1000])
def test_t_tail_equals_scipy(dof: float) -> None:
    assert np.array_equal(dist.t_sf(X[np.isfinite(X)], dof), stats.t.sf(X[np.isfinite(X)], dof))


def test_chi2_quantile_equals_scipy() -> None:
    for q, df in [(0.5, 1), (0.95, 1), (0.99, 3)]:
        assert dist.chi2_ppf(q, df) == pytest.approx(float(stats.chi2.ppf(q, df)), rel=1e-13)


def test_poisson_log_tail_equals_scipy() -> None:
    k = RNG.integers(-2, 40, 400)
    mu = RNG.uniform(1e-12, 30, 400)
    got, want = dist.poisson_logsf(k, mu), stats.poisson.logsf(k, mu)
    assert np.array_equal(got, want)
    assert got[k < 0].tolist() == [0.0] * int((k < 0).sum())


def test_betabinomial_pmf_equals_scipy() -> None:
    for n, a, b in [(0, 1.0, 1.0), (1, 0.3, 2.0), (25, 4.2, 9.1), (200, 0.05, 0.07)]:
        k = np.arange(n + 1)
        got, want = dist.betabinom_pmf(k, n, a, b), stats.betabinom.pmf(k, n, a, b)
        assert np.allclose(got, want, rtol=1e-12, atol=0)
        assert got.sum() == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("values", [[3.0, 1.0, 2.0], [1, 1, 1, 1], [2, 1, 2, 1, 3, 2], list(range(50))[::-1],
                                    RNG.integers(0, 5, 300).tolist(), RNG.normal(size=301).tolist(), [4.0],
                                    [1.0, float("nan"), 2.0]])
def test_average_ranks_equal_scipy(values: list[float]) -> None:
    v = np.asarray(values)
    assert np.array_equal(dist.rank_average(v), stats.rankdata(v, method="average"), equal_nan=True)


def test_spearman_equals_scipy() -> None:
    x = RNG.normal(size=200)
    y = x + RNG.normal(size=200)
    yi = np.round(y)  # ties
    for a, b in [(x, y), (x, yi), (yi, x), (x, -x)]:
        assert dist.spearman_rho(a, b) == pytest.approx(float(stats.spearmanr(a, b).statistic), rel=1e-12)


def test_mad_equals_scipy() -> None:
    for z in [RNG.normal(2, 3, 101), RNG.normal(size=100), np.array([1.0, 1.0, 1.0])]:
        assert dist.mad_normal(z) == pytest.approx(float(stats.median_abs_deviation(z, scale="normal")), rel=1e-15)


@pytest.mark.parametrize("p", [[0.01, 0.02, 0.03, 0.5], [0.5], [], [0.2, 0.2, 0.2], [1.0, 0.0, 0.04, 0.04, 0.9]])
def test_bh_equals_scipy(p: list[float]) -> None:
    arr = np.asarray(p, np.float64)
    got = dist.bh_adjust(arr)
    want = stats.false_discovery_control(arr, method="bh") if len(arr) else arr
    assert np.array_equal(got, want)
    assert arr.tolist() == p  # the input is not changed


def test_bh_random_equals_scipy() -> None:
    p = RNG.uniform(0, 1, 1000) ** 3
    assert np.array_equal(dist.bh_adjust(p), stats.false_discovery_control(p, method="bh"))


def test_log_bh_is_bh_in_log_space_and_keeps_what_underflows() -> None:
    """The log q-values are the logs of the plain ones wherever those are representable (ties, 0 and 1 included), and
    keep their size where the plain ones underflow to 0 (a p of 1e-450 among 100: q = 1e-448)."""
    p = np.concatenate([RNG.uniform(0, 1, 500) ** 3, [0.2, 0.2, 1.0, 1e-300]])
    with np.errstate(divide="ignore"):
        got = dist.log_bh_adjust(np.log(p))
    assert np.allclose(np.exp(got), dist.bh_adjust(p), rtol=1e-12, atol=0)
    log_p = np.log(10.0) * np.array([-450.0, *np.log10(RNG.uniform(0.01, 1, 99))])
    log_q = dist.log_bh_adjust(log_p) / np.log(10.0)
    assert log_q[0] == pytest.approx(-448.0, abs=1e-9) and np.all(log_q <= 0)
    assert dist.log_bh_adjust(np.array([-3.0])).tolist() == [-3.0] and dist.log_bh_adjust(np.array([])).size == 0


def test_the_audit_and_players_do_not_import_scipy_stats() -> None:
    """The point of the module: the commands' modules load without scipy.stats."""
    code = ("import sys; import analyzer.cli, analyzer.commands.audit, analyzer.audit.core, analyzer.analysis.players; "
            "import analyzer.report.audit; print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
