#!/usr/bin/env python3
"""The ring of three taking turns (`c-ring3` of benchmarks/independent_sim4.py): the audit's pair verdicts, and the
readings tried to lift them (docs/independent4.md, "A ring taking turns: what was tried").

    nice -n 19 python benchmarks/eval_ring.py [--sizes 1000] [--seeds 41,47,51,53,59,61,67,71]
                                              [--honest h-friends,h-hetero,h-noisy] [--variants base,hot3,strat,triad]

Per room and seed: simulate, `analyzer decisions` once (cached under --cache), then the pair table in this process
(``audit.stream.pair_signals`` + ``calibrate``: the audit's own pair verdicts, from the same rows) under each
variant; prints the ring's three pairs (verdict, score, rank among the room's pairs) and the honest pairs flagged /
for review. The variants (benchmarks/eval_strat.py is the acceptance run of ``strat`` over many more rooms):

- ``base``: the audit before the stratified re-read (``burst.BURST_STRATA`` off);
- ``hot3``: ``base`` with the burst statistic's standing-out partners at z > 3 instead of 4 (``burst.BURST_HOT_Z``);
- ``strat``: the audit as it is now (``burst.BURST_STRATA`` on): in the burst re-read, an actor's other standing-out
  partners' hands kept, the presence of one of them a stratum of its own (links towards them left out), and each
  look the better of that reading and the one without their hands, x 2 (``burst._burst``);
- ``triad``: no pair verdicts; per triad whose three pairs sat together >= 10 hands, each member's exact favour to the
  other two (stratified permutation z, the pattern of their seats a stratum) and the smallest of the three, against the
  Bonferroni threshold over the room's triads (an intersection-union test: a group of three is named only when every
  member favours the other two).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from analyzer.audit import burst, stream  # noqa: E402
from analyzer.audit.calibrate import Alarm, calibrate, rank_pairs  # noqa: E402
from analyzer.audit.stream import pair_signals  # noqa: E402

SIM = os.path.join(HERE, "independent_sim4.py")
PATTERNS = [(1,), (2,), (3,), (1, 2), (1, 3), (2, 3)]


def run(cmd: list[str]) -> None:
    r = subprocess.run(["nice", "-n", "19", sys.executable, *cmd], env=dict(os.environ, PYTHONPATH=ROOT),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")


def prepare(room: str, n: int, seed: int, cache: str) -> str:
    base = os.path.join(cache, f"{room}-{n}-s{seed}")
    if not os.path.exists(base + ".jsonl.gz"):
        run([SIM, "--room", room, "--hands", str(n), "--seed", str(seed), "--out", base + ".jsonl.gz"])
    if not os.path.exists(base + ".store"):
        run(["-m", "analyzer.cli", "decisions", base + ".jsonl.gz", "--out", base + ".store"])
    return base


def pair_table(base: str, variant: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = pd.read_parquet(base + ".store")
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    got: dict[str, pd.DataFrame] = {}
    orig, hot_z, strata = stream.StreamedSignals._burst, burst.BURST_HOT_Z, burst.BURST_STRATA

    def capture(self: Any, lk: pd.DataFrame) -> pd.DataFrame:
        got["lk"] = lk
        return orig(self, lk)

    stream.StreamedSignals._burst = capture  # type: ignore[method-assign]
    burst.BURST_HOT_Z = 3.0 if variant == "hot3" else hot_z
    burst.BURST_STRATA = variant == "strat"
    try:
        pairs = pair_signals(df, seating)
    finally:
        stream.StreamedSignals._burst, burst.BURST_HOT_Z = orig, hot_z  # type: ignore[method-assign]
        burst.BURST_STRATA = strata
    c = rank_pairs(calibrate(pairs, Alarm()))
    c["rank"] = np.arange(1, len(c) + 1)
    return c, got["lk"]


def member_tables(lk: pd.DataFrame) -> dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per actor: the normal scores of his favour to each seat pattern (hands x 6), who sat where, their cross sums."""
    sc = burst.hand_scores(lk, burst.BURST_SIGNAL)
    out = {}
    for actor, g in sc.groupby("actor", sort=False):
        x = g.pivot_table(index="hand_id", columns="offset", values="x", aggfunc="first").reindex(columns=[1, 2, 3])
        who = g.pivot_table(index="hand_id", columns="offset", values="other", aggfunc="first").reindex(
            columns=[1, 2, 3])
        ok = x.notna().all(axis=1).to_numpy()
        xv, wv = x.to_numpy(np.float64)[ok], who.to_numpy(object)[ok]
        if len(xv) < 2:
            continue
        z = np.empty((len(xv), len(PATTERNS)))
        for j, s in enumerate(PATTERNS):
            v, _ = burst._normal_scores(np.round(xv[:, [k - 1 for k in s]].sum(axis=1), 9))
            z[:, j] = v - v.mean()
        out[actor] = (z, wv, z.T @ z)
    return out


