"""Evaluate the collusion audit on simulated rooms: AUC, precision at the top, TPR at 1% / 0.1% FPR,
by style (each judged against honest pairs it was never tuned on) and by hands together.

The audit has no trained part, so every style is "held out"; the honest population is varied
(weak friends who sit together, novice-heavy rooms) and an honest room of 40 players must flag
nothing. Rooms are analysed once (cached as Parquet under --cache); each colluding pair is scored
on the room cut where it had sat together L hands, for L in --levels.

    python -m benchmarks.eval_audit            # full run (~1 h on 2 cores with the rooms analysed)
    python -m benchmarks.eval_audit --quick    # smaller rooms (700 hands)
    python -m benchmarks.eval_audit --sets extra --levels 50,150,500   # partial, harm and occasional only

Writes results/detection_styles.json (``--name``).
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
from analyzer.audit.stream import pair_signals

LEVELS = (25, 50, 100, 150, 200, 500)
#: Part of every cache key: bump it when the decision rows change (v2: the imm columns; v5: the analysis
#: defaults are in the key too, see ``_rows_key``).
CACHE_VERSION = 5
#: Part of the key of cached room results: bump it when the audit's method changes (v2, v3: the exact burst; v4, v5:
#: burst's mean look by seat, over both directions; v7: burst weighs decisions by the actor's choice model and
#: the pair score drops ``marginal``; v8: the choice weights off again, ``burst.CHOICE_WEIGHTS``; v9: on, each weight
#: mixed with 1, ``burst.CHOICE_WEIGHT_FLOOR``, the model fitted on one decision in ``burst.FIT_EVERY``; v10: burst
#: reads an actor's pairs again without his standing-out partners' hands, ``burst.BURST_HOT_Z``; v12: burst's two
#: looks count a seat habit nobody could learn as one of the room's typical size, ``burst.habit_variance``; v11 was
#: a variant tried and reverted, skipped so its cached results are never read back; v13: the room's habit spread read
#: without the actors who stand out, ``burst.room_habit_variance``; v14: the think-time fit takes the tables' own
#: spread as a random effect, ``signals._between_tables``, and flat times as no evidence, ``signals.FLAT_THINK``; v15: an
#: actor with more co-players than tables reads each on its own, ``signals._one_at_a_time``, think's two directions
#: combined over their room correlation, ``calibrate.direction_correlation``, and think alone never flags,
#: ``calibrate.CORROBORATING``; v16: burst's second reading also by strata of the other standing-out partners'
#: presence, the mean look the better of the two x 2, ``burst.BURST_STRATA``).
METHOD_VERSION = 16


def _rows_key(spec: dict[str, Any], policy: str | None = None) -> str:
    """The cache key of a room's decision rows: the room spec and the analysis defaults (with the policy, by default the
    audit's) that made them (so rows analysed under other defaults are never read back as today's)."""
    from analyzer.analysis import decisions as d

    policy = d.AUDIT_POLICY if policy is None else policy
    defaults = f"s{d.DEFAULT_SAMPLES}-{d.DEFAULT_MAX_SAMPLES}_dd{d.DEFAULT_DD_SAMPLES}_n{d.DEFAULT_NOISE}_{policy}"
    room = "_".join(f"{k}-{v}" for k, v in sorted(spec.items())).replace(":", "").replace(",", "")
    return f"v{CACHE_VERSION}_{defaults}_{room}"


def room_frame(spec: dict[str, Any], cache: Path, policy: str | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Simulate and analyse one room (or read the cache): decision rows, seating, truth. ``policy``: the
    evaluator (``decisions.POLICIES``; default the audit's, ``AUDIT_POLICY``)."""
    from analyzer.analysis.decisions import AUDIT_POLICY, analyse
    from analyzer.simulate.room import simulate
    from analyzer.validate import Checked
    from analyzer.variants.base import HandCheck

    policy = AUDIT_POLICY if policy is None else policy
    key = _rows_key(spec, policy)
    f_df, f_seat, f_truth = cache / f"{key}.parquet", cache / f"{key}.seating.parquet", cache / f"{key}.truth.json"
    if f_df.exists():
        return pd.read_parquet(f_df), pd.read_parquet(f_seat), json.loads(f_truth.read_text())
    opts = {k: v for k, v in spec.items() if k != "label"}
    sim = simulate(**opts)
    recs = list(sim.records)
    seating = pd.DataFrame([(r.hand_id, k, *r.players) for k, r in enumerate(recs)],
                           columns=["hand_id", "hand_seq", "p0", "p1", "p2", "p3"])
    df = analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(recs)), seed=1,
                 reasons=False, policy=policy)
    cache.mkdir(parents=True, exist_ok=True)
    df.to_parquet(f_df)
    seating.to_parquet(f_seat)
    f_truth.write_text(json.dumps(sim.truth))
    return df, seating, sim.truth


