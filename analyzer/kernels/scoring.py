"""Compiled settlement of finished 憋七 hands: the kernel twin of :func:`analyzer.variants.bieqi.settle`.

Rule options travel as one int row per rule set (:func:`rule_table`); the validator, the rollouts
and the simulator's bots all score through :func:`settle_into`, and tests check it against ``settle``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from analyzer.rules import R_DUTOU, R_NTHRESH, R_REPLACE, R_THRESH, R_TONG, SEATS, Rules, rule_rows


def rule_table(rules: Sequence[Rules]) -> np.ndarray:
    """One int row per rule set (layout: :func:`analyzer.rules.rule_rows`), as an array the kernels index."""
    return np.array(rule_rows(rules), np.int64)


@njit(cache=True, nogil=True)
def settle_into(pts, last7, rv, mult, scores):  # pragma: no cover - compiled
    """Multipliers and scores of one finished hand (raw cover points and last-play-was-a-7 by seat)."""
    ntong = 0
    ndutou = 0
    for s in range(SEATS):
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
    for s in range(SEATS):
        m = 1 if pts[s] == 0 else factor
        for t in range(rv[R_NTHRESH]):
            if pts[s] > rv[R_THRESH + t]:
                m *= 2
        mult[s] = m
        total += pts[s] * m
    for s in range(SEATS):
        scores[s] = total - SEATS * pts[s] * mult[s]
