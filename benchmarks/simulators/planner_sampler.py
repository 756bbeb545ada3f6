#!/usr/bin/env python3
"""Rooms of planner, blocker, beginner, Monte Carlo sampler and drifting bots, each choosing by softmax + blunders.

An independent simulator for standard 憋七 ("bieqi" variant, log format v1), written from the seed rules and the
log format only (not from the analyzer's simulator or the other independent simulators), to test the audit from
outside.

    python -m benchmarks.simulators.planner_sampler --room NAME --hands N --seed S --out LOG.jsonl[.gz]

writes LOG and LOG.truth.json (LOG's name without .jsonl/.gz + .truth.json). `--list` prints the rooms.

Game (the computer game of the seeds): 52 cards, 13 each, the 7S holder starts with 7S, live card =
neighbour of a suit's end on the table or any 7 of an unopened suit, must play a live card if held
else cover any card; cover points A=1..K=13; 通 = covered nothing; factors 2/4/8 for 1/2/3 通 on the
others, x8 per 独头七 (a 通 whose last card was a 7), stacked; score_i = sum_j (pts_j - pts_i).

Bots: planner (chain/blocking heuristic with its own cover policy), blocker (cautious, holds back cards others
need), beginner (random-ish, covers the cheapest card), sampler (Monte Carlo over hidden hands with cheap
rollouts), drifter (planner whose temperature drifts over the room). Everybody chooses through a softmax of its
own values at a per-player temperature plus a blunder rate. The ``four-*`` and ``honest-four`` rooms are a private
table: the same four players every hand.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
from datetime import datetime, timedelta, timezone

import numpy as np

RANKS = "A23456789TJQK"
SUITS = "SHDC"
FULL = (1 << 52) - 1
PTS = [c % 13 + 1 for c in range(52)]
SEVENS = [s * 13 + 6 for s in range(4)]


def code(c: int) -> str:
    return RANKS[c % 13] + SUITS[c // 13]


def bits(m: int):
    while m:
        b = m & -m
        yield b.bit_length() - 1
        m ^= b


# cards beyond a card in its direction, nearest first (for a 7: both sides, interleaved lists)
def _chain(c):
    s, r = divmod(c, 13)
    if r < 6:
        return [[s * 13 + x for x in range(r - 1, -1, -1)]]
    if r > 6:
        return [[s * 13 + x for x in range(r + 1, 13)]]
    return [[s * 13 + x for x in range(5, -1, -1)], [s * 13 + x for x in range(7, 13)]]


CHAINS = [_chain(c) for c in range(52)]
BEYOND = [sum(1 << x for ch in CHAINS[c] for x in ch) for c in range(52)]
# cards between the 7 and a card (exclusive of both), nearest to the 7 first
def _between(c):
    s, r = divmod(c, 13)
    if r < 6:
        return [s * 13 + x for x in range(5, r, -1)]
    if r > 6:
        return [s * 13 + x for x in range(7, r)]
    return []


BETWEEN7 = [_between(c) for c in range(52)]


class State:
    __slots__ = ("hands", "lo", "hi", "live", "pts", "ncov", "covers", "last7", "turn", "n",
                 "table")

    def __init__(self, deal_masks, first):
        self.hands = list(deal_masks)
        self.lo = [0] * 4
        self.hi = [0] * 4
        self.live = sum(1 << c for c in SEVENS)
        self.pts = [0] * 4
        self.ncov = [0] * 4
        self.covers = [0] * 4
        self.last7 = [False] * 4
        self.turn = first
        self.n = 0
        self.table = 0

    def copy(self):
        o = State.__new__(State)
        o.hands = self.hands[:]
        o.lo = self.lo[:]
        o.hi = self.hi[:]
        o.live = self.live
        o.pts = self.pts[:]
        o.ncov = self.ncov[:]
        o.covers = self.covers[:]
        o.last7 = self.last7[:]
        o.turn = self.turn
        o.n = self.n
        o.table = self.table
        return o

    def apply(self, c):
        seat = self.turn
        b = 1 << c
        self.hands[seat] &= ~b
        if self.live & b:
            s, r = divmod(c, 13)
            r += 1
            self.live &= ~b
            if self.lo[s] == 0:
                self.lo[s] = self.hi[s] = 7
                if r != 7:
                    raise ValueError("bad open")
                self.live |= (1 << (s * 13 + 5)) | (1 << (s * 13 + 7))
            elif r < self.lo[s]:
                self.lo[s] = r
                if r > 1:
                    self.live |= 1 << (s * 13 + r - 2)
            else:
                self.hi[s] = r
                if r < 13:
                    self.live |= 1 << (s * 13 + r)
            self.table |= b
            self.last7[seat] = (r == 7)
            kind = "play"
        else:
            self.pts[seat] += PTS[c]
            self.ncov[seat] += 1
            self.covers[seat] |= b
            kind = "cover"
        self.turn = (seat + 1) & 3
        self.n += 1
        return kind

    def options(self):
        h = self.hands[self.turn]
        m = h & self.live
        if self.n == 0:
            return [6], True  # 7S
        if m:
            return list(bits(m)), True
        return list(bits(h)), False


def settle(pts, ncov, last7):
    tong = [i for i in range(4) if ncov[i] == 0]
    nt = len(tong)
    if nt == 4:
        return [0, 0, 0, 0], tong, []
    dutou = [i for i in tong if last7[i]]
    f = [1, 2, 4, 8, 1][nt] * (8 ** len(dutou))
    adj = [0 if ncov[i] == 0 else pts[i] * f for i in range(4)]
    tot = sum(adj)
    return [tot - 4 * a for a in adj], tong, dutou


def score_of(st):
    return settle(st.pts, st.ncov, st.last7)[0]


# ---------------------------------------------------------------- rollouts (cheap policy)
def rollout(st, rng):
    """Play to the end with a cheap policy: play the live card with most own cards beyond it
    (ties random), cover the card with the lowest points + own-beyond weight."""
    hands, lo, hi = st.hands, st.lo, st.hi
    live = st.live
    pts, ncov, last7 = st.pts, st.ncov, st.last7
    turn, n = st.turn, st.n
    rand = rng.random
    while n < 52:
        h = hands[turn]
        m = h & live
        if m:
            best, bv = -1, -1.0
            while m:
                b = m & -m
                c = b.bit_length() - 1
                m ^= b
                v = (h & BEYOND[c]).bit_count() + rand()
                if v > bv:
                    bv, best = v, c
            c = best
            b = 1 << c
            hands[turn] = h & ~b
            s, r = divmod(c, 13)
            r += 1
            live &= ~b
            if lo[s] == 0:
                lo[s] = hi[s] = 7
                live |= (1 << (s * 13 + 5)) | (1 << (s * 13 + 7))
            elif r < lo[s]:
                lo[s] = r
                if r > 1:
                    live |= 1 << (s * 13 + r - 2)
            else:
                hi[s] = r
                if r < 13:
                    live |= 1 << (s * 13 + r)
            last7[turn] = (r == 7)
        else:
            best, bv = -1, 1e9
            mm = h
            while mm:
                b = mm & -mm
                c = b.bit_length() - 1
                mm ^= b
                v = PTS[c] + 3 * (h & BEYOND[c]).bit_count() + rand()
                if v < bv:
                    bv, best = v, c
            hands[turn] = h & ~(1 << best)
            pts[turn] += PTS[best]
            ncov[turn] += 1
        turn = (turn + 1) & 3
        n += 1
    return settle(pts, ncov, last7)[0]


# ---------------------------------------------------------------- views / knowledge
class View:
    """What a seat knows: its hand, the table, its covers, public counts; optionally the
    partner's hand (and covers), or everything (lone cheater)."""

    def __init__(self, st, seat, partner=None, full=False):
        self.st = st
        self.seat = seat
        self.partner = partner
        self.full = full
        self.mine = st.hands[seat]
        known = st.table | st.covers[seat] | self.mine
        self.phand = 0
        if partner is not None:
            self.phand = st.hands[partner]
            known |= self.phand | st.covers[partner]
        if full:
            known = FULL
        self.unseen = FULL & ~known
        held = 0
        others = [j for j in range(4) if j != seat and j != partner]
        for j in others:
            held += st.hands[j].bit_count()
        n_unseen = self.unseen.bit_count()
        self.p_held = (held / n_unseen) if n_unseen else 1.0
        self.dead = st.covers[seat] | (st.covers[partner] if partner is not None else 0)
        if full:
            self.dead = st.covers[0] | st.covers[1] | st.covers[2] | st.covers[3]
            self.opp = FULL & ~(self.mine | self.phand | st.table | self.dead)
        else:
            self.opp = self.unseen


