"""The per-player choice model: the fit recovers known skills, its interval covers them, and simulated
novices, regulars and experts come out in order on several seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyzer.analysis.decisions import analyse
from analyzer.analysis.players import COLUMNS, player_table
from analyzer.analysis.skill import (
    Reference,
    choice_probabilities,
    equivalent_skill,
    expected_loss,
    fit_by,
    fit_choice,
    fit_skill,
    load_reference,
    rate,
    reference,
    save_reference,
    simulate_choices,
)
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


@pytest.mark.slow
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


# --- the headline rating: two-direction fit read on a reference set ----------------------------------

def _policy_losses(losses: np.ndarray, seed: int) -> np.ndarray:
    """A second judgement of the same options: correlated with ``losses`` but not equal, best at 0."""
    rng = np.random.default_rng(seed)
    fin = np.isfinite(losses)
    r = np.where(fin, 0.5 * np.where(fin, losses, 0.0) + rng.exponential(1.0, losses.shape), np.inf)
    return r - np.where(fin, r, np.inf).min(axis=1, keepdims=True)


def _choose(losses: np.ndarray, ref: np.ndarray, a: float, b: float, seed: int) -> np.ndarray:
    fin = np.isfinite(losses)
    mixed = np.where(fin, a * np.where(fin, losses, 0.0) + b * np.where(fin, ref, 0.0), np.inf)
    return simulate_choices(mixed, 1.0, seed)


def _refset(seed: int, n: int = 1500) -> Reference:
    loss = _synthetic_losses(n, seed)
    return Reference(loss, _policy_losses(loss, seed + 1))


@pytest.mark.parametrize(("a", "b"), [(0.0, 2.0), (1.5, 0.5), (3.0, 0.0)])
def test_two_direction_fit_recovers_both_sensitivities(a: float, b: float) -> None:
    losses = _synthetic_losses(4000, 21)
    ref = _policy_losses(losses, 22)
    c = fit_choice(losses, ref, _choose(losses, ref, a, b, 23))
    sd = np.sqrt(np.diag(c.cov))
    assert abs(c.a - a) < 4 * sd[0] + 0.05 and abs(c.b - b) < 4 * sd[1] + 0.05, (c, sd)
    assert sd[0] < 0.3 and sd[1] < 0.3


def test_rating_without_policy_losses_is_the_one_parameter_fit() -> None:
    losses = _synthetic_losses(2000, 31)
    chosen = simulate_choices(losses, 1.2, seed=32)
    fit, c = rate(losses, np.zeros_like(losses), chosen, _refset(33))
    assert c.b == 0.0
    one = fit_skill(losses, chosen)
    assert abs(np.log(fit.skill / one.skill)) < 0.01
    assert fit.lo < fit.skill < fit.hi


def test_rating_interval_covers_the_true_rating_at_about_the_nominal_rate() -> None:
    refset = _refset(41)
    truth = equivalent_skill(refset, expected_loss(refset, 0.8, 1.0)[0])
    losses = _synthetic_losses(500, 42)
    ref = _policy_losses(losses, 43)
    fits = [rate(losses, ref, _choose(losses, ref, 0.8, 1.0, s), refset)[0] for s in range(40)]
    covered = [f.lo <= truth <= f.hi for f in fits]
    assert 0.85 <= np.mean(covered) <= 1.0, (truth, fits[:3])
    assert abs(np.log(np.median([f.skill for f in fits]) / truth)) < 0.1


def test_rating_orders_players_who_follow_the_policy_and_players_who_follow_the_values() -> None:
    refset = _refset(51)
    losses = _synthetic_losses(3000, 52)
    ref = _policy_losses(losses, 53)
    # heuristic players: sharper on the policy's preferences is better; a values player is rated by the values
    ratings = [rate(losses, ref, _choose(losses, ref, 0.05, b, 54 + i), refset)[0].skill
               for i, b in enumerate((0.3, 1.0, 3.0, 10.0))]
    assert ratings == sorted(ratings), ratings
    random_player = rate(losses, ref, _choose(losses, ref, 0.0, 0.0, 60), refset)[0]
    assert random_player.lo < 0.1
    expert = rate(losses, ref, _choose(losses, ref, 6.0, 0.0, 61), refset)[0]
    assert expert.skill > ratings[-2]


def test_reference_set_is_shipped_and_a_bad_one_is_refused(tmp_path) -> None:
    r = reference()
    assert r.loss.shape == r.ref.shape and r.loss.shape[0] >= 1000
    fin = np.isfinite(r.loss)
    assert (fin.sum(axis=1) >= 2).all() and (np.where(fin, r.loss, np.inf).min(axis=1) == 0).all()
    bad = tmp_path / "bad.npz"
    np.savez(bad, loss=np.zeros(3), ref=np.zeros(3))
    with pytest.raises(ValueError, match="bad.npz"):
        load_reference(bad)
    good = tmp_path / "good.npz"
    save_reference(good, Reference(r.loss[:10], r.ref[:10], "ten"))
    back = load_reference(good)
    assert back.meta == "ten" and np.array_equal(np.isfinite(back.loss), np.isfinite(r.loss[:10]))


def test_choice_probabilities_follow_both_directions() -> None:
    losses = np.array([[0.0, 1.0, np.inf], [0.0, 0.5, 2.0]])
    ref = np.array([[1.0, 0.0, np.inf], [0.0, 0.0, 0.0]])
    p = choice_probabilities(losses, ref, np.array([1.0, 0.0]), np.array([1.0, 3.0]))
    assert np.allclose(p.sum(axis=1), 1.0) and p[0, 2] == 0.0
    assert np.isclose(p[0, 0], p[0, 1])  # one point of loss each way
    assert np.allclose(p[1], 1 / 3)  # no sensitivity to the values, equal policy losses


@pytest.mark.slow
def test_signal_does_not_flag_steady_honest_players() -> None:
    """A room of near-greedy honest players (blunder noise): the values alone misjudge their steady
    choices and read one of them as "better than their level" (p 5e-5 before the signal used the
    two-direction fit); with it no honest player is flagged."""
    from analyzer.simulate.noise import noisy_room

    room = noisy_room("blunder", players=24, hands_per_player=60, seed=1)
    items = [Checked("room", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(room.records)]
    table = player_table(analyse(items, seed=0, reasons=False))
    assert not table["flag"].any(), table.sort_values("signal_p").head(3)
    assert table["signal_p"].min() > 1e-3
    # and the headline orders these players by their known noise
    from scipy.stats import spearmanr

    assert spearmanr(table["player"].map(room.level), table["skill"]).statistic < -0.85


def test_decisions_without_information_give_the_whole_interval() -> None:
    """Options that are always equal (or a single option) say nothing about skill: the interval is the whole range."""
    losses = np.full((50, 13), np.inf)
    losses[:, :3] = 0.0
    fit, _ = rate(losses, np.zeros_like(losses), np.zeros(50, np.int64), _refset(71))
    assert fit.lo <= 0.01 and fit.hi >= 10.0
    ref = np.where(np.isfinite(losses), 1.0, np.inf)
    ref[:, 0] = 0.0
    fit, _ = rate(losses, ref, np.zeros(50, np.int64), _refset(72))
    assert fit.lo <= 0.01 and fit.hi >= 10.0


@pytest.mark.parametrize("weight", [0.0, 0.4, 1.0])
def test_the_skill_scale_curve_is_the_models_mean_expected_loss(weight: float) -> None:
    """The tabulated curve (evaluated over the options only, a block of sensitivities at a time) is, point by
    point, the mean over the reference decisions of the softmax model's expected yardstick loss, made one
    sensitivity and one padded row at a time; options in any column, 1 to 13 of them."""
    import math

    from analyzer.analysis import skill

    rng = np.random.default_rng(11)
    loss = np.where(rng.random((300, 13)) < 0.35, rng.exponential(1.0, (300, 13)), np.inf)
    loss[np.arange(300), rng.integers(0, 13, 300)] = rng.exponential(0.2, 300)  # at least one option a row
    loss[0] = np.inf
    loss[0, 12] = 0.5  # a single option, in the last column
    ref = np.where(np.isfinite(loss), rng.exponential(1.0, (300, 13)), np.inf)
    refset = Reference(loss, ref, "test")
    logs, curve = skill._curve(refset, weight)
    yard = (1 - weight) * np.where(np.isfinite(loss), loss, 0) + weight * np.where(np.isfinite(ref), ref, 0)
    fin = np.isfinite(loss)
    want = []
    for v in logs[::37]:
        e = []
        for i in range(len(loss)):
            z = -math.exp(v) * yard[i][fin[i]]
            p = np.exp(z - z.max())
            e.append(float((p / p.sum() * yard[i][fin[i]]).sum()))
        want.append(np.mean(e))
    assert np.allclose(curve[::37], np.minimum.accumulate(want), rtol=1e-12, atol=1e-15)
    assert np.all(np.diff(curve) <= 0)  # decreasing in the sensitivity
    empty = loss.copy()
    empty[5] = np.inf  # a decision without options: the model is undefined there
    assert np.isnan(skill._curve(Reference(empty, ref, "test"), weight)[1]).all()


def test_a_fit_started_elsewhere_finds_the_same_optimum() -> None:
    """``fit_choice(start=...)`` (the player table's kind-by-kind fits start from the player's pooled fit): the
    likelihood is convex, so any start reaches the optimum the default start reaches."""
    from analyzer.analysis.skill import fit_choice

    rng = np.random.default_rng(3)
    n, k = 400, 5
    loss = np.abs(rng.normal(0.0, 1.0, (n, k)))
    loss[np.arange(n), rng.integers(0, k, n)] = 0.0
    ref = np.abs(rng.normal(0.0, 1.0, (n, k)))
    loss[rng.random((n, k)) < 0.2] = np.inf  # fewer options in some rows
    loss[:, 0] = np.where(np.isfinite(loss[:, 0]), loss[:, 0], 0.0)
    z = np.where(np.isfinite(loss), -(1.7 * loss + 0.6 * ref), -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    chosen = (p.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    base = fit_choice(loss, ref, chosen)
    assert 1.0 < base.a < 2.5 and 0.2 < base.b < 1.1  # near the model that made the choices
    for start in ((0.0, 0.0), (base.a, base.b), (8.0, 3.0), (float("nan"), 1.0)):
        got = fit_choice(loss, ref, chosen, start=start)
        assert abs(got.a - base.a) < 1e-5 and abs(got.b - base.b) < 1e-5, start
