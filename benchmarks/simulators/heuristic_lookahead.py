#!/usr/bin/env python3
"""Rooms of random, greedy, softmax-heuristic and small-lookahead bots, with friends, habits and colluders.

An independent simulator: written from the rules alone, importing nothing of the analyzer, with other bots, room
shapes, think-time noise and collusion styles than the analyzer's own simulator, so the audit is measured on play
it was not built on. Every random choice comes from ``--seed`` and the style's name.

    python -m benchmarks.simulators.heuristic_lookahead --style STYLE --seed N --out room.jsonl [--hands 2400]
        [--players 20] [--runs 5-10]

Styles: honest_friends, honest_habits, honest_longtables, honest_chatty, honest_club, honest_casual, honest_mentor,
share, late_feed, block, signal, trio, part20, weak_share, cover_only (benchmarks/README.md says what
each is). Writes room.jsonl and room.truth.json (colluders, friends, habits, each player's bot, hands together).
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
S7 = 0 * 13 + SEVEN  # 7 of spades: suit 0


def code(c):
    return RANKS[c % 13] + SUITS[c // 13]


def pts(c):
    return c % 13 + 1


def beyond(c):
    """cards of c's suit that can only be played after c (away from the 7)."""
    s, r = divmod(c, 13)
    if r == SEVEN:
        return [s * 13 + x for x in range(13) if x != SEVEN]
    if r < SEVEN:
        return [s * 13 + x for x in range(0, r)]
    return [s * 13 + x for x in range(r + 1, 13)]


def next_cards(c):
    """cards made live by playing c (7S also makes the other 7s live)."""
    s, r = divmod(c, 13)
    out = []
    if r == SEVEN:
        out = [c - 1, c + 1]
        if c == S7:
            out += [13 + SEVEN, 26 + SEVEN, 39 + SEVEN]
    elif r < SEVEN and r > 0:
        out = [c - 1]
    elif r > SEVEN and r < 12:
        out = [c + 1]
    return out


# ----------------------------------------------------------------------------- game state
class Game:
    __slots__ = ("hands", "live", "dead", "covered", "turn", "n", "last7", "lastact", "played", "covers_seen", "lastkind")

    def __init__(self, deal):
        self.hands = [set(h) for h in deal]
        self.live = {S7}
        self.dead = set()  # cards beyond a covered card (never playable)
        self.covered = [[] for _ in range(4)]
        self.turn = next(s for s in range(4) if S7 in self.hands[s])
        self.n = 0
        self.last7 = [False] * 4
        self.lastact = [-1] * 4
        self.played = set()
        self.covers_seen = [0] * 4  # number of covers per seat (public)
        self.lastkind = {}

    def copy(self):
        g = Game.__new__(Game)
        g.hands = [set(h) for h in self.hands]
        g.live = set(self.live)
        g.dead = set(self.dead)
        g.covered = [list(x) for x in self.covered]
        g.turn, g.n = self.turn, self.n
        g.last7 = list(self.last7)
        g.lastact = list(self.lastact)
        g.played = set(self.played)
        g.covers_seen = list(self.covers_seen)
        g.lastkind = dict(self.lastkind)
        return g

    def options(self):
        h = self.hands[self.turn]
        lv = [c for c in h if c in self.live]
        if lv:
            return "play", sorted(lv)
        return "cover", sorted(h)

    def push(self, kind, c):
        t = self.turn
        self.hands[t].discard(c)
        if kind == "play":
            assert c in self.live
            self.live.discard(c)
            self.played.add(c)
            for x in next_cards(c):
                self.live.add(x)
            self.last7[t] = c % 13 == SEVEN
        else:
            self.covered[t].append(c)
            self.covers_seen[t] += 1
            self.last7[t] = False
            for x in beyond(c):
                self.dead.add(x)
        self.lastact[t] = self.n
        self.lastkind[t] = kind
        self.n += 1
        self.turn = (t + 1) % 4

    def done(self):
        return self.n >= 52

    def dead_for(self, seats):
        """cards known dead to a player who saw the covers of these seats (its own, a partner's): covered
        cards are face down, so an honest player only knows the cards beyond its own covers."""
        out = set()
        for s in seats:
            for c in self.covered[s]:
                out.update(beyond(c))
        return out