def p_play(view, y, mine_after=None):
    """Heuristic chance that my card y gets played (not covered) before the end."""
    st = view.st
    mine = view.mine if mine_after is None else mine_after
    if st.live >> y & 1:
        return 0.95
    s, r = divmod(y, 13)
    r += 1
    lo = st.lo[s]
    if lo == 0:
        gap = [SEVENS[s]] + BETWEEN7[y] if r != 7 else []
    elif r < lo:
        gap = [s * 13 + x - 1 for x in range(lo - 1, r, -1)]
    else:
        gap = [s * 13 + x - 1 for x in range(st.hi[s] + 1, r)]
    p = 0.95
    pu = 0.8 * view.p_held
    for g in gap:
        gb = 1 << g
        if mine & gb:
            p *= 0.93
        elif view.dead & gb:
            return 0.0
        elif view.phand & gb:
            p *= 0.85
        elif view.full and not (view.opp & gb):
            return 0.0
        else:
            p *= pu if not view.full else 0.8
    return p


# ---------------------------------------------------------------- bots
class Bot:
    kind = "base"

    def __init__(self, rng, **kw):
        self.rng = rng
        self.temp = kw.get("temp", 1.0)
        self.blunder = kw.get("blunder", 0.02)
        self.w_own = kw.get("w_own", 1.0)
        self.w_help = kw.get("w_help", 0.5)
        self.w_flex = kw.get("w_flex", 0.6)
        self.w_block = kw.get("w_block", 0.3)
        self.gamma = kw.get("gamma", 0.6)
        self.seven_pen = kw.get("seven_pen", 0.0)
        self.params = dict(kw)

    def values(self, view, opts, is_play, ctx):
        if is_play:
            return [self.play_value(view, c, ctx) for c in opts]
        return [-self.cover_cost(view, c, ctx) for c in opts]

    def hand_quality(self, view):
        return sum(1.0 - p_play(view, y) for y in bits(view.mine))

    def play_value(self, view, c, ctx):
        st = view.st
        mine = view.mine & ~(1 << c)
        bad = self.hand_quality(view) > 3.0
        alpha = 0.8 if bad else 0.3
        own = helpo = helpp = 0.0
        for ch in CHAINS[c]:
            df = 0
            for b in ch:
                bb = 1 << b
                if mine & bb:
                    own += (alpha * PTS[b] / 7.0 + (1 - alpha)) * (self.gamma ** df)
                elif view.dead & bb or st.table & bb:
                    break
                elif view.phand & bb:
                    helpp += PTS[b] / 7.0 * (self.gamma ** df)
                    df += 1
                else:
                    if view.full and not (view.opp & bb):
                        break
                    helpo += PTS[b] / 7.0 * (self.gamma ** df) * (view.p_held if not view.full else 1.0)
                    df += 1
        v = self.w_own * own - self.w_help * helpo
        v += ctx.get("lam_p", 0.0) * helpp
        if not ctx.get("soft", False):
            v -= self.w_help * helpp
        # flexibility: my live cards next turn
        if c % 13 == 6:
            newlive = (st.live & ~(1 << c)) | (1 << (c - 1)) | (1 << (c + 1))
            v -= self.seven_pen * (1.0 if own < 2.0 else 0.0)
        else:
            newlive = st.live & ~(1 << c)
            s, r = divmod(c, 13)
            if r < 6 and r > 0:
                newlive |= 1 << (c - 1)
            elif r > 6 and r < 12:
                newlive |= 1 << (c + 1)
        fl = (mine & newlive).bit_count()
        v += self.w_flex * min(fl, 2) / 2.0
        return v

    def cover_cost(self, view, x, ctx):
        mine = view.mine & ~(1 << x)
        cost = PTS[x] * p_play(view, x)
        blk_o = blk_p = 0.0
        for ch in CHAINS[x]:
            df = 0
            for b in ch:
                bb = 1 << b
                if mine & bb:
                    cost += PTS[b] * p_play(view, b)
                elif view.dead & bb:
                    break
                elif view.phand & bb:
                    blk_p += PTS[b] * (self.gamma ** df)
                    df += 1
                else:
                    if view.full and not (view.opp & bb):
                        break
                    blk_o += PTS[b] * (self.gamma ** df) * (view.p_held if not view.full else 1.0)
                    df += 1
        wb = ctx.get("w_block", self.w_block)
        cost -= wb * blk_o / 3.0
        cost += ctx.get("lam_cover_p", 0.0) * blk_p
        if not ctx.get("soft", False) and ctx.get("lam_cover_p") is None:
            cost -= wb * blk_p / 3.0
        return cost

    def decide(self, st, seat, opts, is_play, ctx):
        view = View(st, seat, ctx.get("partner"), ctx.get("full", False))
        vals = self.values(view, opts, is_play, ctx)
        return self.choose(opts, vals, ctx)

    def choose(self, opts, vals, ctx):
        rng = self.rng
        temp = ctx.get("temp", self.temp)
        order = sorted(vals, reverse=True)
        gap = (order[0] - order[1]) if len(order) > 1 else 99.0
        if rng.random() < ctx.get("blunder", self.blunder):
            i = rng.randrange(len(opts))
        else:
            mx = order[0]
            ws = [math.exp((v - mx) / max(temp, 1e-6)) for v in vals]
            t = rng.random() * sum(ws)
            i = 0
            for i, w in enumerate(ws):  # noqa: B007  (i is read after the loop)
                t -= w
                if t <= 0:
                    break
        return opts[i], gap


