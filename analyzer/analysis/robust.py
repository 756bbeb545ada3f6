"""Huber's robust straight line, for the player table's level curve (``analysis.players._level_z``).

The fit is Huber's M-estimate with its scale estimated jointly, in the convex form Owen (2007, "A robust hybrid of
lasso and ridge regression") gives Huber's (1981) "proposal 2": minimise over the slope w, the intercept c and the
scale s > 0

    sum_i  s + s H((y_i - c - w x_i) / s)  +  alpha w^2,      H(z) = z^2 if |z| <= epsilon else 2 epsilon |z| - epsilon^2

(a residual counts as a square within epsilon scales of the line and as a straight line beyond it, so a few far points
cannot pull the line; the scale is the one the inliers' spread makes). The same estimator, constants and stopping rule
as scikit-learn's ``HuberRegressor`` (epsilon 1.35, alpha 1e-4, L-BFGS-B from w = c = 0, s = 1, at most 100
iterations, gradient tolerance 1e-5), which the player table used before: its results agree to the optimiser's
tolerance (tests/analysis/test_robust.py). Here because importing scikit-learn's linear models costs ~1.3 CPU-s a process
(they import ``scipy.stats`` and joblib) for a fit of a few dozen points that takes ~10 ms; the objective is
convex, so its minimum does not depend on the code that finds it.
"""

from __future__ import annotations

import numpy as np

#: Residuals beyond EPSILON scales of the line count linearly (95% efficiency at the normal: Huber's constant).
EPSILON = 1.35
#: The slope's small ridge penalty.
ALPHA = 1e-4


def _objective(params: np.ndarray, x: np.ndarray, y: np.ndarray, epsilon: float, alpha: float
               ) -> tuple[float, np.ndarray]:
    """The objective and its gradient at ``params`` = (slope, intercept, scale)."""
    w, c, s = params
    r = y - c - w * x
    out = np.abs(r) > epsilon * s
    n_out = int(out.sum())
    rin = r[~out]
    # inliers: s + r^2 / s; outliers: s + 2 epsilon |r| - epsilon^2 s
    value = len(r) * s + float((rin ** 2).sum()) / s + float((2 * epsilon * np.abs(r[out])).sum()) \
        - n_out * epsilon ** 2 * s + alpha * w * w
    d_r = np.where(out, 2 * epsilon * np.sign(r), 2 * r / s)  # d value / d residual
    grad = np.array([-float((d_r * x).sum()) + 2 * alpha * w,
                     -float(d_r.sum()),
                     len(r) - float((rin ** 2).sum()) / (s * s) - n_out * epsilon ** 2])
    return value, grad


def huber_line(x: np.ndarray, y: np.ndarray, *, epsilon: float = EPSILON, alpha: float = ALPHA,
               max_iter: int = 100, tol: float = 1e-5) -> tuple[float, float, float]:
    """(intercept, slope, scale) of Huber's robust line through the points (``x``, ``y``) (module docstring);
    ValueError for no points or a point that is not finite."""
    from scipy.optimize import minimize

    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if len(x) == 0 or len(x) != len(y):
        raise ValueError(f"huber_line needs as many y as x, at least one ({len(x)} x, {len(y)} y)")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):  # as scikit-learn refused them: a caller's data error
        raise ValueError("huber_line's points must be finite (NaN or infinity found)")
    got = minimize(_objective, np.array([0.0, 0.0, 1.0]), args=(x, y, epsilon, alpha), jac=True, method="L-BFGS-B",
                   bounds=[(None, None), (None, None), (np.finfo(np.float64).eps * 10, None)],
                   options={"maxiter": max_iter, "gtol": tol})
    w, c, s = (float(v) for v in got.x)
    return c, w, s
