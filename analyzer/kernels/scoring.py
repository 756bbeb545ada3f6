"""Compiled settlement of finished 憋七 hands: the one kernel copy of :func:`analyzer.variants.bieqi.settle`.

Rule options travel as one int row per rule set (:func:`rule_table`); the validator, the rollouts
and the simulator's bots all score through :func:`settle_into`, and tests check it against ``settle``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from analyzer.variants.bieqi import Rules

# Layout of one row of the rule table.
R_TONG = 0  # 5 factors by number of 通 players
R_DUTOU = 5  # factor per 独头七
R_REPLACE = 6  # 1 when 独头七 replaces the 通 factor
R_NTHRESH = 7  # number of cover-doubling thresholds, which follow
R_THRESH = 8


def rule_table(rules: Sequence[Rules]) -> np.ndarray:
    """One int row per rule set, the layout above, wide enough for the longest threshold list."""
    width = R_THRESH + max((len(r.cover_doubling) for r in rules), default=0)
    out = np.zeros((max(len(rules), 1), width), np.int64)
    for i, r in enumerate(rules):
        out[i, R_TONG:R_TONG + 5] = r.tong_factors
        out[i, R_DUTOU] = r.dutou_factor
        out[i, R_REPLACE] = r.dutou == "replace"
        out[i, R_NTHRESH] = len(r.cover_doubling)
        out[i, R_THRESH:R_THRESH + len(r.cover_doubling)] = r.cover_doubling
    return out


@njit(cache=True, nogil=True)
def settle_into(pts, last7, rv, mult, scores):  # pragma: no cover - compiled
    """Multipliers and scores of one finished hand (raw cover points and last-play-was-a-7 by seat)."""
    ntong = 0
    ndutou = 0
    for s in range(4):
        if pts[s] == 0:
            ntong += 1
            if last7[s]:
                ndutou += 1
    factor = rv[R_TONG + ntong]
    if ndutou > 0:
        d = 1
        for _ in range(ndutou):
            d *= rv[R_DUTOU]
        factor = d if rv[R_REPLACE] == 1 else factor * d
    total = 0
    for s in range(4):
        m = 1 if pts[s] == 0 else factor
        for t in range(rv[R_NTHRESH]):
            if pts[s] > rv[R_THRESH + t]:
                m *= 2
        mult[s] = m
        total += pts[s] * m
    for s in range(4):
        scores[s] = total - 4 * pts[s] * mult[s]
