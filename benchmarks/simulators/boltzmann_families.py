"""Rooms of shedder, spoiler, hoarder, Monte Carlo, fumbler and day-shift bots with Boltzmann noise and fatigue.

An independent simulator for standard 憋七, for an outside test of the collusion audit, written only from the seed
rule texts, the log format, the schemas, the README and the samples (not from the analyzer's simulator, the other
independent simulators or the detection code). Its own rules engine, bots, noise (temperature, fatigue, endgame
blunders, misclicks, time-outs), think times, room model and collusion styles.

    python -m benchmarks.simulators.boltzmann_families --list
    python -m benchmarks.simulators.boltzmann_families --room c-losing --hands 1000 --seed 5 --out /tmp/i5/r.jsonl.gz
    python -m benchmarks.simulators.boltzmann_families --room c-losing --hands 3000 --seed 5 --ab   # paired gain

Every random choice comes from a seeded stream: the room (players, seating, clocks) from (seed, room), each
hand's deal and each seat's choices and think times from (seed, room, hand number, seat), so a run with the help
switched off (--no-help, --ab) sees the same seating and deals.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import math
import os
import random
import sys

SUITS = "SHDC"
RANKS = "A23456789TJQK"
TONG_FACTORS = (1, 2, 4, 8, 1)
DUTOU_FACTOR = 8
TURN_CLOCK_MS = 20000  # the server acts for a player who has not acted within 20 s
LOSING = 200  # "losing badly": the table score this session below -200
TZ = dt.timezone(dt.timedelta(hours=8))


def code(c: int) -> str:
    return RANKS[c % 13] + SUITS[c // 13]


def rank(c: int) -> int:
    return c % 13 + 1


def pts(c: int) -> int:
    return c % 13 + 1


SEVEN_S = 6  # 7 of spades: suit 0, rank 7


def _chains(c: int) -> list[list[tuple[int, int]]]:
    """The cards beyond c away from the suit's 7, as (card, distance) lists (a 7 has two)."""
    s, r = c // 13, rank(c)
    base = s * 13
    down = [(base + rr - 1, r - rr) for rr in range(r - 1, 0, -1)]
    up = [(base + rr - 1, rr - r) for rr in range(r + 1, 14)]
    if r == 7:
        return [down, up]
    return [down] if r < 7 else [up]


CHAINS = [_chains(c) for c in range(52)]


def rng_for(*parts) -> random.Random:
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


# ----------------------------------------------------------------------------------------------- rules engine
class Game:
    """One hand: deal, live cards, plays and covers in strict rotation, scoring."""

    def __init__(self, deal: list[list[int]]):
        self.deal = [sorted(h) for h in deal]
        self.hands = [set(h) for h in deal]
        self.lo = [0, 0, 0, 0]  # lowest rank on the table per suit (0: 7 not yet played)
        self.hi = [0, 0, 0, 0]
        self.covered = [[], [], [], []]
        self.last_card = [None, None, None, None]
        self.on_table: set[int] = set()
        self.first = next(i for i in range(4) if SEVEN_S in self.hands[i])
        self.turn = self.first
        self.n_actions = 0
        self.actions: list[tuple[int, str, int]] = []

    def is_live(self, c: int) -> bool:
        s, r = c // 13, rank(c)
        lo = self.lo[s]
        if lo == 0:
            return r == 7
        return r == lo - 1 or r == self.hi[s] + 1

    def live(self, seat: int) -> list[int]:
        if self.n_actions == 0:
            return [SEVEN_S]
        return sorted(c for c in self.hands[seat] if self.is_live(c))

    def options(self, seat: int) -> tuple[str, list[int]]:
        lv = self.live(seat)
        if lv:
            return "play", lv
        return "cover", sorted(self.hands[seat])

    def apply(self, seat: int, kind: str, c: int) -> None:
        assert seat == self.turn and c in self.hands[seat]
        if kind == "play":
            assert self.is_live(c) or (self.n_actions == 0 and c == SEVEN_S)
            s, r = c // 13, rank(c)
            if self.lo[s] == 0:
                self.lo[s] = self.hi[s] = 7
            elif r < self.lo[s]:
                self.lo[s] = r
            else:
                self.hi[s] = r
            self.on_table.add(c)
        else:
            assert not any(self.is_live(x) for x in self.hands[seat])
            self.covered[seat].append(c)
        self.hands[seat].discard(c)
        self.last_card[seat] = c
        self.actions.append((seat, kind, c))
        self.n_actions += 1
        self.turn = (seat + 1) % 4

    def done(self) -> bool:
        return self.n_actions == 52

    def result(self) -> dict:
        points = [sum(pts(c) for c in cov) for cov in self.covered]
        tong = [i for i in range(4) if not self.covered[i]]
        dutou = [i for i in tong if rank(self.last_card[i]) == 7]
        nt = len(tong)
        factor = TONG_FACTORS[nt] * DUTOU_FACTOR ** len(dutou)
        mult = [1 if i in tong else factor for i in range(4)]
        eff = [points[i] * mult[i] for i in range(4)]
        total = sum(eff)
        scores = [total - 4 * eff[i] for i in range(4)]
        if nt == 4:
            scores = [0, 0, 0, 0]
        ranking = sorted(range(4), key=lambda i: (eff[i], (i - self.first) % 4))
        return {"scores": scores, "points": points, "multipliers": mult, "tong": tong, "dutou": dutou,
                "ranking": ranking}


