"""Null calibration of the occasional-collusion statistic (``burst``): its directed p-values on honest pairs.

Two checks, printed as P(p <= u) for u = 0.001, 0.01, 0.05, 0.2 (a valid p-value has P(p <= u) <= u):
- synthetic: an actor whose per-hand favour has heavy tails (t, 3 d.f.) and who sits with one friend in a
  third of its directed hands (the friend-heavy seating of the honest confounders), no favour at all;
- rooms: every honest directed pair (>= 10 hands together) of the evaluation's rooms, whole rooms, friends
  who sit together often and the other pairs apart (read from ``eval_audit.py``'s cache, analysed if absent):
  the directed statistic and each of its two looks, then the pair's p over both directions.

    python -m benchmarks.burst_null --sets extra,styles,honest [--cache /tmp/bieqi-eval-audit]

Writes results/burst_null.json.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analyzer.audit import stream
from analyzer.audit.burst import _burst_one
from analyzer.audit.calibrate import burst_logp, z_of_logp

LEVELS = (0.001, 0.01, 0.05, 0.2)


def _rates(p: np.ndarray) -> list[float]:
    return [float((p <= u).mean()) for u in LEVELS] + [float(p.min())]


def synthetic(reps: int, seed: int = 5) -> np.ndarray:
    """Directed p-values of a friend with 300 of the actor's hands, 4 others with 150 each, no favour."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        rows = [pd.DataFrame({"actor": "A", "other": "B", "hand_id": np.arange(300), "x": rng.standard_t(3, 300)})]
        rows += [pd.DataFrame({"actor": "A", "other": f"o{k}", "hand_id": np.arange(150),
                               "x": rng.standard_t(3, 150)}) for k in range(4)]
        out.append(_burst_one(pd.concat(rows, ignore_index=True)).loc[("A", "B"), "logp"])
    return np.exp(np.array(out))


def burst_table(df: pd.DataFrame, seating: pd.DataFrame) -> pd.DataFrame:
    """The directed burst statistic the audit's pair signals read of these rows (``StreamedSignals._burst``)."""
    got: list[pd.DataFrame] = []

    class Keep(stream.StreamedSignals):
        def _burst(self, lk: pd.DataFrame) -> pd.DataFrame:
            got.append(super()._burst(lk))
            return got[-1]

    with Keep() as acc:
        for part in stream.hand_chunks(df):
            acc.add(part)
        acc.result(seating)
    return got[0]


def room_pvalues(specs: list[dict], cache: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Honest pairs' burst p-values over whole rooms: per directed pair (columns room, friend, hands, p, p_mean,
    p_count: the directed statistic and each of its looks) and per pair (room, friend, hands, p: the pair's p of
    ``calibrate.burst_logp``, both directions of each look)."""
    from benchmarks import eval_audit as ea

    rows, pairs = [], []
    for spec in specs:
        df, seating, truth = ea.room_frame(spec, cache)
        colluding = {tuple(p["players"]) for p in truth["colluding_pairs"]}
        friends = {tuple(p["players"]) for p in truth["friend_pairs"]}
        colluding |= {(b, a) for a, b in colluding}
        friends |= {(b, a) for a, b in friends}
        # the statistic as the audit reads it: each decision weighted by the actor's choice model
        b = burst_table(df, seating)
        for (actor, other), r in b.iterrows():
            if (actor, other) in colluding or r["hands"] < 10:
                continue
            rows.append((spec["seed"], (actor, other) in friends, int(r["hands"]), float(np.exp(r["logp"])),
                         float(np.exp(r["logp_mean"])), float(np.exp(r["logp_count"]))))
            if actor < other and (other, actor) in b.index:
                r2 = b.loc[(other, actor)]
                t = pd.DataFrame({"burst_ab_z_mean": [r["z_mean"]], "burst_ba_z_mean": [r2["z_mean"]],
                                  "burst_ab_z_count": [float(z_of_logp(r["logp_count"]))],
                                  "burst_ba_z_count": [float(z_of_logp(r2["logp_count"]))]})
                pairs.append((spec["seed"], (actor, other) in friends, int(r["hands"]), float(np.exp(burst_logp(t)[0]))))
    return (pd.DataFrame(rows, columns=["room", "friend", "hands", "p", "p_mean", "p_count"]),
            pd.DataFrame(pairs, columns=["room", "friend", "hands", "p"]))


def main(argv: list[str] | None = None) -> None:
    from benchmarks import eval_audit as ea
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default="/tmp/bieqi-eval-audit")
    ap.add_argument("--sets", default="extra,honest", help="room sets of eval_audit.py: styles, extra, honest")
    ap.add_argument("--reps", type=int, default=400, help="synthetic repetitions")
    ap.add_argument("--only", default=None, help="keep only rooms of these style labels, e.g. occasional")
    ap.add_argument("--seed-offset", type=int, default=0, help="add this to every room's seed (eval_audit's option)")
    ap.add_argument("--hands", type=int, default=1400, help="eval_audit's room size (its --quick: 700)")
    args = ap.parse_args(argv)
    res = Results("burst_null", "burst's null", "burst-null", command_line("benchmarks.burst_null", argv),
                  parameters={k: v for k, v in vars(args).items() if k != "cache"},
                  about="The occasional-collusion statistic's p-values on honest pairs: a valid p-value has "
                        "P(p <= u) <= u. Synthetic: an actor with heavy-tailed favours (t, 3 d.f.) who sits with one "
                        "friend in a third of its hands, no favour at all; rooms: every honest directed pair "
                        "(>= 10 hands together) of eval_audit's rooms.")
    t0 = time.time()
    cols = ["who", "n", *(f"P(p<={u:g})" for u in LEVELS), "min p"]
    out = [["synthetic friend-heavy actor", args.reps, *_rates(synthetic(args.reps))]]
    rooms, honest = ea.room_specs(args.hands, {})
    sets = set(args.sets.split(","))
    specs = (ea.extra_room_specs(args.hands) if "extra" in sets else []) + (rooms if "styles" in sets else []) + (
        [honest] if "honest" in sets else [])
    specs = [{**sp, "seed": sp["seed"] + args.seed_offset} for sp in specs]
    if args.only:
        specs = [sp for sp in specs if sp.get("label", sp.get("style")) in set(args.only.split(","))]
    t, pairs = room_pvalues(specs, Path(args.cache))
    for friend, g in t.groupby("friend"):
        who = "friends who sit together" if friend else "other honest pairs"
        out.append([f"{who}, directed", len(g), *_rates(g["p"].to_numpy())])
        for look in ("mean", "count"):
            out.append([f"{who}, directed, {look} look alone", len(g), *_rates(g[f"p_{look}"].to_numpy())])
    for friend, g in pairs.groupby("friend"):
        who = "friends who sit together" if friend else "other honest pairs"
        out.append([f"{who}, the pair's p (both directions)", len(g), *_rates(g["p"].to_numpy())])
    res.table("null", f"Shares of honest p-values at or below u ({len(specs)} rooms)", cols, out)
    res.parameters["minutes"] = round((time.time() - t0) / 60, 1)
    res.write()


if __name__ == "__main__":
    main()
