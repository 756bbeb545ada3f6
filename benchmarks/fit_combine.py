"""Fit the pair score's linear contrasts (analyzer/audit/combine.py) on labelled pair tables and write their
parameter file.

    python benchmarks/fit_combine.py TABLES [--leave-out SIM] [-o analyzer/data/combine.json]

TABLES: a directory of labelled pair tables (``*.pairs.parquet`` as benchmarks/heldout_rooms.py writes them:
the audit's calibrated pair table with ``colluding``, ``honest``, ``sim`` and ``room`` columns). The weights are
linear discriminants with non-negative weights: the honest pairs' covariance S of the room-centred directed z's,
and the colluding pairs' shift per sqrt(hand together), each room style weighing alike; w = argmin w'Sw - 2 mu'w
over w >= 0 (non-negative least squares on S's Cholesky factor). The a -> b contrast is fitted on each pair
oriented helper first (the orientation its current contrast prefers, four rounds from equal weights), the
both-ways contrast on the two directions' sum. Deterministic: no random choice is made.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from analyzer.audit.combine import PARAMS, Params, features

SIGNALS = ("imm_marginal", "burst", "think", "dd_marginal")
WEIGHTS = {"linear": 0.9, "burst_count": 0.05, "codev": 0.05}
MIN_HANDS = 10
ROUNDS = 4


def load_tables(directory: str, leave_out: str | None = None, only: str | None = None) -> list[pd.DataFrame]:
    """The labelled pair tables of a directory, without (or only) one simulator's."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.pairs.parquet"))):
        p = pd.read_parquet(path)
        sim = str(p["sim"].iloc[0]) if len(p) else ""
        if (leave_out is not None and sim == leave_out) or (only is not None and sim != only):
            continue
        out.append(p)
    return out


def centred(p: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xa, xb = features(p, SIGNALS)
    use = p["hands_together"].to_numpy() >= MIN_HANDS
    c = np.median(np.vstack([xa[use], xb[use]]), axis=0) if use.sum() >= 30 else np.zeros(xa.shape[1])
    return xa - c, xb - c, use


def _discriminant(S: np.ndarray, mu: np.ndarray) -> np.ndarray:
    chol = np.linalg.cholesky(S + 1e-3 * np.eye(len(S)))
    w = nnls(chol.T, np.linalg.solve(chol, mu))[0]
    norm = float(np.linalg.norm(w))
    return w / norm if norm > 0 else np.ones_like(w) / np.sqrt(len(w))


def _shift(x: np.ndarray, n: np.ndarray, style: np.ndarray) -> np.ndarray:
    d = pd.DataFrame(x / np.sqrt(n)[:, None])
    d["style"] = style
    return d.groupby("style").mean().mean().to_numpy()


def fit(tables: list[pd.DataFrame], weights: dict[str, float] | None = None) -> Params:
    rooms = []
    for p in tables:
        xa, xb, use = centred(p)
        keep = use & (p["colluding"].to_numpy() | p["honest"].to_numpy())
        rooms.append((xa[keep], xb[keep], p["colluding"].to_numpy()[keep], p["hands_together"].to_numpy()[keep],
                      np.full(int(keep.sum()), f"{p['sim'].iloc[0]}:{p['room'].iloc[0]}")))
    k = len(SIGNALS)
    xa = np.vstack([r[0] for r in rooms])
    xb = np.vstack([r[1] for r in rooms])
    y = np.concatenate([r[2] for r in rooms])
    n = np.concatenate([r[3] for r in rooms]).astype(np.float64)
    style = np.concatenate([r[4] for r in rooms])
    w = np.ones(2 * k) / np.sqrt(2 * k)
    for _ in range(ROUNDS):
        pick = (xa @ w) >= (xb @ w)
        x = np.where(pick[:, None], xa, xb)
        w = _discriminant(np.cov(x[~y], rowvar=False), _shift(x[y], n[y], style[y]))
    if w[:k].sum() < w[k:].sum():  # named so that the a -> b contrast weighs a's own z's the most
        w = np.r_[w[k:], w[:k]]
    s = xa[:, :k] + xa[:, k:]
    w_both = _discriminant(np.cov(s[~y], rowvar=False), _shift(s[y], n[y], style[y]))
    null_cov = np.cov(np.vstack([xa[~y], xb[~y]]), rowvar=False)
    sims = sorted({str(t["sim"].iloc[0]) for t in tables})
    meta = {"fitted_on": sims, "rooms": len(tables), "pairs": int(len(y)), "colluding_pairs": int(y.sum()),
            "styles": int(len(set(style[y]))), "min_hands": MIN_HANDS}
    return Params(SIGNALS, w, w_both, dict(weights or WEIGHTS), null_cov, meta)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables")
    ap.add_argument("--leave-out", help="a simulator whose tables are not fitted on")
    ap.add_argument("-o", "--out", default=os.path.join(os.path.dirname(__file__), "..", "analyzer", "data", PARAMS))
    a = ap.parse_args(argv)
    tables = load_tables(a.tables, leave_out=a.leave_out)
    if not tables:
        print(f"{a.tables}: no *.pairs.parquet tables", file=sys.stderr)
        return 2
    params = fit(tables)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(__file__)).stdout.strip()
    except OSError:
        commit = ""
    d = params.to_dict()
    d["meta"].update(command="python benchmarks/fit_combine.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                     git_commit=commit)
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    print(f"{a.out}: fitted on {d['meta']['fitted_on']} ({d['meta']['rooms']} rooms, "
          f"{d['meta']['colluding_pairs']} colluding pairs of {d['meta']['styles']} styles)")
    print("w_dir", np.round(params.w_dir, 3).tolist(), "w_both", np.round(params.w_both, 3).tolist())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