# ----------------------------------------------------------------------------------------------- valuation
def unseen_for(g: Game, seat: int) -> set[int]:
    known = g.on_table | g.hands[seat] | set(g.covered[seat])
    return set(range(52)) - known


def option_values(g: Game, seat: int, kind: str, opts: list[int], w: dict, help_: dict | None) -> list[float]:
    """Rule-of-thumb values in points. help_ (collusion): the partner's hand and the help weights."""
    own = g.hands[seat]
    mycov = set(g.covered[seat])
    gam = w["g"]
    partner = help_["partner_hand"] if help_ else None
    pcov = help_["partner_cov"] if help_ else ()
    opp_w = help_.get("opp_weight") if help_ else None
    vals = []
    for c in opts:
        o_own = o_unk = o_par = o_opp = 0.0
        own_dead = 0
        for chain in CHAINS[c]:
            for b, d in chain:
                if b in mycov or b in pcov:
                    break  # already dead beyond this point
                if b in g.on_table:
                    continue
                disc = gam ** (d - 1)
                p = pts(b)
                if b in own:
                    o_own += p * disc
                    own_dead += p
                elif partner is not None and b in partner:
                    o_par += p * disc
                else:
                    o_unk += p * disc
                    if opp_w is not None:
                        o_opp += p * disc * opp_w.get(b, 1.0)
        if kind == "play":
            v = w["own"] * o_own - w["open"] * o_unk / 3.0 + w["shed"] * pts(c)
            if rank(c) == 7 and w["hold7"] > 0 and g.n_actions > 0:
                s = c // 13
                n_own = sum(1 for x in own if x // 13 == s) - 1
                v -= w["hold7"] * (12 - 2 * n_own)
            if help_:
                v += help_["feed"] * o_par * (1.6 if help_["partner_stuck"] else 1.0)
                v -= help_["block"] * (o_opp if opp_w is not None else o_unk) / 2.0
        else:
            bad = 1.0 + 0.35 * min(len(g.covered[seat]), 3)
            v = -(pts(c) + w["bury"] * own_dead) + w["spite"] * bad * o_unk / 3.0
            if help_:
                v -= help_["protect"] * o_par
                v += help_["harm"] * (o_opp if opp_w is not None else o_unk) / 2.0
        vals.append(v)
    return vals


def greedy_move(g: Game, seat: int) -> tuple[str, int]:
    """The cheap fixed policy of rollouts: shed the live card that frees most own points, cover the cheapest."""
    kind, opts = g.options(seat)
    if kind == "play":
        if len(opts) == 1:
            return kind, opts[0]
        own = g.hands[seat]
        best, bv = opts[0], -1e9
        for c in opts:
            v = pts(c) * 0.3
            for chain in CHAINS[c]:
                for b, d in chain:
                    if b in own:
                        v += pts(b) / d
            if v > bv:
                best, bv = c, v
        return kind, best
    return kind, min(opts, key=lambda c: (pts(c), c))


def mc_values(g: Game, seat: int, kind: str, opts: list[int], n: int, rng: random.Random) -> list[float]:
    """Monte Carlo: deal the unseen cards at random to the others (their counts known), roll out greedily."""
    unseen = sorted(unseen_for(g, seat))
    others = [(seat + k) % 4 for k in (1, 2, 3)]
    counts = [len(g.hands[o]) for o in others]
    ncov = [len(g.covered[o]) for o in others]  # how many each has covered is public, not which cards
    tot = [0.0] * len(opts)
    for _ in range(n):
        pool = unseen[:]
        rng.shuffle(pool)
        sim_hands, sim_cov = {}, {}
        k = 0
        for o, cnt, nc in zip(others, counts, ncov):
            sim_hands[o] = set(pool[k:k + cnt])
            k += cnt
            sim_cov[o] = pool[k:k + nc]
            k += nc
        for i, c in enumerate(opts):
            h = Game.__new__(Game)
            h.deal = g.deal
            h.hands = [None] * 4
            h.covered = [None] * 4
            for o in others:
                h.hands[o] = set(sim_hands[o])
                h.covered[o] = list(sim_cov[o])
            h.hands[seat] = set(g.hands[seat])
            h.covered[seat] = list(g.covered[seat])
            h.lo, h.hi = g.lo[:], g.hi[:]
            h.last_card = g.last_card[:]
            h.on_table = set(g.on_table)
            h.first, h.turn, h.n_actions = g.first, g.turn, g.n_actions
            h.actions = []
            h.apply(seat, kind, c)
            while not h.done():
                s = h.turn
                kk, cc = greedy_move(h, s)
                h.apply(s, kk, cc)
            tot[i] += h.result()["scores"][seat]
    return [t / n for t in tot]


def boltzmann(vals: list[float], temp: float, rng: random.Random) -> int:
    if temp <= 1e-9:
        return max(range(len(vals)), key=lambda i: vals[i])
    m = max(vals)
    ws = [math.exp((v - m) / temp) for v in vals]
    x = rng.random() * sum(ws)
    for i, wv in enumerate(ws):
        x -= wv
        if x <= 0:
            return i
    return len(vals) - 1


# ----------------------------------------------------------------------------------------------- players
FAMILIES = ("shedder", "spoiler", "hoarder", "mcarlo", "fumbler", "dayshift")


def make_player(pid: str, family: str, rng: random.Random, wild: bool = False) -> dict:
    j = lambda lo, hi: rng.uniform(lo, hi)  # noqa: E731
    w = {"g": j(0.55, 0.85), "own": j(0.6, 1.0), "open": j(0.3, 0.7), "shed": j(0.05, 0.2), "hold7": 0.0,
         "bury": j(0.5, 1.0), "spite": j(0.1, 0.4)}
    temp = math.exp(rng.gauss(math.log(2.0), 0.45))
    if family == "shedder":
        w["shed"] = j(0.4, 0.8)
        w["own"] = j(0.3, 0.6)
        w["open"] = j(0.05, 0.25)
    elif family == "spoiler":
        w["spite"] = j(0.7, 1.3)
        w["open"] = j(0.7, 1.2)
    elif family == "hoarder":
        w["hold7"] = j(0.4, 1.0)
        w["open"] = j(0.5, 0.9)
    elif family == "fumbler":
        temp *= j(1.3, 2.2)
    if wild:
        temp *= math.exp(rng.gauss(0.4, 0.6))
    p = {
        "id": pid, "family": family, "w": w, "temp": round(temp, 3),
        "fatigue": round(j(0.0, 0.04) * (2.0 if wild else 1.0), 4),  # temperature +x per hand in the session
        "blunder": round(j(0.0, 0.05) * (2.5 if wild else 1.0), 4),  # endgame: the worst option, last 3 cards
        "misclick": round((j(0.03, 0.08) if family == "fumbler" else j(0.0, 0.006)) * (1.5 if wild else 1.0), 4),
        "mc_from": rng.choice([4, 5, 6]) if family == "mcarlo" else 0,
        "mc_n": rng.choice([3, 4, 6]) if family == "mcarlo" else 0,
        "mc_temp": round(j(3.0, 12.0), 2),
        # think time: reaction + deliberation per bit of choice + an exponential tail (ex-Gaussian-like)
        "react_ms": round(math.exp(rng.gauss(math.log(550), 0.35))),
        "delib_ms": round(math.exp(rng.gauss(math.log(550), 0.5)) * (1.4 if family == "mcarlo" else 1.0)),
        "tail_ms": round(j(150, 1800) * (1.8 if wild else 1.0)),
        "auto_forced": round(j(0.05, 0.85), 3),  # forced moves pre-clicked
        "afk": round(j(0.0, 0.006) * (4.0 if wild or family == "fumbler" else 1.0), 4),
        "presence": round(j(0.55, 0.95), 3),
        "night_owl": rng.random() < 0.5,
    }
    p["w"] = {k: round(v, 3) for k, v in w.items()}
    return p


# ----------------------------------------------------------------------------------------------- rooms
# style: the collusion style; groups: lists of player indices (into the room's ids) who collude;
# friends: honest groups who sit together
ROOMS = {
    "h-buddies": dict(n=32, honest=True, friends=[[1, 2], [3, 4], [5, 6], [7, 8, 9]], friend_seek=0.85,
                      what="honest; 3 friend pairs and a friend trio who come and sit together (85%), "
                           "same family, near-identical weights and pace, play the same hours"),
    "h-wild": dict(n=40, honest=True, wild=True, what="honest, very noisy and heterogeneous: high and drifting "
                   "temperatures, fatigue, endgame blunders, misclicks, AFK time-outs, coarse clocks, lag"),
    "c-losing": dict(n=32, style="losing", groups=[[1, 2], [3, 4]], friends=[[5, 6]],
                     what="2 pairs share hands only while one of them is losing badly at the table this session "
                          "(his table score this session below -200): the other feeds and protects him, he blocks the others"),
    "c-squeeze": dict(n=32, style="squeeze", groups=[[1, 2], [3, 4]],
                      what="2 pairs share hands to hurt the other two (block, bury their chains, twice as hard "
                           "against a player still clean), never feeding each other"),
    "c-camo": dict(n=32, style="camo", groups=[[1, 2], [3, 4]], friends=[[5, 6]],
                   what="2 pairs share hands, but in 45% of decisions play their honest choice and add deliberate "
                        "noise (temperature x1.6, 6% random moves) to look honest"),
    "c-rotate": dict(n=48, style="rotate", session=(4, 12), groups=[[1, 2], [1, 3], [1, 4], [1, 5]],
                     what="a cheater with 4 accomplices: each session he seeks a table with the next one in "
                          "turn, and only that one shares hands with him; the others are honest when met"),
    "c-trio2": dict(n=36, style="trio2", groups=[[1, 2, 3]],
                    what="a trio who seek one table; at any hand only two of them (drawn per hand) share hands "
                         "and help each other, the third plays straight"),
    "c-fakeclock": dict(n=32, style="fakeclock", groups=[[1, 2], [3, 4]],
                        what="2 pairs share hands (full help, medium weights) and fake their think times: "
                             "exactly the honest timing model, no consultation delay"),
    "c-low20": dict(n=32, style="low20", groups=[[1, 2], [3, 4]], friends=[[5, 6]],
                    what="2 pairs with full help weights, but the help is used in only ~20% of decisions"),
}

HELP_FULL = {"feed": 0.9, "protect": 0.9, "block": 0.5, "harm": 0.5}


class Room:
    def __init__(self, name: str, seed: int, help_on: bool = True):
        self.name, self.seed, self.help_on = name, seed, help_on
        cfg = ROOMS[name]
        self.cfg = cfg
        rng = rng_for(seed, name, "players")
        n = cfg["n"]
        # random-looking but stable ids: the index is not the role
        perm = list(range(n))
        rng.shuffle(perm)
        self.ids = [f"u{seed % 97:02d}{name[2:4]}{perm[i] + 100}" for i in range(n)]
        wild = bool(cfg.get("wild"))
        self.players = []
        for i in range(n):
            fam = rng.choice(FAMILIES) if not wild else rng.choice(FAMILIES + ("fumbler", "dayshift"))
            self.players.append(make_player(self.ids[i], fam, rng, wild))
        # friends: same family, weights within 3%, same pace
        for grp in cfg.get("friends", []):
            base = self.players[grp[0]]
            for k in grp[1:]:
                q = json.loads(json.dumps(base))
                q["id"] = self.ids[k]
                q["w"] = {a: round(b * rng.uniform(0.97, 1.03), 3) for a, b in q["w"].items()}
                q["temp"] = round(q["temp"] * rng.uniform(0.95, 1.05), 3)
                self.players[k] = q
        self.groups = cfg.get("groups", [])
        self.colluders = sorted({i for g in self.groups for i in g})
        self.friends = cfg.get("friends", [])
        # colluders: any bot family, present often; a consultation pace per group
        for grp in self.groups:
            for k in grp:
                p = self.players[k]
                p["role"] = "colluder"
                p["presence"] = max(p["presence"], 0.8)
        for grp in self.friends:
            for k in grp:
                self.players[k]["role"] = "friend"
                self.players[k]["presence"] = 0.85
                self.players[k]["night_owl"] = self.players[grp[0]]["night_owl"]
        for p in self.players:
            p.setdefault("role", "honest")
        self.consult_ms = [round(rng.uniform(500, 1400)) for _ in self.groups]
        # tables: clock resolution and network jitter per table slot
        self.seek = 0.85

    # ---- seating
    def sessions(self, n_hands: int):
        rng = rng_for(self.seed, self.name, "sessions")
        day = dt.datetime(2026, 3, 2, 10, 0, tzinfo=TZ)
        t = day
        made = 0
        k = 0
        rot = 0
        while made < n_hands:
            hour = t.hour
            if 2 <= hour < 10:
                day = day + dt.timedelta(days=1)
                t = day
                hour = 10
            late = hour >= 21 or hour < 2
            present = []
            for p in self.players:
                pr = p["presence"] * (1.05 if (late == p["night_owl"]) else 0.8)
                present.append(rng.random() < min(pr, 0.97))
            # groups arrive together
            for grp in self.friends:
                v = rng.random() < 0.88
                for i in grp:
                    present[i] = v
            blocks: list[list[int]] = []
            style = self.cfg.get("style")
            seekers = []
            if style == "rotate":
                hub = self.groups[0][0]
                acc = [g[1] for g in self.groups]
                active_pair = None
                if present[hub]:  # he calls the next accomplice in turn who is online
                    for step in range(len(acc)):
                        a = acc[(rot + step) % len(acc)]
                        if present[a]:
                            rot = rot + step + 1
                            active_pair = (hub, a)
                            if rng.random() < self.seek:
                                seekers.append([hub, a])
                            break
            else:
                active_pair = None
                for grp in self.groups:
                    here = [i for i in grp if present[i]]
                    if len(here) >= 2 and (len(here) == len(grp) or style == "trio2") and rng.random() < self.seek:
                        seekers.append(here)
            for grp in self.friends:
                if all(present[i] for i in grp) and rng.random() < self.cfg.get("friend_seek", 0.6):
                    seekers.append(list(grp))
            used = set()
            for grp in seekers:
                if used & set(grp):
                    continue
                blocks.append(grp)
                used |= set(grp)
            rest = [i for i in range(len(self.players)) if present[i] and i not in used]
            rng.shuffle(rest)
            n_tab = (sum(len(b) for b in blocks) + len(rest)) // 4
            tables: list[list[int]] = [[] for _ in range(n_tab)]
            rng.shuffle(blocks)
            for b in blocks:
                cands = [t_ for t_ in tables if len(t_) + len(b) <= 4]
                if not cands:
                    rest.extend(b)
                    continue
                min(cands, key=lambda t_: (len(t_), rng.random())).extend(b)
            for i in rest:
                cands = [t_ for t_ in tables if len(t_) < 4]
                if not cands:
                    break
                cands[0].append(i)
            tables = [t_ for t_ in tables if len(t_) == 4]
            for t_ in tables:
                rng.shuffle(t_)
            n_per = rng.randint(*self.cfg.get("session", (6, 24)))
            tabs = []
            for ti, t_ in enumerate(tables):
                tabs.append({"table_id": f"{self.name}-s{k:04d}-t{ti:02d}", "seats": t_,
                             "res_ms": rng.choice([1, 1, 10, 10, 50, 100] if not self.cfg.get("wild")
                                                  else [100, 250, 500, 1000, 1000]),
                             "jitter_ms": rng.uniform(10, 120) * (3 if self.cfg.get("wild") else 1),
                             "lag_p": rng.uniform(0.0, 0.04) * (4 if self.cfg.get("wild") else 1),
                             "t0": t + dt.timedelta(seconds=rng.uniform(0, 90))})
            yield {"k": k, "start": t, "late": late, "hour": hour, "tables": tabs, "n": n_per,
                   "active_pair": active_pair}
            made += n_per * len(tabs)
            k += 1
            t = t + dt.timedelta(seconds=n_per * rng.uniform(55, 80) + rng.uniform(60, 900))

    # ---- the help of one seat at one decision
    def help_for(self, hs: dict, g: Game, seat: int, rng: random.Random):
        """Return (help dict or None, used_flag)."""
        if not self.help_on:
            return None
        partners = hs["partners"].get(seat)
        if not partners:
            return None
        style = self.cfg["style"]
        seats = hs["seats_ids"]
        # one partner at a time (trio2: the hand's active pair only)
        partner = partners[0]
        w = dict(HELP_FULL)
        opp_w = None
        if style == "losing":
            me, pa = seats[seat], seats[partner]
            lm = hs["session_score"].get(me, 0) < -LOSING
            lp = hs["session_score"].get(pa, 0) < -LOSING
            if not (lm or lp):
                return None
            if lp and not lm:  # I help the loser
                w = {"feed": 1.0, "protect": 1.0, "block": 0.4, "harm": 0.4}
            elif lm and not lp:  # I am the loser: I use his hand against the others
                w = {"feed": 0.0, "protect": 0.3, "block": 0.7, "harm": 0.7}
        elif style == "squeeze":
            w = {"feed": 0.0, "protect": 0.2, "block": 1.0, "harm": 1.1}
            opp_w = {}
            for o in range(4):
                if o in (seat, partner):
                    continue
                mult = 2.0 if not g.covered[o] else 1.0
                for c in g.hands[o]:
                    opp_w[c] = mult
        elif style == "camo":
            if rng.random() < 0.45:
                return None
        elif style == "fakeclock":
            w = {"feed": 0.6, "protect": 0.6, "block": 0.35, "harm": 0.35}
        elif style == "low20":
            if rng.random() >= 0.2:
                return None
        ph = g.hands[partner]
        h = dict(w)
        h["partner_hand"] = ph
        h["partner_cov"] = set(g.covered[partner])
        h["partner_stuck"] = not any(g.is_live(c) for c in ph)
        h["opp_weight"] = opp_w
        return h

    # ---- one hand
    def play_hand(self, hno: int, sess: dict, tab: dict, hs: dict, t_start: dt.datetime):
        drng = rng_for(self.seed, self.name, "deal", hno)
        deck = list(range(52))
        drng.shuffle(deck)
        deal = [deck[13 * i:13 * i + 13] for i in range(4)]
        g = Game(deal)
        seat_rngs = [rng_for(self.seed, self.name, "seat", hno, s) for s in range(4)]
        time_rngs = [rng_for(self.seed, self.name, "time", hno, s) for s in range(4)]
        trng = rng_for(self.seed, self.name, "table", hno)
        plist = [self.players[i] for i in tab["seats"]]
        ms = 0
        acts = []
        changed = [False] * 4
        used = [False] * 4
        lag_hand = trng.random() < tab["lag_p"]
        n_in_sess = hs["n_in_session"]
        while not g.done():
            s = g.turn
            p = plist[s]
            rng = seat_rngs[s]
            kind, opts = g.options(s)
            help_ = self.help_for(hs, g, s, rng) if len(opts) > 1 else None
            state = rng.getstate()
            choice, close = self.decide(g, s, p, kind, opts, help_, rng, sess, n_in_sess, hs)
            if help_ is not None:
                used[s] = True
                twin = random.Random()
                twin.setstate(state)  # the same draws without the help: did the help change the choice?
                honest_choice, _ = self.decide(g, s, p, kind, opts, None, twin, sess, n_in_sess, hs)
                if honest_choice != choice:
                    changed[s] = True
            think = self.think(p, len(opts), close, time_rngs[s], sess, n_in_sess, len(g.hands[s]))
            if help_ is not None and not (self.cfg["style"] == "fakeclock"):
                gi = hs["pair_index"].get(s, 0)
                think += round(self.consult_ms[gi] * math.exp(time_rngs[s].gauss(0, 0.5)))
            think += round(abs(time_rngs[s].gauss(0, tab["jitter_ms"])))
            if lag_hand and time_rngs[s].random() < 0.25:
                think += round(time_rngs[s].uniform(1500, 9000))
            # misclick: the neighbour in the sorted hand, taken if it is legal
            if len(opts) > 1 and rng.random() < p["misclick"] * (2.5 if think < 900 else 1.0):
                hand_sorted = sorted(g.hands[s], key=lambda c: (c // 13, rank(c)))
                i = hand_sorted.index(choice)
                nb = hand_sorted[i + rng.choice([-1, 1])] if 0 < i < len(hand_sorted) - 1 else None
                if nb is not None and (kind == "cover" or nb in opts):
                    choice = nb
            # AFK: the turn clock runs out and the server acts
            if rng.random() < p["afk"]:
                think += round(rng.uniform(4000, 30000))
            if think >= TURN_CLOCK_MS:
                think = TURN_CLOCK_MS + round(time_rngs[s].uniform(5, 300))
                choice = opts[0] if kind == "play" else min(opts, key=lambda c: (pts(c), c))
            ms += think
            g.apply(s, kind, choice)
            acts.append({"seat": s, "kind": kind, "card": code(choice), "ms": ms})
        res = g.result()
        # clock resolution of the table: floor the cumulative times (never decreasing)
        r = tab["res_ms"]
        for a in acts:
            a["ms"] = a["ms"] // r * r
        ids = [p["id"] for p in plist]
        rec = {"variant": "bieqi", "format": "bieqi-log", "version": 1,
               "hand_id": f"{self.name}-{self.seed}-{hno:06d}", "table_id": tab["table_id"],
               "started_at": t_start.isoformat(timespec="milliseconds"), "players": ids,
               "deal": [[code(c) for c in sorted(h, key=lambda c: (c // 13, rank(c)))] for h in deal],
               "actions": acts, "result": res}
        return rec, res, (changed, used), ms

    def decide(self, g, s, p, kind, opts, help_, rng, sess, n_in_sess, hs):
        if len(opts) == 1:
            return opts[0], 0.0
        w = p["w"]
        temp = p["temp"] * (1.0 + p["fatigue"] * n_in_sess)
        if p["family"] == "dayshift":
            h = sess["hour"]
            if h < 14:
                temp *= 0.6
            elif h >= 21 or h < 2:
                temp *= 1.9
                w = dict(w, spite=w["spite"] + 0.5, open=w["open"] * 0.6)
        style = self.cfg.get("style")
        if help_ is not None and style == "camo":
            temp *= 1.6
            if rng.random() < 0.06:
                return rng.choice(opts), 0.0
        left = len(g.hands[s])
        if p["family"] == "mcarlo" and left <= p["mc_from"]:
            vals = mc_values(g, s, kind, opts, p["mc_n"], rng)
            if help_ is not None:
                hv = option_values(g, s, kind, opts, w, help_)
                bv = option_values(g, s, kind, opts, w, None)
                vals = [v + 3.0 * (a - b) for v, a, b in zip(vals, hv, bv)]
            t_eff = p["mc_temp"] * (1.0 + p["fatigue"] * n_in_sess)
        else:
            vals = option_values(g, s, kind, opts, w, help_)
            t_eff = temp
        srt = sorted(vals, reverse=True)
        close = math.exp(-(srt[0] - srt[1]) / max(t_eff, 0.5))
        if left <= 3 and rng.random() < p["blunder"]:
            return opts[min(range(len(vals)), key=lambda i: vals[i])], close
        i = boltzmann(vals, t_eff, rng)
        return opts[i], close

    def think(self, p, n_opts, close, rng, sess, n_in_sess, left):
        if n_opts == 1:
            if rng.random() < p["auto_forced"]:
                return round(rng.uniform(120, 450))
            return round(p["react_ms"] * math.exp(rng.gauss(0, 0.3)))
        base = p["react_ms"] * math.exp(rng.gauss(0, 0.25))
        delib = p["delib_ms"] * math.log2(n_opts) * (1.0 + close) * math.exp(rng.gauss(0, 0.4))
        if left >= 12:
            delib *= 1.3  # looking over a fresh hand
        tail = rng.expovariate(1.0 / p["tail_ms"])
        f = 1.0 + 0.008 * n_in_sess
        if sess["late"]:
            f *= 1.12
        return round((base + delib + tail) * f)

    # ---- the room
    def run(self, n_hands: int, out_lines: list | None = None):
        hno = 0
        stats = {}
        totals = {p["id"]: 0 for p in self.players}
        for sess in self.sessions(n_hands):
            for tab in sess["tables"]:
                tab["_t"] = tab["t0"]
                tab["_hs"] = self.table_state(sess, tab)
            for _ in range(sess["n"]):
                for tab in sess["tables"]:
                    if hno >= n_hands:
                        break
                    hs = tab["_hs"]
                    self.hand_setup(hs, tab, hno)
                    hs["hno"] = hno
                    rec, res, changed, dur = self.play_hand(hno, sess, tab, hs, tab["_t"])
                    tab["_t"] = tab["_t"] + dt.timedelta(milliseconds=dur + 3000 + rng_for(
                        self.seed, self.name, "gap", hno).uniform(1500, 14000))
                    ids = rec["players"]
                    for i, pid in enumerate(ids):
                        hs["session_score"][pid] = hs["session_score"].get(pid, 0) + res["scores"][i]
                        totals[pid] += res["scores"][i]
                    self.record_truth(stats, hs, ids, changed, res)
                    hs["n_in_session"] += 1
                    hno += 1
                    if out_lines is not None:
                        out_lines.append(rec)
        return stats, totals, hno

    def table_state(self, sess, tab):
        return {"session_score": {}, "n_in_session": 0, "seats_ids": [self.ids[i] for i in tab["seats"]],
                "active_pair": sess["active_pair"], "tab": tab}

    def hand_setup(self, hs, tab, hno):
        """Which seats share with whom at this hand (partners[seat] = [partner seat])."""
        partners: dict[int, list[int]] = {}
        pair_index: dict[int, int] = {}
        seats = tab["seats"]
        pos = {pi: s for s, pi in enumerate(seats)}
        style = self.cfg.get("style")
        if style == "rotate":
            ap = hs["active_pair"]
            if ap and all(i in pos for i in ap):
                a, b = pos[ap[0]], pos[ap[1]]
                partners[a], partners[b] = [b], [a]
                gi = next(k for k, g in enumerate(self.groups) if set(g) == set(ap))
                pair_index[a] = pair_index[b] = gi
        elif style == "trio2":
            grp = self.groups[0]
            here = [i for i in grp if i in pos]
            if len(here) >= 2:
                r = rng_for(self.seed, self.name, "trio", hno)
                pick = r.sample(here, 2) if len(here) == 3 else here
                a, b = pos[pick[0]], pos[pick[1]]
                partners[a], partners[b] = [b], [a]
                pair_index[a] = pair_index[b] = 0
        elif style:
            for gi, grp in enumerate(self.groups):
                if all(i in pos for i in grp):
                    a, b = pos[grp[0]], pos[grp[1]]
                    partners[a], partners[b] = [b], [a]
                    pair_index[a] = pair_index[b] = gi
        hs["partners"] = partners
        hs["pair_index"] = pair_index

    def record_truth(self, stats, hs, ids, changed, res):
        # every pair of colluders (and friends) at the table: hands together, hands the help changed a choice
        idset = set(ids)
        pairs = set()
        for grp in self.groups + self.friends:
            mem = [self.ids[i] for i in grp]
            for x in range(len(mem)):
                for y in range(x + 1, len(mem)):
                    if mem[x] in idset and mem[y] in idset:
                        pairs.add(tuple(sorted((mem[x], mem[y]))))
        changed, used = changed
        active = {}
        for s, ps in hs["partners"].items():
            for q in ps:
                if used[s] or used[q]:
                    active[tuple(sorted((ids[s], ids[q])))] = True
        for pr in pairs:
            st = stats.setdefault(pr, {"hands_together": 0, "help_active_hands": 0, "colluding_hands": 0,
                                       "score_sum": 0})
            st["hands_together"] += 1
            if pr in active:
                st["help_active_hands"] += 1
                si = [ids.index(pr[0]), ids.index(pr[1])]
                if changed[si[0]] or changed[si[1]]:
                    st["colluding_hands"] += 1
            ps = res["scores"][ids.index(pr[0])] + res["scores"][ids.index(pr[1])]
            st["score_sum"] += ps
            st.setdefault("per_hand", {})[hs["hno"]] = ps

    def truth(self, stats, n_hands):
        cp = []
        style = self.cfg.get("style")
        for grp in self.groups:
            mem = [self.ids[i] for i in grp]
            for x in range(len(mem)):
                for y in range(x + 1, len(mem)):
                    pr = tuple(sorted((mem[x], mem[y])))
                    st = stats.get(pr, {"hands_together": 0, "help_active_hands": 0, "colluding_hands": 0})
                    cp.append({"players": list(pr), "style": style, "hands_together": st["hands_together"],
                               "help_active_hands": st["help_active_hands"],
                               "colluding_hands": st["colluding_hands"]})
        fp = []
        for grp in self.friends:
            mem = [self.ids[i] for i in grp]
            for x in range(len(mem)):
                for y in range(x + 1, len(mem)):
                    pr = tuple(sorted((mem[x], mem[y])))
                    st = stats.get(pr, {"hands_together": 0})
                    fp.append({"players": list(pr), "hands_together": st["hands_together"]})
        groups = [{"players": sorted(self.ids[i] for i in g), "style": style} for g in self.groups if len(g) > 2]
        return {"room": self.name, "seed": self.seed, "hands": n_hands, "variant": "bieqi",
                "what": self.cfg["what"], "help": self.help_on,
                "colluding_pairs": cp, "colluding_groups": groups, "friend_pairs": fp,
                "colluders": sorted(self.ids[i] for i in self.colluders),
                "players": {p["id"]: {k: v for k, v in p.items() if k != "id"} for p in self.players}}


def write_room(name: str, hands: int, seed: int, out: str, help_on: bool = True) -> dict:
    room = Room(name, seed, help_on)
    lines: list = []
    stats, totals, n = room.run(hands, lines)
    truth = room.truth(stats, n)
    base = out[:-9] if out.endswith(".jsonl.gz") else out[:-6] if out.endswith(".jsonl") else out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    opener = gzip.open if out.endswith(".gz") else open
    with opener(tmp, "wt", encoding="utf-8") as f:
        for rec in lines:
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    with open(base + ".truth.json", "w", encoding="utf-8") as f:
        json.dump(truth, f, indent=1, ensure_ascii=False)
    os.replace(tmp, out)
    return truth


def ab(name: str, hands: int, seed: int) -> None:
    """Paired gain of the help: the same seating, deals and draws, help on and off."""
    res = {}
    for on in (True, False):
        room = Room(name, seed, on)
        stats, totals, n = room.run(hands)
        res[on] = stats
    ids = Room(name, seed).ids
    friends = [{ids[i] for i in g} for g in ROOMS[name].get("friends", [])]
    for pr, st in sorted(res[True].items()):
        off = res[False].get(pr, {"per_hand": {}})
        common = sorted(set(st["per_hand"]) & set(off["per_hand"]))
        d = [st["per_hand"][h] - off["per_hand"][h] for h in common]
        n = len(d)
        mean = sum(d) / n if n else 0.0
        se = (sum((x - mean) ** 2 for x in d) / (n - 1) / n) ** 0.5 if n > 1 else 0.0
        kind = "friends" if any(set(pr) <= f for f in friends) else "colluders"
        print(f"{name} {kind} {pr[0]}+{pr[1]}: hands together {st['hands_together']} (same seats both runs {n}), "
              f"help used in {st['help_active_hands']}, changed a choice in {st['colluding_hands']}; "
              f"pair's gain per hand {mean:+.1f} +- {se:.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the rooms")
    ap.add_argument("--room", choices=sorted(ROOMS))
    ap.add_argument("--hands", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", help="LOG.jsonl(.gz); the truth goes to LOG.truth.json")
    ap.add_argument("--no-help", action="store_true", help="colluders play honestly (same draws)")
    ap.add_argument("--ab", action="store_true", help="paired gain of the help per true pair")
    a = ap.parse_args(argv)
    if a.list:
        for k, v in ROOMS.items():
            print(f"{k:12s} {v['n']:3d} players  {v['what']}")
        return 0
    if not a.room:
        ap.error("--room is required (or --list)")
    if a.ab:
        ab(a.room, a.hands, a.seed)
        return 0
    if not a.out:
        ap.error("--out is required")
    t = write_room(a.room, a.hands, a.seed, a.out, not a.no_help)
    for cp in t["colluding_pairs"]:
        print(f"{cp['players'][0]}+{cp['players'][1]}: together {cp['hands_together']}, "
              f"help active {cp['help_active_hands']}, changed {cp['colluding_hands']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
