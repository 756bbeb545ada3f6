"""Does a trained model over the pair features beat the plain calibrated statistic on collusion styles
it was not trained on? Leave one style out: train on the colluding pairs of two styles and the honest
pairs of their rooms, test on the third style's rooms, and compare with the calibrated ``score`` on the
same test pairs (AUC, TPR at 1% / 0.1% FPR) by hands together.

The pair tables are built exactly as benchmarks/eval_audit.py builds them (same rooms, same cuts, same
honest pairs, its cached decision rows); nothing is simulated when the cache holds the rooms.

    python3 benchmarks/eval_model.py            # 1400-hand rooms (~3 min on 2 cores with the cache)
    python3 benchmarks/eval_model.py --quick    # 700-hand rooms
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from eval_audit import cut_for, metrics, room_frame, room_specs, scored
from sklearn.base import BaseEstimator
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

LEVELS = (25, 50, 100, 200)
#: Directed signals as calibrate() leaves them (room-null adjusted z's, favour already combined).
DIRECTED_Z = {name: (f"{name}_ab_z_adj", f"{name}_ba_z_adj")
              for name in ("marginal", "dd_marginal", "imm_marginal", "total", "pooled", "think")}
DIRECTED_Z["favour"] = ("favour_ab_z", "favour_ba_z")
SEED = 0
BOOT_DRAWS = 500
METHODS = ("statistic", "logistic", "boosted")


def pair_features(t: pd.DataFrame) -> pd.DataFrame:
    """Per pair: each directed signal's larger and smaller direction and their Stouffer sum, co-deviation.
    a/b are in name order, so the two directions are summarised symmetrically (larger/smaller) rather
    than fed as 'ab'/'ba', which would mean nothing to a model. Hands together is left out: here a
    colluding pair is cut at exactly L hands while honest pairs spread around it, so a tree learns the
    evaluation's design (with it, boosted AUC for held-out feed at L=25 rose from 0.92 to 0.98)."""
    out: dict[str, np.ndarray] = {}
    for name, (ab, ba) in DIRECTED_Z.items():
        z_ab, z_ba = t[ab].to_numpy(np.float64), t[ba].to_numpy(np.float64)
        out[f"{name}_max"] = np.maximum(z_ab, z_ba)  # one-way help (feeding, blocking for the partner)
        out[f"{name}_min"] = np.minimum(z_ab, z_ba)  # two-way help (sharing hands)
        out[f"{name}_sum"] = (z_ab + z_ba) / np.sqrt(2)
    out["codev_z"] = t["codev_z"].to_numpy(np.float64)
    return pd.DataFrame(out, index=t.index)


def room_table(spec: dict[str, Any], cache: Path) -> pd.DataFrame:
    """As eval_audit.evaluate_room: each colluding pair at the cut where it had sat L hands, with the honest
    pairs (>= 10 hands together) of the same cut; one row per pair and cut, with features and ``score``."""
    df, seating, truth = room_frame(spec, cache)
    colluding = {tuple(p["players"]) for p in truth["colluding_pairs"]}
    rows = []
    for pair in sorted(colluding):
        for level in LEVELS:
            cut = cut_for(seating, list(pair), level)
            if cut is None:
                continue
            t = scored(df, seating, cut)
            keys = list(zip(t["a"], t["b"]))
            is_pos = np.array([k == pair for k in keys])
            keep = is_pos | np.array([k not in colluding and h >= 10 for k, h in zip(keys, t["hands_together"])])
            t = t[keep]
            rows.append(pd.concat([pd.DataFrame({"style": spec["style"], "level": level,
                                                 "y": is_pos[keep].astype(np.int64),
                                                 "score": t["score"].to_numpy(np.float64)}, index=t.index),
                                   pair_features(t)], axis=1))
    return pd.concat(rows, ignore_index=True)


def models() -> dict[str, Callable[[], BaseEstimator]]:
    """The two learners, seeded; class weights because colluding pairs are ~2% of the rows."""
    return {
        "logistic": lambda: make_pipeline(StandardScaler(),
                                          LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)),
        # shallow and regularised: about 100 positive rows per fold, from 8 rooms
        "boosted": lambda: HistGradientBoostingClassifier(max_depth=3, learning_rate=0.05, max_iter=200,
                                                          min_samples_leaf=20, l2_regularization=1.0,
                                                          class_weight="balanced", random_state=SEED),
    }


