"""Evaluate the collusion audit on simulated rooms: AUC, precision at the top, TPR at 1% / 0.1% FPR,
by style (each judged against honest pairs it was never tuned on) and by hands together.

The audit has no trained part, so every style is "held out"; the honest population is varied
(weak friends who sit together, novice-heavy rooms) and an honest room of 40 players must flag
nothing. Rooms are analysed once (cached as Parquet under --cache); each colluding pair is scored
on the room cut where it had sat together L hands, for L in --levels.

    python3 benchmarks/eval_audit.py            # full run (~20 min on 2 cores)
    python3 benchmarks/eval_audit.py --quick    # smaller rooms (~5 min)
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score, roc_curve

from analyzer.audit.calibrate import Alarm, calibrate
from analyzer.audit.signals import pair_signals

LEVELS = (25, 50, 100, 200, 500)
#: Part of every cache key: bump it when the decision rows change (v2: the imm columns).
CACHE_VERSION = 4


def room_frame(spec: dict[str, Any], cache: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Simulate and analyse one room (or read the cache): decision rows, seating, truth."""
    from analyzer.analysis.decisions import analyse
    from analyzer.simulate.room import simulate
    from analyzer.validate import Checked
    from analyzer.variants.base import HandCheck

    key = f"v{CACHE_VERSION}_" + "_".join(f"{k}-{v}" for k, v in sorted(spec.items())).replace(":", "").replace(",", "")
    f_df, f_seat, f_truth = cache / f"{key}.parquet", cache / f"{key}.seating.parquet", cache / f"{key}.truth.json"
    if f_df.exists():
        return pd.read_parquet(f_df), pd.read_parquet(f_seat), json.loads(f_truth.read_text())
    opts = dict(spec)
    sim = simulate(**opts)
    recs = list(sim.records)
    seating = pd.DataFrame([(r.hand_id, k, *r.players) for k, r in enumerate(recs)],
                           columns=["hand_id", "hand_seq", "p0", "p1", "p2", "p3"])
    df = analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(recs)), seed=1,
                 reasons=False)
    cache.mkdir(parents=True, exist_ok=True)
    df.to_parquet(f_df)
    seating.to_parquet(f_seat)
    f_truth.write_text(json.dumps(sim.truth))
    return df, seating, sim.truth


def scored(df: pd.DataFrame, seating: pd.DataFrame, cut: int) -> pd.DataFrame:
    """The calibrated pair table of the room's first ``cut`` hands."""
    return calibrate(pair_signals(df[df["hand_seq"] < cut], seating=seating[seating["hand_seq"] < cut]).pairs, Alarm())


def cut_for(seating: pd.DataFrame, pair: list[str], level: int) -> int | None:
    """The first hand count at which the pair had sat together ``level`` hands (None if never)."""
    names = seating[["p0", "p1", "p2", "p3"]].to_numpy(object)
    both = np.array([pair[0] in row and pair[1] in row for row in names])
    idx = np.flatnonzero(both)
    return int(seating["hand_seq"].iloc[idx[level - 1]]) + 1 if len(idx) >= level else None


def evaluate_room(spec: dict[str, Any], cache: Path) -> dict[str, Any]:
    """Scores of every colluding pair at every level, with the honest pairs' scores at the same cuts."""
    df, seating, truth = room_frame(spec, cache)
    colluding = {tuple(p["players"]): p for p in truth["colluding_pairs"]}
    friends = {tuple(p["players"]) for p in truth["friend_pairs"]}
    out: dict[str, Any] = {"spec": spec, "positives": [], "negatives": [], "full": None}
    full = scored(df, seating, len(seating))
    out["full"] = {"flagged_honest": int(sum(f for a, b, f in zip(full["a"], full["b"], full["flagged"])
                                         if (a, b) not in colluding)),
                   "flagged_colluding": int(sum(f for a, b, f in zip(full["a"], full["b"], full["flagged"])
                                             if (a, b) in colluding)),
                   "honest_pairs": int(sum((a, b) not in colluding for a, b in zip(full["a"], full["b"]))),
                   "max_honest_score": float(max((s for a, b, s in zip(full["a"], full["b"], full["score"])
                                                  if (a, b) not in colluding), default=float("nan")))}
    for pair, info in colluding.items():
        for level in LEVELS:
            cut = cut_for(seating, list(pair), level)
            if cut is None:
                continue
            t = scored(df, seating, cut)
            is_pos = [(a, b) == pair for a, b in zip(t["a"], t["b"])]
            pos = t[is_pos].iloc[0]
            out["positives"].append({"style": info["style"], "slow": info["slow"], "level": level,
                                     "score": float(pos["score"]), "flagged": bool(pos["flagged"])})
            honest = t[[(a, b) not in colluding and h >= 10 for a, b, h in zip(t["a"], t["b"], t["hands_together"])]]
            for a, b, h, s in zip(honest["a"], honest["b"], honest["hands_together"], honest["score"]):
                out["negatives"].append({"level": level, "score": float(s), "hands": int(h),
                                         "friend": (a, b) in friends})
    return out


