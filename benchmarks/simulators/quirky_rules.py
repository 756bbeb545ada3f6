#!/usr/bin/env python3
"""Rooms of rule-based players with fixed quirks, improvers and tired players, honest blockers and a search bot.

An independent simulator (stdlib only, seeded), written from the rules without reading the analyzer's simulator.
Bots: rule-based human-like players with fixed personal quirks (lexicographic rules, not a softmax), players who
improve or tire over the room, an honest "hold the 7s" blocker, and a determinized rollout search bot of varying
strength. Collusion styles: help only when the partner is behind, signalling through WHICH card is covered,
self-sacrifice, one-way information (spotter -> beneficiary), cheating only in the last third, two colluding pairs
at one table, a lone omniscient cheater.

    python -m benchmarks.simulators.quirky_rules --room NAME --seed N --out room.jsonl [--hands 2400] [--players N]

Writes room.jsonl and room.truth.json.
"""
from __future__ import annotations

import argparse
import json
import math
import random
from datetime import datetime, timedelta, timezone

RANKS = "A23456789TJQK"
SUITS = "SHDC"
SEVEN = 6  # rank index of 7
TONG_FACTORS = [1, 2, 4, 8, 1]
BLOCK_LEN = (8, 40)


def code(c):
    return RANKS[c % 13] + SUITS[c // 13]


def pts(c):
    return c % 13 + 1


# --------------------------------------------------------------------------- game state
class State:
    __slots__ = ("hands", "lo", "hi", "cpts", "ccnt", "last", "turn", "played", "nact", "covered")

    def __init__(self, hands, first):
        self.hands = [set(h) for h in hands]
        self.lo = [None] * 4  # lowest rank on table per suit (None: suit not opened)
        self.hi = [None] * 4
        self.cpts = [0, 0, 0, 0]
        self.ccnt = [0, 0, 0, 0]
        self.last = [None, None, None, None]
        self.turn = first
        self.played = set()
        self.covered = [[], [], [], []]
        self.nact = 0

    def copy(self):
        s = State.__new__(State)
        s.hands = [set(h) for h in self.hands]
        s.lo = list(self.lo)
        s.hi = list(self.hi)
        s.cpts = list(self.cpts)
        s.ccnt = list(self.ccnt)
        s.last = list(self.last)
        s.turn = self.turn
        s.played = set(self.played)
        s.covered = [list(c) for c in self.covered]
        s.nact = self.nact
        return s

    def live(self):
        out = []
        for s in range(4):
            if self.lo[s] is None:
                out.append(s * 13 + SEVEN)
            else:
                if self.lo[s] > 0:
                    out.append(s * 13 + self.lo[s] - 1)
                if self.hi[s] < 12:
                    out.append(s * 13 + self.hi[s] + 1)
        return out

    def options(self, seat=None):
        seat = self.turn if seat is None else seat
        h = self.hands[seat]
        if self.nact == 0:
            return "play", [SEVEN]
        lv = [c for c in self.live() if c in h]
        if lv:
            return "play", lv
        return "cover", sorted(h)

    def apply(self, kind, c):
        seat = self.turn
        self.hands[seat].discard(c)
        if kind == "play":
            s, r = divmod(c, 13)
            if self.lo[s] is None:
                self.lo[s] = self.hi[s] = r
            elif r < self.lo[s]:
                self.lo[s] = r
            else:
                self.hi[s] = r
            self.played.add(c)
            self.last[seat] = c
        else:
            self.cpts[seat] += pts(c)
            self.ccnt[seat] += 1
            self.covered[seat].append(c)
        self.nact += 1
        self.turn = (seat + 1) % 4

    def done(self):
        return self.nact >= 52

    def scores(self):
        tong = [i for i in range(4) if self.ccnt[i] == 0]
        dutou = [i for i in tong if self.last[i] is not None and self.last[i] % 13 == SEVEN]
        f = TONG_FACTORS[len(tong)] * (8 ** len(dutou))
        pen = [0 if i in tong else self.cpts[i] * f for i in range(4)]
        tot = sum(pen)
        return [tot - 4 * p for p in pen], pen, tong, dutou


def beyond(c, state):
    """Cards lying beyond live card c (the direction it extends), nearest first; a 7 of an unopened suit: both."""
    s, r = divmod(c, 13)
    if state.lo[s] is None:
        return [s * 13 + k for k in range(r - 1, -1, -1)], [s * 13 + k for k in range(r + 1, 13)]
    if r < state.lo[s]:
        return [s * 13 + k for k in range(r - 1, -1, -1)], []
    return [s * 13 + k for k in range(r + 1, 13)], []


def chain(cards, mine, stop):
    """How many cards of `mine` lie along `cards` before the first one in `stop` (a gap someone else holds)."""
    n = 0
    for x in cards:
        if x in mine:
            n += 1
        elif x in stop:
            break
    return n


# --------------------------------------------------------------------------- honest bots
class Player:
    """A rule-based, human-like player: lexicographic rules with personal quirks and a mistake rate."""

    def __init__(self, pid, rng, **kw):
        self.pid = pid
        self.rng = rng
        self.eps0 = kw.get("eps", 0.08)          # mistakes: a random legal option
        self.eps_drift = kw.get("eps_drift", 0.0)  # change of eps from session start to end (improver < 0, tired > 0)
        self.sevens = kw.get("sevens", "neutral")  # early | hold | neutral
        self.cover = kw.get("cover", "lowest")     # lowest | deadsuit | block | highfirst
        self.dirpref = kw.get("dirpref", 0)        # +1 prefers playing up, -1 down
        self.suitpref = kw.get("suitpref", [0, 1, 2, 3])
        self.seat_habit = kw.get("seat_habit")     # {seat: overrides}
        self.think = kw.get("think", {})
        self.kind = kw.get("kind", "rule")
        self.nsamp = kw.get("nsamp", 0)
        self.follow = None  # a pid this player mirrors when at the table
        self.progress = 0.0

    def eps(self):
        return max(0.0, min(0.6, self.eps0 + self.eps_drift * self.progress))

    def rule_key(self, c, st, seat, opts_kind, prof):
        hand = st.hands[seat]
        b1, b2 = beyond(c, st)
        others = set(range(52)) - hand - st.played
        own = chain(b1, hand, others) + chain(b2, hand, others)
        opens = 0
        for b in (b1, b2):
            if b and b[0] not in hand and b[0] not in st.played:
                opens += 1
        is7 = c % 13 == SEVEN
        s7 = prof.get("sevens", self.sevens)
        k7 = {"early": -1 if is7 else 0, "hold": 1 if is7 else 0}.get(s7, 0)
        dirp = prof.get("dirpref", self.dirpref)
        d = 0
        if b1 and not is7:
            d = -dirp if b1[0] > c else dirp
        return (k7, -own, opens, d, self.suitpref.index(c // 13))

    def cover_key(self, c, st, seat, prof):
        hand = st.hands[seat]
        s, r = divmod(c, 13)
        mode = prof.get("cover", self.cover)
        # cards of mine that the cover would strand: beyond c away from 7
        if r < SEVEN:
            strand = [x for x in hand if x // 13 == s and x % 13 < r]
            blocked_others = [s * 13 + k for k in range(r) if (s * 13 + k) not in hand]
        elif r > SEVEN:
            strand = [x for x in hand if x // 13 == s and x % 13 > r]
            blocked_others = [s * 13 + k for k in range(r + 1, 13) if (s * 13 + k) not in hand]
        else:
            strand = [x for x in hand if x // 13 == s and x != c]
            blocked_others = [s * 13 + k for k in range(13)
                              if k != r and (s * 13 + k) not in hand and (s * 13 + k) not in st.played]
        sp = sum(pts(x) for x in strand)
        if mode == "lowest":
            return (pts(c), sp)
        if mode == "deadsuit":  # covers inside the suit it is already stuck in
            return (pts(c) + sp, pts(c))
        if mode == "highfirst":  # seed text: a bad hand covers big cards early
            return (-pts(c) if len(hand) > 8 else pts(c) + sp, 0)
        if mode == "block":  # blocker: covering a card that strands many unknown cards, within a point budget
            gain = sum(pts(x) for x in blocked_others)
            return (pts(c) + sp - 0.35 * gain, pts(c))
        return (pts(c), sp)

    def profile(self, seat):
        if self.seat_habit and seat in self.seat_habit:
            return self.seat_habit[seat]
        return {}

    def choose(self, st, seat, ctx):
        kind, opts = st.options(seat)
        if len(opts) == 1:
            return kind, opts[0]
        prof = self.profile(seat)
        eps = prof.get("eps", self.eps())
        if self.rng.random() < eps:
            return kind, self.rng.choice(opts)
        if self.kind == "search" and self.nsamp > 0:
            return kind, search_choose(st, seat, self.nsamp, self.rng, ctx.get("known"))
        if self.follow is not None and kind == "play":
            f = ctx.get("follow_last")
            if f is not None:
                same = [c for c in opts if c // 13 == f // 13]
                if same and self.rng.random() < 0.85:
                    return kind, min(same, key=lambda c: self.rule_key(c, st, seat, kind, prof))
        if kind == "play":
            return kind, min(opts, key=lambda c: self.rule_key(c, st, seat, kind, prof))
        return kind, min(opts, key=lambda c: self.cover_key(c, st, seat, prof))


# --------------------------------------------------------------------------- search
def fast_policy(st, rng):
    kind, opts = st.options()
    if len(opts) == 1:
        return kind, opts[0]
    hand = st.hands[st.turn]
    if kind == "play":
        best, bk = None, None
        for c in opts:
            b1, b2 = beyond(c, st)
            k = sum(1 for x in b1 if x in hand) + sum(1 for x in b2 if x in hand) + rng.random() * 0.5
            if bk is None or k > bk:
                best, bk = c, k
        return kind, best
    return kind, min(opts, key=lambda c: (pts(c), rng.random()))


def rollout(st, rng):
    while not st.done():
        k, c = fast_policy(st, rng)
        st.apply(k, c)
    return st.scores()[0]


def determinize(st, seat, rng, known=None):
    """Deal the cards `seat` cannot see to the others (known: {seat: hand} fixed by cheating)."""
    known = known or {}
    s2 = st.copy()
    fixed = set(st.hands[seat])
    for j, _h in known.items():
        fixed |= set(st.hands[j])
    pool = [c for c in range(52) if c not in fixed and c not in st.played and c not in st.covered[seat]]
    rng.shuffle(pool)
    k = 0
    for j in range(4):
        if j == seat or j in known:
            continue
        n = len(st.hands[j])
        s2.hands[j] = set(pool[k:k + n])
        k += n
    return s2


def search_choose(st, seat, nsamp, rng, known=None):
    kind, opts = st.options(seat)
    tot = {c: 0.0 for c in opts}
    for _i in range(nsamp):
        base = determinize(st, seat, rng, known)
        seed = rng.random()
        for c in opts:
            s2 = base.copy()
            s2.apply(kind, c)
            tot[c] += rollout(s2, random.Random(seed))[seat]
    return max(opts, key=lambda c: tot[c])


# --------------------------------------------------------------------------- collusion
def help_value(c, kind, st, me, partner):
    """What option c is worth to `partner` (whose hand `me` knows): cards it unlocks or strands."""
    ph = st.hands[partner]
    mh = st.hands[me]
    unknown = set(range(52)) - ph - mh - st.played
    if kind == "play":
        b1, b2 = beyond(c, st)
        g = 0.0
        for b in (b1, b2):
            for x in b:
                if x in ph:
                    g += 1.0 + pts(x) / 13
                elif x in mh:
                    continue
                else:
                    g -= 0.3  # opens for an opponent
                    break
        return g
    s, r = divmod(c, 13)
    if r < SEVEN:
        rng_ = range(r)
    elif r > SEVEN:
        rng_ = range(r + 1, 13)
    else:
        rng_ = [k for k in range(13) if k != r]
    lost = sum(pts(s * 13 + k) for k in rng_ if (s * 13 + k) in ph)
    opp = sum(pts(s * 13 + k) for k in rng_ if (s * 13 + k) in unknown)
    return -lost + 0.25 * opp


class Colluder(Player):
    def __init__(self, pid, rng, partner=None, style="behind", w=2.0, **kw):
        super().__init__(pid, rng, **kw)
        self.partner = partner
        self.style = style
        self.w = w
        self.active_from = kw.get("active_from", 0.0)
        self.signal_suit = None

    def choose(self, st, seat, ctx):
        kind, opts = st.options(seat)
        pseat = ctx["seat_of"].get(self.partner) if self.partner else None
        if self.style == "omniscient":
            if len(opts) == 1:
                return kind, opts[0]
            known = {j: True for j in range(4) if j != seat}
            return kind, search_choose(st, seat, self.nsamp or 6, self.rng, known)
        if pseat is None or self.progress < self.active_from or len(opts) == 1:
            return super().choose(st, seat, ctx)
        if self.style == "behind" and ctx["session"].get(self.partner, 0) >= ctx["session"].get(self.pid, 0):
            return super().choose(st, seat, ctx)
        if self.style == "beneficiary":  # knows the spotter's hand, helps nobody
            if self.rng.random() < self.eps():
                return kind, self.rng.choice(opts)
            return kind, search_choose(st, seat, self.nsamp or 4, self.rng, {pseat: True})
        if self.style == "spotter":
            return super().choose(st, seat, ctx)
        if self.style == "signal":
            return self.choose_signal(st, seat, pseat, kind, opts, ctx)
        # behind, sacrifice, mutual (late, twopairs): own rule preference + weighted help
        prof = self.profile(seat)
        if kind == "play":
            order = sorted(opts, key=lambda c: self.rule_key(c, st, seat, kind, prof))
        else:
            order = sorted(opts, key=lambda c: self.cover_key(c, st, seat, prof))
        best, bv = None, None
        for i, c in enumerate(order):
            own_cost = i if kind == "play" else (pts(c) - pts(order[0])) / 3.0
            if self.style == "sacrifice":
                own_cost *= 0.25
            v = self.w * help_value(c, kind, st, seat, pseat) - own_cost
            if bv is None or v > bv:
                best, bv = c, v
        return kind, best

    def choose_signal(self, st, seat, pseat, kind, opts, ctx):
        """Signal by the suit of the first cover: the suit where I hold most cards far from the 7.
        The partner reads it (ctx['signals']) and pushes that suit, never blocks it."""
        sig = ctx["signals"]
        prof = self.profile(seat)
        if kind == "cover" and seat not in sig:
            hand = st.hands[seat]
            need = [0] * 4
            for x in hand:
                need[x // 13] += abs(x % 13 - SEVEN)
            s = max(range(4), key=lambda k: need[k])
            insuit = [c for c in opts if c // 13 == s]
            sig[seat] = s
            if insuit:  # the code: cover the card of that suit nearest its 7 (not the cheapest card)
                return kind, min(insuit, key=lambda c: abs(c % 13 - SEVEN))
            return kind, min(opts, key=lambda c: self.cover_key(c, st, seat, prof))
        ps = sig.get(pseat)
        if ps is None:
            return super().choose(st, seat, ctx)
        if kind == "play":
            good = [c for c in opts if c // 13 == ps]
            if good:
                return kind, min(good, key=lambda c: self.rule_key(c, st, seat, kind, prof))
            return kind, min(opts, key=lambda c: self.rule_key(c, st, seat, kind, prof))
        notsuit = [c for c in opts if c // 13 != ps] or opts
        return kind, min(notsuit, key=lambda c: self.cover_key(c, st, seat, prof))


# --------------------------------------------------------------------------- think time
def think_ms(p, nopts, kind, rng, hand_ix):
    t = p.think
    base = t.get("base", 2.0)
    if t.get("tired"):
        base *= 1 + 0.6 * p.progress
    sec = base * (0.45 if nopts == 1 else 1 + 0.35 * (nopts - 1)) * math.exp(rng.gauss(0, t.get("sigma", 0.45)))
    if kind == "cover":
        sec *= t.get("cover_mult", 1.3)
    tail = t.get("tail", 0.02)
    if rng.random() < tail:
        sec *= rng.paretovariate(t.get("alpha", 1.1))  # heavy tail: phone calls, chat
    sec = min(sec, 600.0)
    return max(1, int(sec * 1000))


# --------------------------------------------------------------------------- rooms
def mk(pid, rng, **kw):
    kw.setdefault("think", {"base": rng.uniform(1.2, 3.5), "sigma": rng.uniform(0.3, 0.6)})
    kw.setdefault("suitpref", rng.sample([0, 1, 2, 3], 4))
    kw.setdefault("eps", rng.uniform(0.03, 0.2))
    kw.setdefault("sevens", rng.choice(["early", "hold", "neutral"]))
    kw.setdefault("cover", rng.choice(["lowest", "lowest", "deadsuit", "highfirst"]))
    kw.setdefault("dirpref", rng.choice([-1, 0, 1]))
    return Player(pid, rng, **kw)


def mkc(pid, rng, partner, style, w=2.0, **kw):
    p = mk(pid, rng, **kw)
    c = Colluder(pid, p.rng, partner=partner, style=style, w=w, eps=p.eps0, sevens=p.sevens, cover=p.cover,
                 dirpref=p.dirpref, suitpref=p.suitpref, think=p.think, eps_drift=p.eps_drift,
                 kind=p.kind, nsamp=p.nsamp, active_from=kw.get("active_from", 0.0))
    return c


def build_room(name, rng, nplayers):
    """Players, groups (sit together with a probability), truth."""
    P = {}
    groups = []  # (list of pids, probability of sitting together at a re-forming)
    truth = {"room": name, "colluders": [], "friends": [], "cheaters": [], "notes": ""}
    ids = [f"u{i:02d}" for i in range(nplayers)]

    def honest(pid, **kw):
        P[pid] = mk(pid, random.Random(rng.random()), **kw)

    def coll(a, b, style, w=2.0, prob=0.6, kwa=None, kwb=None, one_way=None):
        P[a] = mkc(a, random.Random(rng.random()), b, style, w, **(kwa or {}))
        P[b] = mkc(b, random.Random(rng.random()), a, one_way or style, w, **(kwb or {}))
        groups.append(([a, b], prob))
        truth["colluders"].append({"pair": [a, b], "style": style if not one_way else f"{style}->{one_way}"})

    if name == "honest_search_twins":
        # two strong search bots sitting together very often; a family of three with identical quirks;
        # seat-dependent habits for a few others.
        for pid in ids:
            honest(pid)
        for pid in ids[:2]:
            honest(pid, kind="search", nsamp=6, eps=0.01)
        groups.append((ids[:2], 0.8))
        truth["friends"].append({"group": ids[:2], "why": "two strong search bots, sit together 80%"})
        fam = ids[2:5]
        q = dict(sevens="hold", cover="deadsuit", dirpref=1, suitpref=[2, 0, 3, 1], eps=0.07)
        for pid in fam:
            honest(pid, **q)
        groups.append((fam, 0.9))
        truth["friends"].append({"group": fam, "why": "family with identical quirks, sit together 90%"})
        for pid in ids[5:9]:
            honest(pid, seat_habit={0: {"sevens": "early", "cover": "highfirst"}, 3: {"sevens": "hold", "eps": 0.25}})
        truth["notes"] = "u05-u08 change style by seat"
    elif name == "honest_mirror":
        # weak players who follow an expert (play the suit the expert just played), think times heavy-tailed,
        # missing for some, whole seconds for some
        for pid in ids:
            honest(pid, think={"base": rng.uniform(1, 4), "sigma": 0.8, "tail": 0.08, "alpha": 0.9})
        for e, w_ in [(ids[0], ids[1]), (ids[2], ids[3])]:
            honest(e, kind="search", nsamp=4, eps=0.02)
            honest(w_, eps=0.3)
            P[w_].follow = e
            groups.append(([e, w_], 0.85))
            truth["friends"].append({"group": [e, w_], "why": "weak player mirrors the expert's suit, sit together 85%"})
        truth["notes"] = "heavy-tailed think; u04-u07 have no ms; u08-u13 quantised to seconds"
    elif name == "honest_clones":
        # most players are bots of one identical policy; a few humans; improvers and tired players
        for pid in ids:
            honest(pid, eps=0.05, sevens="neutral", cover="lowest", dirpref=0, suitpref=[0, 1, 2, 3],
                   think={"base": 1.0, "sigma": 0.1})
        for pid in ids[-6:-3]:
            honest(pid, eps=0.3, eps_drift=-0.28)
        for pid in ids[-3:]:
            honest(pid, eps=0.04, eps_drift=0.4, think={"base": 2.5, "sigma": 0.5, "tired": True})
        groups.append((ids[:3], 0.7))
        truth["friends"].append({"group": ids[:3], "why": "three clone bots from one operator, sit together 70%"})
        truth["notes"] = "clones u00..; improvers and tired players at the end"
    elif name == "blockers":
        # honest "hold the 7s" blockers, two of them friends sitting together a lot
        for pid in ids:
            honest(pid)
        for pid in ids[:4]:
            honest(pid, sevens="hold", cover="block", eps=0.04)
        groups.append((ids[:2], 0.8))
        truth["friends"].append({"group": ids[:2], "why": "two honest blockers, sit together 80%"})
    elif name == "honest_highcover":
        # honest humans who follow the seed text's advice: with a bad hand cover the big cards early
        # ("假如你只能选择扣A或Q的时候，你应该毫不犹豫地选择Q"), most of them holding their 7s
        for pid in ids:
            honest(pid, cover=rng.choice(["lowest", "lowest", "deadsuit"]))
        for pid in ids[:8]:
            honest(pid, cover="highfirst", sevens=rng.choice(["hold", "hold", "neutral"]))
        truth["notes"] = "u00-u07 cover high cards early (highfirst), honest"
    else:
        for pid in ids:
            honest(pid)
        if name == "coll_behind":
            coll(ids[0], ids[1], "behind", w=2.5)
            coll(ids[2], ids[3], "behind", w=1.5)
        elif name == "coll_signal":
            coll(ids[0], ids[1], "signal")
            coll(ids[2], ids[3], "signal", prob=0.4)
        elif name == "coll_sacrifice":
            # u00 sacrifices for u01 (u01 plays honestly)
            P[ids[0]] = mkc(ids[0], random.Random(rng.random()), ids[1], "sacrifice", 3.0)
            groups.append((ids[:2], 0.6))
            truth["colluders"].append({"pair": ids[:2], "style": "sacrifice u00 for u01"})
            P[ids[2]] = mkc(ids[2], random.Random(rng.random()), ids[3], "sacrifice", 1.5)
            groups.append((ids[2:4], 0.6))
            truth["colluders"].append({"pair": ids[2:4], "style": "sacrifice u02 for u03 (weaker)"})
        elif name == "coll_oneway":
            coll(ids[0], ids[1], "spotter", one_way="beneficiary", kwb={"nsamp": 4})
            coll(ids[2], ids[3], "spotter", one_way="beneficiary", kwb={"nsamp": 4}, kwa={}, prob=0.6)
            # honest search bots too, so that "a search bot" is not the tell
            for pid in ids[4:7]:
                honest(pid, kind="search", nsamp=4, eps=0.03)
        elif name == "coll_late":
            coll(ids[0], ids[1], "mutual", w=2.0, kwa={"active_from": 2 / 3}, kwb={"active_from": 2 / 3})
            coll(ids[2], ids[3], "mutual", w=2.0, kwa={"active_from": 2 / 3}, kwb={"active_from": 2 / 3}, prob=0.4)
        elif name == "coll_twopairs":
            coll(ids[0], ids[1], "mutual", w=1.5)
            coll(ids[2], ids[3], "mutual", w=1.5)
            groups.append((ids[:4], 0.7))  # the two pairs at one table
        elif name == "omniscient":
            P[ids[0]] = mkc(ids[0], random.Random(rng.random()), None, "omniscient", kind="search", nsamp=3)
            truth["cheaters"].append({"player": ids[0], "style": "sees every hand (no partner)"})
        else:
            raise SystemExit(f"unknown room {name}")
    return P, groups, truth


def seat_tables(present, groups, rng):
    """Partition present players into tables of 4; groups sit together with their probability."""
    pool = list(present)
    rng.shuffle(pool)
    blocks = []
    used = set()
    for g, p in sorted(groups, key=lambda x: -len(x[0])):
        members = [x for x in g if x in pool and x not in used]
        if len(members) >= 2 and rng.random() < p:
            blocks.append(members[:4])
            used |= set(members[:4])
    rest = [x for x in pool if x not in used]
    tables = []
    for b in blocks:
        tables.append(list(b))
    # fill partial tables
    for t in tables:
        while len(t) < 4 and rest:
            t.append(rest.pop())
    full = [t for t in tables if len(t) == 4]
    while len(rest) >= 4:
        full.append([rest.pop() for _ in range(4)])
    for t in full:
        rng.shuffle(t)
    return full


def run(name, seed, hands, out, nplayers=None, reform="blocks"):
    rng = random.Random(seed)
    nplayers = nplayers or {"honest_clones": 32, "coll_twopairs": 20, "omniscient": 24}.get(name, rng.choice([20, 24, 28]))
    P, groups, truth = build_room(name, rng, nplayers)
    pids = sorted(P)
    session = {p: 0 for p in pids}
    t0 = datetime(2026, 3, 1, 19, 0, tzinfo=timezone.utc)
    clock = t0
    nh = 0
    block = 0
    together = {}
    quant = set(pids[8:14]) if name == "honest_mirror" else set()
    nomss = set(pids[4:8]) if name == "honest_mirror" else set()
    with open(out, "w") as f:
        while nh < hands:
            # players come and go: ~85% present each block
            present = [p for p in pids if rng.random() < 0.85]
            tables = seat_tables(present, groups, rng)
            L = rng.randint(*BLOCK_LEN)
            for ti, tab in enumerate(tables):
                for p in tab:
                    P[p].progress = nh / hands
                for a in tab:
                    for b in tab:
                        if a < b:
                            together[(a, b)] = together.get((a, b), 0) + L
                tclock = clock
                for _k in range(L):
                    if nh >= hands:
                        break
                    deck = list(range(52))
                    rng.shuffle(deck)
                    deal = [sorted(deck[13 * i:13 * i + 13]) for i in range(4)]
                    first = next(i for i in range(4) if SEVEN in deal[i])
                    st = State(deal, first)
                    seat_of = {p: i for i, p in enumerate(tab)}
                    ctx = {"seat_of": seat_of, "session": session, "signals": {}, "follow_last": None}
                    acts = []
                    ms = 0
                    last_by = {}
                    lastw = 0
                    while not st.done():
                        seat = st.turn
                        pl = P[tab[seat]]
                        if pl.follow is not None and pl.follow in seat_of:
                            ctx["follow_last"] = last_by.get(seat_of[pl.follow])
                        else:
                            ctx["follow_last"] = None
                        kind, opts = st.options(seat)
                        kd, c = pl.choose(st, seat, ctx)
                        assert kd == kind and c in opts, (kd, kind, c, opts)
                        ms += think_ms(pl, len(opts), kind, rng, nh)
                        st.apply(kd, c)
                        if kd == "play":
                            last_by[seat] = c
                        a = {"seat": seat, "kind": kd, "card": code(c)}
                        if pl.pid not in nomss:
                            a["ms"] = max(lastw, (ms // 1000) * 1000) if pl.pid in quant else ms
                            lastw = a["ms"]
                        acts.append(a)
                    sc, pen, tong, dutou = st.scores()
                    for i, p in enumerate(tab):
                        session[p] += sc[i]
                    rec = {"format": "bieqi-log", "version": 1, "variant": "bieqi",
                           "hand_id": f"{name}-{seed}-{nh:05d}", "table_id": f"T{ti}-b{block}",
                           "started_at": tclock.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "players": list(tab), "deal": [[code(c) for c in h] for h in deal],
                           "actions": acts, "result": {"scores": sc}}
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    tclock += timedelta(milliseconds=ms + 15000)
                    nh += 1
            clock += timedelta(minutes=L * 3)
            block += 1
    truth["hands"] = nh
    truth["seed"] = seed
    truth["players"] = len(pids)
    def key(a, b):
        return (min(a, b), max(a, b))
    for c in truth["colluders"]:
        c["hands_together_approx"] = together.get(key(*c["pair"]), 0)
    for g in truth["friends"]:
        g["hands_together_approx"] = {f"{a}+{b}": together.get(key(a, b), 0) for a in g["group"] for b in g["group"] if a < b}
    with open(out.replace(".jsonl", "") + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--room", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hands", type=int, default=2400)
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    run(a.room, a.seed, a.hands, a.out, a.players)
