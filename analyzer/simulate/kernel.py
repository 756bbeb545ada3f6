"""Compiled bots: play batches of standard 憋七 hands with the strategy features (softmax or search).

Everything random inside comes from numba's generator, seeded once per call, and the search bots'
hidden-hand deals from a stream of the same seed, so a batch is a pure function of its inputs. The
heuristic and the search player both score options with :mod:`analyzer.strategy`; the search player
averages rollouts of the honest policy over deals from the one sampler (:mod:`analyzer.kernels.hidden`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from analyzer.cards import FULL_DECK, SEVEN_OF_SPADES
from analyzer.kernels.features import HONEST, NF, decision_features, option_values
from analyzer.kernels.hidden import mix, sample_hidden
from analyzer.kernels.scoring import rule_table, settle_into
from analyzer.kernels.tables import NEXT, apply, mask_count
from analyzer.kernels.tables import mask_points as mask_pts
from analyzer.rules import ACTIONS_PER_HAND, COVER, DEFAULT_RULES, MAX_OPTIONS, SEATS, Rules


@njit(cache=True)
def _choose(values, k, temp):  # pragma: no cover - compiled
    """Index of the chosen option: argmax at temperature 0, else a softmax draw."""
    best = 0
    for i in range(1, k):
        if values[i] > values[best]:
            best = i
    if temp <= 0.0:
        return best
    total = 0.0
    probs = np.empty(k)
    for i in range(k):
        probs[i] = np.exp((values[i] - values[best]) / temp)
        total += probs[i]
    u = np.random.random() * total
    for i in range(k):
        u -= probs[i]
        if u <= 0.0:
            return i
    return k - 1


@njit(cache=True)
def _difficulty(values, k):  # pragma: no cover - compiled
    """Effective number of competing options minus one (exp of the entropy at temperature 2)."""
    if k < 2:
        return 0.0
    best = values[0]
    for i in range(1, k):
        best = max(best, values[i])
    total = 0.0
    for i in range(k):
        total += np.exp((values[i] - best) / 2.0)
    ent = 0.0
    for i in range(k):
        p = np.exp((values[i] - best) / 2.0) / total
        if p > 0.0:
            ent -= p * np.log(p)
    return np.exp(ent) - 1.0


@njit(cache=True)
def _tongable(covered, seat, partner):  # pragma: no cover - compiled
    n = 0
    for s in range(SEATS):
        if s != seat and s != partner and covered[s] == 0:
            n += 1
    return n


@njit(cache=True)
def _push(hands, covered, notheld, last7, last_act, live, table, n, seat, a):  # pragma: no cover - compiled
    """Apply action ``a`` of ``seat`` (the one move, plus what a cover proves); returns the new (live, table)."""
    if a >= COVER:
        notheld[seat] |= live  # a cover proves the seat held no live card
    last_act[seat] = n
    return apply(a, NEXT, hands, covered, last7, live, table, seat)


@njit(cache=True)
def _finish(hands, covered, notheld, last7, last_act, live, table, n, turn, roll_w, opts, feats, vals):  # pragma: no cover
    """Play on from a position to the end with the greedy honest policy (every seat its own view)."""
    while n < ACTIONS_PER_HAND:
        k = decision_features(hands[turn], live, table, covered[turn], 0, 0, _tongable(covered, turn, -1),
                              opts, feats)
        if k == 1:
            a = opts[0]
        else:
            option_values(feats, k, roll_w, vals)
            a = opts[_choose(vals, k, 0.0)]
        live, table = _push(hands, covered, notheld, last7, last_act, live, table, n, turn, a)
        n += 1
        turn = (turn + 1) % SEATS


@njit(cache=True)
def _determinize(hands, covered, notheld, table, seat, partner, out_hands, out_cov, rng):  # pragma: no cover
    """Deal the cards ``seat`` cannot see (with a partner: nor the partner) to the other seats with the one
    sampler (:func:`analyzer.kernels.hidden.sample_hidden`): same hand and cover counts, hands avoiding
    what each seat's covers proved it did not hold (``notheld``), covers anywhere hidden."""
    known = hands[seat] | covered[seat] | table
    if partner >= 0:
        known |= hands[partner] | covered[partner]
    hidden = FULL_DECK & ~known
    slot_seat = np.empty(2 * SEATS, np.int64)
    slot_cover = np.empty(2 * SEATS, np.bool_)
    slot_allowed = np.empty(2 * SEATS, np.int64)
    slot_size = np.empty(2 * SEATS, np.int64)
    n = 0
    for s in range(SEATS):
        out_hands[s] = 0
        out_cov[s] = 0
        if s == seat or s == partner:
            out_hands[s] = hands[s]
            out_cov[s] = covered[s]
            continue
        for cover in (False, True):
            slot_seat[n] = s
            slot_cover[n] = cover
            slot_allowed[n] = hidden if cover else hidden & ~notheld[s]
            slot_size[n] = mask_count(covered[s] if cover else hands[s])
            n += 1
    sample_hidden(hidden, 0, n, slot_seat, slot_cover, slot_allowed, slot_size, out_hands, out_cov, rng)