class Planner(Bot):
    kind = "planner"


class Blocker(Bot):
    kind = "blocker"

    def __init__(self, rng, **kw):
        kw.setdefault("w_help", 1.4)
        kw.setdefault("w_block", 0.9)
        kw.setdefault("seven_pen", 1.0)
        kw.setdefault("w_own", 0.7)
        super().__init__(rng, **kw)


class Beginner(Bot):
    kind = "beginner"

    def __init__(self, rng, **kw):
        kw.setdefault("temp", 3.0)
        kw.setdefault("blunder", 0.15)
        super().__init__(rng, **kw)
        self.style = kw.get("style", rng.choice(["low", "high", "near7"]))
        self.params["style"] = self.style

    def values(self, view, opts, is_play, ctx):
        if is_play:
            out = []
            for c in opts:
                r = c % 13 + 1
                if self.style == "low":
                    v = -r / 3.0
                elif self.style == "high":
                    v = r / 3.0
                else:
                    v = -abs(r - 7) / 2.0
                out.append(v + 0.3 * (view.mine & BEYOND[c]).bit_count())
            return out
        return [-PTS[c] / 2.0 for c in opts]  # cover the cheapest card


class Sampler(Bot):
    """Monte Carlo over hidden hands (samples consistent with public counts), cheap rollouts;
    objective: own score, or own + lam * partner's."""
    kind = "sampler"

    def __init__(self, rng, **kw):
        kw.setdefault("temp", 2.0)
        super().__init__(rng, **kw)
        self.samples = kw.get("samples", 8)

    def mc_values(self, st, seat, opts, ctx, samples):
        partner = ctx.get("partner")
        full = ctx.get("full", False)
        lam = ctx.get("lam_obj", 0.0)
        rng = self.rng
        if full:
            unknown = []
        else:
            known_seats = {seat} if partner is None else {seat, partner}
            known = st.table
            for j in known_seats:
                known |= st.hands[j] | st.covers[j]
            unknown = list(bits(FULL & ~known))
            others = [j for j in range(4) if j not in known_seats]
        tot = [0.0] * len(opts)
        for _ in range(samples):
            base = st.copy()
            if unknown:
                rng.shuffle(unknown)
                k = 0
                for j in others:
                    nh = st.hands[j].bit_count()
                    nc = st.ncov[j]
                    hm = 0
                    for c in unknown[k:k + nh]:
                        hm |= 1 << c
                    k += nh
                    base.hands[j] = hm
                    base.pts[j] = sum(PTS[c] for c in unknown[k:k + nc])
                    k += nc
            for i, c in enumerate(opts):
                s2 = base.copy()
                s2.apply(c)
                sc = rollout(s2, rng)
                tot[i] += sc[seat] + (lam * sc[partner] if partner is not None else 0.0)
        return [t / samples / 8.0 for t in tot]

    def decide(self, st, seat, opts, is_play, ctx):
        if len(opts) == 1:
            return opts[0], 99.0
        vals = self.mc_values(st, seat, opts, ctx, ctx.get("samples", self.samples))
        return self.choose(opts, vals, ctx)


