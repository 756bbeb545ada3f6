"""The price of every look, a priori: for a pair whose per-hand score has a steady drift mu (unit null variance), the
hands the nightly e-process needs to reach its alarm over those the fixed-sample test needs at the same alpha, on
the expected path (S = mu N, Q = N (1 + mu^2)), for pairs the fixed test flags after N_fixed hands.

No room is read: the figures are the e-process's own (``analyzer.audit.anytime``, the ledger's pair e-value as the
mean of three e-processes: each direction and their sum) against the fixed-sample test (``p_fixed`` = 3 x the
one-sided normal p of the largest z). Beside the full figure, the parts of its price: the normal mixture's boundary
alone (the price of looking every night), then with the mean over three processes, then with the robust variance
V = (Q + 2N) / 3, and the ratio at other mixing precisions rho.

    python -m benchmarks.nightly_price
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nightly_common import Results  # noqa: E402

N_FIXED = (25, 50, 100, 200, 400, 800)
RHOS = (1.0, 4.0, 16.0, 64.0)


def hands_ratio(n_fixed: float, *, alpha: float, rho: float, processes: int, robust: bool) -> float:
    """Hands to the e-process's alarm over ``n_fixed``, the fixed test's, on the expected path of the drift that
    brings the fixed test to its alarm at ``n_fixed`` hands. ``processes``: the e-processes averaged (the one with the
    evidence must reach processes / alpha); ``robust``: V = (Q + 2N) / 3 (else V = N)."""
    from scipy import optimize, stats

    from analyzer.audit.anytime import log_mixture_e, robust_v

    z = stats.norm.isf(alpha / 3)  # the fixed test's alarm: p_fixed = 3 sf(z) <= alpha
    mu = z / np.sqrt(n_fixed)

    def gap(n: float) -> float:
        v = robust_v(np.array(n * (1 + mu * mu)), np.array(n)) if robust else np.array(n)
        return float(log_mixture_e(np.array(mu * n), v, rho)) - float(np.log(processes / alpha))

    return float(optimize.brentq(gap, 1.0, 1e7)) / n_fixed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alpha", type=float, default=1e-5)
    args = ap.parse_args()
    from analyzer.audit.anytime import RHO

    res = Results("nightly_price", vars(args))
    rows = []
    for n in N_FIXED:
        parts = {"boundary": hands_ratio(n, alpha=args.alpha, rho=RHO, processes=1, robust=False),
                 "mean_of_3": hands_ratio(n, alpha=args.alpha, rho=RHO, processes=3, robust=False),
                 "full": hands_ratio(n, alpha=args.alpha, rho=RHO, processes=3, robust=True)}
        by_rho = {f"rho_{r:g}": hands_ratio(n, alpha=args.alpha, rho=r, processes=3, robust=True) for r in RHOS}
        rows.append({"n_fixed": n, **{k: round(v, 3) for k, v in {**parts, **by_rho}.items()}})
        print(f"N_fixed {n:4}: boundary {parts['boundary']:.3f}, + mean of 3 {parts['mean_of_3']:.3f}, "
              f"+ robust V {parts['full']:.3f}; by rho " + ", ".join(f"{k} {v:.3f}" for k, v in by_rho.items()))
    best = min(min(r[f"rho_{x:g}"] for x in RHOS) for r in rows if r["n_fixed"] >= 100)
    at = {r["n_fixed"]: r["full"] for r in rows}
    boundary = {r["n_fixed"]: r["boundary"] for r in rows}
    res.figure("price_100", at[100], "x", f"hands to the nightly alarm over the fixed test's, flagged by it at 100 "
               f"hands (rho {RHO:g}, expected path)")
    res.figure("price_400", at[400], "x", "the same, flagged by the fixed test at 400 hands")
    res.figure("price_25", at[25], "x", "the same, flagged by the fixed test at 25 hands (a short, blatant case)")
    res.figure("price_boundary_100", boundary[100], "x",
               "of it, the normal mixture's boundary alone (one process, V = N): the price of looking every night")
    res.figure("price_best_rho", round(best, 3), "x",
               f"the least over rho in {', '.join(f'{r:g}' for r in RHOS)} and N_fixed >= 100")
    res.table("price", rows, "Hands to the nightly alarm over the fixed test's, expected path",
              about="boundary: one process, V = N; mean_of_3: the pair's e-value as the mean of three; full: with "
                    "V = (Q + 2N) / 3, the ledger's e-value; rho_*: the full figure at other mixing precisions.")
    res.write()


if __name__ == "__main__":
    main()
