"""burst's second reading by strata (``burst.BURST_STRATA``): an actor's other standing-out partners' presence a
stratum of its own, the mean look the better of that and the reading without their hands, x 2."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from audit_synth import bystander_null_room
from scipy import stats

from analyzer.audit import burst
from analyzer.audit.burst import BURST_HOT_Z, _burst, _burst_read, by_actors, in_room_order, room_habit_variance


@pytest.fixture
def strata() -> Iterator[None]:
    """Each test sets BURST_STRATA itself; it is put back afterwards."""
    was = burst.BURST_STRATA
    yield
    burst.BURST_STRATA = was


def _read(lk: pd.DataFrame, on: bool) -> pd.DataFrame:
    burst.BURST_STRATA = on
    return _burst(lk)


def _hidden_pair(seed: int, favour: float) -> pd.DataFrame:
    """One actor A with a partner P (+2 a hand, -1 to each non-partner at those tables) and a second accomplice B who
    sits with A only when P is there too (a ring of three at one table), favoured by ``favour`` over the other
    non-partners there; bystanders o1..o5 fill the seats. 600 hands: P and B / P and a bystander / three
    bystanders in turn, seats at random."""
    rng = np.random.default_rng(seed)
    rows = []
    bystanders = [f"o{k}" for k in range(1, 6)]
    for h in range(600):
        kind = h % 3
        table = (["P", "B", str(rng.choice(bystanders))] if kind == 0 else
                 ["P", *rng.choice(bystanders, 2, replace=False)] if kind == 1 else
                 list(rng.choice(bystanders, 3, replace=False)))
        for o, k in zip(table, rng.permutation([1, 2, 3])):
            x = rng.normal()
            if kind < 2:
                x += 2.0 if o == "P" else -1.0 + (favour if o == "B" else 0.0)
            rows.append(("A", o, h, int(k), x))
    return pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "imm_marginal"])


def test_a_favour_hidden_by_the_partners_hands_is_found_by_strata(strata: None) -> None:
    """B is favoured over the other non-partners at P's tables, but every hand with B had P there: the reading
    without P's hands has nothing left, the first reading sees B among P's disfavoured seats; by strata, B's hands
    are ranked among A's other hands beside P, and stand out."""
    lk = _hidden_pair(5, favour=0.8)
    first = _burst_read(lk)
    assert first.loc[("A", "P"), "z_mean"] > BURST_HOT_Z  # P stands out: the second reading runs
    assert first.loc[("A", "B"), "z_mean"] < 2.0  # hidden in the first reading ...
    before = _read(lk, False)
    assert before.loc[("A", "B"), "logp"] == 0.0 and before.loc[("A", "B"), "z_mean"] == 0.0  # ... and lost after it
    after = _read(lk, True)
    assert after.loc[("A", "B"), "z_mean"] > 5.0
    assert after.loc[("A", "B"), "logp"] < np.log(1e-6)
    assert after.loc[("A", "B"), "hands"] == 200  # the mean look's figures are its reading's: all of B's hands
    # the only other standing-out pair is read as before (its first reading is already without the others)
    pd.testing.assert_series_equal(after.loc[("A", "P")], before.loc[("A", "P")])


def test_a_bystander_beside_the_partner_is_not_read_as_favoured(strata: None) -> None:
    """The same table without favour for B: his hands beside P are as disfavoured as any non-partner's there, and
    by strata that is no favour (the first reading's pool, with P's +2 in it, would rank him low, not high)."""
    after = _read(_hidden_pair(6, favour=0.0), True)
    assert after.loc[("A", "B"), "z_mean"] < 2.0
    assert after.loc[("A", "B"), "logp"] > np.log(0.01)


def test_a_table_that_never_re_forms_is_read_within_its_presence(strata: None) -> None:
    """F sits at A's offset 2 in every hand without P (no one else ever sits there then: a weak stratum, read
    against a wider pool) and never beside P; no favour. The pool of a weak stratum is A's hands with the same
    presence: against all his hands, P's tables (every non-partner at -1) would make F read as favoured."""
    rng = np.random.default_rng(9)
    rows = []
    bystanders = [f"o{k}" for k in range(1, 6)]
    for h in range(600):
        if h % 2 == 0:
            table = dict(zip(["P", *rng.choice(bystanders, 2, replace=False)], rng.permutation([1, 2, 3])))
        else:
            a, b = rng.choice(bystanders, 2, replace=False)
            table = {a: 1, "F": 2, b: 3}
        for o, k in table.items():
            rows.append(("A", o, h, int(k), rng.normal() + ((2.0 if o == "P" else -1.0) if h % 2 == 0 else 0.0)))
    lk = pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "imm_marginal"])
    assert _burst_read(lk).loc[("A", "P"), "z_mean"] > BURST_HOT_Z
    after = _read(lk, True)
    assert after.loc[("A", "F"), "z_mean"] < 2.0
    assert after.loc[("A", "F"), "logp"] > np.log(0.05)


def test_the_reading_by_strata_keeps_its_null(strata: None) -> None:
    """Under no favour for the bystanders (a seeded simulation of the permutation null: 2 rooms of 30 actors, 360
    bystander pairs), the share of directed pairs at p <= alpha, by each look and overall, stays within a binomial
    bound (one-sided, 0.001) of alpha, at alpha 0.05 and 0.01. Taking the count look from the reading by strata too
    broke it: the pool's levels sink with the partner's tables in it, and the bystanders apart read as favoured (the
    count look at p <= 0.01 for 3.6% of these pairs, over the bound of 3.1%)."""
    burst.BURST_STRATA = True
    got = []
    for seed in (1, 2):
        r = _burst(bystander_null_room(seed), 0.0)
        got.append(r[r.index.get_level_values("other").str.startswith("b")])
    r = pd.concat(got)
    n = len(r)
    assert n == 360
    for alpha in (0.05, 0.01):
        bound = stats.binom.isf(0.001, n, alpha) / n
        for col in ("logp_mean", "logp_count", "logp"):
            assert float((r[col] <= np.log(alpha)).mean()) <= bound, (alpha, col)
    # the second reading ran by strata for these actors (their partners stand out): the test is of the new reading
    burst.BURST_STRATA = False
    base = _burst(bystander_null_room(1), 0.0)
    moved = (base["logp_mean"] - _read(bystander_null_room(1), True)["logp_mean"]).abs() > 1e-12
    assert int(moved.sum()) >= 100


def test_parts_of_the_room_read_apart_equal_the_whole_with_strata(strata: None) -> None:
    """The Dask path reads the actors in parts (``by_actors``) with the room's habit spread: the reading by strata
    uses an actor's own links only, so the parts give the whole room's frame bit for bit."""
    burst.BURST_STRATA = True
    lk = pd.concat([bystander_null_room(3, actors=6), _hidden_pair(7, 0.8)], ignore_index=True)
    whole = _burst(lk)
    tau2 = room_habit_variance(lk)
    for parts in (2, 3, 7):
        pd.testing.assert_frame_equal(in_room_order(lk, [_burst(p, tau2) for p in by_actors(lk, parts)]), whole,
                                      check_exact=True)
    burst.BURST_STRATA = False
    assert not _burst(lk).equals(whole)  # the strata changed something here
