"""Anytime-valid verdicts: a test supermartingale (an e-process) per pair over per-hand scores, the alarm by Ville's
inequality and the review tier by e-BH.

A directed pair's per-hand scores x_h have null mean 0 and null variance v_h. For any such scores (no shape assumed,
only the conditional mean and variance), exp(lambda S - lambda^2 V / 2) with S = sum x_h and
V = sum (x_h^2 + 2 v_h) / 3 is a nonnegative supermartingale for every real lambda (Delyon 2009; Howard, Ramdas,
McAuliffe and Sekhon, Probab. Surveys 2020, the sub-Gaussian case of "finite variance"). Mixing lambda over a
half-normal of precision ``rho`` (one-sided: evidence of favour only) gives Robbins' normal mixture in closed form,

    E = 2 sqrt(rho / (V + rho)) exp(S^2 / (2 (V + rho))) Phi(S / sqrt(V + rho)),

again a test supermartingale (E_0 = 1). Ville's inequality bounds the chance that an honest pair's E ever reaches
1/alpha, over every look at any time chosen in any way, by alpha. The mean of test supermartingales is one, so a
pair's E is the mean of its directions' (and scores') E's.

``RHO`` is fixed a priori: the mixture is tightest, at the default alarm, for a pair whose evidence reaches the alarm
after about 100 hands together (Howard et al. 2021, the normal mixture's boundary; rho ~ V* / (2 log(1/alpha) +
log(2 log(1/alpha)) + 1) at V* = 100 and alpha = 1e-5). A smaller rho favours long, slow cases, a larger one short,
blatant ones; validity does not depend on it.
"""

from __future__ import annotations

import numpy as np
from scipy import special

#: The mixing precision of lambda (in units of one hand's null variance): tightest near 100 hands at alpha = 1e-5.
RHO = 4.0


def log_mixture_e(s: np.ndarray, v: np.ndarray, rho: float = RHO) -> np.ndarray:
    """The one-sided normal-mixture e-value's natural logarithm, from the sums S and V (arrays of one shape)."""
    s = np.asarray(s, np.float64)
    a = np.asarray(v, np.float64) + rho
    return np.log(2.0) + 0.5 * np.log(rho / a) + s * s / (2 * a) + special.log_ndtr(s / np.sqrt(a))


def robust_v(q: np.ndarray, v_null: np.ndarray) -> np.ndarray:
    """V = (sum x_h^2 + 2 sum v_h) / 3: from the scores' sum of squares ``q`` and their null variances' sum."""
    return (np.asarray(q, np.float64) + 2 * np.asarray(v_null, np.float64)) / 3


def log_mean_e(log_e: np.ndarray, axis: int = -1) -> np.ndarray:
    """The logarithm of the mean of e-values given by their logarithms (along ``axis``)."""
    log_e = np.asarray(log_e, np.float64)
    return special.logsumexp(log_e, axis=axis) - np.log(log_e.shape[axis])


def e_bh(log_e: np.ndarray, level: float) -> np.ndarray:
    """e-BH (Wang and Ramdas, JRSSB 2022) at ``level`` over the hypotheses' e-values (by their logarithms): which
    are rejected. With K hypotheses, the k largest e-values are rejected for the largest k whose k-th largest is at
    least K / (level k); the false discovery rate is at most ``level`` under any dependence between the e-values."""
    log_e = np.asarray(log_e, np.float64)
    k_all = len(log_e)
    out = np.zeros(k_all, bool)
    if not k_all:
        return out
    order = np.argsort(-log_e, kind="stable")
    k = np.arange(1, k_all + 1)
    ok = log_e[order] >= np.log(k_all / (level * k))
    if ok.any():
        out[order[: int(np.flatnonzero(ok).max()) + 1]] = True
    return out