class Drifter(Planner):
    kind = "drifter"


BOTS = {"planner": Planner, "blocker": Blocker, "beginner": Beginner, "sampler": Sampler,
        "drifter": Drifter}


# ---------------------------------------------------------------- players & timing
class Player:
    def __init__(self, pid, bot_kind, rng, nprng, params=None, pace=None, role="honest"):
        self.pid = pid
        self.role = role
        params = dict(params or {})
        self.bot = BOTS[bot_kind](random.Random(rng.getrandbits(64)), **params)
        self.bot_kind = bot_kind
        self.np = nprng
        pace = dict(pace or {})
        self.median = pace.get("median", float(np.clip(nprng.lognormal(math.log(1500), 0.45), 400, 6000)))
        self.sigma = pace.get("sigma", float(nprng.uniform(0.25, 0.7)))
        self.p_lag = pace.get("p_lag", float(nprng.choice([0.0, 0.0, 0.005, 0.01, 0.03])))
        self.lag_mean = pace.get("lag_mean", float(nprng.uniform(2000, 9000)))
        self.auto = pace.get("auto", bool(nprng.random() < 0.3))  # forced moves auto-played fast
        self.hard_slow = pace.get("hard_slow", float(nprng.uniform(0.3, 1.5)))
        self.cover_slow = pace.get("cover_slow", float(nprng.uniform(1.0, 1.6)))
        self.fatigue = pace.get("fatigue", float(nprng.uniform(0.0, 0.4)))
        self.extra_uniform = pace.get("extra_uniform", 0.0)
        self.slow_factor = pace.get("slow_factor", 1.0)
        self.temp0 = self.bot.temp
        self.temp1 = params.get("temp_end", self.bot.temp)

    def think_ms(self, n_opts, gap, is_play, progress, cheat_extra=0.0):
        npr = self.np
        if n_opts == 1:
            if self.auto:
                t = npr.uniform(250, 700)
            else:
                t = self.median * 0.45 * npr.lognormal(0, self.sigma)
        else:
            hard = 1.0 / (1.0 + max(gap, 0.0))
            t = self.median * (1 + 0.3 * math.log(n_opts)) * (1 + self.hard_slow * hard)
            if not is_play:
                t *= self.cover_slow
            t *= npr.lognormal(0, self.sigma)
        t *= (1 + self.fatigue * progress) * self.slow_factor
        if self.extra_uniform:
            t += npr.uniform(0, self.extra_uniform)
        t += cheat_extra
        if npr.random() < self.p_lag:
            t += npr.exponential(self.lag_mean)
        return max(t, 80.0)

    def truth(self):
        return {"bot": self.bot_kind, "role": self.role,
                "params": {k: v for k, v in self.bot.params.items()},
                "pace_median_ms": round(self.median), "pace_sigma": round(self.sigma, 3),
                "p_lag": self.p_lag, "auto": self.auto}


