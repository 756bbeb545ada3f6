"""The nightly promise under the null: honest pairs looked at every night for 200 nights (optional stopping: a look
every night, the alarm if any look reaches it). Prints the share of honest pairs ever alarmed at alpha by the
e-process (goal: at most alpha, within its sampling error) and, beside it, by the fixed-sample test read at the same
looks (which promises alpha at one look only).

Two nulls: (1) synthetic per-hand scores (skewed and heavy-tailed, mean 0, variance 1; 0..6 hands a night);
(2) one honest simulated room (``analyzer simulate --colluders 0``) analysed once, its decision rows cut into
``--nights`` additions of a store by hand order, the ledger built day by day (``analyzer.audit.ledger.update``), and
every pair's e-value read after each day.

    python benchmarks/nightly_null.py --nights 200 --pairs 20000 --hands 6000 --players 60
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nightly_common import Results, analyzer  # noqa: E402


def synthetic(pairs: int, nights: int, alpha: float, seed: int) -> tuple[float, float, float]:
    """The synthetic null: shares ever alarmed (e-process, fixed-sample z) and the fixed test at the last night."""
    from scipy import stats

    from analyzer.audit.anytime import log_mixture_e, robust_v

    rng = np.random.default_rng(seed)
    s = np.zeros(pairs)
    q = np.zeros(pairs)
    n = np.zeros(pairs)
    ever_e = np.zeros(pairs, bool)
    ever_z = np.zeros(pairs, bool)
    z_cut = stats.norm.isf(alpha)
    for _ in range(nights):
        h = rng.integers(0, 7, pairs)
        total = int(h.sum())
        kind = rng.random(total) < 0.5
        x = np.where(kind, rng.exponential(1.0, total) - 1.0, rng.standard_t(3, total) / np.sqrt(3.0))
        owner = np.repeat(np.arange(pairs), h)
        s += np.bincount(owner, x, pairs)
        q += np.bincount(owner, x * x, pairs)
        n += h
        ever_e |= log_mixture_e(s, robust_v(q, n)) >= np.log(1 / alpha)
        ever_z |= s / np.sqrt(np.maximum(n, 1)) >= z_cut
    last_z = float((s / np.sqrt(np.maximum(n, 1)) >= z_cut).mean())
    return float(ever_e.mean()), float(ever_z.mean()), last_z


def room_store(work: Path, hands: int, players: int, seed: int, store: Path | None) -> Path:
    """A decision store of one honest room, analysed in one run (or the one given)."""
    if store is not None:
        return store
    log = work / "honest.jsonl.gz"
    analyzer("simulate", "--hands", str(hands), "--players", str(players), "--colluders", "0", "--friends", "4",
             "--seed", str(seed), "-o", str(log), "--truth", str(work / "honest.truth.json"))
    out = work / "honest-store"
    analyzer("decisions", str(log), "--out", str(out))
    return out


def recut(src: Path, dst: Path, nights: int) -> None:
    """The store's rows written again as ``nights`` additions, cut by hand order (each a day of the ledger)."""
    from analyzer.analysis.store import StoreWriter, open_store, read_rows

    st = open_store(src)
    rows = read_rows(st)
    fps = dict(st.hands)
    order = rows["hand_id"].drop_duplicates().tolist()  # the parts in order, each part's rows in order
    shutil.rmtree(dst, ignore_errors=True)
    for cut in np.array_split(np.arange(len(order)), nights):
        ids = [order[i] for i in cut]
        with StoreWriter(dst, st.settings) as w:
            w.add(rows[rows["hand_id"].isin(set(ids))], ids, [fps[h] for h in ids])
            w.commit()


