#!/usr/bin/env python3
"""Rooms of rule-of-thumb bots with epsilon or rank-based noise (thumb, looker, novice, tilter, learner families).

An independent simulator for standard 憋七 with its own rules engine, written only from the seed rule texts, the
log format, the schemas, the README and the samples. It shares no code with the analyzer: the analyzer's
validator is used only to check its logs. Its choice noise is never a softmax.

    python -m benchmarks.simulators.thumb_epsilon --list
    python -m benchmarks.simulators.thumb_epsilon --room c-ring3 --hands 3000 --seed 4 --out /tmp/r.jsonl.gz
    python -m benchmarks.simulators.thumb_epsilon --room c-ring3 --hands 1500 --seed 4 --ab

The log FILE.jsonl.gz gets its truth beside it as FILE.truth.json. ``--ab`` plays the room twice on
the same seating, deals and random draws, once with the colluders' help switched off, and prints
what the help gains each true pair per hand together (mean +- s.e.).

Every random choice comes from a generator seeded from --seed: the room (players, seating,
session lengths, clocks), each hand's deal, each seat's choices within a hand and each seat's think
times have separate streams, so the first N hands of a longer run are the N-hand run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import math
import os
import random
import sys

RANKS = "A23456789TJQK"
SUITS = "SHDC"
SEVEN_S = 6  # suit 0 (spades), rank 7 -> index 6
TONG_FACTORS = (1, 2, 4, 8, 1)
DUTOU_FACTOR = 8


def code(c: int) -> str:
    return RANKS[c % 13] + SUITS[c // 13]


def pts(c: int) -> int:
    return c % 13 + 1


# --------------------------------------------------------------------------- rules engine


class Game:
    """One hand: hands, the table's runs per suit, covers, whose turn."""

    __slots__ = ("hands", "lo", "hi", "covered", "turn", "first", "n", "last", "seven_by")

    def __init__(self, deal):
        self.hands = [set(h) for h in deal]
        self.lo = [0, 0, 0, 0]
        self.hi = [0, 0, 0, 0]
        self.covered = [[], [], [], []]
        self.first = next(i for i in range(4) if SEVEN_S in self.hands[i])
        self.turn = self.first
        self.n = 0
        self.last = [-1, -1, -1, -1]
        self.seven_by = {}  # suit -> (seat, action index) of the 7 that opened it

    def copy_with(self, hands):
        g = Game.__new__(Game)
        g.hands = hands
        g.lo = self.lo[:]
        g.hi = self.hi[:]
        g.covered = [c[:] for c in self.covered]
        g.first, g.turn, g.n = self.first, self.turn, self.n
        g.last = self.last[:]
        g.seven_by = self.seven_by
        return g

    def live(self, seat):
        if self.n == 0:
            return [SEVEN_S]
        lo, hi = self.lo, self.hi
        out = []
        for c in self.hands[seat]:
            s = c // 13
            r = c % 13 + 1
            low = lo[s]
            if low == 0:
                if r == 7:
                    out.append(c)
            elif r == low - 1 or r == hi[s] + 1:
                out.append(c)
        out.sort()
        return out

    def on_table(self, c):
        s = c // 13
        r = c % 13 + 1
        return self.lo[s] != 0 and self.lo[s] <= r <= self.hi[s]

    def apply(self, seat, kind, c):
        self.hands[seat].remove(c)
        if kind == "play":
            s = c // 13
            r = c % 13 + 1
            if self.lo[s] == 0:
                self.lo[s] = self.hi[s] = 7
                if self.seven_by is not None:
                    self.seven_by[s] = (seat, self.n)
            elif r < self.lo[s]:
                self.lo[s] = r
            else:
                self.hi[s] = r
            self.last[seat] = c
        else:
            self.covered[seat].append(c)
        self.n += 1
        self.turn = (self.turn + 1) % 4

    def over(self):
        return self.n >= 52

    def result(self):
        raw = [sum(pts(c) for c in cov) for cov in self.covered]
        tong = [i for i in range(4) if not self.covered[i]]
        dutou = [i for i in tong if self.last[i] % 13 == 6]
        factor = TONG_FACTORS[len(tong)] * DUTOU_FACTOR ** len(dutou)
        mult = [1 if i in tong else factor for i in range(4)]
        eff = [raw[i] * mult[i] for i in range(4)]
        tot = sum(eff)
        scores = [tot - 4 * e for e in eff]
        ranking = sorted(range(4), key=lambda i: (eff[i], (i - self.first) % 4))
        return {"scores": scores, "points": raw, "multipliers": mult, "tong": tong,
                "dutou": dutou, "ranking": ranking}


