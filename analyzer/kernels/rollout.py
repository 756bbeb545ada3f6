"""Compiled rollouts of standard 憋七: a fast reference policy, hidden-hand sampling, scoring with all factors.

Everything is int bit masks and small arrays. The live-card rule is :data:`NEXT_LIVE` and scoring
follows :func:`analyzer.variants.bieqi.settle` with the rule factors passed in as an int vector
(:func:`analyzer.kernels.scoring.rule_table`); tests check both against the Python engine on random games.

The reference policy is a cheap heuristic for every seat: play the live card that leads to the most
of one's own cards and frees the fewest cards still out; when covering, cover the card whose cost
(its points plus one's own cards it kills, minus the points of cards still out it blocks) is least.
A little seeded noise makes rollouts differ, so averages over many are expectations, not one line.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from analyzer.kernels.features import NF, decision_features, option_values
from analyzer.kernels.hidden import mix, next_uniform, sample_hidden
from analyzer.kernels.scoring import rule_table, settle_into  # noqa: F401 (rule_table: re-exported)
from analyzer.kernels.tables import BEYOND13 as BEYOND
from analyzer.kernels.tables import NEXT, mask_points, popcount
from analyzer.kernels.tables import SUIT_COUNT as POP13
from analyzer.kernels.tables import SUIT_POINTS as PTS13
from analyzer.kernels.tables import apply as apply_action
from analyzer.cards import RANKS_PER_SUIT, SUIT_BITS
from analyzer.rules import ACTIONS_PER_HAND, COVER, MAX_OPTIONS, SEATS

# Weights of the fast reference policy (points-like units) and the size of its noise.
PLAY_OWN = 2.0
PLAY_OUT = 1.0
PLAY_NOISE = 1.0
COVER_NOISE = 3.0

# --------------------------------------------------------------------------- the reference policy

@njit(cache=True, nogil=True)
def choose(hand, own_covered, live, table, rng, noise, beyond, pop13, pts13):  # pragma: no cover
    """The reference policy's action for a seat holding ``hand``."""
    lv = hand & live
    if lv != 0 and lv & (lv - 1) == 0:
        return popcount(lv - 1)
    gone = table | own_covered
    best = -1
    best_v = 0.0
    if lv != 0:
        m = lv
        while m:
            low = m & -m
            m ^= low
            c = popcount(low - 1)
            sh = 13 * (c // 13)
            b = beyond[c]
            h13 = (hand >> sh) & SUIT_BITS
            out = b & ~h13 & ~((gone >> sh) & SUIT_BITS)
            v = PLAY_OWN * pop13[h13 & b] - PLAY_OUT * pop13[out] + noise * PLAY_NOISE * next_uniform(rng)
            if best < 0 or v > best_v:
                best, best_v = c, v
        return best
    m = hand
    while m:
        low = m & -m
        m ^= low
        c = popcount(low - 1)
        sh = 13 * (c // 13)
        b = beyond[c]
        h13 = (hand >> sh) & SUIT_BITS
        out = b & ~h13 & ~((gone >> sh) & SUIT_BITS)
        v = (c % 13 + 1) + pts13[h13 & b] - pts13[out] + noise * COVER_NOISE * next_uniform(rng)
        if best < 0 or v < best_v:
            best, best_v = c, v
    return COVER + best


@njit(cache=True, nogil=True)
def apply(action, hands, cov, pts, last7, live, table, turn):  # pragma: no cover - compiled
    """Push one action on the array state (the one move, plus the cover points it costs); returns the
    new (live, table). The caller advances the turn."""
    if action >= COVER:
        pts[turn] += action % COVER % RANKS_PER_SUIT + 1
    return apply_action(action, NEXT, hands, cov, last7, live, table, turn)


@njit(cache=True, nogil=True)
def choose_weighted(hands, cov, live, table, turn, weights, rng, noise, opts, feats, vals):  # pragma: no cover
    """The strategy module's policy (the simulator's honest bot with ``weights``), plus noise."""
    lv = hands[turn] & live
    if lv != 0 and lv & (lv - 1) == 0:  # one live card: forced, no features needed (most rollout moves)
        return popcount(lv - 1)
    h = hands[turn]
    if lv == 0 and h & (h - 1) == 0:
        return COVER + popcount(h - 1)
    tongable = 0
    for s in range(4):
        if s != turn and cov[s] == 0:
            tongable += 1
    k = decision_features(hands[turn], live, table, cov[turn], 0, 0, tongable, opts, feats)
    if k == 1:
        return opts[0]
    option_values(feats, k, weights, vals)
    best = 0
    best_v = -1e300
    for j in range(k):
        v = vals[j]
        if noise != 0.0:  # (no draw without noise: every caller reseeds the stream before a playout)
            v += noise * PLAY_NOISE * next_uniform(rng)
        if v > best_v:
            best, best_v = j, v
    return opts[best]


@njit(cache=True, nogil=True)
def rollout(hands, cov, pts, last7, live, table, turn, n, rng, noise, weights, trace):  # pragma: no cover
    """Play the hand out from action ``n``, mutating the array state: with the fast heuristic when
    ``weights`` is empty, else with the strategy policy of those weights.

    ``trace`` (length 52, or empty) receives the actions taken.
    """
    opts = np.zeros(MAX_OPTIONS, np.int64)
    feats = np.zeros((MAX_OPTIONS, NF))
    vals = np.zeros(MAX_OPTIONS)
    while n < ACTIONS_PER_HAND:
        if weights.shape[0]:
            a = choose_weighted(hands, cov, live, table, turn, weights, rng, noise, opts, feats, vals)
        else:
            a = choose(hands[turn], cov[turn], live, table, rng, noise, BEYOND, POP13, PTS13)
        if trace.shape[0]:
            trace[n] = a
        live, table = apply(a, hands, cov, pts, last7, live, table, turn)
        n += 1
        turn = (turn + 1) & 3


# --------------------------------------------------------------------------- playouts remembered

#: The playout cache (:func:`playout`): 2**CACHE_BITS slots of (state -> every seat's final score), a new
#: generation (an empty cache, without clearing) at each new hand or when it is CACHE_FILL full. 16,384 slots
#: (~2 MB) hold a hand's true-deal and endgame playouts (~3-5k states) at a low load.
CACHE_BITS = 14
CACHE_FILL = 0.6
#: Fields of a state's key: 4 hands, 4 covered, live, table, (turn, n, last-7 flags, rule set) packed.
KEY = 11


def new_cache(on: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An empty playout cache: keys, scores, the generation of each slot, and (generation, entries, playouts
    that stopped at a remembered state, playouts, of them stopped at their first state, choice states played); ``on``
    False: no slots (:func:`evaluate` then plays every playout in full, as a check)."""
    n = 1 << CACHE_BITS if on else 0
    return (np.zeros((n, KEY), np.int64), np.zeros((n, 4)), np.full(n, -1, np.int64), np.zeros(6, np.int64))


@njit(cache=True, nogil=True)
def _state_key(h, c, l7, live, table, turn, n, ridx, key):  # pragma: no cover - compiled
    """The state's key (everything the rest of a deterministic playout and its settlement depend on) and its hash."""
    flags = turn | (n << 2) | (ridx << 16)
    for s in range(4):
        key[s] = h[s]
        key[4 + s] = c[s]
        if l7[s]:
            flags |= 1 << (8 + s)
    key[8] = live
    key[9] = table
    key[10] = flags
    z = np.uint64(0x9E3779B97F4A7C15)
    for i in range(KEY):
        z = (z ^ np.uint64(key[i])) * np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(29)
    return z


@njit(cache=True, nogil=True)
def _find(keys, stamp, gen, key, z, mask):  # pragma: no cover - compiled
    """The slot holding ``key`` in this generation, or -(1 + the free slot where it would go)."""
    i = np.int64(z & np.uint64(mask))
    while True:
        if stamp[i] != gen:
            return -1 - i
        same = True
        for f in range(KEY):
            if keys[i, f] != key[f]:
                same = False
                break
        if same:
            return i
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def playout(h, c, p, l7, lv, tb, turn, n, rng, noise, weights, rv, ridx, mult, sc, keys, vals, stamp, meta, path,
            hashes, opts, feats, fv):  # pragma: no cover - compiled
    """Play the hand out from the array state as :func:`rollout` does and settle it into ``sc`` (every seat's
    score), remembering the result of every state passed where the seat to move had a choice: a later playout
    reaching one of them (the next decision of the hand after the policy's move, a sampled deal drawn again, a
    transposition) stops there with the same scores.

    Only for a deterministic policy (``noise`` 0): its playout and settlement are functions of the state alone
    (the caller resets ``rng`` before each playout, and a draw times 0 changes no move), so the scores are bit
    for bit those of :func:`rollout` plus :func:`settle_into`. ``path`` (53, KEY), ``hashes`` (53,), ``opts`` (13,),
    ``feats`` (13, NF), ``fv`` (13,): scratch (the caller's, so hundreds of thousands of playouts allocate nothing)."""
    mask = stamp.shape[0] - 1
    gen = meta[0]
    steps = 0
    hit = -1
    while n < ACTIONS_PER_HAND:
        mine = h[turn]
        lvm = mine & lv
        if lvm & (lvm - 1) != 0 or (lvm == 0 and mine & (mine - 1) != 0):
            # a choice: only here is a state looked up and remembered (forced moves cost less than a lookup,
            # and two playouts that meet stay together up to the next choice, where they are found)
            key = path[steps]
            z = _state_key(h, c, l7, lv, tb, turn, n, ridx, key)
            slot = _find(keys, stamp, gen, key, z, mask)
            if slot >= 0:
                hit = slot
                break
            hashes[steps] = z
            steps += 1
        if weights.shape[0]:
            a = choose_weighted(h, c, lv, tb, turn, weights, rng, noise, opts, feats, fv)
        else:
            a = choose(h[turn], c[turn], lv, tb, rng, noise, BEYOND, POP13, PTS13)
        lv, tb = apply(a, h, c, p, l7, lv, tb, turn)
        n += 1
        turn = (turn + 1) & 3
    meta[3] += 1
    meta[5] += steps
    if hit >= 0:
        meta[2] += 1
        if steps == 0:
            meta[4] += 1
        for s in range(4):
            sc[s] = vals[hit, s]
    else:
        settle_into(p, l7, rv, mult, sc)
    if meta[1] + steps > CACHE_FILL * (mask + 1):  # full: a new generation, the old entries read as empty
        meta[0] += 1
        meta[1] = 0
        gen = meta[0]
    for t in range(steps):
        slot = _find(keys, stamp, gen, path[t], hashes[t], mask)
        if slot < 0:
            slot = -1 - slot
            stamp[slot] = gen
            meta[1] += 1
            for f in range(KEY):
                keys[slot, f] = path[t, f]
            for s in range(4):
                vals[slot, s] = sc[s]


# --------------------------------------------------------------------------- decisions

@njit(cache=True, nogil=True)
def _precise(vals, ns, k, target, tol_abs, tol_rel):  # pragma: no cover - compiled
    """Whether ``ns`` samples pin down the gap that matters: best minus ``target`` (the chosen option;
    the runner-up when the chosen one is best or unknown), to within max(tol_abs, tol_rel x spread of
    the options' means); ``vals`` (samples, options) holds the actor's scores."""
    if k < 2:
        return True
    means = np.zeros(k)
    for j in range(k):
        for i in range(ns):
            means[j] += vals[i, j]
        means[j] /= ns
    best = 0
    for j in range(1, k):
        if means[j] > means[best]:
            best = j
    t = target
    if t < 0 or t == best:
        t = -1
        for j in range(k):
            if j != best and (t < 0 or means[j] > means[t]):
                t = j
    mu = 0.0
    for j in range(k):
        mu += means[j]
    mu /= k
    spread = 0.0
    for j in range(k):
        spread += (means[j] - mu) ** 2
    spread = np.sqrt(spread / k)
    m = means[best] - means[t]
    var = 0.0
    for i in range(ns):
        x = vals[i, best] - vals[i, t] - m
        var += x * x
    se = np.sqrt(var / max(ns - 1, 1) / ns)
    return se <= max(tol_abs, tol_rel * spread)


@njit(cache=True, nogil=True)
def evaluate(hands, cov, last7, live, table, turn, n, opts, nopt, chosen, hidden, slot_off, slot_seat, slot_cover,
             slot_allowed, slot_size, rule_idx, rules, seeds, samples, max_samples, tol_abs, tol_rel, dd_samples,
             noise, weights, ref_weights, ev, ev_dd, se, dd_se, relaxed, used, ref, ckeys, cvals, cstamp,
             cmeta):  # pragma: no cover - compiled
    """Expected score of every seat after each option of D decisions.

    Own information: deals of the hidden cards consistent with the actor's information set (slots
    from :mod:`analyzer.analysis.infoset`); each deal is rolled out once after every option with the
    same random stream (common random numbers, so differences between options are sharp). Adaptive:
    at least ``samples[d]`` deals (0: none, own information left to the caller), then blocks of half
    as many more until the gap between the best
    and the chosen option (``chosen``, -1 unknown) is known to within max(tol_abs, tol_rel x the
    options' spread) (:func:`_precise`), at most ``max_samples``: rollouts go where options are close.
    Sample i's deal and stream depend only on (seed, i), so the result is a function of the seed.
    Double dummy: the true deal, ``dd_samples`` rollouts after every option, again with common streams.
    Writes ev/ev_dd (D, 13, 4); se/dd_se (D, 13): standard error of (best minus option) for the actor;
    relaxed (D,): how many samples had to ignore what covers prove; used (D,): samples spent;
    ref (D, 13): each option's value under the reference policy ``ref_weights`` (the strategy features
    from the actor's own information, as :func:`analyzer.strategy.score` gives them).
    With ``noise`` 0 the playouts are deterministic and go through the playout cache ``ckeys``, ``cvals``,
    ``cstamp``, ``cmeta`` (:func:`new_cache`, :func:`playout`): the same estimates, each state played out once.
    """
    D = hands.shape[0]
    rng = np.zeros(1, np.uint64)
    h0 = np.empty(4, np.int64)
    c0 = np.empty(4, np.int64)
    h = np.empty(4, np.int64)
    c = np.empty(4, np.int64)
    p = np.empty(4, np.int64)
    l7 = np.empty(4, np.bool_)
    sc = np.empty(4, np.float64)
    mult = np.empty(4, np.int64)
    empty = np.empty(0, np.int64)
    vals_buf = np.zeros((max(samples.max() if D else 0, max_samples, dd_samples), MAX_OPTIONS))
    ropts = np.zeros(MAX_OPTIONS, np.int64)
    rfeats = np.zeros((MAX_OPTIONS, NF))
    rvals = np.zeros(MAX_OPTIONS)
    cached = noise == 0.0 and cstamp.shape[0] > 0  # an empty cache: every playout in full
    path = np.zeros((ACTIONS_PER_HAND + 1, KEY), np.int64)
    hashes = np.zeros(ACTIONS_PER_HAND + 1, np.uint64)
    popts = np.zeros(MAX_OPTIONS, np.int64)
    pfeats = np.zeros((MAX_OPTIONS, NF))
    pvals = np.zeros(MAX_OPTIONS)
    for d in range(D):
        if cached and d > 0 and n[d] <= n[d - 1]:  # a new hand: its states are new (a new generation)
            cmeta[0] += 1
            cmeta[1] = 0
        a = turn[d]
        k = nopt[d]
        rv = rules[rule_idx[d]]
        step = max(samples[d] // 2, 1)
        cap = max(samples[d], max_samples) if samples[d] > 0 else 0
        tongable = 0
        for s in range(4):
            if s != a and cov[d, s] == 0:
                tongable += 1
        kr = decision_features(hands[d, a], live[d], table[d], cov[d, a], 0, 0, tongable, ropts, rfeats)
        option_values(rfeats, kr, ref_weights, rvals)
        for j in range(k):  # the same legal options in the same (card) order
            ref[d, j] = rvals[j] if j < kr and ropts[j] == opts[d, j] else np.nan
        for mode in range(2):
            dd = mode == 1
            lo = dd_samples if dd else samples[d]
            hi = dd_samples if dd else cap
            if lo == 0:
                continue
            vals = vals_buf
            out = ev_dd if dd else ev
            ns = 0
            while ns < hi:
                i = ns
                if dd:
                    h0[:] = hands[d]
                    c0[:] = cov[d]
                else:
                    h0[:] = 0
                    c0[:] = 0
                    h0[a] = hands[d, a]
                    c0[a] = cov[d, a]
                    rng[0] = mix(seeds[d], 2 * i) | np.uint64(1)
                    if not sample_hidden(hidden[d], slot_off[d], slot_off[d + 1], slot_seat, slot_cover,
                                         slot_allowed, slot_size, h0, c0, rng):
                        relaxed[d] += 1
                stream = mix(seeds[d], 2 * i + 1 + (1 << 20) * mode) | np.uint64(1)
                for j in range(k):
                    h[:] = h0
                    c[:] = c0
                    for s in range(4):
                        p[s] = mask_points(c[s])
                        l7[s] = last7[d, s]
                    lv, tb = apply(opts[d, j], h, c, p, l7, live[d], table[d], a)
                    rng[0] = stream
                    if cached:
                        playout(h, c, p, l7, lv, tb, (a + 1) & 3, n[d] + 1, rng, noise, weights, rv, rule_idx[d],
                                mult, sc, ckeys, cvals, cstamp, cmeta, path, hashes, popts, pfeats, pvals)
                    else:
                        rollout(h, c, p, l7, lv, tb, (a + 1) & 3, n[d] + 1, rng, noise, weights, empty)
                        settle_into(p, l7, rv, mult, sc)
                    for s in range(4):
                        out[d, j, s] += sc[s]
                    vals[i, j] = sc[a]
                ns += 1
                if not dd and ns >= lo and (ns - lo) % step == 0 and _precise(vals, ns, k, chosen[d], tol_abs,
                                                                                tol_rel):
                    break
            if not dd:
                used[d] = ns
            for j in range(k):
                for s in range(4):
                    out[d, j, s] /= ns
            best = 0
            for j in range(1, k):
                if out[d, j, a] > out[d, best, a]:
                    best = j
            err = dd_se if dd else se
            for j in range(k):
                if ns < 2 or j == best:
                    continue
                m = 0.0
                for i in range(ns):
                    m += vals[i, best] - vals[i, j]
                m /= ns
                var = 0.0
                for i in range(ns):
                    x = vals[i, best] - vals[i, j] - m
                    var += x * x
                err[d, j] = np.sqrt(var / (ns - 1) / ns)


@njit(cache=True, nogil=True)
def immediate(hands, cov, turn, opts, nopt, chosen, beyond, nxt, out):  # pragma: no cover - compiled
    """Per decision and seat: the chosen option's exact immediate effect on the true deal minus the
    mean over the options (as :func:`analyzer.analysis.decisions.immediate_effects`, batched).

    A play: cards it makes live in each hand; a cover: minus the cards it strands in each hand (and
    the covered card for the actor). ``beyond``/``nxt``: the 52-card masks of the rules' tables."""
    per = np.zeros((MAX_OPTIONS, 4))
    for d in range(hands.shape[0]):
        dead = np.int64(0)
        allcov = cov[d, 0] | cov[d, 1] | cov[d, 2] | cov[d, 3]
        m = allcov
        while m:
            low = m & -m
            m ^= low
            dead |= beyond[popcount(low - 1)]
        k = nopt[d]
        for j in range(k):
            a = opts[d, j]
            c = a % COVER
            if a < COVER:
                for s in range(4):
                    per[j, s] = popcount(nxt[c] & hands[d, s])
            else:
                killed = beyond[c] & ~dead
                for s in range(4):
                    per[j, s] = -popcount(killed & hands[d, s])
                per[j, turn[d]] -= 1.0
        for s in range(4):
            mean = 0.0
            for j in range(k):
                mean += per[j, s]
            out[d, s] = per[chosen[d], s] - mean / k


def new_outputs(d: int) -> tuple[np.ndarray, ...]:
    """Zeroed output arrays of :func:`evaluate` for d decisions."""
    return (np.zeros((d, MAX_OPTIONS, SEATS)), np.zeros((d, MAX_OPTIONS, SEATS)), np.zeros((d, MAX_OPTIONS)),
            np.zeros((d, MAX_OPTIONS)), np.zeros(d, np.int64), np.zeros(d, np.int64), np.zeros((d, MAX_OPTIONS)))