# ---------------------------------------------------------------- collusion styles
class Link:
    """A colluding pair (a, b): style decides, per hand and per decision, the context."""

    def __init__(self, a, b, style, rng, **kw):
        self.a, self.b, self.style = a, b, style
        self.rng = rng
        self.kw = kw
        self.hands_together = 0
        self.colluding_hands = 0

    def decide_on(self):
        """Called once per hand together: is collusion on in this hand?"""
        if self.style == "occasional":
            return self.rng.random() < self.kw.get("rate", 0.15)
        return True

    def ctx_for(self, pid, st, seat, pseat, opts, is_play, on):
        if not on:
            return None
        s = self.style
        if s == "soft":
            # never block the partner's suits, nothing more
            return {"partner": pseat, "soft": True, "lam_cover_p": 0.6}
        if s == "feeder":
            if pid != self.kw["feeder"]:
                return None
            return {"partner": pseat, "soft": True, "lam_p": 1.2, "lam_cover_p": 1.0}
        if s == "coverinfo":
            if is_play:
                return None
            return {"partner": pseat, "lam_cover_p": 1.0, "w_block": 1.2}
        if s in ("share", "noisy", "rotating"):
            return {"partner": pseat, "soft": True, "lam_p": self.kw.get("lam", 0.7),
                    "lam_cover_p": 0.8, "w_block": 0.6}
        if s == "occasional":
            return {"partner": pseat, "mc": True, "lam_obj": 1.0, "samples": 10}
        if s == "highmult":
            # only when a 通 is at stake: partner still clean with few cards, or an opponent is
            ps = st
            risk = False
            if ps.ncov[pseat] == 0 and ps.hands[pseat].bit_count() <= 6:
                risk = True
            for j in range(4):
                if j not in (seat, pseat) and ps.ncov[j] == 0 and ps.hands[j].bit_count() <= 5:
                    risk = True
            if not risk:
                return None
            return {"partner": pseat, "mc": True, "lam_obj": 1.0, "samples": 10}
        raise ValueError(s)


# ---------------------------------------------------------------- rooms
def P(kind, **kw):
    return (kind, kw)


def honest_mix(rng, n, mix):
    """mix: list of (weight, kind, param sampler)."""
    out = []
    kinds = [m[1] for m in mix]
    w = np.array([m[0] for m in mix], float)
    w /= w.sum()
    for _i in range(n):
        k = kinds[rng.choices(range(len(kinds)), weights=w)[0]]
        out.append(k)
    return out


def param_for(kind, rng):
    if kind == "planner":
        return {"temp": rng.uniform(0.15, 0.6), "blunder": rng.uniform(0.0, 0.05),
                "w_help": rng.uniform(0.3, 0.8), "gamma": rng.uniform(0.45, 0.75)}
    if kind == "blocker":
        return {"temp": rng.uniform(0.2, 0.6), "blunder": rng.uniform(0.0, 0.04),
                "w_help": rng.uniform(1.1, 1.8)}
    if kind == "beginner":
        return {"temp": rng.uniform(1.5, 4.0), "blunder": rng.uniform(0.08, 0.25)}
    if kind == "sampler":
        return {"temp": rng.uniform(0.8, 3.0), "blunder": rng.uniform(0.0, 0.03),
                "samples": rng.choice([6, 8, 10])}
    if kind == "drifter":
        t0, t1 = rng.uniform(0.1, 0.4), rng.uniform(0.9, 2.5)
        if rng.random() < 0.5:
            t0, t1 = t1, t0
        return {"temp": t0, "temp_end": t1, "blunder": rng.uniform(0.0, 0.06)}
    raise ValueError(kind)


STD_MIX = [(4, "planner"), (2, "blocker"), (2, "beginner"), (1, "sampler"), (1, "drifter")]