@njit(cache=True)
def _search_values(hands, covered, notheld, last7, last_act, live, table, n, seat, partner, lam, opts, k,
                   samples, roll_w, rv, values, rng):  # pragma: no cover - compiled
    """Mean own score (+ lam x partner's) of each option over ``samples`` determinizations, all
    options played on the same samples (common random numbers make the comparison sharper)."""
    dh = np.empty(SEATS, np.int64)
    dc = np.empty(SEATS, np.int64)
    h2 = np.empty(SEATS, np.int64)
    c2 = np.empty(SEATS, np.int64)
    nh2 = np.empty(SEATS, np.int64)
    l2 = np.empty(SEATS, np.bool_)
    la2 = np.empty(SEATS, np.int64)
    pts = np.empty(SEATS, np.int64)
    sc = np.empty(SEATS, np.int64)
    mult = np.empty(SEATS, np.int64)
    ropts = np.empty(MAX_OPTIONS, np.int64)
    rfeats = np.empty((MAX_OPTIONS, NF))
    rvals = np.empty(MAX_OPTIONS)
    for i in range(k):
        values[i] = 0.0
    for _ in range(samples):
        _determinize(hands, covered, notheld, table, seat, partner, dh, dc, rng)
        for i in range(k):
            h2[:] = dh
            c2[:] = dc
            nh2[:] = notheld
            l2[:] = last7
            la2[:] = last_act
            lv, tb = _push(h2, c2, nh2, l2, la2, live, table, n, seat, opts[i])
            _finish(h2, c2, nh2, l2, la2, lv, tb, n + 1, (seat + 1) % SEATS, roll_w, ropts, rfeats, rvals)
            for s in range(SEATS):
                pts[s] = mask_pts(c2[s])
            settle_into(pts, l2, rv, mult, sc)
            v = float(sc[seat])
            if partner >= 0:
                v += lam * sc[partner]
            values[i] += v / samples


