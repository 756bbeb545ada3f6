"""The pair score judged on simulators it was not fitted on: leave one simulator out.

    python -m benchmarks.eval_heldout TABLES

TABLES: the labelled pair tables benchmarks/heldout_rooms.py writes (six simulators: ours and s1..s5). For each
simulator the combination's weights are fitted on the other five (benchmarks/fit_combine.py) and the held-out
simulator's rooms are scored with them; no figure is read on a simulator its weights saw. Printed, per held-out
simulator and room style (x-sparse, x-occ, each simulator's own collusion styles together as "styles", its honest
rooms): AUC (colluding against honest pairs with at least min-hands hands together, mean over rooms), colluding
pairs flagged and marked (flagged or review), honest pairs flagged and marked, the review false-discovery share;
the same for the previous score (each signal's p, the best x 5) beside it; and the null calibration: the share
of honest pairs' p at or below 0.01, 0.05 and 0.5 on the held-out simulator's honest rooms. The results file
holds the machine, the load, the command, the git commit, the parameters and every figure.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
from fit_combine import MIN_HANDS, fit, load_tables  # noqa: E402

from benchmarks import results  # noqa: E402

from analyzer.analysis.dist import bh_adjust  # noqa: E402
from analyzer.audit.calibrate import DEFAULT_ALPHA, Alarm  # noqa: E402
from analyzer.audit.combine import Params, combine  # noqa: E402

SIMS = ("ours", "s1", "s2", "s3", "s4", "s5")
PREVIOUS = ("favour", "imm_marginal", "codev", "think", "burst")  # the previous score: best of these x 5
LEVELS = (0.01, 0.05, 0.5)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """Mann-Whitney AUC (ties count a half)."""
    pos, neg = score[y], score[~y]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.r_[pos, neg], kind="stable")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    allv = np.r_[pos, neg]
    for v in np.unique(allv):  # mid-ranks for ties
        m = allv == v
        if m.sum() > 1:
            ranks[m] = ranks[m].mean()
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def verdicts(log_p: np.ndarray, enough: np.ndarray, alarm: Alarm) -> tuple[np.ndarray, np.ndarray]:
    q = np.ones(len(log_p))
    q[enough] = bh_adjust(np.exp(log_p[enough]))
    marked = (q <= alarm.fdr) & enough
    return marked & (np.exp(log_p) <= alarm.alpha), marked


def previous_logp(p: pd.DataFrame) -> np.ndarray:
    logs = p[[f"{s}_logp" for s in PREVIOUS]].to_numpy(np.float64)
    return np.minimum(math.log(len(PREVIOUS)) + logs.min(axis=1), 0.0)


def _plain(x: object) -> object:
    """A numpy scalar as the Python number json writes (a pandas table's cells are numpy's)."""
    return x.item() if isinstance(x, np.generic) else x


def style_of(p: pd.DataFrame) -> str:
    room = str(p["room"].iloc[0])
    if room.startswith("x-"):
        return room
    return "styles" if p["colluding"].any() else "honest"


def room_rows(p: pd.DataFrame, params: Params, alarm: Alarm) -> tuple[dict, dict, np.ndarray]:
    enough = p["hands_together"].to_numpy() >= alarm.min_hands
    c, h = p["colluding"].to_numpy(bool), p["honest"].to_numpy(bool)
    keep = (c | h) & enough
    out = {}
    for name, lp in (("new", combine(p, alarm.min_hands, params).logp), ("previous", previous_logp(p))):
        flag, mark = verdicts(lp, enough, alarm)
        out[name] = {"auc": auc(-lp[keep], c[keep]), "colluding": int((c & enough).sum()),
                     "flagged": int((flag & c).sum()), "marked": int((mark & c).sum()),
                     "honest_flagged": int((flag & h).sum()), "honest_marked": int((mark & h).sum())}
        if name == "new":
            null = np.exp(lp[h & enough]) if not c.any() else np.zeros(0)
    return out["new"], out["previous"], null


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "heldout.json"),
                    help="the results file (its folder receives heldout.json)")
    a = ap.parse_args(argv)
    t0 = time.time()
    load0 = os.getloadavg()
    revision = results.commit()  # the code measured, read as it starts
    alarm = Alarm(alpha=DEFAULT_ALPHA, min_hands=MIN_HANDS)
    everything = load_tables(a.tables)
    sims = [s for s in SIMS if any(str(t["sim"].iloc[0]) == s for t in everything)]
    rows, nulls, weights = [], {}, {}
    for sim in sims:
        params = fit([t for t in everything if str(t["sim"].iloc[0]) != sim])
        weights[sim] = {"w_dir": params.w_dir.round(4).tolist(), "w_both": params.w_both.round(4).tolist()}
        held = [t for t in everything if str(t["sim"].iloc[0]) == sim]
        null = []
        for p in held:
            new, prev, hon = room_rows(p, params, alarm)
            base = {"sim": sim, "style": style_of(p), "room": f"{sim}-{p['room'].iloc[0]}-{p['seed'].iloc[0]}"}
            rows.append({**base, "score": "new", **new})
            rows.append({**base, "score": "previous", **prev})
            null.append(hon)
        hp = np.concatenate(null) if null else np.zeros(0)
        nulls[sim] = {"honest_pairs": int(len(hp)), **{f"share_le_{x}": float((hp <= x).mean()) if len(hp) else None
                                                      for x in LEVELS}}
    df = pd.DataFrame(rows)
    g = df.groupby(["sim", "style", "score"], sort=False).agg(
        rooms=("room", "size"), auc=("auc", "mean"), auc_min=("auc", "min"), colluding=("colluding", "sum"),
        flagged=("flagged", "sum"), marked=("marked", "sum"), honest_flagged=("honest_flagged", "sum"),
        honest_marked=("honest_marked", "sum")).reset_index()
    g["review_fdr"] = g["honest_marked"] / np.maximum(g["marked"] + g["honest_marked"], 1)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print("held-out simulator x style (new: the combination fitted on the other five; previous: best signal x 5)")
    print(g.round(3).to_string(index=False))
    print("null calibration, honest rooms of the held-out simulator: share of honest pairs' p at or below")
    for sim, v in nulls.items():
        print(f"  {sim:5s} pairs {v['honest_pairs']:5d}  " + "  ".join(
            f"<= {x}: {v[f'share_le_{x}']:.4f}" for x in LEVELS))
    res = results.Results(
        "heldout", "Held-out simulators: the pair score fitted on five simulators, read on the sixth", "held-out-simulators",
        results.command_line("benchmarks.eval_heldout", argv),
        {"alpha": alarm.alpha, "fdr": alarm.fdr, "min_hands": alarm.min_hands, "tables": len(everything),
         "fold_weights": weights},
        about="Each simulator's rooms are scored with the combination's weights fitted on the other simulators' rooms "
              "(leave one simulator out); `previous` is the score without the learned combination (the largest signal, "
              "Bonferroni over signals and directions). Rooms: `python benchmarks/heldout_rooms.py TABLES`.")
    res.revision, res.load_start = revision, load0[0]
    new, prev = (g[g["score"] == k].set_index(["sim", "style"]) for k in ("new", "previous"))
    res.table("by_style", "Held-out simulator x style (new score / previous score)",
              ["sim", "style", "rooms", "AUC", "AUC prev", "colluding", "flagged", "flagged prev", "marked",
               "marked prev", "honest flagged", "review FDR"],
              [[_plain(x) for x in (sim, style, r["rooms"], r["auc"], prev.loc[(sim, style), "auc"], r["colluding"],
                                    r["flagged"], prev.loc[(sim, style), "flagged"], r["marked"],
                                    prev.loc[(sim, style), "marked"], r["honest_flagged"], r["review_fdr"])]
               for (sim, style), r in new.iterrows()])
    res.table("null", "Null calibration: the share of honest pairs' p at or below each level, held-out honest rooms",
              ["sim", "honest_pairs", *(f"p <= {x}" for x in LEVELS)],
              [[sim, v["honest_pairs"], *(v[f"share_le_{x}"] for x in LEVELS)] for sim, v in nulls.items()])
    res.write(Path(a.out).parent)
    print(f"({time.time() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