def member_z(tab: tuple[np.ndarray, np.ndarray, np.ndarray], group: set[Any]) -> float:
    """The actor's favour to the group's seats in his hands with them, against all his hands on the same seats: the
    stratified permutation z (the exact covariance of disjoint strata drawn without replacement)."""
    z, who, cross = tab
    t = len(z)
    ing = np.isin(who, list(group))
    code = ing[:, 0] * 1 + ing[:, 1] * 2 + ing[:, 2] * 4
    n, s = np.zeros(len(PATTERNS)), np.zeros(len(PATTERNS))
    for j, c in enumerate((1, 2, 4, 3, 5, 6)):
        m = code == c
        n[j], s[j] = m.sum(), z[m, j].sum()
    var = -np.outer(n, n) / (t * (t - 1)) * cross
    var[np.diag_indices(len(PATTERNS))] = n * (t - n) / (t * (t - 1)) * np.diag(cross)
    tot = float(var.sum())
    return float(s.sum() / np.sqrt(tot)) if tot > 1e-12 else 0.0


def triads(base: str, lk: pd.DataFrame, colluders: set[str], min_hands: int = 10) -> str:
    seating = pd.read_parquet(base + ".store", columns=["hand_id", "p0", "p1", "p2", "p3"]).drop_duplicates("hand_id")
    p = seating[["p0", "p1", "p2", "p3"]].to_numpy(object)
    players = sorted(set(p.ravel()))
    at = np.zeros((len(p), len(players)), np.int64)
    for k in range(4):
        at[np.arange(len(p)), [players.index(x) for x in p[:, k]]] = 1
    tog = at.T @ at
    tabs = member_tables(lk)
    rows = []
    for i, j, k in itertools.combinations(range(len(players)), 3):
        if min(tog[i, j], tog[i, k], tog[j, k]) < min_hands:
            continue
        t = (players[i], players[j], players[k])
        zs = [member_z(tabs[m], set(t) - {m}) if m in tabs else 0.0 for m in t]
        rows.append((min(zs), len(set(t) & colluders), zs))
    thr = float(-special.ndtri(Alarm().alpha / max(len(rows), 1)))
    ring = [r for r in rows if r[1] == 3]
    honest = [r[0] for r in rows if r[1] == 0]
    return (f"{len(rows)} triads, threshold z {thr:.2f}; ring members' z "
            + ", ".join(f"{z:.2f}" for r in ring for z in r[2])
            + f" (smallest {max([r[0] for r in ring], default=float('nan')):.2f}); honest triads' smallest z: "
            f"largest {max(honest, default=float('nan')):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--seeds", default="41,47,51,53,59,61,67,71")
    ap.add_argument("--honest", default="h-friends,h-hetero,h-noisy", help="honest rooms, each at the first seed")
    ap.add_argument("--variants", default="base,hot3,strat,triad")
    ap.add_argument("--cache", default="/tmp/ring")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    seeds = [int(s) for s in a.seeds.split(",")]
    rooms = [("c-ring3", s) for s in seeds] + [(r, seeds[0]) for r in a.honest.split(",") if r]
    tally: dict[str, list[int]] = {}
    for n in [int(x) for x in a.sizes.split(",")]:
        for room, seed in rooms:
            base = prepare(room, n, seed, a.cache)
            truth = json.load(open(base + ".truth.json"))
            col = set(truth["colluders"]) | set(truth["lone_cheaters"])
            for variant in a.variants.split(","):
                c, lk = pair_table(base, "base" if variant == "triad" else variant)
                if variant == "triad":
                    print(f"{room} {n} s{seed} triad: {triads(base, lk, col)}", flush=True)
                    continue
                ring = c["a"].isin(col) & c["b"].isin(col)
                honest = ~c["a"].isin(col) & ~c["b"].isin(col)
                true = "; ".join(f"{v} {s:.1f} #{k}" for v, s, k in zip(c.loc[ring, "verdict"], c.loc[ring, "score"],
                                                                        c.loc[ring, "rank"]))
                hf, hr = (int((c.loc[honest, "verdict"] == v).sum()) for v in ("flagged", "review"))
                t = tally.setdefault(f"{variant} {n}", [0, 0, 0, 0, 0])
                t[0] += int((c.loc[ring, "verdict"] == "flagged").sum())
                t[1] += int((c.loc[ring, "verdict"] == "review").sum())
                t[2] += int(ring.sum())
                t[3] += hf
                t[4] += hr
                print(f"{room} {n} s{seed} {variant:5}: ring [{true}] honest flagged/review {hf}/{hr} of "
                      f"{int(honest.sum())} (top {c.loc[honest, 'score'].max():.2f})", flush=True)
    print("\nvariant hands: ring pairs flagged / review of N; honest pairs flagged / review")
    for k, (f, r, tot, hf, hr) in tally.items():
        print(f"  {k}: {f} / {r} of {tot}; {hf} / {hr}")


if __name__ == "__main__":
    main()