def room_null(store: Path, alpha: float) -> tuple[int, float, float, float, float]:
    """Pairs, and the shares ever alarmed by the e-process and by the fixed-sample test over the days, of the
    pairs with at least 10 hands together at the end; the fixed test at the last day alone; the mean hands
    together."""
    from scipy import stats

    from analyzer.analysis.store import open_store
    from analyzer.audit.ledger import SCORES, open_ledger, update

    update(open_store(store))
    led = open_ledger(open_store(store))
    z_cut = stats.norm.isf(alpha / (2 * len(SCORES)))  # the fixed-sample p: x 2 directions, x the score columns
    ever_e: pd.Series | None = None
    ever_z: pd.Series | None = None
    last = None
    for d in led.days:
        st = pd.read_parquet(d.path / "state-pairs.parquet").set_index(["actor", "other"])
        e = st["log_e"] >= np.log(1 / alpha)
        z = pd.concat([st[f"{c}_S"] / np.sqrt(st[f"{c}_N"].clip(lower=1)) for c in SCORES], axis=1).max(axis=1)
        # a pair's fixed test reads both directions: its rows' best z
        key = pd.MultiIndex.from_arrays([np.minimum(st.index.get_level_values(0), st.index.get_level_values(1)),
                                         np.maximum(st.index.get_level_values(0), st.index.get_level_values(1))])
        zp = pd.Series(z.to_numpy(), index=key).groupby(level=[0, 1]).max() >= z_cut
        ep = pd.Series(e.to_numpy(), index=key).groupby(level=[0, 1]).max()
        ever_e = ep if ever_e is None else (ever_e.reindex(ep.index, fill_value=False) | ep)
        ever_z = zp if ever_z is None else (ever_z.reindex(zp.index, fill_value=False) | zp)
        last = (st, zp)
    assert last is not None and ever_e is not None and ever_z is not None
    st, zp = last
    hands = pd.Series(st["hands_together"].to_numpy(), index=pd.MultiIndex.from_arrays(
        [np.minimum(st.index.get_level_values(0), st.index.get_level_values(1)),
         np.maximum(st.index.get_level_values(0), st.index.get_level_values(1))])).groupby(level=[0, 1]).max()
    tested = hands[hands >= 10].index
    return (len(tested), float(ever_e.reindex(tested).mean()), float(ever_z.reindex(tested).mean()),
            float(zp.reindex(tested).mean()), float(hands.reindex(tested).mean()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nights", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=20000, help="synthetic honest pairs")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--hands", type=int, default=6000, help="hands of the honest room")
    ap.add_argument("--players", type=int, default=60)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--store", type=Path, default=None, help="an honest room's decision store to use instead")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    res = Results("nightly_null", {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()})
    se = float(np.sqrt(args.alpha * (1 - args.alpha) / args.pairs))
    e_share, z_share, z_last = synthetic(args.pairs, args.nights, args.alpha, args.seed)
    res.figure("synthetic_e_ever", round(e_share, 5), f"(alpha {args.alpha}, s.e. {se:.4f})",
               f"synthetic honest pairs ({args.pairs}) ever alarmed by the e-process over {args.nights} nightly looks")
    res.figure("synthetic_fixed_ever", round(z_share, 5), "",
               "the same pairs ever alarmed by the fixed-sample z test read at every look")
    res.figure("synthetic_fixed_last", round(z_last, 5), "", "the fixed-sample z test at the last night alone")
    work = args.work or Path(tempfile.mkdtemp(prefix="bieqi-null-"))
    work.mkdir(parents=True, exist_ok=True)
    src = room_store(work, args.hands, args.players, args.seed, args.store)
    cut = work / "recut"
    recut(src, cut, args.nights)
    n, e_room, z_room, z_room_last, mean_hands = room_null(cut, args.alpha)
    se_room = float(np.sqrt(args.alpha * (1 - args.alpha) / max(n, 1)))
    res.figure("room_pairs", n, "pairs", "honest room's pairs with at least 10 hands together")
    res.figure("room_mean_hands", round(mean_hands, 1), "hands", "their mean hands together at the end")
    res.figure("room_e_ever", round(e_room, 5), f"(alpha {args.alpha}, s.e. {se_room:.4f})",
               f"honest room's pairs ever alarmed by the e-process over {args.nights} daily looks")
    res.figure("room_fixed_ever", round(z_room, 5), "", "ever alarmed by the fixed-sample test read at every look")
    res.figure("room_fixed_last", round(z_room_last, 5), "", "the fixed-sample test at the last day alone")
    res.write()


if __name__ == "__main__":
    main()
