"""The per-player signal ("plays better than their level on the true deal") on honest search bots and on players
who see hidden cards: rooms of the independent simulator (benchmarks/simulators/heuristic_lookahead.py), cut to their first 500 /
1,000 / 2,400 hands.

    python benchmarks/eval_players_search.py                       # the default rooms below (~40 min the first time)
    python benchmarks/eval_players_search.py --rooms honest_friends:1 peek_all:1 --cuts 1000,2400
    PYTHONPATH=/other/checkout python benchmarks/eval_players_search.py   # the same rooms read by other code

A room is STYLE:SEED. STYLE is one of heuristic_lookahead's styles (honest_* rooms have ~15% "lookahead" bots: a small
search that samples the hidden hands), or a room of its ``honest_friends`` players with two *peekers*, the same
lookahead bots but seeing hidden cards (defined here, not in the simulator, so that its honest bots stay as written):

- ``peek_all``: the lookahead bot's deals are the true deal (it sees every hidden hand and cover) on every play;
- ``peek_one``: it sees the next seat's hand (the rest sampled as the honest bot does);
- ``peek_half``: it sees every hidden card in half of its hands (chosen per hand), plays honestly in the other half;
- ``peek_heur``: a softmax heuristic player (temperature 0.5) whose card values count the opponents' true cards.

Rooms and their decision stores (``analyzer decisions``, the defaults) are written once into ``--cache``; the table
is read by the code on ``PYTHONPATH`` (``analyzer.analysis.players.player_table``), so one run per checkout gives
the before / after figures on the same rows. Printed per room and cut: every honest search bot's skill, dd_z,
level_z, partner_z and signal_q, the honest players flagged and the smallest honest q, each cheater's figures;
then a summary over all rooms and cuts.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOMS = ("honest_friends:1", "honest_friends:2", "honest_friends:4", "honest_friends:5", "honest_friends:6",
                 "honest_chatty:3", "honest_chatty:4", "honest_casual:1", "honest_casual:3", "honest_longtables:1",
                 "honest_longtables:2", "honest_mentor:1", "honest_club:1", "honest_habits:1", "share:1", "share:2",
                 "cover_only:1", "trio:1", "block:1", "peek_all:1", "peek_all:2", "peek_half:1", "peek_half:2",
                 "peek_heur:1", "peek_heur:2", "peek_one:1", "peek_one:2")
PEEK_STYLES = ("peek_all", "peek_one", "peek_half", "peek_heur")
PEEKERS = 2


def _sim() -> Any:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("benchmarks.simulators.heuristic_lookahead")


def peek_room(style: str, seed: int, out: Path, hands: int) -> None:
    """heuristic_lookahead's honest_friends room with PEEKERS players turned into peekers (``style``)."""
    sim = _sim()
    base_build = sim.build_players

    class Peeker(sim.Player):  # type: ignore[name-defined,misc]
        mode = "all"
        sees = False  # this hand (peek_half draws it per hand)

        def honest(self, g: Any, kind: str, opts: list) -> Any:
            if self.mode == "half" and g.n < 4:  # drawn at the hand's first action of every seat
                self.sees = self.rng.random() < 0.5
            if len(opts) == 1:
                return opts[0]
            if self.mode == "heur":
                me = g.turn
                opp = {c for s in range(4) if s != me for c in list(g.hands[s]) + g.covered[s]}
                if kind == "cover":
                    vals = [-sim.cover_cost(g, me, c, g.hands[me], known_opp=opp) for c in opts]
                    return sim.softmax_pick(self.rng, opts, vals, self.temp * 3)
                vals = [sim.play_value(g, me, c, g.hands[me], known_opp=opp) for c in opts]
                return sim.softmax_pick(self.rng, opts, vals, self.temp)
            return super().honest(g, kind, opts)

        def lookahead(self, g: Any, kind: str, opts: list, samples: int = 3) -> Any:
            me = g.turn
            if self.mode == "half" and not self.sees:
                return super().lookahead(g, kind, opts, samples)
            known = [s for s in range(4) if s != me] if self.mode in ("all", "half") else [(me + 1) % 4]
            unseen = [c for s in range(4) if s != me and s not in known for c in list(g.hands[s]) + g.covered[s]]
            tot = {o: 0.0 for o in opts}
            for _ in range(samples):
                self.rng.shuffle(unseen)
                hs: list = [None] * 4
                cs: list = [None] * 4
                i = 0
                for s in range(4):
                    if s == me or s in known:
                        hs[s], cs[s] = set(g.hands[s]), list(g.covered[s])
                    else:
                        n_h, n_c = len(g.hands[s]), len(g.covered[s])
                        hs[s], cs[s] = set(unseen[i:i + n_h]), unseen[i + n_h:i + n_h + n_c]
                        i += n_h + n_c
                for o in opts:
                    tot[o] += sim.greedy_playout(g, hs, cs, kind, o)[me]
            m = max(tot.values())
            return self.rng.choice([o for o in opts if tot[o] == m])

    mode = style.split("_", 1)[1]

    def build(style_: str, rng: random.Random, n: int) -> Any:
        ids, players = base_build(style_, rng, n)
        pick = random.Random(seed * 31 + 7).sample(ids, PEEKERS)
        for pid in pick:
            p = players[pid]
            p.__class__ = Peeker
            p.mode = mode
            p.kind, p.temp = ("peek_heur", 0.5) if mode == "heur" else (f"peek_{mode}", 0)
            if mode != "heur":  # the honest lookahead bot's code path, with the peek in its deals
                p.kind = "lookahead"
        return ids, players

    sim.build_players = build
    argv = sys.argv
    sys.argv = ["independent_sim", "--style", "honest_friends", "--seed", str(seed), "--out", str(out),
                "--hands", str(hands)]
    try:
        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                sim.main()
            finally:
                sys.stdout = stdout
    finally:
        sys.argv = argv
    truth_path = out.with_suffix(".truth.json")
    truth = json.loads(truth_path.read_text())
    ids = list(truth["kinds"])
    pick = random.Random(seed * 31 + 7).sample(ids, PEEKERS)
    truth["style"] = style
    truth["peekers"] = pick
    for pid in pick:
        truth["kinds"][pid] = f"peek_{mode}"
    truth_path.write_text(json.dumps(truth, indent=1))