def scored(df: pd.DataFrame, seating: pd.DataFrame, cut: int) -> pd.DataFrame:
    """The calibrated pair table of the room's first ``cut`` hands."""
    return calibrate(pair_signals(df[df["hand_seq"] < cut], seating[seating["hand_seq"] < cut]), Alarm())


def cut_for(seating: pd.DataFrame, pair: list[str], level: int) -> int | None:
    """The first hand count at which the pair had sat together ``level`` hands (None if never)."""
    names = seating[["p0", "p1", "p2", "p3"]].to_numpy(object)
    both = np.array([pair[0] in row and pair[1] in row for row in names])
    idx = np.flatnonzero(both)
    return int(seating["hand_seq"].iloc[idx[level - 1]]) + 1 if len(idx) >= level else None


def _key(t: pd.DataFrame) -> np.ndarray:
    """The audit's ranking as one number: score, ties broken by effect size (as ``rank_pairs`` does)."""
    return t["score"].to_numpy(np.float64) + 1e-3 * np.arctan(t["effect_size"].to_numpy(np.float64))


def _tiers(t: pd.DataFrame, colluding: set[tuple[str, str]]) -> dict[str, int]:
    """Honest and colluding pairs in each verdict of one calibrated table."""
    out: dict[str, int] = {}
    for a, b, v in zip(t["a"], t["b"], t["verdict"]):
        k = f"{'colluding' if (a, b) in colluding else 'honest'}_{v}"
        out[k] = out.get(k, 0) + 1
    return out


def evaluate_room(spec: dict[str, Any], cache: Path, levels: tuple[int, ...] = LEVELS, policy: str | None = None
                  ) -> dict[str, Any]:
    """Scores and verdicts of every colluding pair at every level, with the honest pairs' at the same cuts.

    The result is cached next to the room (``METHOD_VERSION`` in the key), so a run can be resumed."""
    key = f"m{METHOD_VERSION}_{_rows_key(spec, policy)}_L" + "-".join(map(str, levels))
    f_res = cache / f"{key}.result.json"
    if f_res.exists():
        return json.loads(f_res.read_text())
    df, seating, truth = room_frame(spec, cache, policy)
    colluding = {tuple(p["players"]): p for p in truth["colluding_pairs"]}
    friends = {tuple(p["players"]) for p in truth["friend_pairs"]}
    label = spec.get("label", spec.get("style"))
    out: dict[str, Any] = {"spec": spec, "positives": [], "negatives": [], "cuts": [], "full": None}
    full = scored(df, seating, len(seating))
    honest_full = [(a, b) not in colluding for a, b in zip(full["a"], full["b"])]
    out["full"] = {"tiers": _tiers(full, set(colluding)), "honest_pairs": int(sum(honest_full)),
                   "colluding": [{"pair": list(p), "style": label, "hands": int(i["hands_together"]),
                                  "verdict": str(full[(full["a"] == p[0]) & (full["b"] == p[1])]["verdict"].iloc[0])}
                                 for p, i in colluding.items()],
                   "max_honest_score": float(max((s for s, h in zip(full["score"], honest_full) if h),
                                                 default=float("nan")))}
    for pair, info in colluding.items():
        for level in levels:
            cut = cut_for(seating, list(pair), level)
            if cut is None:
                continue
            t = scored(df, seating, cut)
            keys = _key(t)
            is_pos = np.array([(a, b) == pair for a, b in zip(t["a"], t["b"])])
            pos = t[is_pos].iloc[0]
            out["positives"].append({"style": label, "slow": info["slow"], "level": level,
                                     "score": float(keys[is_pos][0]), "verdict": str(pos["verdict"])})
            out["cuts"].append({"style": label, "level": level, **_tiers(t, set(colluding))})
            honest = [(a, b) not in colluding and h >= 10 for a, b, h in zip(t["a"], t["b"], t["hands_together"])]
            for (a, b, h, v), s in zip(t[honest][["a", "b", "hands_together", "verdict"]].itertuples(index=False),
                                       keys[np.array(honest, bool)]):
                out["negatives"].append({"style": label, "level": level, "score": float(s), "hands": int(h),
                                         "verdict": str(v), "friend": (a, b) in friends})
    f_res.write_text(json.dumps(out))
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
    """The evaluation rooms (with colluders) and the honest room of 40 players."""
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


