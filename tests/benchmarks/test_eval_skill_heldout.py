"""The held-out skill sweeps' noise levels: the whole range, once each, in a seeded order."""

import numpy as np
import pytest

from benchmarks.eval_skill_heldout import SWEEPS, _assigner, levels


@pytest.mark.parametrize("sweep", list(SWEEPS))
def test_levels_cover_the_range_in_a_seeded_order(sweep: str) -> None:
    lo, hi = SWEEPS[sweep][2]
    xs = levels(sweep, 12, 1)
    assert len(set(xs)) == 12
    assert min(xs) == pytest.approx(lo) and max(xs) == pytest.approx(hi)
    assert levels(sweep, 12, 1) == xs
    assert levels(sweep, 12, 2) != xs
    assert sorted(xs) == pytest.approx(sorted(levels(sweep, 12, 2)))


def test_assigner_gives_each_player_one_level() -> None:
    known: dict[str, float] = {}
    level = _assigner([0.1, 0.2, 0.3], known)
    assert [level("a"), level("b"), level("a"), level("c")] == [0.1, 0.2, 0.1, 0.3]
    assert known == {"a": 0.1, "b": 0.2, "c": 0.3}
    with pytest.raises(StopIteration):
        level("d")
    assert np.isfinite(list(known.values())).all()
