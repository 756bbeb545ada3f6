"""Compiled bots: play batches of standard 憋七 hands with the strategy features (softmax, noise rules or search).

Everything random inside comes from numba's generator, seeded once per call, and the search bots'
hidden-hand deals from a stream of the same seed, so a batch is a pure function of its inputs. The
heuristic and the search player both score options with :mod:`analyzer.strategy`; the search player
averages rollouts of the honest policy over deals from the one sampler (:mod:`analyzer.kernels.hidden`).
How a seat picks among valued options is its choice rule (``kinds``: softmax, or one of the noise
models of :mod:`analyzer.simulate.noise`), so the rooms and the noisy rooms share this one play loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from analyzer.cards import FULL_DECK, RANKS_PER_SUIT, SEVEN_OF_SPADES
from analyzer.kernels.features import HONEST, NF, decision_features, option_values
from analyzer.kernels.hidden import mix, sample_hidden
from analyzer.kernels.scoring import rule_table, settle_into
from analyzer.kernels.tables import NEXT, apply, mask_count
from analyzer.kernels.tables import mask_points as mask_pts
from analyzer.rules import ACTIONS_PER_HAND, COVER, DEFAULT_RULES, MAX_OPTIONS, SEATS, Rules


#: Choice rules (a seat's ``kind``): how it picks once its options have values, at its ``level``.
#: SOFTMAX: a softmax draw at temperature ``level`` (argmax at 0); BLUNDER: the best option, or with
#: probability ``level`` a uniformly random one; RANKCOVER: the best option, but at a cover its lowest
#: card by rank with probability ``level``; NO_TONG: the best option, judged with probability ``level``
#: by its other weights (``alt``: no 通 features); OTHER_SOFTMAX: SOFTMAX over values of its other
#: weights (another engine's judgement). :mod:`analyzer.simulate.noise` names them (``MODELS``).
SOFTMAX, BLUNDER, RANKCOVER, NO_TONG, OTHER_SOFTMAX = range(5)


@njit(cache=True)
def _argmax(values, k):  # pragma: no cover - compiled
    """Index of the first best of the ``k`` values."""
    best = 0
    for i in range(1, k):
        if values[i] > values[best]:
            best = i
    return best


@njit(cache=True)
def _choose(values, k, temp):  # pragma: no cover - compiled
    """Index of the chosen option: argmax at temperature 0, else a softmax draw."""
    best = _argmax(values, k)
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
def _pick(kind, level, opts, feats, k, alt, vals):  # pragma: no cover - compiled
    """Index of the option a seat with choice rule ``kind`` at ``level`` picks, given its values in
    ``vals`` (``alt``: its other weights). Draws from numba's generator only where the rule needs it."""
    if kind == OTHER_SOFTMAX:
        option_values(feats, k, alt, vals)
    elif kind == BLUNDER:
        if np.random.random() < level:
            return np.random.randint(0, k)
        return _argmax(vals, k)
    elif kind == RANKCOVER:
        if opts[0] >= COVER and np.random.random() < level:  # options are all covers or none
            low = 0
            for i in range(1, k):
                if opts[i] % RANKS_PER_SUIT < opts[low] % RANKS_PER_SUIT:
                    low = i
            return low
        return _argmax(vals, k)
    elif kind == NO_TONG:
        if np.random.random() < level:
            option_values(feats, k, alt, vals)
        return _argmax(vals, k)
    return _choose(vals, k, level)


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
def _position():  # pragma: no cover - compiled
    """Per-seat arrays of a position: hands, covered, notheld (cards a cover proved absent), last7, last_act."""
    return (np.empty(SEATS, np.int64), np.empty(SEATS, np.int64), np.empty(SEATS, np.int64),
            np.empty(SEATS, np.bool_), np.empty(SEATS, np.int64))


@njit(cache=True)
def _options():  # pragma: no cover - compiled
    """Buffers of one decision: option codes, their features and their values."""
    return np.empty(MAX_OPTIONS, np.int64), np.empty((MAX_OPTIONS, NF)), np.empty(MAX_OPTIONS)


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
            a = opts[_argmax(vals, k)]
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
    h2, c2, nh2, l2, la2 = _position()
    ints = np.empty((5, SEATS), np.int64)
    dh, dc, pts, sc, mult = ints[0], ints[1], ints[2], ints[3], ints[4]
    ropts, rfeats, rvals = _options()
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
def play_hands(deals, weights, kinds, levels, alt, partners, lams, samples, use, rv, seed,
               actions, nopts, diffs, points, last7s):  # pragma: no cover - compiled
    """Play B hands. deals (B, 4) masks; per hand and seat: weights (B, 4, NF), choice rule kinds (B, 4)
    at levels (B, 4) (SOFTMAX: the temperature) with other weights alt (B, 4, NF) (see the kinds), the
    seat whose hand it knows partners (B, 4) (-1 none), partner weight lams (B, 4), rollout samples
    (B, 4) (0 = heuristic player), and the share of its decisions in which a seat with a partner uses
    the partner's hand use (B, 4) (otherwise it decides as an honest player).
    Writes actions (B, 52) (card, or COVER + card),
    the number of legal options nopts (B, 52), a difficulty (B, 52), each seat's cover points (B, 4)
    and whether its last action played a 7 (B, 4)."""
    np.random.seed(seed)
    deal_rng = np.empty(1, np.uint64)  # the search bots' hidden-hand deals: a stream of the same seed
    deal_rng[0] = mix(seed, 0) | np.uint64(1)
    hands, covered, notheld, last7, last_act = _position()
    opts, feats, vals = _options()
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
                i = _pick(kinds[b, turn], levels[b, turn], opts, feats, k, alt[b, turn], vals)
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
               rules: Rules = DEFAULT_RULES, use: np.ndarray | None = None, kinds: np.ndarray | None = None,
               alt: np.ndarray | None = None) -> Batch:
    """Play B deals ((B, 4) masks) with per hand and seat policies: weights (B, 4, NF), softmax
    temperatures (B, 4) (with ``kinds``: the level of each seat's choice rule, default SOFTMAX),
    the choice rules' other weights ``alt`` (B, 4, NF), optionally the seat whose hand each knows
    (-1 none), the weight on that partner's score in search, rollout samples (0 = heuristic), and
    the share of decisions in which a seat uses its partner's hand (default 1: all of them)."""
    b = deals.shape[0]
    shape = (b, SEATS)
    rv = rule_table([rules])[0]
    out = Batch(np.zeros((b, ACTIONS_PER_HAND), np.int64), np.zeros((b, ACTIONS_PER_HAND), np.int64),
                np.zeros((b, ACTIONS_PER_HAND)), np.zeros(shape, np.int64), np.zeros(shape, np.bool_))
    play_hands(np.ascontiguousarray(deals, np.int64), np.ascontiguousarray(weights, np.float64),
               np.full(shape, SOFTMAX, np.int64) if kinds is None else np.ascontiguousarray(kinds, np.int64),
               np.ascontiguousarray(temps, np.float64),
               np.zeros((b, SEATS, NF)) if alt is None else np.ascontiguousarray(alt, np.float64),
               np.full(shape, -1, np.int64) if partners is None else np.ascontiguousarray(partners, np.int64),
               np.zeros(shape) if lams is None else np.ascontiguousarray(lams, np.float64),
               np.zeros(shape, np.int64) if samples is None else np.ascontiguousarray(samples, np.int64),
               np.ones(shape) if use is None else np.ascontiguousarray(use, np.float64), rv, seed,
               out.actions, out.nopts, out.diffs, out.points, out.last7)
    return out