def fast_scores(g):
    raw = [sum(pts(c) for c in cov) for cov in g.covered]
    tong = [i for i in range(4) if not g.covered[i]]
    nd = sum(1 for i in tong if g.last[i] % 13 == 6)
    factor = TONG_FACTORS[len(tong)] * DUTOU_FACTOR ** nd
    eff = [0 if not g.covered[i] else raw[i] * factor for i in range(4)]
    tot = sum(eff)
    return [tot - 4 * e for e in eff]


def rollout(g):
    """Play a hand out with a cheap fixed policy (all seats): used by the lookahead bot."""
    while g.n < 52:
        seat = g.turn
        hand = g.hands[seat]
        opts = g.live(seat)
        if opts:
            best, bv = opts[0], -99
            for c in opts:
                s = c // 13
                r = c % 13 + 1
                if r == 7:
                    v = (s * 13 + 5 in hand) + (s * 13 + 7 in hand) - 0.5
                else:
                    nxt = r + (1 if r > 7 else -1)
                    v = 1.5 if (1 <= nxt <= 13 and s * 13 + nxt - 1 in hand) else abs(r - 7) / 6.0
                if v > bv:
                    best, bv = c, v
            g.apply(seat, "play", best)
        else:
            best = min(hand, key=lambda c: (pts(c), c))
            g.apply(seat, "cover", best)
    return fast_scores(g)


# --------------------------------------------------------------------------- bots


def beyond(s, r, d):
    x = r + d
    while 1 <= x <= 13:
        yield s * 13 + x - 1
        x += d


def dirs_of(r):
    if r == 7:
        return (-1, 1)
    return (1,) if r > 7 else (-1,)


class Player:
    def __init__(self, pid, family, params, noise, pace):
        self.pid = pid
        self.family = family
        self.p = params
        self.noise = noise  # ("eps", e) or ("rank", q)
        self.pace = pace  # think-time parameters
        self.role = "honest"
        self.hands_played = 0
        self.tilt = 0.0
        self.look_k = 0
        self.look_hand = 0

    def eff_noise(self):
        kind, v = self.noise
        if self.family == "tilter":
            v = min(0.85, v + 0.18 * self.tilt)
        elif self.family == "learner":
            v0, vmin, tau = self.p["learn"]
            v = vmin + (v0 - vmin) * math.exp(-self.hands_played / tau)
        return kind, v

    def weights(self):
        if self.family == "learner":
            v0, vmin, tau = self.p["learn"]
            f = math.exp(-self.hands_played / tau)
            w = dict(self.p)
            for k in ("give", "block", "selfkill", "own"):
                w[k] = self.p[k] * (1 - 0.7 * f)
            return w
        return self.p


def play_scores(w, game, seat, options, mine, known, helpw):
    """Heuristic value of each live card (higher is better).

    known: cards this seat knows are its partner's (or signalled ones, weight in known[c]).
    helpw: help weights or None (honest).
    """
    mycov = set(game.covered[seat])
    out = []
    own, nxt, give, decay, dump = w["own"], w["next"], w["give"], w["decay"], w["dump"]
    need = 0.0
    if helpw and helpw.get("partner_stuck"):
        need = helpw["partner_stuck"]
    for c in options:
        s = c // 13
        r = c % 13 + 1
        sc = dump * pts(c) / 13.0
        for d in dirs_of(r):
            wt = 1.0
            first = True
            for y in beyond(s, r, d):
                if y in mycov:
                    break
                if y in mine:
                    sc += own * pts(y) * wt / 13.0
                    if first:
                        sc += nxt
                elif helpw and y in known:
                    sc += helpw["feed"] * known[y] * wt * (1.0 + (need if first else 0.0))
                else:
                    sc -= give * wt * (helpw["hold"] if helpw else 1.0)
                first = False
                wt *= decay
        out.append(sc)
    return out


