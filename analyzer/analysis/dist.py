"""The distributions and rank statistics the analysis and the audit read, from ``scipy.special`` without
``scipy.stats``.

Importing ``scipy.stats`` costs about one CPU-second (its ~100 distribution classes and test functions), in every
process that does: the command itself and each worker (benchmarks/bench_audit_scale.py ``--phases``, "start-up").
The few functions used here are each the ``scipy.special`` function (or the few lines of numpy) that
``scipy.stats`` itself calls for them, so they give the same floats (tests/analysis/test_dist.py compares them with
``scipy.stats`` on many inputs). ``scipy.stats`` stays for what is rare: the 借牌 lending test
(``audit.borrow``) and the tests.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

#: The standard normal density at 0, 1 / sqrt(2 pi) (``scipy.stats.norm.pdf(0)``).
NORM_PDF0 = 1.0 / math.sqrt(2.0 * math.pi)
#: ``scipy.stats.median_abs_deviation``'s ``scale="normal"``: the normal's 3rd quartile, ``special.ndtri(0.75)``.
MAD_NORMAL = 0.6744897501960817


def norm_sf(x: np.ndarray | float) -> np.ndarray:
    """P(Z > x) of the standard normal (``scipy.stats.norm.sf``)."""
    return special.ndtr(-np.asarray(x, np.float64))


def norm_isf(q: np.ndarray | float) -> np.ndarray:
    """The x with P(Z > x) = q (``scipy.stats.norm.isf``)."""
    return -special.ndtri(np.asarray(q, np.float64))


def norm_logsf(x: np.ndarray | float) -> np.ndarray:
    """log P(Z > x), exact far out in the tail (``scipy.stats.norm.logsf``)."""
    return special.log_ndtr(-np.asarray(x, np.float64))


def t_sf(x: np.ndarray | float, dof: np.ndarray | float) -> np.ndarray:
    """P(T > x) of Student's t with ``dof`` degrees of freedom (``scipy.stats.t.sf``)."""
    return special.stdtr(dof, -np.asarray(x, np.float64))


def chi2_ppf(q: float, dof: float) -> float:
    """The chi-square quantile: the x with P(X <= x) = q (``scipy.stats.chi2.ppf``)."""
    return float(special.chdtri(dof, 1.0 - q))


def poisson_logsf(k: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log P(X > k) of the Poisson with mean ``mu`` (``scipy.stats.poisson.logsf``; 0 for k < 0)."""
    k, mu = np.broadcast_arrays(np.floor(np.asarray(k, np.float64)), np.asarray(mu, np.float64))
    out = np.zeros(k.shape)
    inside = k >= 0
    with np.errstate(divide="ignore"):
        out[inside] = np.log(special.pdtrc(k[inside], mu[inside]))
    return out


def betabinom_pmf(k: np.ndarray, n: float, a: float, b: float) -> np.ndarray:
    """P(X = k) of the beta-binomial of ``n`` draws and Beta(a, b) (``scipy.stats.betabinom.pmf``, its formula)."""
    k = np.floor(np.asarray(k, np.float64))
    log_choose = -np.log(n + 1) - special.betaln(n - k + 1, k + 1)
    return np.exp(log_choose + special.betaln(k + a, n - k + b) - special.betaln(a, b))


def rank_average(v: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``v``, ties given their average rank (``scipy.stats.rankdata(v, method="average")``)."""
    v = np.asarray(v).ravel()
    if v.dtype.kind == "f" and np.isnan(v).any():  # scipy's nan_policy="propagate": no ranks at all
        return np.full(len(v), np.nan)
    order = np.argsort(v, kind="mergesort")
    sorted_v = v[order]
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])  # the first place of each distinct value
    ends = np.r_[starts[1:], len(v)]
    mean_rank = (starts + 1 + ends) / 2.0  # the average of ranks starts+1 .. ends
    out = np.empty(len(v), np.float64)
    out[order] = np.repeat(mean_rank, ends - starts)
    return out


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of two samples without NaN (``scipy.stats.spearmanr(x, y).statistic``)."""
    ranked = np.column_stack([rank_average(x), rank_average(y)])
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.corrcoef(ranked, rowvar=False)[0, 1])


def mad_normal(z: np.ndarray) -> float:
    """The median absolute deviation scaled to a normal's sigma
    (``scipy.stats.median_abs_deviation(z, scale="normal")``)."""
    z = np.asarray(z, np.float64)
    return float(np.median(np.abs(z - np.median(z))) / MAD_NORMAL)


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of a 1-D array without NaN
    (``scipy.stats.false_discovery_control(p, method="bh")``)."""
    p = np.asarray(p, np.float64)
    m = len(p)
    if m <= 1:
        return p.copy()
    order = np.argsort(p)
    ps = p[order] * (m / np.arange(1, m + 1, dtype=np.float64))
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    out = np.empty(m, np.float64)
    out[order] = ps
    return np.clip(out, 0.0, 1.0)


def log_bh_adjust(log_p: np.ndarray) -> np.ndarray:
    """:func:`bh_adjust` in log space: the natural log of each q-value from the natural log of each p-value, so a q
    below double precision (a p of 1e-450 among a hundred pairs) keeps its size instead of reading 0."""
    log_p = np.asarray(log_p, np.float64)
    m = len(log_p)
    if m <= 1:
        return np.minimum(log_p, 0.0)
    order = np.argsort(log_p, kind="stable")
    ls = log_p[order] + (np.log(m) - np.log(np.arange(1, m + 1, dtype=np.float64)))
    np.minimum.accumulate(ls[::-1], out=ls[::-1])
    out = np.empty(m, np.float64)
    out[order] = ls
    return np.minimum(out, 0.0)