def extra_room_specs(hands: int) -> list[dict[str, Any]]:
    """Rooms of the styles issue 12 names, each with honest confounders of its own.

    partial: the partner's hand is used in a share of the decisions only (every hand together);
    occasional: collusion in 1 hand of 10 (small rooms, so pairs reach ~500 hands together);
    harm: the partner's hand is spent on hurting both opponents. Confounders: weak friends who sit
    together as often as colluders, and bot-like friends (strong, near-deterministic players who
    always sit together). ``label`` names the style in the tables; it is no simulator option.
    """
    rooms: list[dict[str, Any]] = []
    seed = 300
    bots = {"friend_skill": "strong", "friend_together": 0.85}
    for label, style, opts in (("partial", "share", {"decisions": 0.4, "share": 1.0}),
                               ("partial", "feed", {"decisions": 0.4, "share": 1.0}),
                               ("harm", "harm", {}), ("harm", "harm", {"strength": 0.5})):
        for friends in ({}, bots):
            rooms.append({"hands": hands, "players": 20, "colluders": 3, "friends": 3, "style": style,
                          "slow": "no", "seed": seed, "label": label, **opts, **friends})
            seed += 1
    for style in ("share", "feed"):
        for friends in ({}, bots):
            rooms.append({"hands": int(hands * 1.5), "players": 12, "colluders": 2, "friends": 2, "style": style,
                          "slow": "no", "share": 0.1, "seed": seed, "label": "occasional", **friends})
            seed += 1
    return rooms


def _rows_job(args: tuple[dict[str, Any], Path, str | None]) -> None:
    room_frame(*args)


def _job(args: tuple[dict[str, Any], Path, tuple[int, ...], str | None]) -> dict[str, Any]:
    return evaluate_room(*args)