def room(spec: str, cache: Path, hands: int, jobs: int) -> tuple[pd.DataFrame, dict]:
    style, seed = spec.split(":")
    name = f"{style}_s{seed}"
    log, store = cache / f"{name}.jsonl", cache / f"{name}.store"
    cache.mkdir(parents=True, exist_ok=True)
    if not log.with_suffix(".truth.json").exists():
        if style in PEEK_STYLES:
            peek_room(style, int(seed), log, hands)
        else:
            subprocess.run([sys.executable, "-m", "benchmarks.simulators.heuristic_lookahead", "--style", style,
                            "--seed", seed, "--out", str(log), "--hands", str(hands)], check=True,
                           stdout=subprocess.DEVNULL, cwd=ROOT)
    if not store.exists():  # the rows do not depend on the table's code: written once, read by every checkout
        subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "decisions", str(log), "-o",
                        str(store), "--jobs", str(jobs)], check=True, stdout=subprocess.DEVNULL)
    truth = json.loads(log.with_suffix(".truth.json").read_text())
    frame = pd.read_parquet(store)
    frame["_n"] = frame["hand_id"].str.rsplit("-", n=1).str[1].astype(int)
    return frame, truth


def role(truth: dict, player: str) -> str:
    if player in truth.get("peekers", ()):
        return "cheat:" + truth["kinds"][player]
    if any(player in c["players"] for c in truth["colluders"]):
        return "cheat:" + truth["style"]
    kind = truth["kinds"].get(player, "?")
    return "search" if kind.startswith("lookahead") else "honest"