@njit(cache=True)
def play_hands(deals, weights, temps, partners, lams, samples, use, rv, seed,
               actions, nopts, diffs, points, last7s):  # pragma: no cover - compiled
    """Play B hands. deals (B, 4) masks; per hand and seat: weights (B, 4, NF), softmax temperature
    temps (B, 4), the seat whose hand it knows partners (B, 4) (-1 none), partner weight lams (B, 4),
    rollout samples (B, 4) (0 = heuristic player), and the share of its decisions in which a seat
    with a partner uses the partner's hand use (B, 4) (otherwise it decides as an honest player).
    Writes actions (B, 52) (card, or COVER + card),
    the number of legal options nopts (B, 52), a difficulty (B, 52), each seat's cover points (B, 4)
    and whether its last action played a 7 (B, 4)."""
    np.random.seed(seed)
    deal_rng = np.empty(1, np.uint64)  # the search bots' hidden-hand deals: a stream of the same seed
    deal_rng[0] = mix(seed, 0) | np.uint64(1)
    hands = np.empty(SEATS, np.int64)
    covered = np.empty(SEATS, np.int64)
    notheld = np.empty(SEATS, np.int64)
    last7 = np.empty(SEATS, np.bool_)
    last_act = np.empty(SEATS, np.int64)
    opts = np.empty(MAX_OPTIONS, np.int64)
    feats = np.empty((MAX_OPTIONS, NF))
    vals = np.empty(MAX_OPTIONS)
    roll_w = HONEST.copy()
    for b in range(deals.shape[0]):
        turn = 0
        for s in range(SEATS):
            hands[s] = deals[b, s]
            covered[s] = 0
            notheld[s] = 0
            last7[s] = False
            last_act[s] = -1
            if (deals[b, s] >> SEVEN_OF_SPADES) & 1:
                turn = s
        live = np.int64(1) << SEVEN_OF_SPADES
        table = np.int64(0)
        for n in range(ACTIONS_PER_HAND):
            p = partners[b, turn]
            w = weights[b, turn]
            # partial collusion: a draw only when the share is below 1, so full-time rooms keep their stream
            if p >= 0 and use[b, turn] < 1.0 and np.random.random() >= use[b, turn]:
                p = -1
                w = roll_w
            ph = hands[p] if p >= 0 else 0
            pc = covered[p] if p >= 0 else 0
            k = decision_features(hands[turn], live, table, covered[turn], ph, pc, _tongable(covered, turn, p),
                                  opts, feats)
            if k == 1:
                i = 0
                diffs[b, n] = 0.0
            else:
                if samples[b, turn] > 0:
                    _search_values(hands, covered, notheld, last7, last_act, live, table, n, turn, p,
                                   lams[b, turn], opts, k, samples[b, turn], roll_w, rv, vals, deal_rng)
                else:
                    option_values(feats, k, w, vals)
                diffs[b, n] = _difficulty(vals, k)
                i = _choose(vals, k, temps[b, turn])
            a = opts[i]
            actions[b, n] = a
            nopts[b, n] = k
            live, table = _push(hands, covered, notheld, last7, last_act, live, table, n, turn, a)
            turn = (turn + 1) % SEATS
        for s in range(SEATS):
            points[b, s] = mask_pts(covered[s])
            last7s[b, s] = last7[s]


@dataclass
class Batch:
    """Hands played by :func:`play_batch`, as arrays (B hands)."""

    actions: np.ndarray  # (B, 52) card, or COVER + card
    nopts: np.ndarray  # (B, 52) legal options at each action
    diffs: np.ndarray  # (B, 52) difficulty of each decision (0 when forced)
    points: np.ndarray  # (B, 4) cover points by seat
    last7: np.ndarray  # (B, 4) whether each seat's last action played a 7

    def scores(self, rules: Rules = DEFAULT_RULES) -> np.ndarray:
        """(B, 4) final scores of every hand."""
        rv = rule_table([rules])[0]
        out = np.zeros_like(self.points)
        mult = np.zeros(SEATS, np.int64)
        for b in range(len(out)):
            settle_into(self.points[b], self.last7[b], rv, mult, out[b])
        return out


def play_batch(deals: np.ndarray, weights: np.ndarray, temps: np.ndarray, *, partners: np.ndarray | None = None,
               lams: np.ndarray | None = None, samples: np.ndarray | None = None, seed: int = 0,
               rules: Rules = DEFAULT_RULES, use: np.ndarray | None = None) -> Batch:
    """Play B deals ((B, 4) masks) with per hand and seat policies: weights (B, 4, NF), softmax
    temperatures (B, 4), optionally the seat whose hand each knows (-1 none), the weight on that
    partner's score in search, rollout samples (0 = heuristic), and the share of decisions in which
    a seat uses its partner's hand (default 1: all of them)."""
    b = deals.shape[0]
    shape = (b, SEATS)
    rv = rule_table([rules])[0]
    out = Batch(np.zeros((b, ACTIONS_PER_HAND), np.int64), np.zeros((b, ACTIONS_PER_HAND), np.int64),
                np.zeros((b, ACTIONS_PER_HAND)), np.zeros(shape, np.int64), np.zeros(shape, np.bool_))
    play_hands(np.ascontiguousarray(deals, np.int64), np.ascontiguousarray(weights, np.float64),
               np.ascontiguousarray(temps, np.float64),
               np.full(shape, -1, np.int64) if partners is None else np.ascontiguousarray(partners, np.int64),
               np.zeros(shape) if lams is None else np.ascontiguousarray(lams, np.float64),
               np.zeros(shape, np.int64) if samples is None else np.ascontiguousarray(samples, np.int64),
               np.ones(shape) if use is None else np.ascontiguousarray(use, np.float64), rv, seed,
               out.actions, out.nopts, out.diffs, out.points, out.last7)
    return out
