"""The playout cache (kernels.rollout.playout) changes no estimate: rows with it equal rows without it, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from analyzer.analysis import decisions
from analyzer.kernels import rollout
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import Rules, make_record, play_random, random_deal


def _items(n: int, rules: Rules | None = None) -> list[Checked]:
    out = []
    for k in range(n):
        rng = random.Random(100 + k)
        deal = random_deal(rng)
        st = play_random(deal, rng, rules) if rules is not None else play_random(deal, rng)
        ms = [1000 * (i + 1) + rng.randrange(900) for i in range(52)]
        rec = make_record(st, deal, hand_id=f"h{k}", players=["a", "b", "c", "d"], table_id="t", ms=ms)
        out.append(Checked("t.jsonl", k + 1, rec.hand_id, rec, HandCheck()))
    return out


def _rows(items: list[Checked], monkeypatch: pytest.MonkeyPatch, on: bool, **kw: object) -> tuple[pd.DataFrame, list]:
    metas: list[np.ndarray] = []

    def cache() -> tuple[np.ndarray, ...]:
        c = rollout.new_cache(on)
        metas.append(c[3])
        return c

    monkeypatch.setattr(decisions, "new_cache", cache)
    return decisions.analyse(items, reasons=False, batch_decisions=64, **kw), metas  # type: ignore[arg-type]


@pytest.mark.parametrize("policy, rules, samples, dd", [
    ("model", None, 8, 1), ("strategy", None, 4, 1), ("fast", None, 4, 2),
    ("strategy", Rules(cover_doubling=(20,), dutou="replace"), 4, 1)])
def test_rows_with_the_playout_cache_equal_rows_without(monkeypatch: pytest.MonkeyPatch, policy: str,
                                                        rules: Rules | None, samples: int, dd: int) -> None:
    items = _items(12 if policy == "model" else 5, rules)
    kw = {"policy": policy, "samples": samples, "max_samples": 8, "dd_samples": dd, "seed": 3}
    with_cache, metas = _rows(items, monkeypatch, True, **kw)
    without, _ = _rows(items, monkeypatch, False, **kw)
    pd.testing.assert_frame_equal(with_cache, without, check_exact=True)
    hits, playouts = sum(int(m[2]) for m in metas), sum(int(m[3]) for m in metas)
    # the cache was used and found states again (at least the next decision's move of the policy, every decision)
    assert playouts > 0 and hits > 0.1 * playouts


def test_the_cache_is_not_used_with_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    # with noise a playout is not a function of its state: every playout runs in full
    _, metas = _rows(_items(2), monkeypatch, True, policy="strategy", samples=2, max_samples=2, noise=0.5)
    assert metas and all(int(m[3]) == 0 for m in metas)


def test_a_full_cache_starts_a_new_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    # a tiny cache fills up and is emptied again and again: the rows stay the same
    items = _items(3)
    kw = {"policy": "strategy", "samples": 4, "max_samples": 4, "seed": 1}
    without, _ = _rows(items, monkeypatch, False, **kw)
    monkeypatch.setattr(rollout, "CACHE_BITS", 6)
    small, metas = _rows(items, monkeypatch, True, **kw)
    pd.testing.assert_frame_equal(small, without, check_exact=True)
    assert max(int(m[0]) for m in metas) > 3 * 3  # more generations than the hands' own