def settle(covered, last7, lastact):
    """Scoring from the rules: 通 x2/x4/x8 on the others, each 独头七 x8 (stacked); score = sum of
    (others' points - own points)."""
    points = [sum(pts(c) for c in cv) for cv in covered]
    tong = [s for s in range(4) if points[s] == 0]
    dutou = [s for s in tong if last7[s]]
    factor = [1, 2, 4, 8, 1][len(tong)]
    factor *= 8 ** len(dutou)
    mult = [factor if p else 1 for p in points]
    final = [p * m for p, m in zip(points, mult)]
    total = sum(final)
    scores = [total - 4 * f for f in final]
    ranking = [s for _, _, s in sorted(zip(final, lastact, range(4)))]
    return dict(scores=scores, points=points, multipliers=mult, tong=tong, dutou=dutou, ranking=ranking)


# ----------------------------------------------------------------------------- evaluation helpers
def reach_cost(g, c, dead):
    """how many cards must still be played before c becomes live (inf if known dead / suit blocked)."""
    if c in dead:
        return 99
    if c in g.live:
        return 0
    s, r = divmod(c, 13)
    if r == SEVEN:
        return 1 if S7 not in g.played else 0
    step = 1 if r > SEVEN else -1
    k = 0
    x = s * 13 + SEVEN
    # walk from the 7 towards c counting unplayed cards
    rr = SEVEN
    while rr != r:
        if x not in g.played:
            k += 1
        rr += step
        x += step
    return k


def play_value(g, me, c, mine, friends=(), w_own=3.0, w_friend=0.0, w_opp=1.0, known_opp=None, dead=None):
    """Value of playing c: own cards (and friends' cards) it brings closer, minus cards of others it opens.
    mine: my hand; friends: set of cards of partners (known); known_opp: set of cards known to be opponents'
    (else: all unseen cards count with weight w_opp * p_opp)."""
    v = 0.0
    if dead is None:
        dead = g.dead_for([me])
    run = beyond(c)
    # order away from the 7 : nearest first
    s, r = divmod(c, 13)
    if r == SEVEN:
        low = [x for x in run if x % 13 < SEVEN][::-1]
        high = [x for x in run if x % 13 > SEVEN]
        dirs = [low, high]
    else:
        dirs = [run if r > SEVEN else run[::-1]]
    for d in dirs:
        for i, x in enumerate(d):
            if x in g.played or x in dead:
                break
            near = 1.0 / (1 + i)
            if x in mine:
                v += w_own * pts(x) * near * 0.25
            elif x in friends:
                v += w_friend * pts(x) * near * 0.25
            else:
                if known_opp is None or x in known_opp:
                    v -= w_opp * pts(x) * near * 0.25
    if c == S7:
        pass
    return v


def cover_cost(g, me, c, mine, friends=(), w_own=3.0, w_friend=0.0, w_opp=1.0, known_opp=None, dead=None):
    """Cost of covering c: own points (weight w_own) incl. own cards it strands, minus opponents' cards it
    strands (they must cover them)."""
    cost = w_own * pts(c)
    if dead is None:
        dead = g.dead_for([me])
    for x in beyond(c):
        if x in g.played or x in dead:
            continue
        if x in mine:
            cost += w_own * pts(x)
        elif x in friends:
            cost += w_friend * pts(x)
        elif known_opp is None or x in known_opp:
            cost -= w_opp * pts(x) * 0.7
    return cost


def softmax_pick(rng, opts, vals, temp):
    if temp <= 0:
        m = max(vals)
        best = [o for o, v in zip(opts, vals) if v == m]
        return rng.choice(best)
    m = max(vals)
    ws = [math.exp((v - m) / temp) for v in vals]
    t = sum(ws)
    x = rng.random() * t
    for o, w in zip(opts, ws):
        x -= w
        if x <= 0:
            return o
    return opts[-1]