# room: n players, mix, special groups
ROOMS = {
    "honest-mix": dict(n=32, mix=STD_MIX, desc="honest: all five bot kinds, 32 players"),
    "honest-friends": dict(n=36, mix=STD_MIX, friends=3, sitout=4,
                           desc="honest, 3 friend pairs who always sit together and play alike; 4 sit out per session"),
    "honest-noisy": dict(n=28, mix=[(2, "planner"), (1, "blocker"), (3, "beginner"), (1, "sampler"), (3, "drifter")],
                         laggy=True, desc="honest, many beginners/drifters, heavy lags and coarse clocks"),
    "soft": dict(n=32, mix=STD_MIX, pairs=[("soft", {}), ("soft", {})], friends=1,
                 desc="2 pairs: soft play (never block the partner's suits, no more)"),
    "highmult": dict(n=32, mix=STD_MIX, pairs=[("highmult", {}), ("highmult", {})],
                     desc="2 pairs: joint Monte Carlo with the partner's hand only when a 通 is at stake"),
    "rotating": dict(n=40, mix=STD_MIX, ring=True,
                     desc="a ring A,B,C: A sits with B some sessions, with C others, B with C rarely; share when together"),
    "occasional": dict(n=32, mix=STD_MIX, pairs=[("occasional", {"rate": 0.15}), ("occasional", {"rate": 0.12})],
                       friends=1, desc="2 pairs: full joint Monte Carlo in 12-15% of hands together, a little slower then"),
    "feeder": dict(n=32, mix=STD_MIX, pairs=[("feeder", {}), ("feeder", {})],
                   desc="2 pairs: one feeds (unlocks partner, never blocks him), the other plays straight"),
    "coverinfo": dict(n=32, mix=STD_MIX, pairs=[("coverinfo", {}), ("coverinfo", {})],
                      desc="2 pairs: the partner's hand used only for covers (dump penalty on the opponents, spare the partner)"),
    "noisy-pair": dict(n=32, mix=STD_MIX, pairs=[("noisy", {"lam": 0.8}), ("noisy", {"lam": 0.6})],
                       desc="2 pairs: steady sharing heuristic with deliberately slow, noisy think times"),
    "lone": dict(n=32, mix=STD_MIX, lone=True, friends=1,
                 desc="1 lone cheater seeing all hands, Monte Carlo on the true deal, 30% human mistakes"),
}


# A private table: the same four players every hand, honest, with one pair of a style, or with a lone cheater.
PRIVATE_TABLE = {"honest": {}, "soft": {"pairs": [("soft", {})]}, "highmult": {"pairs": [("highmult", {})]},
                 "feeder": {"pairs": [("feeder", {})]}, "coverinfo": {"pairs": [("coverinfo", {})]},
                 "occasional": {"pairs": [("occasional", {"rate": 0.15})]}, "lone": {"lone": True}}
for _kind, _extra in PRIVATE_TABLE.items():
    ROOMS["honest-four" if _kind == "honest" else f"four-{_kind}"] = dict(n=4, mix=STD_MIX, desc="4 players at one table",
                                                                          **_extra)


def build_room(name, seed):
    cfg = ROOMS[name]
    rng = random.Random(seed * 7919 + sum(map(ord, name)))
    nprng = np.random.default_rng(rng.getrandbits(63))
    n = cfg["n"]
    players = []
    kinds = honest_mix(rng, n, cfg["mix"])
    for i in range(n):
        pid = f"u{i + 1:02d}" if name.startswith("honest") else f"p{i + 1:02d}"
        pace = {}
        if cfg.get("laggy"):
            pace = {"p_lag": float(nprng.choice([0.01, 0.03, 0.06])),
                    "lag_mean": float(nprng.uniform(4000, 15000))}
        players.append(Player(pid, kinds[i], rng, nprng, param_for(kinds[i], rng), pace))
    order = list(range(n))
    rng.shuffle(order)
    used = iter(order)
    links, friends, lone = [], [], []
    for style, kw in cfg.get("pairs", []):
        ia, ib = next(used), next(used)
        a, b = players[ia], players[ib]
        # colluders: competent base bots
        for p in (a, b):
            k = rng.choice(["planner", "planner", "blocker", "sampler"])
            pr = param_for(k, rng)
            players[players.index(p)] = Player(p.pid, k, rng, nprng, pr, None, role="colluder")
        a, b = players[ia], players[ib]
        kw = dict(kw)
        if style == "feeder":
            kw["feeder"] = a.pid
        if style == "noisy":
            for p in (a, b):
                p.slow_factor = 1.35
                p.extra_uniform = 2500.0
                p.sigma = 0.8
                p.p_lag = 0.03
        links.append(Link(a.pid, b.pid, style, random.Random(rng.getrandbits(64)), **kw))
    if cfg.get("ring"):
        ia, ib, ic = next(used), next(used), next(used)
        for i in (ia, ib, ic):
            k = rng.choice(["planner", "blocker"])
            players[i] = Player(players[i].pid, k, rng, nprng, param_for(k, rng), None, role="colluder")
        A, B, C = players[ia].pid, players[ib].pid, players[ic].pid
        links.append(Link(A, B, "rotating", random.Random(rng.getrandbits(64)), lam=0.7))
        links.append(Link(A, C, "rotating", random.Random(rng.getrandbits(64)), lam=0.7))
        links.append(Link(B, C, "rotating", random.Random(rng.getrandbits(64)), lam=0.5))
    for _ in range(cfg.get("friends", 0)):
        ia, ib = next(used), next(used)
        k = rng.choice(["planner", "blocker", "beginner"])
        pr = param_for(k, rng)
        pace = {"median": float(nprng.uniform(900, 1800)), "sigma": 0.4, "auto": True}
        players[ia] = Player(players[ia].pid, k, rng, nprng, dict(pr), dict(pace), role="friend")
        players[ib] = Player(players[ib].pid, k, rng, nprng, dict(pr), dict(pace), role="friend")
        friends.append((players[ia].pid, players[ib].pid))
    if cfg.get("lone"):
        i = next(used)
        players[i] = Player(players[i].pid, "sampler", rng, nprng,
                            {"temp": 1.5, "blunder": 0.04, "samples": 6}, None, role="lone")
        lone.append(players[i].pid)
    return cfg, rng, nprng, players, links, friends, lone


