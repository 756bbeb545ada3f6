"""The rooms of the held-out evaluation: every simulator behind one call, the sparse and occasional regimes
added as parameter changes, each room read by the audit into a labelled pair table.

    python benchmarks/heldout_rooms.py OUTDIR [--list LIST] [--jobs 1]

LIST: lines "SIM ROOM SEED" (default: ROOMS below). SIM: ours (analyzer simulate), s1..s5
(benchmarks/simulators: s1 heuristic_lookahead, s2 quirky_rules, s3 planner_sampler, s4 thumb_epsilon,
s5 boltzmann_families). ROOM: x-sparse (60 players, 800 hands, 6 pairs
partner-aware in a third of their decisions, seldom together, 4 honest friend pairs), x-occ (40 players, 5,000
hands, 4 pairs fully sharing in one hand of ten together, 2 friend pairs), or a simulator's own room or style.
Writes OUTDIR/SIM-ROOM-SEED.jsonl.gz, .truth.json (normalised: colluding_pairs, friend_pairs, cheaters), the
decision store (.store) and the labelled pair table (.pairs.parquet: the audit's calibrated pair table with
colluding, friend, honest, sim, room, seed). Every room is seeded; a room already written is kept.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import itertools
import json
import os
import random
import subprocess
import sys
import time

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository: benchmarks.simulators
ANALYZER = [sys.executable, "-c", "from analyzer.cli import main; main()"]
#: the share of decisions a sparse colluder is partner-aware in, and the share of hands an occasional one helps in
AWARE = 1 / 3
OCC_RATE = 0.1


def pairs_of(members):
    return [sorted(p) for p in itertools.combinations(sorted(members), 2)]


# ------------------------------------------------------------------ ours (analyzer simulate)
OURS = {
    "x-sparse": ["--players", "60", "--colluders", "6", "--friends", "4", "--style", "share", "--run-length", "8",
                 "--option", "decisions=0.33", "--option", "seek=0.5", "--option", "friend_together=0.5"],
    "x-occ": ["--players", "40", "--colluders", "4", "--friends", "2", "--style", "share", "--share", "0.1",
              "--option", "seek=0.95"],
    "honest": ["--players", "40", "--colluders", "0", "--friends", "6"],
    "honest-big": ["--players", "60", "--colluders", "0", "--friends", "6", "--run-length", "8"],
    "share": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "share"],
    "feed": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "feed"],
    "block": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "block"],
    "harm": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "harm"],
    "partial": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "share", "--share", "1.0",
                "--option", "decisions=0.4"],
    "mixed": ["--players", "20", "--colluders", "3", "--friends", "3", "--style", "mixed", "--strength", "0.5"],
}


def ours(room, seed, log, hands):
    t = log[:-9] + ".raw-truth.json"
    subprocess.run([*ANALYZER, "simulate", "--hands", str(hands), "--seed", str(seed), *OURS[room], "--out", log,
                    "--truth", t], check=True, capture_output=True)
    tr = json.load(open(t))
    return {"colluding_pairs": [sorted(c["players"]) for c in tr["colluding_pairs"]],
            "friend_pairs": [sorted(f["players"]) for f in tr["friend_pairs"]], "cheaters": []}


# ------------------------------------------------------------------ s1 (heuristic_lookahead)
S1 = {
    "x-sparse": ["--style", "share", "--pairs", "6", "--aware", str(AWARE), "--friends", "4", "--friend-seek", "0.5",
                 "--seek", "0.5", "--runs", "4-16", "--players", "60"],
    "x-occ": ["--style", "share", "--pairs", "4", "--share", str(OCC_RATE), "--friends", "2", "--seek", "0.95",
              "--players", "40"],
}


def s1(room, seed, log, hands):
    raw = log[:-3]
    args = S1.get(room, ["--style", room])
    subprocess.run([sys.executable, "-m", "benchmarks.simulators.heuristic_lookahead", *args, "--seed", str(seed),
                    "--hands", str(hands),
                    "--out", raw], check=True, capture_output=True, cwd=os.path.dirname(HERE))
    tr = json.load(open(raw.rsplit(".jsonl", 1)[0] + ".truth.json"))
    with open(raw, "rb") as f, gzip.open(log, "wb") as g:
        g.write(f.read())
    os.remove(raw)
    os.replace(raw.rsplit(".jsonl", 1)[0] + ".truth.json", log[:-9] + ".raw-truth.json")
    return {"colluding_pairs": [p for c in tr["colluders"] for p in pairs_of(c["players"])],
            "friend_pairs": [p for f in tr["friends"] for p in pairs_of(f["players"])], "cheaters": []}


# ------------------------------------------------------------------ s2 (quirky_rules)
@functools.cache  # patch the simulator once a process: a second patch would wrap the first
def _s2():
    from benchmarks.simulators import quirky_rules as m

    class XColluder(m.Colluder):
        aware = 1.0
        hand_share = 1.0

        def choose(self, st, seat, ctx):
            kind, opts = st.options(seat)
            if len(opts) > 1 and self.partner in ctx["seat_of"]:
                if self.hand_share < 1.0:
                    occ = ctx.setdefault("occ", {})
                    key = frozenset((self.pid, self.partner))
                    if key not in occ:
                        occ[key] = self.rng.random() < self.hand_share
                    if not occ[key]:
                        return m.Player.choose(self, st, seat, ctx)
                if self.aware < 1.0 and self.rng.random() >= self.aware:
                    return m.Player.choose(self, st, seat, ctx)
            return super().choose(st, seat, ctx)

    orig = m.build_room

    def build_room(name, rng, nplayers):
        if name not in ("x_sparse", "x_occ"):
            return orig(name, rng, nplayers)
        sparse = name == "x_sparse"
        P, groups, truth = {}, [], {"room": name, "colluders": [], "friends": [], "cheaters": []}
        ids = [f"u{i:02d}" for i in range(nplayers)]
        for pid in ids:
            P[pid] = m.mk(pid, random.Random(rng.random()))
        k = 6 if sparse else 4
        for i in range(k):
            a, b = ids[2 * i], ids[2 * i + 1]
            for x, y in ((a, b), (b, a)):
                c = m.mkc(x, random.Random(rng.random()), y, "mutual", 2.0)
                c.__class__ = XColluder
                c.aware = AWARE if sparse else 1.0
                c.hand_share = 1.0 if sparse else OCC_RATE
                P[x] = c
            groups.append(([a, b], 0.5 if sparse else 0.95))
            truth["colluders"].append({"pair": [a, b], "style": "mutual"})
        for j in range(4 if sparse else 2):
            f = [ids[2 * k + 2 * j], ids[2 * k + 2 * j + 1]]
            groups.append((f, 0.3 if sparse else 0.75))
            truth["friends"].append({"group": f})
        return P, groups, truth

    m.build_room = build_room
    return m


def s2(room, seed, log, hands):
    m = _s2()
    raw = log[:-3]
    name = {"x-sparse": "x_sparse", "x-occ": "x_occ"}.get(room, room)
    n = {"x-sparse": 60, "x-occ": 40}.get(room)
    m.BLOCK_LEN = (3, 10) if room == "x-sparse" else (8, 40)
    m.run(name, seed, hands, raw, n)
    tr = json.load(open(raw.replace(".jsonl", "") + ".truth.json"))
    with open(raw, "rb") as f, gzip.open(log, "wb") as g:
        g.write(f.read())
    os.remove(raw)
    os.replace(raw.replace(".jsonl", "") + ".truth.json", log[:-9] + ".raw-truth.json")
    return {"colluding_pairs": [sorted(c["pair"]) for c in tr["colluders"]],
            "friend_pairs": [p for f in tr["friends"] for p in pairs_of(f["group"])],
            "cheaters": [c["player"] for c in tr.get("cheaters", [])]}


# ------------------------------------------------------------------ s3 (planner_sampler)
@functools.cache  # patch the simulator once a process: a second patch would wrap the first
def _s3():
    from benchmarks.simulators import planner_sampler as m
    m.ROOMS["x-sparse"] = dict(n=60, mix=m.STD_MIX, pairs=[("aware", {})] * 6, friends=4, slen=(3, 10), seek=0.55,
                               fseek=0.35, desc="sparse: 6 pairs sharing in 1/3 of decisions, seldom together")
    m.ROOMS["x-occ"] = dict(n=40, mix=m.STD_MIX, pairs=[("occasional", {"rate": OCC_RATE})] * 4, friends=2,
                            desc="4 pairs: full joint Monte Carlo in 1 hand of 10 together")
    ctx_orig = m.Link.ctx_for

    def ctx_for(self, pid, st, seat, pseat, opts, is_play, on):
        if self.style == "aware":
            if not on or self.rng.random() >= AWARE:
                return None
            return {"partner": pseat, "soft": True, "lam_p": 0.7, "lam_cover_p": 0.8, "w_block": 0.6}
        return ctx_orig(self, pid, st, seat, pseat, opts, is_play, on)

    m.Link.ctx_for = ctx_for
    ft = m.form_tables

    def form_tables(rng, players, links, friends, cfg, session):
        if cfg.get("seek") is not None:
            links = [lk for lk in links if rng.random() < cfg["seek"]]
            friends = [f for f in friends if rng.random() < cfg["fseek"]]
        return ft(rng, players, links, friends, cfg, session)

    m.form_tables = form_tables
    return m


def s3(room, seed, log, hands):
    m = _s3()
    tr = m.simulate(room, hands, seed, log)
    os.replace(m.truth_path(log), log[:-9] + ".raw-truth.json")
    return {"colluding_pairs": [sorted(c["players"]) for c in tr["colluding_pairs"]],
            "friend_pairs": [sorted(f["players"]) for f in tr["friend_pairs"]],
            "cheaters": list(tr.get("lone_cheaters", []))}


# ------------------------------------------------------------------ s4 (thumb_epsilon)
@functools.cache  # patch the simulator once a process: a second patch would wrap the first
def _s4():
    from benchmarks.simulators import thumb_epsilon as m
    m.ROOMS["x-sparse"] = dict(kind="collusion", players=60, style="aware", size=2, seek=0.5, slow=False,
                               slen=(2, 8), friends=[("thumb", 2), ("looker", 2), ("thumb", 2), ("thumb", 2)],
                               fseek=0.35, npairs=6, doc="sparse")
    m.ROOMS["x-occ"] = dict(kind="collusion", players=40, style="occ", size=2, seek=0.95, slow=True,
                            friends=[("thumb", 2), ("looker", 2)], fseek=1.0, npairs=4, doc="occasional")

    class XRoom(m.Room):
        def __init__(self, name, seed, help_on=True):
            super().__init__(name, seed, help_on)
            cfg = self.cfg
            self.xpairs = [list(self.colluders)]
            if "npairs" not in cfg:
                return
            self.groups = [(g, cfg["fseek"]) if g in self.friend_pairs else (g, s) for g, s in self.groups]
            taken = {x for g, _ in self.groups for x in g}
            free = [p for p in self.ids if p not in taken]
            rng = self.rng
            for k in range(cfg["npairs"] - 1):
                pair = free[2 * k:2 * k + 2]
                for x in pair:
                    pl = m.Player(x, "thumb", m.make_params(rng, "thumb"), m.make_noise(rng, "thumb"),
                                  m.make_pace(rng, "thumb"))
                    pl.role = "colluder"
                    self.players[x] = pl
                    self.presence[x] = 0.9
                self.groups.append((pair, cfg["seek"]))
                self.xpairs.append(pair)
            self.colluders = [x for p in self.xpairs for x in p]
            self.aw = random.Random(f"aware:{name}:{seed}")

        def helpers_at(self, seats, session):
            if "npairs" not in self.cfg:
                return super().helpers_at(seats, session)
            out = {}
            if not self.help_on:
                return out
            at = {pid: i for i, pid in enumerate(seats)}
            for a, b in self.xpairs:
                if a in at and b in at:
                    if self.style == "occ" and self.aw.random() >= OCC_RATE:
                        continue
                    out[at[a]], out[at[b]] = at[b], at[a]
            return out

        def help_weights(self, game, seat, partner):
            if self.style == "aware":
                return dict(m.HELP_FULL) if self.aw.random() < AWARE else None
            if self.style == "occ":
                return dict(m.HELP_FULL)
            return super().help_weights(game, seat, partner)

    return m, XRoom


def s4(room, seed, log, hands):
    m, XRoom = _s4()
    r = XRoom(room, seed)
    if "npairs" in r.cfg:  # the room's own pair bookkeeping would be every pair of colluders: not needed
        r.colluders_all = r.colluders
    tmp = log + ".tmp"
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        r.run(hands, sink=lambda rec: f.write(json.dumps(rec, separators=(",", ":")) + "\n"))
    os.replace(tmp, log)
    cp = [sorted(p) for p in r.xpairs] if "npairs" in r.cfg else [
        p for p in pairs_of(r.colluders)] if r.style != "ghost" else []
    return {"colluding_pairs": cp, "friend_pairs": [sorted(p) for p in r.friend_pairs],
            "cheaters": [r.colluders[0]] if r.style == "ghost" else []}


# ------------------------------------------------------------------ s5 (boltzmann_families)
@functools.cache  # patch the simulator once a process: a second patch would wrap the first
def _s5():
    from benchmarks.simulators import boltzmann_families as m
    m.ROOMS["x-sparse"] = dict(n=60, style="aware", groups=[[2 * i + 1, 2 * i + 2] for i in range(6)],
                               friends=[[13 + 2 * j, 14 + 2 * j] for j in range(4)], friend_seek=0.35, seek=0.5,
                               session=(2, 6), what="sparse")
    m.ROOMS["x-occ"] = dict(n=40, style="occ", groups=[[2 * i + 1, 2 * i + 2] for i in range(4)],
                            friends=[[9, 10], [11, 12]], seek=0.95, what="occasional")
    init = m.Room.__init__

    def __init__(self, name, seed, help_on=True):
        init(self, name, seed, help_on)
        self.seek = self.cfg.get("seek", 0.85)

    m.Room.__init__ = __init__
    hf = m.Room.help_for

    def help_for(self, hs, g, seat, rng):
        st = self.cfg.get("style")
        if self.help_on and hs["partners"].get(seat):
            if st == "aware" and rng.random() >= AWARE:
                return None
            if st == "occ" and m.rng_for(self.seed, self.name, "occ", hs["hno"],
                                         hs["pair_index"].get(seat, 0)).random() >= OCC_RATE:
                return None
        return hf(self, hs, g, seat, rng)

    m.Room.help_for = help_for
    return m


def s5(room, seed, log, hands):
    m = _s5()
    tr = m.write_room(room, hands, seed, log)
    os.replace(log[:-9] + ".truth.json", log[:-9] + ".raw-truth.json")
    return {"colluding_pairs": [sorted(c["players"]) for c in tr["colluding_pairs"]],
            "friend_pairs": [sorted(f["players"]) for f in tr["friend_pairs"]], "cheaters": []}


SIMS = {"ours": ours, "s1": s1, "s2": s2, "s3": s3, "s4": s4, "s5": s5}
HANDS = {"x-sparse": 800, "x-occ": 5000}
#: The evaluation's rooms: the two regimes on every simulator (3 and 2 seeds), each simulator's own collusion
#: styles and honest rooms (one seed).
ROOMS = ([(s, "x-sparse", k) for k in (1, 2, 3) for s in SIMS] + [(s, "x-occ", k) for k in (1, 2) for s in SIMS] + [
    (s, r, 1) for s, rs in {
        "ours": ["honest", "honest-big", "share", "feed", "block", "harm", "partial", "mixed"],
        "s1": ["honest_friends", "honest_habits", "honest_chatty", "honest_club", "honest_mentor", "share", "late_feed",
               "block", "signal", "trio", "part20", "weak_share", "cover_only"],
        "s2": ["honest_search_twins", "honest_mirror", "honest_clones", "blockers", "honest_highcover", "coll_behind",
               "coll_signal", "coll_sacrifice", "coll_oneway", "coll_late", "coll_twopairs"],
        "s3": ["honest-mix", "honest-friends", "honest-noisy", "soft", "highmult", "rotating", "occasional", "feeder",
               "coverinfo", "noisy-pair"],
        "s4": ["h-friends", "h-hetero", "h-noisy", "c-ring3", "c-weak", "c-endgame", "c-tongguard", "c-signal7",
               "c-partial", "c-protect", "c-oneway", "c-kamikaze"],
        "s5": ["h-buddies", "h-wild", "c-losing", "c-squeeze", "c-camo", "c-rotate", "c-trio2", "c-fakeclock",
               "c-low20"]}.items() for r in rs])


def make(sim: str, room: str, seed: int, outdir: str, hands: int) -> tuple[str, str]:
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, f"{sim}-{room}-{seed}")
    log, truth = base + ".jsonl.gz", base + ".truth.json"
    if os.path.exists(log) and os.path.exists(truth):
        return log, truth
    t = SIMS[sim](room, seed, log, hands)
    t.update(sim=sim, room=room, seed=seed, hands=hands)
    with open(truth + ".tmp", "w") as f:
        json.dump(t, f, indent=1)
    os.replace(truth + ".tmp", truth)
    return log, truth


def label(pairs: pd.DataFrame, truth: dict) -> pd.DataFrame:
    """colluding, friend, honest (neither player a colluder or a lone cheater) per pair."""
    cp = {tuple(sorted(p)) for p in truth["colluding_pairs"]}
    fp = {tuple(sorted(p)) for p in truth["friend_pairs"]}
    bad = {x for p in cp for x in p} | set(truth.get("cheaters", []))
    key = list(zip(pairs["a"], pairs["b"]))
    pairs["colluding"] = [k in cp for k in key]
    pairs["friend"] = [k in fp for k in key]
    pairs["honest"] = [(a not in bad and b not in bad) for a, b in key]
    return pairs


def table(sim: str, room: str, seed: int, outdir: str, jobs: int = 1) -> str:
    """The room's labelled pair table (made, with the room and its decision store, when not there yet)."""
    from analyzer.audit.calibrate import calibrate
    from analyzer.audit.stream import pair_signals

    name = f"{sim}-{room}-{seed}"
    out = os.path.join(outdir, name + ".pairs.parquet")
    if os.path.exists(out):
        return out
    t0 = time.time()
    log, tpath = make(sim, room, seed, outdir, HANDS.get(room, 1000))
    store = os.path.join(outdir, name + ".store")
    if not os.path.exists(store):
        subprocess.run([*ANALYZER, "decisions", log, "-o", store, "--jobs", str(jobs)], check=True,
                       capture_output=True)
    pairs = calibrate(pair_signals(pd.read_parquet(store)))
    with open(tpath) as f:
        pairs = label(pairs, json.load(f))
    pairs["sim"], pairs["room"], pairs["seed"] = sim, room, seed
    pairs.to_parquet(out + ".tmp.parquet")
    os.replace(out + ".tmp.parquet", out)
    print(f"{name}: {time.time() - t0:.0f}s, {len(pairs)} pairs, {int(pairs['colluding'].sum())} colluding", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--list", help='a file of lines "SIM ROOM SEED" (default: the evaluation\'s rooms)')
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args(argv)
    rooms = ROOMS
    if a.list:
        with open(a.list) as f:
            rooms = [(s, r, int(k)) for s, r, k in (line.split() for line in f if line.strip())]
    for sim, room, seed in rooms:
        table(sim, room, seed, a.outdir, a.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