def cover_scores(w, game, seat, options, mine, known, helpw, ncov_me):
    """Negative cost of covering each card (higher is better)."""
    mycov = set(game.covered[seat])
    suitlen = [0, 0, 0, 0]
    for c in mine:
        suitlen[c // 13] += 1
    block = w["block"] * (1.0 + (w["fierce"] if ncov_me else 0.0))
    selfkill = w["selfkill"]
    if helpw:
        block *= helpw["block"]
        selfkill *= helpw.get("selfkill", 1.0)
    out = []
    for c in options:
        s = c // 13
        r = c % 13 + 1
        cost = float(pts(c)) + w["suitlen"] * suitlen[s]
        for d in dirs_of(r):
            wt = 1.0
            for y in beyond(s, r, d):
                if y in mycov or game.on_table(y):
                    break
                if y in mine:
                    cost += selfkill * pts(y)
                elif helpw and y in known:
                    cost += helpw["protect"] * known[y] * pts(y)
                else:
                    cost -= block * wt * pts(y) / 7.0
                wt *= w["decay"]
        out.append(-cost)
    return out


def select(options, scores, noise, u1, u2):
    order = sorted(range(len(options)), key=lambda i: (-scores[i], options[i]))
    kind, v = noise
    if kind == "eps":
        if u1 < v:
            return options[min(len(options) - 1, int(u2 * len(options)))]
        return options[order[0]]
    # rank-based noise: the k-th best with weight q**k
    q = v
    if q <= 0:
        return options[order[0]]
    weights = [q ** k for k in range(len(order))]
    x = u2 * sum(weights)
    for k, i in enumerate(order):
        x -= weights[k]
        if x <= 0:
            return options[i]
    return options[order[-1]]


def look_values(game, seat, kind, options, rng, k, team=None):
    """Mean final score of each option over k sampled layouts of the unseen cards."""
    mine = game.hands[seat]
    hidden_owners = [j for j in range(4) if j != seat and (team is None or j != team)]
    unseen = [c for c in range(52) if c not in mine and not game.on_table(c)
              and c not in game.covered[seat]
              and (team is None or (c not in game.hands[team] and c not in game.covered[team]))]
    layouts = []
    for _ in range(k):
        pool = unseen[:]
        rng.shuffle(pool)
        hands = [None] * 4
        at = 0
        for j in range(4):
            if j == seat or j == team:
                hands[j] = set(game.hands[j])
        for j in hidden_owners:
            m = len(game.hands[j])
            hands[j] = set(pool[at:at + m])
            at += m
        layouts.append(hands)
    vals = []
    for c in options:
        tot = 0.0
        for hands in layouts:
            g = game.copy_with([set(h) for h in hands])
            g.seven_by = None
            g.apply(seat, kind, c)
            sc = rollout(g)
            tot += sc[seat] + (sc[team] if team is not None else 0)
        vals.append(tot / k / 10.0)
    return vals


def true_values(game, seat, kind, options):
    """The ghost's value of each option: one rollout of the cheap policy on the true deal."""
    vals = []
    for c in options:
        g = game.copy_with([set(h) for h in game.hands])
        g.seven_by = None
        g.apply(seat, kind, c)
        vals.append(rollout(g)[seat] / 10.0)
    return vals


# --------------------------------------------------------------------------- rooms

STYLE_DOC = {
    "ring3": "three colluders take turns: each session one of them is the beneficiary and the others at "
             "the table feed / protect / block for it",
    "weak": "a pair of weak (novice-noise) players who share hands and help each other",
    "endgame": "a pair that shares hands but helps only when the helper holds 4 cards or fewer",
    "tongguard": "a pair that helps only while the partner has covered nothing (a 通 in reach), "
                 "then covers to block the opponents, harder when an opponent is also clean",
    "signal7": "no hand sharing: the first 7 a colluder plays by choice signals its best suit; "
               "the partner feeds and protects that suit",
    "partial": "full mutual help, but the pair sits together only in about a quarter of its hands",
    "protect": "plays straight; only when it must cover does it use the partner's hand: no cover that kills "
               "the cards the partner holds beyond it (the partner's chain)",
    "oneway": "A helps B (feed, protect, block); B plays straight",
    "ghost": "a lone cheater who sees every hand (a spectator account): from 7 cards left, each option is "
             "valued by one deterministic rollout of a cheap policy on the true deal; before that, honest play",
    "kamikaze": "A is a sacrificial account for B: starves and blocks the opponents at a cost to itself "
                "(kills chains where its own cards lie too), B plays straight",
}

ROOMS = {
    "h-friends": dict(kind="honest", players=28, friends=[("thumb", 2), ("looker", 2)],
                      doc="honest room; two pairs of friends always sit together, each pair one family "
                          "with near-identical parameters"),
    "h-hetero": dict(kind="honest", players=32,
                     mix={"novice": 0.3, "thumb": 0.25, "looker": 0.25, "learner": 0.1, "tilter": 0.1},
                     hetero=True, doc="honest room with strongly heterogeneous skill"),
    "h-noisy": dict(kind="honest", players=24, timing="heavy",
                    doc="honest room with heavy timing noise: phone spikes, lag bursts, 1 s clocks, "
                        "per-session pace swings"),
    "c-ring3": dict(kind="collusion", players=30, style="ring3", size=3, seek=0.9, slow=False),
    "c-weak": dict(kind="collusion", players=28, style="weak", size=2, seek=0.85, family="novice", slow=True),
    "c-endgame": dict(kind="collusion", players=28, style="endgame", size=2, seek=0.85, slow=False),
    "c-tongguard": dict(kind="collusion", players=28, style="tongguard", size=2, seek=0.85, slow=True),
    "c-signal7": dict(kind="collusion", players=28, style="signal7", size=2, seek=0.85, slow=False),
    "c-partial": dict(kind="collusion", players=40, style="partial", size=2, seek=0.3, slow=False),
    "c-protect": dict(kind="collusion", players=28, style="protect", size=2, seek=0.85, slow=False),
    "c-oneway": dict(kind="collusion", players=28, style="oneway", size=2, seek=0.85, slow=True),
    "c-ghost": dict(kind="lone", players=28, style="ghost", size=1, seek=0.0, slow=False),
    "c-kamikaze": dict(kind="collusion", players=26, style="kamikaze", size=2, seek=0.85, slow=False),
}
# Left out of the evaluations: its paired A/B gain (--ab) is nil, so the help it models changes nothing.
DROPPED = {"c-signal7"}

DEFAULT_MIX = {"thumb": 0.4, "looker": 0.2, "novice": 0.15, "tilter": 0.15, "learner": 0.1}

HELP_FULL = {"feed": 1.6, "hold": 1.6, "protect": 1.4, "block": 1.8}


def make_params(rng, family, hetero=False, base=None):
    if base is not None:  # a friend: the same style, tiny jitter
        p = {k: (v * (1 + rng.gauss(0, 0.03)) if isinstance(v, float) else v) for k, v in base.items()}
        return p
    spread = 1.8 if hetero else 1.0
    p = {
        "own": rng.uniform(0.8, 2.0),
        "next": rng.uniform(0.5, 2.0),
        "give": rng.uniform(0.6, 1.6),
        "decay": rng.uniform(0.45, 0.7),
        "dump": rng.uniform(0.0, 1.2),
        "selfkill": rng.uniform(0.6, 1.0),
        "block": rng.uniform(0.3, 0.9),
        "suitlen": rng.uniform(0.0, 0.8),
        "fierce": rng.uniform(0.0, 1.0),
    }
    if family == "novice":
        for k in ("give", "block", "selfkill", "own"):
            p[k] *= rng.uniform(0.1, 0.5) if hetero else rng.uniform(0.3, 0.7)
    if hetero and family in ("looker", "thumb"):
        for k in ("give", "block"):
            p[k] *= rng.uniform(1.0, spread)
    if family == "learner":
        p["learn"] = (rng.uniform(0.3, 0.5), rng.uniform(0.02, 0.08), rng.uniform(120, 400))
    return p


def make_noise(rng, family, hetero=False):
    if family == "novice":
        return ("eps", rng.uniform(0.35, 0.6) if hetero else rng.uniform(0.25, 0.45))
    if family == "looker":
        return ("rank", rng.uniform(0.02, 0.12))
    if family == "thumb":
        return ("eps", rng.uniform(0.02, 0.1) if hetero else rng.uniform(0.04, 0.14))
    if family == "tilter":
        return ("eps", rng.uniform(0.05, 0.12))
    return ("eps", 0.3)  # learner: overridden by its schedule


def make_pace(rng, family, heavy=False):
    median = {"novice": 1400, "thumb": 1800, "looker": 2700, "tilter": 1700, "learner": 2100}[family]
    return {
        "base": median * math.exp(rng.gauss(0, 0.3)),
        "shape": rng.uniform(1.6, 4.0),
        "auto": rng.uniform(0.2, 0.9),
        "phone": rng.uniform(0.01, 0.04) if heavy else rng.uniform(0.001, 0.012),
        "hesitate": rng.uniform(0.03, 0.12),
        "session_sd": 0.45 if heavy else 0.18,
    }


class Room:
    def __init__(self, name, seed, help_on=True):
        if name not in ROOMS:
            raise SystemExit(f"unknown room {name!r}; --list shows them")
        self.name = name
        self.cfg = ROOMS[name]
        self.seed = seed
        self.help_on = help_on
        rng = random.Random(f"room:{name}:{seed}")
        self.rng = rng
        cfg = self.cfg
        n = cfg["players"]
        ids = [f"u{x}" for x in rng.sample(range(100, 1000), n)]
        heavy = cfg.get("timing") == "heavy"
        hetero = cfg.get("hetero", False)
        mix = cfg.get("mix", DEFAULT_MIX)
        fams = list(mix)
        cum = []
        acc = 0.0
        for f in fams:
            acc += mix[f]
            cum.append(acc)
        self.players = {}
        for pid in ids:
            x = rng.random() * acc
            fam = next(f for f, c in zip(fams, cum) if x <= c)
            pl = Player(pid, fam, make_params(rng, fam, hetero), make_noise(rng, fam, hetero),
                        make_pace(rng, fam, heavy))
            if fam == "looker":
                pl.look_k = rng.choice((2, 3, 4))
                pl.look_hand = rng.choice((4, 5, 6))
            self.players[pid] = pl
        self.presence = {pid: rng.uniform(0.6, 0.95) for pid in ids}
        self.groups = []  # (members, seek)
        self.friend_pairs = []
        self.colluders = []
        self.style = None
        for fam, _k in cfg.get("friends", []):
            pair = [pid for pid in ids if pid not in {m for g, _ in self.groups for m in g}][-2:]
            base = make_params(rng, fam)
            noise = make_noise(rng, fam)
            pace = make_pace(rng, fam)
            for m in pair:
                pl = Player(m, fam, make_params(rng, fam, base=base), noise,
                            {**pace, "base": pace["base"] * math.exp(rng.gauss(0, 0.05))})
                if fam == "looker":
                    pl.look_k, pl.look_hand = 3, 5
                self.players[m] = pl
                self.presence[m] = 0.85
            self.groups.append((pair, 1.0))
            self.friend_pairs.append(pair)
        if cfg["kind"] in ("collusion", "lone"):
            self.style = cfg["style"]
            col = ids[3:3 + cfg["size"]]
            self.colluders = col
            fam = cfg.get("family", "thumb")
            for m in col:
                pl = Player(m, fam, make_params(rng, fam), make_noise(rng, fam), make_pace(rng, fam))
                pl.role = "colluder"
                self.players[m] = pl
                self.presence[m] = 0.9
            self.groups.append((col, cfg["seek"]))
            if self.style == "ghost":
                self.players[col[0]].role = "lone"
            if self.style in ("oneway", "kamikaze"):
                self.players[col[0]].role = "helper"
                self.players[col[1]].role = "beneficiary"
        self.ids = ids
        self.pair_stats = {}
        self.changed = {}

    # seating ------------------------------------------------------------------------
    def seat_session(self, srng, session):
        draws = {pid: srng.random() for pid in self.ids}
        for members, seek in self.groups:
            if seek >= 1.0:  # friends come together
                for m in members[1:]:
                    draws[m] = draws[members[0]]
        present = [pid for pid in self.ids if draws[pid] < self.presence[pid]]
        pres = set(present)
        blocks = []
        used = set()
        for members, seek in self.groups:
            here = [m for m in members if m in pres]
            x = srng.random()
            if self.style == "partial" and seek < 1.0:  # an even schedule: about `seek` of the sessions
                x = (session * 0.6180339887 + 0.3) % 1.0
            if len(here) >= 2 and x < seek:
                if len(here) == 3 and srng.random() < 0.45:
                    here = srng.sample(here, 2)
                blocks.append(here)
                used.update(here)
        singles = [p for p in present if p not in used]
        srng.shuffle(singles)
        ntab = len(present) // 4
        tables = [[] for _ in range(ntab)]
        srng.shuffle(blocks)
        for b in blocks:
            for t in tables:
                if not t:
                    t.extend(b)
                    break
            else:
                singles.extend(b)
        for t in tables:
            while len(t) < 4 and singles:
                t.append(singles.pop())
        tables = [t for t in tables if len(t) == 4]
        for t in tables:
            srng.shuffle(t)
        return tables

    # help rules ----------------------------------------------------------------------
    def helpers_at(self, seats, session):
        """seat -> (partner seat, style) for each colluder who helps at this table."""
        out = {}
        if not self.help_on:
            return out
        col = self.colluders
        at = {pid: i for i, pid in enumerate(seats)}
        here = [m for m in col if m in at]
        st = self.style
        if len(here) < 2 and st != "ghost":
            return out
        if st == "ring3":
            ben = col[session % 3]
            if ben in at:
                for m in here:
                    if m != ben:
                        out[at[m]] = at[ben]
        elif st == "ghost":
            if col[0] in at:
                out[at[col[0]]] = None
            return out
        elif st in ("oneway", "kamikaze"):
            out[at[col[0]]] = at[col[1]]
        else:
            a, b = here[0], here[1]
            out[at[a]] = at[b]
            out[at[b]] = at[a]
        return out

    def help_weights(self, game, seat, partner):
        st = self.style
        hand_size = len(game.hands[seat])
        if st == "endgame" and hand_size > 4:
            return None
        if st == "tongguard":
            if game.covered[partner]:
                return None
            opp_clean = any(not game.covered[j] for j in range(4) if j not in (seat, partner))
            return {"feed": 1.8, "hold": 1.8, "protect": 1.6, "block": 2.6 if opp_clean else 1.8}
        if st == "protect":
            return {"feed": 0.0, "hold": 1.0, "protect": 2.5, "block": 1.0, "cover_only": True}
        if st == "ghost":  # sees every hand: knows which chains are dead and who holds what
            return {"true_rollout": 7}
        if st == "kamikaze":
            return {"feed": 1.2, "hold": 2.5, "protect": 1.5, "block": 3.0, "selfkill": 0.4}
        if st == "weak":
            return {"feed": 1.4, "hold": 1.4, "protect": 1.2, "block": 1.5}
        if st == "signal7":
            return {"feed": 1.0, "hold": 1.0, "protect": 2.0, "block": 1.3, "public_stuck": True}
        return dict(HELP_FULL)

    def known_cards(self, game, seat, partner):
        if partner is None:
            return {}
        if self.style == "signal7":
            sig = None
            for s, (who, idx) in sorted(game.seven_by.items(), key=lambda kv: kv[1][1]):
                if who == partner and idx > 0:
                    sig = s
                    break
            if sig is None:
                return None
            mine = game.hands[seat]
            return {c: 0.9 for c in range(sig * 13, sig * 13 + 13)
                    if abs(c % 13 - 6) >= 3 and c not in mine and not game.on_table(c)
                    and c not in game.covered[seat]}
        return {c: 1.0 for c in game.hands[partner]}

    # one hand -------------------------------------------------------------------------
    def play_hand(self, hand_no, seats, session, tclock):
        drng = random.Random(f"deal:{self.name}:{self.seed}:{hand_no}")
        deck = list(range(52))
        drng.shuffle(deck)
        deal = [sorted(deck[i * 13:(i + 1) * 13]) for i in range(4)]
        game = Game(deal)
        crngs = [random.Random(f"choice:{self.name}:{self.seed}:{hand_no}:{i}") for i in range(4)]
        trngs = [random.Random(f"time:{self.name}:{self.seed}:{hand_no}:{i}") for i in range(4)]
        pls = [self.players[p] for p in seats]
        helpers = self.helpers_at(seats, session)
        signal_senders = set()
        if self.style == "signal7" and self.help_on:
            at = {pid: i for i, pid in enumerate(seats)}
            if sum(1 for m in self.colluders if m in at) == 2:
                signal_senders = {at[m] for m in self.colluders}
        changed = {}
        actions = []
        ms = 0.0
        lag_hand = trngs[0].random() < tclock["lag_rate"]
        while not game.over():
            seat = game.turn
            pl = pls[seat]
            crng = crngs[seat]
            u1, u2 = crng.random(), crng.random()
            opts = game.live(seat)
            kind = "play" if opts else "cover"
            if not opts:
                opts = sorted(game.hands[seat])
            mine = game.hands[seat]
            helped = False
            looked = False
            if len(opts) == 1:
                card = opts[0]
            else:
                w = pl.weights()
                noise = pl.eff_noise()
                if pl.family == "looker" and len(mine) <= pl.look_hand:
                    vals = look_values(game, seat, kind, opts, crng, pl.look_k)
                    looked = True
                elif kind == "play":
                    vals = play_scores(w, game, seat, opts, mine, None, None)
                else:
                    vals = cover_scores(w, game, seat, opts, mine, None, None, len(game.covered[seat]))
                card = select(opts, vals, noise, u1, u2)
                if seat in signal_senders and kind == "play" and game.n > 0 and card % 13 == 6:
                    if not any(who == seat and idx > 0 for who, idx in game.seven_by.values()):
                        sevens = [c for c in opts if c % 13 == 6]
                        best = max(sevens, key=lambda c: (sum(pts(y) for y in mine
                                                              if y // 13 == c // 13 and abs(y % 13 - 6) >= 3), -c))
                        if best != card:
                            card = best
                            helped = True
                if seat in helpers:
                    partner = helpers[seat]
                    hw = self.help_weights(game, seat, partner)
                    known = self.known_cards(game, seat, partner) if hw else None
                    if hw and hw.get("true_rollout"):
                        if len(mine) > hw["true_rollout"]:
                            hw = None
                        else:
                            hv = true_values(game, seat, kind, opts)
                            hcard = select(opts, hv, noise, u1, u2)
                            if hcard != card:
                                card = hcard
                                helped = True
                            hw = None
                    if hw and known is not None and not (kind == "play" and hw.get("cover_only")):
                        if kind == "play":
                            if partner is None:
                                stuck = False
                            elif hw.get("public_stuck"):  # only what the table shows: the partner's last move
                                back = (seat - partner) % 4
                                stuck = len(actions) >= back and actions[-back][1] == "cover"
                            else:
                                stuck = not game.live(partner)
                            hw["partner_stuck"] = 1.5 if stuck else 0.0
                            hv = play_scores(w, game, seat, opts, mine, known, hw)
                        else:
                            hv = cover_scores(w, game, seat, opts, mine, known, hw, len(game.covered[seat]))
                        hcard = select(opts, hv, noise, u1, u2)
                        if hcard != card:
                            card = hcard
                            helped = True
            if helped:
                changed[seat] = changed.get(seat, 0) + 1
            ms += self.think(pl, trngs[seat], len(opts), kind, game, looked, helped, tclock, lag_hand)
            actions.append((seat, kind, card, ms))
            game.apply(seat, kind, card)
        res = game.result()
        skew = tclock["skew"]
        g = tclock["grain"]
        acts = [{"seat": s, "kind": k, "card": code(c), "ms": int(t * skew) // g * g} for s, k, c, t in actions]
        rec = {
            "variant": "bieqi", "format": "bieqi-log", "version": 1,
            "hand_id": f"{self.name}-{self.seed}-{hand_no:06d}",
            "table_id": tclock["table_id"],
            "started_at": tclock["now"].isoformat(timespec="seconds"),
            "players": list(seats),
            "deal": [[code(c) for c in h] for h in deal],
            "actions": acts,
            "result": res,
        }
        duration = ms
        for i, pl in enumerate(pls):
            pl.hands_played += 1
            if pl.family == "tilter":
                pl.tilt *= 0.65
                if res["scores"][i] < -45:
                    pl.tilt = min(3.0, pl.tilt + 1.0)
        return rec, duration, changed, res["scores"]

    def think(self, pl, trng, n_opts, kind, game, looked, helped, tclock, lag_hand):
        pc = pl.pace
        base = pc["base"] * tclock["mood"][pl.pid]
        if pl.family == "tilter" and pl.tilt > 0.5:
            base *= 0.7
        first_turn = game.n < 4
        if n_opts == 1:
            if trng.random() < pc["auto"]:
                t = 250 + trng.gammavariate(2.0, 110.0)
            else:
                t = trng.gammavariate(pc["shape"], base * 0.55 / pc["shape"])
        else:
            mean = base * (1 + 0.3 * math.log(n_opts)) * (1.25 if kind == "cover" else 1.0)
            if first_turn:
                mean *= 1.4
            if trng.random() < pc["hesitate"]:
                mean *= 2.5
            t = trng.gammavariate(pc["shape"], mean / pc["shape"])
            if looked:
                t += 350 * n_opts * trng.uniform(0.5, 1.5)
        if helped and self.cfg.get("slow"):
            t += trng.gammavariate(2.0, 450.0)
        if trng.random() < pc["phone"]:
            t += trng.uniform(4000, 30000)
        if lag_hand and trng.random() < 0.2:
            t += trng.uniform(1500, 8000)
        return max(120.0, t)

    # the room ------------------------------------------------------------------------
    def run(self, hands, sink=None):
        srng = random.Random(f"sessions:{self.name}:{self.seed}")
        heavy = self.cfg.get("timing") == "heavy"
        now = dt.datetime(2025, 3, 3, 19, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))
        hand_no = 0
        session = 0
        together = {}
        helped_hands = {}
        changed_total = {}
        pair_scores = []  # (hand_no, pair, pair score sum)
        col = self.colluders
        true_pairs = [tuple(sorted((a, b))) for i, a in enumerate(col) for b in col[i + 1:]]
        if self.style == "ghost":
            true_pairs = [(col[0],)]
        while hand_no < hands:
            tables = self.seat_session(srng, session)
            mood = {pid: math.exp(srng.gauss(0, self.players[pid].pace["session_sd"])) for pid in self.ids}
            start = now
            for ti, seats in enumerate(tables):
                length = srng.randint(*self.cfg.get('slen', (6, 30)))
                grains = (1, 10, 100, 1000)
                gw = (0.15, 0.15, 0.3, 0.4) if heavy else (0.45, 0.3, 0.17, 0.08)
                tclock = {
                    "table_id": f"{self.name}-s{session:04d}-t{ti:02d}",
                    "skew": 1.0 + srng.gauss(0, 0.02),
                    "grain": srng.choices(grains, gw)[0],
                    "lag_rate": 0.12 if heavy else 0.02,
                    "mood": mood,
                    "now": start + dt.timedelta(seconds=srng.uniform(0, 900)),
                }
                for _ in range(length):
                    if hand_no >= hands:
                        break
                    rec, dur, changed, scores = self.play_hand(hand_no, seats, session, tclock)
                    if sink is not None:
                        sink(rec)
                    at = {pid: i for i, pid in enumerate(seats)}
                    for pr in true_pairs:
                        if all(m in at for m in pr):
                            together[pr] = together.get(pr, 0) + 1
                            nchg = sum(changed.get(at[m], 0) for m in pr)
                            if nchg:
                                helped_hands[pr] = helped_hands.get(pr, 0) + 1
                                changed_total[pr] = changed_total.get(pr, 0) + nchg
                            pair_scores.append((hand_no, pr, sum(scores[at[m]] for m in pr)))
                    hand_no += 1
                    tclock["now"] += dt.timedelta(milliseconds=dur + srng.uniform(4000, 20000))
            session += 1
            now = start + dt.timedelta(hours=srng.uniform(3, 30))
        self.together = together
        self.helped_hands = helped_hands
        self.changed_total = changed_total
        self.pair_scores = pair_scores
        self.true_pairs = true_pairs
        self.hands = hand_no
        self.sessions = session

    def truth(self):
        players = {}
        for pid in sorted(self.players):
            pl = self.players[pid]
            players[pid] = {
                "family": pl.family, "role": pl.role, "noise": list(pl.noise),
                "params": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in pl.p.items()},
                "pace_ms": round(pl.pace["base"]), "phone_rate": round(pl.pace["phone"], 4),
                "lookahead": [pl.look_k, pl.look_hand] if pl.family == "looker" else None,
            }
        pairs = []
        lone = []
        for pr in self.true_pairs:
            if len(pr) == 1:
                lone.append({"player": pr[0], "style": self.style, "hands": self.together.get(pr, 0),
                             "hands_with_changed_choice": self.helped_hands.get(pr, 0),
                             "changed_choices": self.changed_total.get(pr, 0)})
                continue
            direction = "mutual"
            if self.style in ("oneway", "kamikaze"):
                direction = f"{self.colluders[0]} helps {self.colluders[1]}"
            elif self.style == "ring3":
                direction = "rotating beneficiary (session % 3)"
            pairs.append({"players": list(pr), "style": self.style, "direction": direction,
                          "hands_together": self.together.get(pr, 0),
                          "hands_with_changed_choice": self.helped_hands.get(pr, 0),
                          "changed_choices": self.changed_total.get(pr, 0),
                          "slow_when_helping": bool(self.cfg.get("slow"))})
        return {
            "simulator": "benchmarks.simulators.thumb_epsilon",
            "room": self.name, "seed": self.seed, "hands": self.hands, "sessions": self.sessions,
            "kind": self.cfg["kind"],
            "description": self.cfg.get("doc") or STYLE_DOC.get(self.style, ""),
            "colluding_pairs": pairs,
            "colluders": list(self.colluders),
            "lone_cheaters": [x["player"] for x in lone],
            "lone_detail": lone,
            "friend_pairs": [sorted(p) for p in self.friend_pairs],
            "players": players,
        }


def run_ab(name, hands, seed):
    on = Room(name, seed, help_on=True)
    on.run(hands)
    off = Room(name, seed, help_on=False)
    off.run(hands)
    a = {(h, pr): v for h, pr, v in on.pair_scores}
    b = {(h, pr): v for h, pr, v in off.pair_scores}
    out = []
    for pr in on.true_pairs:
        diffs = [a[k] - b[k] for k in a if k[1] == pr and k in b]
        n = len(diffs)
        if n < 2:
            out.append({"pair": list(pr), "hands": n})
            continue
        m = sum(diffs) / n
        sd = math.sqrt(sum((x - m) ** 2 for x in diffs) / (n - 1))
        out.append({"pair": list(pr), "hands": n, "gain_per_hand": round(m, 2),
                    "se": round(sd / math.sqrt(n), 2),
                    "hands_changed": on.helped_hands.get(pr, 0)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--room")
    ap.add_argument("--hands", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ab", action="store_true", help="paired runs with help on / off: gain per hand together")
    a = ap.parse_args(argv)
    if a.list:
        for name, cfg in ROOMS.items():
            doc = cfg.get("doc") or STYLE_DOC[cfg["style"]]
            print(f"{name:13s} {cfg['kind']:9s} {cfg['players']:2d} players  {doc}")
        return 0
    if not a.room:
        ap.error("--room is required (or --list)")
    if a.ab:
        res = run_ab(a.room, a.hands, a.seed)
        print(json.dumps({"room": a.room, "hands": a.hands, "seed": a.seed, "pairs": res}))
        return 0
    if not a.out:
        ap.error("--out is required")
    room = Room(a.room, a.seed)
    tmp = a.out + ".tmp"
    opener = gzip.open if a.out.endswith(".gz") else open
    with opener(tmp, "wt", encoding="utf-8") as f:
        room.run(a.hands, sink=lambda rec: f.write(json.dumps(rec, separators=(",", ":")) + "\n"))
    base = a.out[:-9] if a.out.endswith(".jsonl.gz") else a.out.rsplit(".", 1)[0]
    with open(base + ".truth.json", "w", encoding="utf-8") as f:
        json.dump(room.truth(), f, indent=1, sort_keys=True)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