# ----------------------------------------------------------------------------- players
class Player:
    def __init__(self, pid, kind, rng, temp=1.0, pace=1.0, habit=None):
        self.pid, self.kind, self.temp, self.pace, self.habit = pid, kind, temp, pace, habit
        self.rng = rng
        self.collude = None  # set per hand by the room: dict(partners=set(pids), mode=...)

    # honest decision; returns card
    def honest(self, g, kind, opts):
        me = g.turn
        mine = g.hands[me]
        rng = self.rng
        k = self.kind
        if len(opts) == 1:
            return opts[0]
        if k == "random":
            return rng.choice(opts)
        if kind == "cover":
            if self.habit == "cover_high":
                return max(opts, key=lambda c: (pts(c), c))
            if k == "greedy":
                return min(opts, key=lambda c: (pts(c), rng.random()))
            vals = [-cover_cost(g, me, c, mine) for c in opts]
            return softmax_pick(rng, opts, vals, self.temp * 3)
        # play
        if self.habit == "sevens_first":
            sev = [c for c in opts if c % 13 == SEVEN]
            if sev:
                return rng.choice(sev)
        if k == "greedy":
            # plays the card that opens the most of its own cards, else random
            vals = [sum(1 for x in next_cards(c) if x in mine) + rng.random() * 0.5 for c in opts]
            return opts[max(range(len(opts)), key=lambda i: vals[i])]
        if k == "lookahead" and g.n < 44:
            return self.lookahead(g, kind, opts)
        vals = [play_value(g, me, c, mine) for c in opts]
        if self.habit == "starve_next":
            # public-information habit: if the next player covered on its last turn, avoid opening
            # cards we do not hold ourselves (keep him starved); treats one seat specially
            nxt = (me + 1) % 4
            if g.lastact[nxt] >= 0 and g.covers_seen[nxt] > 0 and g.n - g.lastact[nxt] <= 3 and \
                    self._last_was_cover(g, nxt):
                vals = [v - 4.0 * sum(1 for x in next_cards(c) if x not in mine and x not in g.played)
                        for v, c in zip(vals, opts)]
        return softmax_pick(rng, opts, vals, self.temp)

    @staticmethod
    def _last_was_cover(g, seat):
        return g.lastkind.get(seat) == "cover"

    def lookahead(self, g, kind, opts, samples=3):
        me = g.turn
        rng = self.rng
        # cards I cannot see: others' hands and others' (face-down) covers
        unseen = [c for s in range(4) if s != me for c in list(g.hands[s]) + g.covered[s]]
        counts = [len(g.hands[s]) for s in range(4)]
        ncov = [len(g.covered[s]) for s in range(4)]
        tot = {o: 0.0 for o in opts}
        for _ in range(samples):
            rng.shuffle(unseen)
            hs = [None] * 4
            cs = [None] * 4
            i = 0
            for s in range(4):
                if s == me:
                    hs[s] = set(g.hands[me])
                    cs[s] = list(g.covered[me])
                else:
                    hs[s] = set(unseen[i:i + counts[s]])
                    i += counts[s]
                    cs[s] = unseen[i:i + ncov[s]]
                    i += ncov[s]
            for o in opts:
                tot[o] += greedy_playout(g, hs, cs, kind, o)[me]
        m = max(tot.values())
        return rng.choice([o for o in opts if tot[o] == m])


def greedy_playout(g, hs, cs, kind, o):
    """Final scores of the game ``g`` on the deal of hands ``hs`` and covers ``cs`` after option ``o`` (of ``kind``),
    everyone then playing greedily (the lookahead's rollout)."""
    h = g.copy()
    h.hands = [set(x) for x in hs]
    h.covered = [list(x) for x in cs]
    h.push(kind, o)
    while not h.done():
        kk, oo = h.options()
        if len(oo) == 1:
            c = oo[0]
        elif kk == "cover":
            c = min(oo, key=lambda c: cover_cost(h, h.turn, c, h.hands[h.turn]))
        else:
            c = max(oo, key=lambda c: play_value(h, h.turn, c, h.hands[h.turn]))
        h.push(kk, c)
    return settle(h.covered, h.last7, h.lastact)["scores"]


