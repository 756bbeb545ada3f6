"""The compiled check's own verdict, judged against the engine's: a broken kernel fails here.

The validator sends every hand the kernel rejects to the Python engine, which explains; so a
kernel that rejected everything would still give right answers, only slowly, and one that
accepted everything would pass illegal hands. These tests look at the kernel itself: legal hands
never fall back (the count must be 0), and on legal and illegal hands alike its verdict is the
engine's. Two meta-tests swap in a "reject all" and an "accept all" kernel and show the checks fail.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import legal_obj

import analyzer.kernels.bieqi as kernel
from analyzer.corrupt import PLANTERS
from analyzer.logs import decoder
from analyzer.rules import Rules
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import FAST_PATH_MIN, VARIANT, make_record, play_random, random_deal

#: Problems about the recorded result: the kernel replays moves, the result is compared after it.
RESULT_CODES = {"result-mismatch", "result-not-zero-sum"}
#: Planted problems in the moves, which the kernel must judge itself (not pass on unread). Not
#: first-action: swapping the first two actions puts their times out of order, which Python sees first.
MOVE_CODES = ("out-of-turn", "card-not-held", "not-live", "cover-with-live", "missing-actions",
              "extra-actions")
RULES = (Rules(), Rules(dutou="replace"), Rules(cover_doubling=(20, 40)), Rules(tong_factors=(1, 3, 9, 27, 1)))


def legal_records(n: int, seed: int = 0) -> list:
    """Legal hands under several rule sets, with and without times and results."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        deal = random_deal(rng)
        st = play_random(deal, rng, RULES[k % len(RULES)])
        ms = [100 * (i + 1) for i in range(52)] if k % 3 else None
        out.append(make_record(st, deal, hand_id=f"h{seed}-{k}", players=["a", "b", "c", "d"], ms=ms,
                               with_result=k % 5 != 4))
    return out


def illegal_records(seeds: range) -> list[tuple[str, object]]:
    """(planted code, record) for every decodable planted problem, over a few legal hands."""
    dec = decoder()
    out = []
    for seed in seeds:
        hand = legal_obj(seed)
        for code, plant in PLANTERS.items():
            planted = plant(hand, random.Random(seed))
            if planted is None:
                continue
            try:
                out.append((code, dec.decode(planted[0])))
            except Exception:  # a shape problem: the schema explains it, no replay happens
                continue
    return out


def assert_legal_hands_never_fall_back(records: list) -> None:
    before = (kernel.STATS.kernel, kernel.STATS.legal, kernel.STATS.fallbacks)
    checks = kernel.check_records(records, VARIANT.check, HandCheck)
    assert all(c.ok for c in checks)
    assert kernel.STATS.fallbacks - before[2] == 0, "legal hands fell back to the Python check"
    assert kernel.STATS.legal - before[1] == len(records)
    assert kernel.kernel_verdicts(records) == [kernel.LEGAL] * len(records)


def assert_verdicts_agree_with_engine(cases: list[tuple[str, object]]) -> None:
    judged = set()
    verdicts = kernel.kernel_verdicts([rec for _, rec in cases])
    for (code, rec), verdict in zip(cases, verdicts):
        engine = VARIANT.check(rec)
        moves_ok = not any(p.code not in RESULT_CODES for p in engine.problems)
        if verdict is not None:
            assert verdict == (kernel.LEGAL if moves_ok else kernel.ILLEGAL), (code, rec.hand_id)
            judged.add(code)
    assert judged >= set(MOVE_CODES), f"the kernel passed these on unread: {set(MOVE_CODES) - judged}"
    batch = kernel.check_records([rec for _, rec in cases], VARIANT.check, HandCheck)
    assert [sorted(p.code for p in c.problems) for c in batch] == \
        [sorted(p.code for p in VARIANT.check(rec).problems) for _, rec in cases]


def test_legal_hands_never_fall_back_to_the_engine():
    assert_legal_hands_never_fall_back(legal_records(40))


def test_the_kernel_verdict_is_the_engine_verdict():
    cases = illegal_records(range(4)) + [("legal", r) for r in legal_records(12, seed=1)]
    assert_verdicts_agree_with_engine(cases)


def test_the_kernel_scores_what_the_engine_scores():
    records = legal_records(16, seed=2)
    fast, status, pts, l7 = kernel._run_kernel(records)
    assert fast == list(range(16)) and (status == kernel.LEGAL).all()
    for j, rec in enumerate(records):
        st = VARIANT.final_state(rec)
        assert pts[j].tolist() == st.points() and l7[j].tolist() == st.last_seven


def _reject_all(deal, offsets, *args):
    return np.ones(len(offsets) - 1, np.int8)


def _accept_all(deal, offsets, *args):
    return np.zeros(len(offsets) - 1, np.int8)


def test_a_kernel_that_rejects_everything_fails_the_checks(monkeypatch):
    monkeypatch.setattr(kernel, "check_hands", _reject_all)
    with pytest.raises(AssertionError):
        assert_legal_hands_never_fall_back(legal_records(4))


def test_a_kernel_that_accepts_everything_fails_the_checks(monkeypatch):
    monkeypatch.setattr(kernel, "check_hands", _accept_all)
    with pytest.raises(AssertionError):
        assert_verdicts_agree_with_engine(illegal_records(range(1)))


def test_big_batches_take_the_compiled_path_and_small_ones_do_not():
    before = kernel.STATS.kernel
    VARIANT.check_batch(legal_records(FAST_PATH_MIN - 1, seed=3))
    assert kernel.STATS.kernel == before
    VARIANT.check_batch(legal_records(FAST_PATH_MIN, seed=4))
    assert kernel.STATS.kernel == before + FAST_PATH_MIN


def test_a_tong_seats_multiplier_is_not_compared_on_either_path() -> None:
    """A 通 seat covered nothing, so no factor applies to it: a log that writes the table's factor there (another
    writer's habit; this project writes 1) is as right as one that writes 1, on the Python path and the compiled
    one. Any other seat's multiplier is still compared."""
    import msgspec

    recs = legal_records(400, seed=9)
    tong = [k for k, r in enumerate(recs) if r.result is not None and r.result.tong and len(r.result.tong) < 4]
    assert len(tong) >= 3, "random play should leave a few 通 seats in 400 hands"

    def with_mult(r: object, seats: list[int], value: int) -> object:
        mult = [value if s in seats else m for s, m in enumerate(r.result.multipliers)]  # type: ignore[attr-defined]
        return msgspec.structs.replace(r, result=msgspec.structs.replace(r.result, multipliers=mult))  # type: ignore[attr-defined]

    right = list(recs)
    wrong = list(recs)
    for k in tong:
        t = list(recs[k].result.tong)
        other = next(s for s in range(4) if s not in t)
        right[k] = with_mult(recs[k], t, 7)
        wrong[k] = with_mult(recs[k], [other], recs[k].result.multipliers[other] + 1)
    assert len(right) >= FAST_PATH_MIN
    for k in tong:
        assert VARIANT.check(right[k]).ok
        assert [p.code for p in VARIANT.check(wrong[k]).problems] == ["result-mismatch"]
    fast_right, fast_wrong = VARIANT.check_batch(right), VARIANT.check_batch(wrong)
    assert all(c.ok for c in fast_right)
    assert [k for k, c in enumerate(fast_wrong) if not c.ok] == tong