def form_tables(rng, players, links, friends, cfg, session):
    """Groups (pairs that sit together) first, then singles, into tables of 4."""
    n = len(players)
    ids = [p.pid for p in players]
    seated_n = (n - cfg.get("sitout", 0)) // 4 * 4
    groups = []
    taken = set()
    if cfg.get("ring"):
        ring = [link for link in links if link.style == "rotating"]
        A, B = ring[0].a, ring[0].b
        C = ring[1].b
        u = rng.random()
        if u < 0.45:
            groups.append([A, B])
        elif u < 0.9:
            groups.append([A, C])
        elif u < 0.97:
            groups.append([B, C])
        taken |= {A, B, C}
        for x in (A, B, C):
            if not any(x in g for g in groups):
                groups.append([x])
    for link in links:
        if link.style == "rotating":
            continue
        groups.append([link.a, link.b])
        taken |= {link.a, link.b}
    for a, b in friends:
        groups.append([a, b])
        taken |= {a, b}
    singles = [x for x in ids if x not in taken]
    rng.shuffle(singles)
    pool = groups + [[x] for x in singles]
    # sit-outs: drop singles from the end
    total = sum(len(g) for g in pool)
    while total > seated_n:
        for k in range(len(pool) - 1, -1, -1):
            if len(pool[k]) == 1:
                total -= 1
                pool.pop(k)
                break
    rng.shuffle(pool)
    pool.sort(key=lambda g: -len(g))
    tables = []
    # pairs first into tables with room; put at most one pair-group per table where possible
    ntab = seated_n // 4
    tabs = [[] for _ in range(ntab)]
    for g in pool:
        best = None
        for t in tabs:
            if len(t) + len(g) <= 4 and (best is None or len(t) < len(best)):
                best = t
        if best is None:
            continue
        best.extend(g)
    for t in tabs:
        if len(t) == 4:
            rng.shuffle(t)
            tables.append(t)
    return tables


def play_hand(rng, table_players, byid, links, hand_progress, room_progress, table_clock):
    deck = list(range(52))
    rng.shuffle(deck)
    deal = [deck[i * 13:(i + 1) * 13] for i in range(4)]
    masks = [sum(1 << c for c in h) for h in deal]
    first = next(i for i in range(4) if masks[i] >> 6 & 1)
    st = State(masks, first)
    seat_of = {pid: i for i, pid in enumerate(table_players)}
    active = []
    for link in links:
        if link.a in seat_of and link.b in seat_of:
            active.append((link, link.decide_on()))
    actions = []
    t = rng.uniform(1200, 3500)  # deal animation
    while st.n < 52:
        seat = st.turn
        pid = table_players[seat]
        pl = byid[pid]
        opts, is_play = st.options()
        ctx = {}
        extra = 0.0
        if pl.role == "lone":
            ctx = {"full": True, "samples": pl.bot.samples}
            if pl.bot.rng.random() < 0.30:
                ctx = {"planner_like": True}
        for link, on in active:
            if pid in (link.a, link.b):
                other = link.b if pid == link.a else link.a
                c2 = link.ctx_for(pid, st, seat, seat_of[other], opts, is_play, on)
                if c2:
                    ctx = c2
                    if link.style == "occasional" and len(opts) > 1:
                        extra = rng.uniform(300, 1800)
        # temperature drift
        if pl.temp1 != pl.temp0:
            ctx.setdefault("temp", pl.temp0 + (pl.temp1 - pl.temp0) * room_progress)
        if len(opts) == 1:
            c, gap = opts[0], 99.0
        elif ctx.get("mc") and not isinstance(pl.bot, Sampler):
            tmp = Sampler(pl.bot.rng, temp=0.8, blunder=pl.bot.blunder)
            c, gap = tmp.decide(st, seat, opts, is_play, ctx)
        elif ctx.get("planner_like"):
            c, gap = Planner.decide(pl.bot, st, seat, opts, is_play, {"temp": 0.5})
        elif isinstance(pl.bot, Sampler) and not ctx.get("mc") and ctx.get("partner") is not None:
            # a sampler in a heuristic collusion style: the heuristic with the partner's info
            c, gap = Bot.decide(pl.bot, st, seat, opts, is_play, dict(ctx, temp=0.4))
        else:
            c, gap = pl.bot.decide(st, seat, opts, is_play, ctx)
        kind = st.apply(c)
        t += pl.think_ms(len(opts), gap, is_play, hand_progress, extra)
        actions.append((seat, kind, c, t))
    scores, tong, dutou = settle(st.pts, st.ncov, st.last7)
    return deal, actions, scores, st.pts, tong, dutou, t, [(link, on) for link, on in active]