# ----------------------------------------------------------------------------- colluding decisions
def colluding_choice(p, g, kind, opts, seat_of, info):
    """Decision of a colluder. info: dict(mode, partners(seats), need_suit...). Returns card or None (honest)."""
    me = g.turn
    mine = g.hands[me]
    mode = info["mode"]
    rng = p.rng
    pseats = info["pseats"]
    friends = set().union(*[g.hands[s] for s in pseats]) if pseats else set()
    # what the colluders cannot see: opponents' hands and opponents' face-down covers
    opp = set(c for s in range(4) if s != me and s not in pseats for c in list(g.hands[s]) + g.covered[s])
    dead = g.dead_for([me] + list(pseats))
    if len(opts) == 1:
        return opts[0]
    if mode in ("share", "trio"):
        # minimise joint loss: partner's points count as own, opponents' exactly known
        if kind == "cover":
            vals = [-cover_cost(g, me, c, mine, friends, w_own=1.0, w_friend=1.0, w_opp=1.0, known_opp=opp, dead=dead)
                    for c in opts]
            return softmax_pick(rng, opts, vals, max(p.temp, 0.3) * 2)
        vals = [play_value(g, me, c, mine, friends, w_own=1.0, w_friend=1.0, w_opp=1.0, known_opp=opp, dead=dead)
                for c in opts]
        return softmax_pick(rng, opts, vals, max(p.temp, 0.3))
    if mode == "late_feed":
        # only late in the hand, and only when the partner holds many points still far from live
        if g.n < 26 or kind != "play":
            return None
        ps = pseats[0]
        at_risk = sum(pts(x) for x in g.hands[ps] if reach_cost(g, x, dead) > 0)
        if at_risk < 20:
            return None
        feeding = [c for c in opts if any(x in g.hands[ps] for x in next_cards(c))
                   or any(x in g.hands[ps] for x in beyond(c)[:2])]
        if feeding:
            return max(feeding, key=lambda c: sum(pts(x) for x in beyond(c) if x in g.hands[ps]))
        return None
    if mode == "block":
        # plays honestly, but avoids plays that open a card an opponent holds (and not the partner)
        if kind == "play":
            h = p.honest(g, kind, opts)
            if any(x in opp for x in next_cards(h)):
                alt = [c for c in opts if not any(x in opp for x in next_cards(c))]
                if alt:
                    return max(alt, key=lambda c: play_value(g, me, c, mine, friends, 3, 1, 1, opp, dead))
            return h
        # covers: shut suits whose run beyond holds opponents' cards, never the partner's
        vals = [-cover_cost(g, me, c, mine, friends, w_own=3.0, w_friend=3.0, w_opp=1.5, known_opp=opp, dead=dead)
                for c in opts]
        return softmax_pick(rng, opts, vals, max(p.temp, 0.3) * 3)
    if mode == "cover_only":
        # plays are honest; only the (face-down) cover choices use the partner's hand: never shut a suit the
        # partner still needs, prefer shutting suits whose cards the opponents hold
        if kind == "play":
            return None
        vals = [-cover_cost(g, me, c, mine, friends, w_own=3.0, w_friend=3.0, w_opp=1.5, known_opp=opp, dead=dead)
                for c in opts]
        return softmax_pick(rng, opts, vals, max(p.temp, 0.3) * 3)
    if mode == "signal":
        # partner told us (by its think time) one suit it needs; feed that suit, never shut it
        need = info.get("need")
        if need is None:
            return None
        if kind == "play":
            ins = [c for c in opts if c // 13 == need]
            if ins and rng.random() < 0.85:
                return max(ins, key=lambda c: play_value(g, me, c, mine))
            return None
        outs = [c for c in opts if c // 13 != need]
        if outs:
            return min(outs, key=lambda c: cover_cost(g, me, c, mine))
        return None
    return None


def need_suit(g, seat):
    """suit in which the seat holds the most points not yet live"""
    best, bs = -1, None
    for s in range(4):
        v = sum(pts(x) for x in g.hands[seat] if x // 13 == s and x not in g.live)
        if v > best:
            best, bs = v, s
    return bs


# ----------------------------------------------------------------------------- room
AWARE = 1.0
CHAT_FACTOR = 1.4
STYLE_MODES = {"share": "share", "late_feed": "late_feed", "block": "block", "signal": "signal",
               "trio": "trio", "part20": "share", "weak_share": "share", "cover_only": "cover_only"}


def build_players(style, rng, n):
    ids = [f"u{rng.randrange(100, 999)}{chr(97 + i % 26)}" for i in range(n)]
    ids = list(dict.fromkeys(ids))
    while len(ids) < n:
        ids.append(f"x{len(ids)}")
    kinds = []
    for _ in range(n):
        r = rng.random()
        if r < 0.12:
            k, t = "random", 0
        elif r < 0.35:
            k, t = "greedy", 0
        elif r < 0.85:
            k, t = "heur", rng.choice([0.2, 0.5, 1.0, 2.0, 4.0])
        else:
            k, t = "lookahead", 0
        kinds.append((k, t))
    players = {}
    for i, pid in enumerate(ids):
        k, t = kinds[i]
        pace = math.exp(rng.gauss(0.0, 0.35)) * (1.5 if k == "lookahead" else 1.0)
        players[pid] = Player(pid, k, random.Random(rng.random()), temp=t, pace=pace)
    return ids, players


def think_ms(rng, p, nopts, table_lag, slow_extra=0.0):
    if nopts == 1:
        t = 0.45 * p.pace * math.exp(rng.gauss(0, 0.3))
    else:
        t = p.pace * (0.7 + 0.45 * math.log2(nopts)) * math.exp(rng.gauss(0, 0.45))
        t += slow_extra
    t *= table_lag
    if rng.random() < 0.015:
        t += rng.uniform(3, 20)  # distraction
    return max(50, int(t * 1000))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--style", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hands", type=int, default=2400)
    ap.add_argument("--players", type=int, default=20)
    ap.add_argument("--seek", type=float, default=0.8)
    ap.add_argument("--runs", default="", help="hands a table sits before re-forming, e.g. 5-10 (default 5-50)")
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--aware", type=float, default=1.0)
    ap.add_argument("--share", type=float, default=None)
    ap.add_argument("--friends", type=int, default=None)
    ap.add_argument("--friend-seek", type=float, default=None)
    ap.add_argument("--chat-factor", type=float, default=1.4, help="honest_chatty: friends' think-time factor together")
    a = ap.parse_args(argv)
    global CHAT_FACTOR, AWARE
    CHAT_FACTOR = a.chat_factor
    AWARE = a.aware
    rng = random.Random(a.seed * 7919 + sum(map(ord, a.style)))
    style = a.style
    ids, P = build_players(style, rng, a.players)
    groups = []  # (members, kind, together_prob, fixed_order)
    colluders = []
    mode = STYLE_MODES.get(style)
    truth = {"style": style, "seed": a.seed, "colluders": [], "friends": [], "habits": {}}
    idx = list(range(a.players))
    rng.shuffle(idx)
    def take(k):
        return [ids[idx.pop()] for _ in range(k)]
    for _pair in range(a.pairs if mode else 0):
        size = 3 if style == "trio" else 2
        cl = take(size)
        for c in cl:
            if style == "weak_share":
                P[c].kind, P[c].temp = rng.choice([("random", 0), ("heur", 6.0)])
            elif P[c].kind in ("random", "lookahead"):
                P[c].kind, P[c].temp = "heur", 1.0
        share = a.share if a.share is not None else (0.2 if style == "part20" else 1.0)
        colluders.append(dict(members=cl, mode=mode, share=share))
        groups.append((cl, "coll", a.seek, False))
        truth["colluders"].append(dict(players=cl, mode=mode, share=share,
                                       kinds=[P[c].kind + f":{P[c].temp}" for c in cl]))
    if style == "honest_club":
        # 4 regulars who play together at one table most of the time, always in the same seats,
        # each with a strong personal habit (public-information seat habit, cover-high, sevens-first)
        club = take(4)
        habits = ["starve_next", "starve_next", "cover_high", "sevens_first"]
        for m, hb in zip(club, habits):
            P[m].kind, P[m].temp, P[m].habit = "heur", 0.5, hb
        groups.append((club, "club", 0.9, True))
        truth["friends"] += [dict(players=[x, y], fixed_order=True, club=True)
                             for i, x in enumerate(club) for y in club[i + 1:]]
    # friends: every room has 2 friend pairs (hard negatives)
    nf = a.friends if a.friends is not None else (3 if style.startswith("honest") else 2)
    for fi in range(nf):
        fr = take(2)
        fixed = False
        if style == "honest_habits" or (style.startswith("honest") and fi == 0):
            fixed = True  # always sit in the same order: fr[1] right after fr[0]
        if style == "honest_mentor":
            # a strong player who nearly always plays with a novice friend (spouse, kid): random-legal novice
            P[fr[0]].kind, P[fr[0]].temp = "heur", 0.2
            P[fr[1]].kind, P[fr[1]].temp = "random", 0
        if style == "honest_casual":
            P[fr[0]].kind, P[fr[0]].temp = "heur", 0.3
            P[fr[1]].kind, P[fr[1]].temp = "heur", 0.5
        if style == "honest_habits":
            P[fr[0]].habit = "starve_next" if fi == 0 else ("cover_high" if fi == 1 else "sevens_first")
            P[fr[0]].kind, P[fr[0]].temp = "heur", 0.5
            P[fr[1]].kind, P[fr[1]].temp = "heur", 0.5
            if fi == 0:
                P[fr[1]].habit = "starve_next"
        fprob = 0.95 if style == "honest_mentor" else (0.75 if style != "honest_longtables" else 0.9)
        groups.append((fr, "friend", a.friend_seek if a.friend_seek is not None else fprob, fixed))
        truth["friends"].append(dict(players=fr, fixed_order=fixed))
    if style == "honest_habits":
        # more habits among the rest
        for pid in ids:
            if P[pid].habit is None and rng.random() < 0.4:
                P[pid].habit = rng.choice(["cover_high", "sevens_first", "starve_next"])
                if P[pid].kind in ("random", "lookahead"):
                    P[pid].kind, P[pid].temp = "heur", 1.0
    for pid in ids:
        if P[pid].habit:
            truth["habits"][pid] = P[pid].habit
    truth["kinds"] = {pid: f"{P[pid].kind}:{P[pid].temp}" for pid in ids}

    run_lo, run_hi = (30, 50) if style == "honest_longtables" else (5, 50)
    if a.runs:
        run_lo, run_hi = map(int, a.runs.split("-"))
    out = open(a.out, "w")
    t0 = datetime(2026, 10, 1, 18, 0, tzinfo=timezone.utc)
    hands = 0
    rnd = 0
    together = {}
    colluding_hands = {}
    while hands < a.hands:
        rnd += 1
        present = [p for p in ids if rng.random() < 0.9]
        rng.shuffle(present)
        tables = []
        used = set()
        for members, _gk, prob, _fixed in groups:
            if all(m in present for m in members) and rng.random() < prob:
                tables.append(list(members))
                used |= set(members)
        rest = [p for p in present if p not in used]
        # fill partial tables, then make new ones
        for t in tables:
            while len(t) < 4 and rest:
                t.append(rest.pop())
        while len(rest) >= 4:
            tables.append([rest.pop() for _ in range(4)])
        tables = [t for t in tables if len(t) == 4]
        # seat order
        seated = []
        for t in tables:
            order = t[:]
            rng.shuffle(order)
            for members, _gk, _prob, fixed in groups:
                if fixed and all(m in order for m in members):
                    # members sit in their fixed order: members[1] right after members[0], ...
                    for m in members[1:]:
                        order.remove(m)
                    at = order.index(members[0]) + 1
                    for j, m in enumerate(members[1:]):
                        order.insert(at + j, m)
            seated.append(order)
        for ti, order in enumerate(seated):
            nh = rng.randint(run_lo, run_hi)
            lag = math.exp(rng.gauss(0, 0.2))
            tid = f"r{rnd:03d}t{ti}"
            clock = t0 + timedelta(minutes=rnd * 40)
            for _ in range(nh):
                if hands >= a.hands:
                    break
                chat = set()
                if style in ("honest_chatty", "honest_casual"):
                    for f in truth["friends"]:
                        if all(x in order for x in f["players"]):
                            chat |= set(f["players"])
                rec = play_hand(rng, P, order, colluders, lag, style, chat)
                hands += 1
                rec["hand_id"] = f"{style}-{a.seed}-{hands:05d}"
                rec["table_id"] = tid
                rec["started_at"] = clock.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                clock += timedelta(milliseconds=rec["actions"][-1]["ms"] + rng.randint(3000, 15000))
                coll_flag = rec.pop("_colluded")
                for i in range(4):
                    for j in range(i + 1, 4):
                        k = tuple(sorted((order[i], order[j])))
                        together[k] = together.get(k, 0) + 1
                        if coll_flag:
                            colluding_hands[k] = colluding_hands.get(k, 0) + coll_flag.get(k, 0)
                out.write(json.dumps(rec, separators=(",", ":")) + "\n")
    out.close()
    for c in truth["colluders"]:
        m = c["players"]
        c["hands_together"] = {f"{x}|{y}": together.get(tuple(sorted((x, y))), 0)
                               for i, x in enumerate(m) for y in m[i + 1:]}
        c["colluding_hands"] = {f"{x}|{y}": colluding_hands.get(tuple(sorted((x, y))), 0)
                                for i, x in enumerate(m) for y in m[i + 1:]}
    for f in truth["friends"]:
        x, y = f["players"]
        f["hands_together"] = together.get(tuple(sorted((x, y))), 0)
    truth["hands"] = hands
    truth["together"] = {f"{a}|{b}": v for (a, b), v in together.items()}
    json.dump(truth, open(a.out.rsplit(".jsonl", 1)[0] + ".truth.json", "w"), indent=1)
    print(json.dumps({k: v for k, v in truth.items() if k not in ("together", "kinds")}, indent=None))


def play_hand(rng, P, order, colluders, lag, style, chat=()):
    deck = list(range(52))
    rng.shuffle(deck)
    deal = [sorted(deck[i * 13:(i + 1) * 13]) for i in range(4)]
    g = Game(deal)
    seat_of = {pid: i for i, pid in enumerate(order)}
    # colluding info for this hand
    cinfo = {}
    coll_flag = {}
    for c in colluders:
        present = [m for m in c["members"] if m in seat_of]
        if len(present) < 2:
            continue
        if rng.random() >= c["share"]:
            continue
        for m in present:
            cinfo[seat_of[m]] = dict(mode=c["mode"], pseats=[seat_of[x] for x in present if x != m])
        for i, x in enumerate(present):
            for y in present[i + 1:]:
                coll_flag[tuple(sorted((x, y)))] = 1
    # the signal style: each colluder's need suit is sent by the think time of its first real decision
    signal_sent = {}
    actions = []
    ms = 0
    while not g.done():
        seat = g.turn
        p = P[order[seat]]
        kind, opts = g.options()
        card = None
        slow = 0.0
        info = cinfo.get(seat)
        if info is not None:
            if info["mode"] == "signal":
                # partner's need (if the partner has signalled already)
                ps = info["pseats"][0]
                info["need"] = signal_sent.get(ps)
            if style == "weak_share" and rng.random() < 0.4:
                card = None
            elif AWARE < 1.0 and len(opts) > 1 and rng.random() >= AWARE:
                card = None
            else:
                card = colluding_choice(p, g, kind, opts, seat_of, info)
            if info["mode"] in ("share", "trio") and len(opts) > 1:
                slow = 0.6 * math.exp(rng.gauss(0, 0.5))  # reading the partner's cards
        if card is None:
            if style == "honest_casual" and p.pid in chat and rng.random() < 0.6:
                card = rng.choice(opts)  # plays carelessly (fun mode) when sitting with the friend
            else:
                card = p.honest(g, kind, opts)
        t = think_ms(rng, p, len(opts), lag, slow)
        if chat and p.pid in chat:
            t = int(t * (CHAT_FACTOR if style == "honest_chatty" else 0.8))  # chatting: slower; casual: faster
        if info is not None and info["mode"] == "signal" and seat not in signal_sent and len(opts) > 1:
            s = need_suit(g, seat)
            signal_sent[seat] = s
            t = int((1.2 + 0.9 * s) * 1000 * math.exp(rng.gauss(0, 0.08)))  # 1.2 / 2.1 / 3.0 / 3.9 s
        ms += t
        actions.append({"seat": seat, "kind": kind, "card": code(card), "ms": ms})
        g.push(kind, card)
    res = settle(g.covered, g.last7, g.lastact)
    rec = {"format": "bieqi-log", "version": 1, "variant": "bieqi", "hand_id": "",
           "players": list(order), "deal": [[code(c) for c in h] for h in deal],
           "actions": actions, "result": res, "_colluded": coll_flag}
    return rec


if __name__ == "__main__":
    main()