def by_kind(frame: pd.DataFrame, player: str) -> dict[str, float]:
    """The player's true-deal surplus z on covers and on plays, predicted by one fit over all their decisions and
    (where the code has it) by the fits kind by kind (``players._signal_fits``)."""
    from analyzer.analysis import players
    from analyzer.analysis.skill import choice_probabilities, fit_choice, loss_matrices

    from analyzer.analysis.options import option_arrays

    rows = frame[frame["player"] == player].reset_index(drop=True)
    parsed = option_arrays(rows["options"], ("loss", "loss_ref", "loss_dd"))
    losses, chosen = loss_matrices(rows, parsed=parsed)
    own, ref, dd = losses["loss"], losses["loss_ref"], losses["loss_dd"]
    pooled = fit_choice(own, ref, chosen)
    fits = {"one fit": (np.full(len(rows), pooled.a), np.full(len(rows), pooled.b))}
    if hasattr(players, "_signal_fits"):
        fits["by kind"] = players._signal_fits(own, ref, chosen, players._strata(rows, parsed), pooled)
    has = np.isfinite(dd).any(axis=1) & (np.where(np.isfinite(dd), dd, 0) > 0).any(axis=1)
    best = np.argmin(dd, axis=1)
    cover = (rows["kind"] == "cover").to_numpy()
    out = {}
    for name, (a, b) in fits.items():
        p = choice_probabilities(own, ref, a, b)[np.arange(len(rows)), best]
        excess, var = np.where(has, (chosen == best) - p, 0.0), np.where(has, p * (1 - p), 0.0)
        for kind, m in (("covers", cover), ("plays", ~cover)):
            out[f"{name}: {kind}"] = float(excess[m].sum() / np.sqrt(var[m].sum()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rooms", nargs="+", default=list(DEFAULT_ROOMS))
    ap.add_argument("--cuts", default="500,1000,2400")
    ap.add_argument("--hands", type=int, default=2400)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "eval_players_search")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--by-kind", action="store_true",
                    help="also each search bot's and cheater's surplus z on covers and on plays (whole rooms)")
    args = ap.parse_args()
    from analyzer.analysis.players import player_table

    cuts = [int(c) for c in args.cuts.split(",")]
    cols = ["player", "role", "skill", "decisions", "dd_excess", "dd_z", "level_z", "partner_z", "signal_q", "flag"]
    rows = []
    for spec in args.rooms:
        frame, truth = room(spec, args.cache, args.hands, args.jobs)
        for cut in cuts:
            t = player_table(frame[frame["_n"] <= cut].drop(columns="_n").reset_index(drop=True))
            t["role"] = [role(truth, str(p)) for p in t["player"]]
            honest = t[~t["role"].str.startswith("cheat")]
            show = t[(t["role"] != "honest") | t["flag"]]
            print(f"== {spec} first {cut} hands: honest flagged {int(honest['flag'].sum())} of {len(honest)}, "
                  f"smallest honest q {honest['signal_q'].min():.3g}")
            print(show[cols].to_string(index=False, float_format=lambda x: f"{x:.3g}"), flush=True)
            for _, r in t.iterrows():
                rows.append({"room": spec, "cut": cut, **{c: r[c] for c in cols}})
        if args.by_kind:
            whole = frame.drop(columns="_n")
            for p in sorted(str(p) for p in whole["player"].unique() if role(truth, str(p)) != "honest"):
                z = by_kind(whole, p)
                print(f"   {p} ({role(truth, p)}) true-deal surplus z: "
                      + ", ".join(f"{k} {v:+.2f}" for k, v in z.items()))
    all_ = pd.DataFrame(rows)
    print("\nsummary over rooms and cuts (level_z mean / max, flagged / players)")
    for (rl, cut), g in all_.assign(kind=all_["role"].str.replace(r":.*", "", regex=True)).groupby(["role", "cut"]):
        print(f"  {rl:<16} cut {cut:>5}: level_z {g['level_z'].mean():+.2f} / {g['level_z'].max():+.2f}, "
              f"q min {g['signal_q'].min():.3g}, flagged {int(g['flag'].sum())} / {len(g)}")
    hon = all_[~all_["role"].str.startswith("cheat")]
    print(f"  honest players flagged in all: {int(hon['flag'].sum())} of {len(hon)} player-cuts; "
          f"cheaters flagged: {int(all_['flag'][all_['role'].str.startswith('cheat')].sum())} of "
          f"{int(all_['role'].str.startswith('cheat').sum())}; mean level_z search bots "
          f"{float(np.nanmean(hon['level_z'][hon['role'] == 'search'])):+.2f}")


if __name__ == "__main__":
    main()