def report(results: list[dict[str, Any]], res: Any) -> None:
    """Add the tables to the results (printed as they are): per style and hands together, then whole rooms."""
    pos = pd.DataFrame([p for r in results for p in r["positives"]], columns=["style", "slow", "level", "score", "verdict"])
    neg = pd.DataFrame([n for r in results for n in r["negatives"]],
                       columns=["style", "level", "score", "hands", "verdict", "friend"])
    cuts = pd.DataFrame([c for r in results for c in r["cuts"]], columns=["style", "level"]).fillna(0) if not any(
        r["cuts"] for r in results) else pd.DataFrame([c for r in results for c in r["cuts"]]).fillna(0)
    rows = []
    for style, g in pos.groupby("style"):
        for level, gl in g.groupby("level"):
            ng = neg[(neg["style"] == style) & (neg["level"] == level)]
            m = metrics(gl["score"].to_numpy(), ng["score"].to_numpy())
            c = cuts[(cuts["style"] == style) & (cuts["level"] == level)]
            hf, hr = int(c.get("honest_flagged", pd.Series(0)).sum()), int(c.get("honest_review", pd.Series(0)).sum())
            marked = hf + hr + int(c.get("colluding_flagged", pd.Series(0)).sum()) + int(
                c.get("colluding_review", pd.Series(0)).sum())
            v = gl["verdict"]
            rows.append([style, int(level), m["n_pos"], m["n_neg"], m["auc"], m["tpr_at_0.1pct_fpr"],
                         float((v == "flagged").mean()), float((v == "review").mean()), float((v != "clear").mean()),
                         hf, hr, (hf + hr) / marked if marked else 0.0])
    res.table("by_style", "By style and hands together L", ["style", "L", "colluding", "honest", "AUC", "TPR at 0.1% FPR",
              "flagged", "review", "marked", "honest flagged", "honest review", "review FDR"], rows,
              about="colluding pairs at the cut where they had sat L hands together; honest pairs with at least 10 "
                    "hands in the same rooms' cuts. flagged / review / marked: shares of the colluding pairs (marked "
                    "= flagged or for review); honest flagged / review: counts over those cuts; review FDR: honest "
                    "pairs among all pairs marked in those cuts.")
    rows = []
    for level, gl in pos.groupby("level"):
        m = metrics(gl["score"].to_numpy(), neg[neg["level"] == level]["score"].to_numpy())
        v = gl["verdict"]
        rows.append([int(level), m["auc"], m["tpr_at_1pct_fpr"], m["tpr_at_0.1pct_fpr"], float((v == "flagged").mean()),
                     float((v != "clear").mean())])
    res.table("by_level", "Every style, by hands together", ["L", "AUC", "TPR at 1% FPR", "TPR at 0.1% FPR", "flagged",
              "marked"], rows)
    tiers: dict[str, int] = {}
    for r in results:
        for k, n in r["full"]["tiers"].items():
            tiers[k] = tiers.get(k, 0) + n
    nh = sum(r["full"]["honest_pairs"] for r in results)
    res.figure("rooms", len(results), "rooms", "whole rooms audited")
    res.figure("honest_pairs", nh, "pairs", "honest pairs in the whole rooms")
    res.figure("honest_flagged", tiers.get("honest_flagged", 0), f"of {nh}", "honest pairs flagged, whole rooms")
    res.figure("honest_review", tiers.get("honest_review", 0), f"of {nh}", "honest pairs for review, whole rooms")
    by_style: dict[str, list[str]] = {}
    for r in results:
        for c in r["full"]["colluding"]:
            by_style.setdefault(c["style"], []).append(c["verdict"])
    res.table("whole_rooms", "Whole rooms: colluding pairs by style", ["style", "pairs", "flagged", "review", "clear"],
              [[st, len(vs), vs.count("flagged"), vs.count("review"), vs.count("clear")]
               for st, vs in sorted(by_style.items())])
    honest_rooms = [r for r in results if not r["full"]["colluding"]]
    res.table("honest_rooms", "Honest rooms (the alarm: a score of 5.0)", ["players", "pairs", "flagged", "review",
              "top score"], [[r["spec"]["players"], r["full"]["honest_pairs"], r["full"]["tiers"].get("honest_flagged", 0),
                              r["full"]["tiers"].get("honest_review", 0), r["full"]["max_honest_score"]]
                             for r in honest_rooms])


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="rooms of 700 hands, not 1,400")
    ap.add_argument("--name", default="detection_styles", help="the results file: results/NAME.json")
    ap.add_argument("--cache", default="/tmp/bieqi-eval-audit")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--strength", type=float, default=None, help="colluders' lambda (the simulator's default: 1.0)")
    ap.add_argument("--share", type=float, default=None, help="share of hands together they collude (default 0.7)")
    ap.add_argument("--levels", default=",".join(map(str, LEVELS)), help="hands together at which pairs are scored")
    ap.add_argument("--sets", default="styles,extra,honest",
                    help="room sets: styles (share/feed/block), extra (partial/occasional/harm), honest")
    ap.add_argument("--only", default=None,
                    help="keep only rooms of these style labels, e.g. occasional (iterating on one style)")
    ap.add_argument("--rows-only", action="store_true", help="analyse the rooms (fill the cache) and stop")
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="add this to every room's seed: the same designs on other rooms (a held-out check)")
    ap.add_argument("--policy", default=None, choices=["strategy", "model", "fast"],
                    help="the evaluator the rooms' rows are analysed with (default: the audit's, AUDIT_POLICY); "
                         "part of the rows' cache key")
    args = ap.parse_args(argv)
    weaker = {k: v for k, v in (("strength", args.strength), ("share", args.share)) if v is not None}
    hands = 700 if args.quick else 1400
    levels = tuple(int(x) for x in args.levels.split(","))
    rooms, honest_room = room_specs(hands, weaker)
    sets = set(args.sets.split(","))
    specs = (extra_room_specs(hands) if "extra" in sets else []) + (rooms if "styles" in sets else []) + (
        [honest_room] if "honest" in sets else [])
    if args.seed_offset:
        specs = [{**s, "seed": s["seed"] + args.seed_offset} for s in specs]
    if args.only:
        keep = set(args.only.split(","))
        specs = [s for s in specs if s.get("label", s.get("style")) in keep]
    res = Results(args.name, "Detection by style (the analyzer's simulator)", "detection",
                  command_line("benchmarks.eval_audit", argv),
                  parameters={**{k: v for k, v in vars(args).items() if k not in ("cache", "rows_only")},
                              "rooms": len(specs), "hands": hands},
                  about=f"Rooms of `analyzer simulate` ({hands} hands, 20 players; occasional: {int(hands * 1.5)} "
                        "hands, 12 players), with weak and bot-like honest friends as confounders; each colluding pair "
                        "scored on the room cut where it had sat L hands with its partner, and every whole room "
                        "audited; the honest room of 40 players must flag nothing.")
    t0 = time.time()
    cache = Path(args.cache)
    with ProcessPoolExecutor(args.workers) as ex:
        if args.rows_only:
            list(ex.map(_rows_job, [(s, cache, args.policy) for s in specs]))
            print(f"rows of {len(specs)} rooms in {cache}: {time.time() - t0:.0f} s")
            return
        results = list(ex.map(_job, [(s, cache, levels, args.policy) for s in specs]))
    res.parameters["minutes"] = round((time.time() - t0) / 60, 1)
    report(results, res)
    res.write()


if __name__ == "__main__":
    main()