def leave_one_style_out(table: pd.DataFrame) -> pd.DataFrame:
    """Out-of-fold scores: for each style, the models trained without it score its rooms' rows; the
    statistic's ``score`` alongside. Columns: style, level, y and one per method."""
    features = [c for c in table.columns if c not in ("style", "level", "y", "score")]
    folds = []
    for style in sorted(table["style"].unique()):
        train, test = table[table["style"] != style], table[table["style"] == style]
        fold = test[["style", "level", "y"]].assign(statistic=test["score"])
        for name, make in models().items():
            model = make().fit(train[features].to_numpy(), train["y"].to_numpy())
            fold[name] = model.predict_proba(test[features].to_numpy())[:, 1]
        folds.append(fold)
    return pd.concat(folds, ignore_index=True)


def auc_gain(g: pd.DataFrame, method: str, rng: np.random.Generator, draws: int = BOOT_DRAWS) -> np.ndarray:
    """Bootstrap draws of the model's AUC minus the statistic's on the same rows, positives and negatives
    resampled separately (an honest pair appears in up to 3 cuts of a room, so this is if anything narrow)."""
    pos, neg = g[g["y"] == 1], g[g["y"] == 0]
    out = np.empty(draws)
    for k in range(draws):
        b = pd.concat([pos.sample(len(pos), replace=True, random_state=rng),
                       neg.sample(len(neg), replace=True, random_state=rng)])
        y = b["y"].to_numpy()
        out[k] = roc_auc_score(y, b[method]) - roc_auc_score(y, b["statistic"])
    return out


def report(oof: pd.DataFrame) -> None:
    """Per held-out style and L: AUC, TPR at 1% / 0.1% FPR of each method; the mean over styles; and the
    mean AUC gain over the statistic with a bootstrap 90% interval."""
    rows = []
    for (style, level), g in oof.groupby(["style", "level"]):
        y = g["y"].to_numpy()
        if y.sum() == 0:  # short rooms: no colluding pair reached L hands together
            continue
        for method in METHODS:
            s = g[method].to_numpy()
            rows.append({"style": style, "level": level, "method": method, **metrics(s[y == 1], s[y == 0])})
    res = pd.DataFrame(rows)
    cols = ("auc", "tpr_at_1pct_fpr", "tpr_at_0.1pct_fpr")
    print(f"{'held out':<10}{'L':>5}{'n+':>5}{'n-':>6}  " + "".join(f"{c:^22}" for c in ("AUC", "TPR@1%", "TPR@0.1%")))
    print(" " * 26 + "  stat logit boost " * len(cols))
    mean = res.groupby(["level", "method"])[["n_pos", "n_neg", *cols]].agg(
        {"n_pos": "sum", "n_neg": "sum", **{c: "mean" for c in cols}}).reset_index().assign(style="mean")
    for (style, level), g in pd.concat([res, mean]).groupby(["style", "level"], sort=False):
        by = g.set_index("method")
        head = f"{style:<10}{level:>5}{by.loc['statistic', 'n_pos']:>5.0f}{by.loc['statistic', 'n_neg']:>6.0f}  "
        print(head + "".join("  " + " ".join(f"{by.loc[m, c]:.3f}" for m in METHODS) + " " for c in cols))
    print("\nmean AUC gain over the statistic (model - statistic, mean over held-out styles; 90% bootstrap interval)")
    rng = np.random.default_rng(SEED)
    for level, gl in oof.groupby("level"):
        cells = [g for _, g in gl.groupby("style") if g["y"].sum() > 0]
        parts = []
        for method in METHODS[1:]:
            d = np.mean([auc_gain(g, method, rng) for g in cells], axis=0)
            lo, hi = np.quantile(d, [0.05, 0.95])
            parts.append(f"{method} {d.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print(f"L={level:<4} " + "   ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="700-hand rooms (eval_audit.py --quick)")
    ap.add_argument("--cache", default="/tmp/audit6/cache", help="eval_audit.py's cache of analysed rooms")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    rooms, _ = room_specs(700 if args.quick else 1400, {})
    t0 = time.time()
    with ProcessPoolExecutor(args.workers) as ex:
        table = pd.concat(ex.map(room_table, rooms, [Path(args.cache)] * len(rooms)), ignore_index=True)
    t1 = time.time()
    oof = leave_one_style_out(table)
    print(f"{len(rooms)} rooms, {int(table['y'].sum())} colluding and {int((table['y'] == 0).sum())} honest pair-cuts; "
          f"tables {t1 - t0:.0f} s, models {time.time() - t1:.0f} s")
    print("train: colluding pairs of two styles + honest pairs of their rooms (all L); test: the third style's rooms\n")
    report(oof)


if __name__ == "__main__":
    main()
