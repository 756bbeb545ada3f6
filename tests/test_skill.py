"""The per-player choice model: the fit recovers known skills, its interval covers them, and simulated
novices, regulars and experts come out in order on several seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyzer.analysis.decisions import analyse
from analyzer.analysis.players import COLUMNS, player_table
from analyzer.analysis.skill import fit_by, fit_skill, simulate_choices
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck


def _synthetic_losses(n: int, seed: int) -> np.ndarray:
    """n decisions of 2..8 options with heavy-tailed losses (one best option at 0), inf padding."""
    rng = np.random.default_rng(seed)
    out = np.full((n, 13), np.inf)
    for i in range(n):
        k = int(rng.integers(2, 9))
        x = rng.exponential(1.0, k) * rng.choice([0.3, 1.0, 3.0])
        x[int(rng.integers(k))] = 0.0
        out[i, :k] = x
    return out


@pytest.mark.parametrize("skill", [0.3, 1.0, 2.5, 6.0])
def test_fit_recovers_a_known_skill_and_its_interval_covers_it(skill: float) -> None:
    losses = _synthetic_losses(3000, 1)
    chosen = simulate_choices(losses, skill, seed=2)
    fit = fit_skill(losses, chosen)
    assert fit.lo <= skill <= fit.hi
    assert abs(np.log(fit.skill / skill)) < 0.15
    assert fit.lo < fit.skill < fit.hi


def test_intervals_cover_at_about_the_nominal_rate() -> None:
    losses = _synthetic_losses(400, 3)
    covered = [fit_skill(losses, simulate_choices(losses, 1.5, seed=s)).lo <= 1.5
               <= fit_skill(losses, simulate_choices(losses, 1.5, seed=s)).hi for s in range(40)]
    assert 0.85 <= np.mean(covered) <= 1.0


def test_fit_by_orders_players_and_a_random_player_scores_near_zero() -> None:
    losses = _synthetic_losses(4000, 4)
    truth = {"a": 0.0, "b": 0.8, "c": 3.0}
    groups = np.repeat(list(truth), len(losses) // 3 + 1)[: len(losses)]
    chosen = np.zeros(len(losses), np.int64)
    for j, (name, s) in enumerate(truth.items()):
        m = groups == name
        chosen[m] = simulate_choices(losses[m], s, seed=10 + j)
    fits = fit_by(losses, chosen, groups)
    assert fits["a"].skill < fits["b"].skill < fits["c"].skill
    assert fits["a"].lo < 0.1


def _room_table(seed: int) -> tuple[pd.DataFrame, dict[str, str]]:
    sim = simulate(hands=160, players=8, seed=seed, colluders=0, friends=0,
                   skill_mix="novice:0.34,regular:0.33,expert:0.33")
    recs = list(sim.records)
    items = [Checked("room", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(recs)]
    df = analyse(items, samples=8, max_samples=16, seed=seed, reasons=False)
    return player_table(df), {p: v["level"] for p, v in sim.truth["players"].items()}


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_novices_regulars_experts_in_order_of_skill(seed: int) -> None:
    table, level = _room_table(seed)
    assert list(table.columns) == list(COLUMNS)
    by = table.assign(level=table["player"].map(level)).groupby("level")["skill"].median()
    present = [x for x in ("novice", "regular", "expert") if x in by.index]
    assert len(present) >= 2, level
    assert list(by[present]) == sorted(by[present]), by
    # the interval brackets the figure
    assert (table["skill_lo"] <= table["skill"]).all() and (table["skill"] <= table["skill_hi"]).all()
