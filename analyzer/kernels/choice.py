"""Compiled sums of the conditional-logit choice model P(k) ∝ exp(-(a x_k + b y_k)) over padded decision rows.

The choice model behind the skill rating (:func:`analyzer.analysis.skill.fit_choice`) and the audit's
choice weights (:func:`analyzer.audit.burst.choice_loglik`) is a softmax over each decision's options; the
rows are padded to ``MAX_OPTIONS`` columns of which most decisions use 2-4. In numpy every Newton step and
every grid point made several (rows, 13) temporaries; here one pass over each row's finite options makes the
sums the callers need (log normaliser, expected loss, its covariance), no temporaries, the padding skipped.

Inputs, as the callers pad them: ``x``, ``y`` (rows, 13) float64 (0 where padded), ``fin`` the finite
(offered) options. Every softmax is max-shifted, as numpy's was; a row without any option adds nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, types

from analyzer.kernels import Ready


@njit(cache=True, nogil=True)
def fit_terms(x, y, fin, a, b):  # pragma: no cover - compiled
    """At (a, b): the sum over rows of the log normaliser (max-shifted: log sum_k exp(-(a x_k + b y_k))), of the
    model's expected x and y, and of the model's covariance of (x, y) (xx, xy, yy): the negative
    log-likelihood's parts, its gradient's and its Hessian's (the observed information)."""
    lz = 0.0
    ex = 0.0
    ey = 0.0
    hxx = 0.0
    hxy = 0.0
    hyy = 0.0
    n, width = x.shape
    for r in range(n):
        top = -math.inf
        for k in range(width):
            if fin[r, k]:
                z = -(a * x[r, k] + b * y[r, k])
                if z > top:
                    top = z
        if top == -math.inf:
            continue
        s = 0.0
        sx = 0.0
        sy = 0.0
        sxx = 0.0
        sxy = 0.0
        syy = 0.0
        for k in range(width):
            if fin[r, k]:
                xk = x[r, k]
                yk = y[r, k]
                e = math.exp(-(a * xk + b * yk) - top)
                s += e
                sx += e * xk
                sy += e * yk
                sxx += e * xk * xk
                sxy += e * xk * yk
                syy += e * yk * yk
        mx = sx / s
        my = sy / s
        lz += top + math.log(s)
        ex += mx
        ey += my
        hxx += sxx / s - mx * mx
        hxy += sxy / s - mx * my
        hyy += syy / s - my * my
    return lz, ex, ey, hxx, hxy, hyy


@njit(cache=True, nogil=True)
def grid_loglik(x, y, fin, chosen, groups, grid, out):  # pragma: no cover - compiled
    """Add to ``out[group, i * len(grid) + j]`` each row's log-likelihood of its chosen option at
    (a, b) = (grid[i], grid[j]); rows with one option add 0 (their choice is certain)."""
    n, width = x.shape
    g = grid.shape[0]
    xs = np.empty(width)
    ys = np.empty(width)
    for r in range(n):
        m = 0
        for k in range(width):
            if fin[r, k]:
                xs[m] = x[r, k]
                ys[m] = y[r, k]
                m += 1
        if m < 2:
            continue
        c = chosen[r]
        cx = x[r, c]
        cy = y[r, c]
        row = groups[r]
        for i in range(g):
            a = grid[i]
            for j in range(g):
                b = grid[j]
                top = -math.inf
                for k in range(m):
                    z = -(a * xs[k] + b * ys[k])
                    if z > top:
                        top = z
                s = 0.0
                for k in range(m):
                    s += math.exp(-(a * xs[k] + b * ys[k]) - top)
                out[row, i * g + j] += -(a * cx + b * cy) - (top + math.log(s))


def _array(dtype: Any, ndim: int) -> Any:
    return types.Array(dtype, ndim, "C")


_F2, _B2 = _array(types.float64, 2), _array(types.bool_, 2)
#: The exact argument types the calls pass (so the first call finds its code loaded; see ``load_cached``).
SIGNATURES = {
    "fit_terms": (_F2, _F2, _B2, types.float64, types.float64),
    "grid_loglik": (_F2, _F2, _B2, _array(types.int64, 1), _array(types.int64, 1), _array(types.float64, 1), _F2),
}
#: Loads the named kernels, once a process (from numba's cache when it holds them).
ready = Ready(globals(), SIGNATURES)
