"""The batched kernel parts of the decision rows agree with their plain-Python definitions."""

from __future__ import annotations

import random

import numpy as np

from analyzer.analysis.decisions import immediate_effects
from analyzer.kernels.rollout import immediate
from analyzer.kernels.tables import BEYOND_MASK, NEXT
from analyzer.rules import MAX_OPTIONS
from analyzer.variants.bieqi import State, random_deal


def test_batched_immediate_effects_equal_the_python_definition() -> None:
    rng = random.Random(7)
    rows, want = [], []
    for _ in range(30):
        st = State(random_deal(rng))
        while not st.is_terminal():
            legal = st.legal_actions()
            if len(legal) > 1:
                k = rng.randrange(len(legal))
                rows.append((list(st.hands), list(st.covered), st.turn, legal, k))
                want.append(immediate_effects(st, legal, k))
            st.push(rng.choice(legal))
    d = len(rows)
    opts = np.zeros((d, MAX_OPTIONS), np.int64)
    for i, r in enumerate(rows):
        opts[i, :len(r[3])] = r[3]
    out = np.zeros((d, 4))
    immediate(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
              np.array([r[2] for r in rows], np.int64), opts, np.array([len(r[3]) for r in rows], np.int64),
              np.array([r[4] for r in rows], np.int64), BEYOND_MASK, NEXT, out)
    assert d > 500
    np.testing.assert_allclose(out, np.array(want), atol=1e-9)