def simulate(name, hands, seed, out):
    cfg, rng, nprng, players, links, friends, lone = build_room(name, seed)
    byid = {p.pid: p for p in players}
    base = datetime(2026, 3, 2, 19, 0, 0, tzinfo=timezone(timedelta(hours=8)))
    recs = []
    session = 0
    clock = 0.0  # seconds since base, per session
    hid = 0
    together = {}
    # NB: the first `hands` hands in time are kept, so every table's session is cut alike
    while hid < hands:  # whole sessions; cut to the first `hands` hands in time below
        tables = form_tables(rng, players, links, friends, cfg, session)
        slen = rng.randint(*cfg.get('slen', (15, 45)))
        for ti, tp in enumerate(tables):
            tclock = clock + rng.uniform(0, 60)
            res = rng.choice([1, 1, 10, 16, 100]) if not cfg.get("laggy") else rng.choice([100, 250, 1000])
            for k in range(slen):
                deal, actions, scores, pts, tong, dutou, t_end, act = play_hand(
                    rng, tp, byid, links, k / slen, min(1.0, hid / hands), tclock)
                hid += 1
                acts = []
                last = 0
                for seat, kind, c, t in actions:
                    ms = int(t // res * res)
                    ms = max(ms, last)
                    last = ms
                    acts.append({"seat": seat, "kind": kind, "card": code(c), "ms": ms})
                started = base + timedelta(seconds=tclock)
                rec = {"variant": "bieqi", "format": "bieqi-log", "version": 1,
                       "hand_id": f"{name}-{seed}-s{session:03d}-t{ti:02d}-{k:03d}",
                       "table_id": f"{name}-t{ti:02d}",
                       "started_at": started.isoformat(timespec="seconds"),
                       "players": list(tp),
                       "deal": [[code(c) for c in sorted(h, key=lambda x: (x // 13, x % 13))] for h in deal],
                       "actions": acts,
                       "result": {"scores": scores, "points": list(pts), "tong": tong, "dutou": dutou}}
                recs.append((tclock, rec, act))
                tclock += t_end / 1000.0 + rng.uniform(4, 20)
        session += 1
        clock = max(r[0] for r in recs) + rng.uniform(120, 1800)
    recs.sort(key=lambda x: x[0])
    recs = recs[:hands]
    lstat = {id(link): [0, 0] for link in links}
    for _, rec, act in recs:
        tp = rec["players"]
        for i in range(4):
            for j in range(i + 1, 4):
                key = tuple(sorted((tp[i], tp[j])))
                together[key] = together.get(key, 0) + 1
        for link, on in act:
            lstat[id(link)][0] += 1
            lstat[id(link)][1] += int(on)
    for link in links:
        link.hands_together, link.colluding_hands = lstat[id(link)]
    opener = gzip.open if out.endswith(".gz") else open
    tmp = out + ".tmp"
    with opener(tmp, "wt", encoding="utf-8") as f:
        for _, rec, _a in recs:
            f.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    truth = {
        "room": name, "seed": seed, "hands": hands, "description": cfg["desc"],
        "players": {p.pid: p.truth() for p in players},
        "colluding_pairs": [{"players": sorted([link.a, link.b]), "style": link.style,
                             "hands_together": link.hands_together, "colluding_hands": link.colluding_hands,
                             **({"feeder": link.kw["feeder"]} if "feeder" in link.kw else {})}
                            for link in links],
        "lone_cheaters": lone,
        "friend_pairs": [{"players": sorted(f), "hands_together": together.get(tuple(sorted(f)), 0)}
                         for f in friends],
    }
    tpath = truth_path(out)
    with open(tpath, "w") as f:
        json.dump(truth, f, indent=1)
    return truth


def truth_path(out):
    base = out
    for suf in (".gz", ".jsonl"):
        if base.endswith(suf):
            base = base[: -len(suf)]
    return base + ".truth.json"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--room", choices=sorted(ROOMS))
    ap.add_argument("--hands", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for k, v in ROOMS.items():
            print(f"{k:15} {v['desc']}")
        return
    if not a.room or not a.out:
        ap.error("--room and --out are required")
    t = simulate(a.room, a.hands, a.seed, a.out)
    print(json.dumps({k: t[k] for k in ("room", "colluding_pairs", "lone_cheaters", "friend_pairs")}))


if __name__ == "__main__":
    main()