def metrics(pos: np.ndarray, neg: np.ndarray) -> dict[str, float]:
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    s = np.r_[pos, neg]
    fpr, tpr, _ = roc_curve(y, s)
    k = len(pos)
    top = np.argsort(-s, kind="stable")[:k]
    return {"n_pos": len(pos), "n_neg": len(neg), "auc": float(roc_auc_score(y, s)),
            "precision_at_top": float(y[top].mean()),
            "tpr_at_1pct_fpr": float(np.interp(0.01, fpr, tpr)), "tpr_at_0.1pct_fpr": float(np.interp(0.001, fpr, tpr))}


def room_specs(hands: int, weaker: dict[str, float]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The evaluation rooms (with colluders) and the honest room of 40 players; benchmarks/eval_model.py reuses them."""
    rooms: list[dict[str, Any]] = []
    seed = 100
    for style in ("share", "feed", "block"):
        for slow in ("yes", "no"):
            for honest in ("novice", "casual"):  # weak friends; then a room of helpful-to-everyone novices
                mix = {} if honest == "novice" else {"skill_mix": "novice:0.5,casual:0.3,regular:0.2"}
                rooms.append({"hands": hands, "players": 20, "colluders": 3, "friends": 3, "style": style,
                              "slow": slow, "friend_skill": honest, "seed": seed, **mix, **weaker})
                seed += 1
    honest_room = {"hands": hands, "players": 40, "colluders": 0, "friends": 6, "style": "share", "seed": 7}
    return rooms, honest_room


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cache", default="/tmp/bieqi-eval-audit")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--strength", type=float, default=None, help="colluders' lambda (the simulator's default: 1.0)")
    ap.add_argument("--share", type=float, default=None, help="share of hands together they collude (default 0.7)")
    args = ap.parse_args()
    weaker = {k: v for k, v in (("strength", args.strength), ("share", args.share)) if v is not None}
    hands = 700 if args.quick else 1400
    rooms, honest_room = room_specs(hands, weaker)
    t0 = time.time()
    with ProcessPoolExecutor(args.workers) as ex:
        results = list(ex.map(evaluate_room, rooms, [Path(args.cache)] * len(rooms)))
        honest = ex.submit(evaluate_room, honest_room, Path(args.cache)).result()
    pos = pd.DataFrame([p for r in results for p in r["positives"]])
    neg = pd.DataFrame([n for r in results for n in r["negatives"]])
    print(f"rooms: {len(rooms)} with colluders ({hands} hands, 20 players, 3 colluding + 3 friend pairs), "
          f"1 honest room of 40 players; {time.time() - t0:.0f} s")
    print("\nby style and hands together (positives: colluding pairs at the cut where they had sat L hands; "
          "negatives: honest pairs with >= 10 hands in the same cuts)")
    print(f"{'style':<12}{'L':>5}{'n+':>5}{'n-':>7}{'AUC':>8}{'P@top':>8}{'TPR@1%':>8}{'TPR@.1%':>9}{'flagged':>9}")
    for (style, slow), g in pos.groupby(["style", "slow"]):
        for level, gl in g.groupby("level"):
            m = metrics(gl["score"].to_numpy(), neg[neg["level"] == level]["score"].to_numpy())
            name = f"{style}{'+slow' if slow else ''}"
            print(f"{name:<12}{level:>5}{m['n_pos']:>5}{m['n_neg']:>7}{m['auc']:>8.3f}{m['precision_at_top']:>8.2f}"
                  f"{m['tpr_at_1pct_fpr']:>8.2f}{m['tpr_at_0.1pct_fpr']:>9.2f}{gl['flagged'].mean():>9.2f}")
    print("\nall styles, by hands together; and against honest friend pairs only")
    for level, gl in pos.groupby("level"):
        m = metrics(gl["score"].to_numpy(), neg[neg["level"] == level]["score"].to_numpy())
        nf = neg[(neg["level"] == level) & neg["friend"]]["score"].to_numpy()
        mf = metrics(gl["score"].to_numpy(), nf) if len(nf) else {"auc": float("nan")}
        print(f"L={level:<4} AUC {m['auc']:.3f}  TPR@1% {m['tpr_at_1pct_fpr']:.2f}  TPR@0.1% {m['tpr_at_0.1pct_fpr']:.2f}"
              f"  flagged {gl['flagged'].mean():.2f}  AUC vs friends {mf['auc']:.3f}")
    fh = sum(r["full"]["flagged_honest"] for r in results)
    nh = sum(r["full"]["honest_pairs"] for r in results)
    print(f"\nwhole rooms: honest pairs flagged {fh} of {nh}; colluding pairs flagged "
          f"{sum(r['full']['flagged_colluding'] for r in results)} of {3 * len(rooms)}")
    print(f"honest room of 40 players: {honest['full']['honest_pairs']} pairs, flagged {honest['full']['flagged_honest']},"
          f" top score {honest['full']['max_honest_score']:.2f}")


if __name__ == "__main__":
    main()
