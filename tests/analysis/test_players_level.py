"""The player table's level reading (the true-deal surplus against honest players of the same level, a
random-effects reading) and the Bonferroni of its two parts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from analyzer.analysis.dist import norm_sf
from analyzer.analysis.players import COLUMNS, _between, _level_z, room_columns
from analyzer.analysis.robust import huber_line


def _honest(rng: np.random.Generator, n: int, tau: float, decisions: np.ndarray) -> tuple[np.ndarray, ...]:
    """Honest players' surplus per 100 decisions: a level curve in log skill, a between-player part (sd ``tau``,
    the same in every decision) and the sampling error of their decisions (hit probability ~0.3)."""
    skill = np.exp(rng.uniform(np.log(0.1), np.log(0.6), n))
    se = 100.0 * np.sqrt(0.21 / decisions)
    excess = 3.0 + 1.5 * np.log(skill) + rng.normal(0.0, tau, n) + rng.normal(0.0, 1.0, n) * se
    return excess, skill, se


def test_between_recovers_the_spread_of_honest_players() -> None:
    rng = np.random.default_rng(7)
    se = rng.uniform(0.5, 4.0, 4000)
    for tau in (0.0, 1.0, 3.0):
        r = rng.normal(0.0, tau, len(se)) + rng.normal(0.0, 1.0, len(se)) * se
        got = _between(r, se)
        assert got == pytest.approx(tau, abs=0.25), (tau, got)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_level_reading_is_calibrated_whatever_the_decisions(seed: int) -> None:
    """Half the honest players have 150 decisions, half 4,000; each strays from the curve by its own margin. Read
    with each player's se, both halves are about N(0, 1) (5% above 1.645); read on dd_z with one spread (the former
    reading, no ``se``), the many-decision players are read against the few-decision ones' smaller z: far more of
    them above 1.645, and a cheater among them is flagged more easily than one with few decisions."""
    rng = np.random.default_rng(seed)
    decisions = np.where(np.arange(600) % 2 == 0, 150, 4000)
    excess, skill, se = _honest(rng, 600, 2.0, decisions)
    ok = np.ones(600, bool)
    z = _level_z(excess, skill, ok, se)
    for n in (150, 4000):
        high = float((z[decisions == n] > 1.645).mean())
        assert 0.015 <= high <= 0.11, (n, high)  # 5% expected; 300 players and a tau read from them
    assert abs(float(np.mean(z))) < 0.15 and 0.85 < float(np.std(z)) < 1.15
    former = _level_z(excess / se, skill, ok)
    assert float((former[decisions == 4000] > 1.645).mean()) > 0.15
    assert float((former[decisions == 150] > 1.645).mean()) < 0.01


def test_without_se_it_is_the_former_reading() -> None:
    """No ``se``: the dd_z residual over max(1, its robust spread), widened as a prediction interval."""
    rng = np.random.default_rng(3)
    skill = rng.uniform(0.1, 0.6, 24)
    dd = rng.normal(2.0, 2.5, 24)
    ok = np.ones(24, bool)
    x = np.log(skill)
    c, w, _ = huber_line(x, dd)
    r = dd - (c + w * x)
    spread = max(1.0, 1.4826 * float(np.median(np.abs(r - np.median(r)))))
    lever = 1 / 24 + (x - x.mean()) ** 2 / ((x - x.mean()) ** 2).sum()
    assert spread > 1.5  # the spread, not its floor of 1, is what the reading divides by here
    assert np.allclose(_level_z(dd, skill, ok), r / (spread * np.sqrt(1 + lever)), rtol=0, atol=1e-9)


def test_a_cheater_with_fewer_decisions_than_its_peers_stands_out() -> None:
    """23 honest players with 1,500 decisions who stray from the curve (tau 1.5 per 100) and a cheater with 600
    decisions whose surplus is 9 per 100 above its level: the level reading finds it (z > 3.5), where the former
    reading on dd_z (its residual over the honest players' larger dd_z spread) said less."""
    rng = np.random.default_rng(11)
    decisions = np.full(24, 1500)
    decisions[0] = 600
    excess, skill, se = _honest(rng, 24, 1.5, decisions)
    excess[0] = 3.0 + 1.5 * math.log(skill[0]) + 9.0
    ok = np.ones(24, bool)
    z = _level_z(excess, skill, ok, se)
    former = _level_z(excess / se, skill, ok)
    assert z[0] > 3.5 and z[0] > former[0] + 0.3, (z[0], former[0])
    assert np.abs(z[1:]).max() < 3.0


def _table(level: list[float], partner_z: list[float], tested: list[int]) -> pd.DataFrame:
    """A player table before its room-wide columns (``room=False``); the level part is the player's own dd_z where
    the test reads it so (``_own_z``)."""
    n = len(level)
    out = pd.DataFrame({c: [math.nan] * n for c in COLUMNS})
    out["player"] = [f"p{i}" for i in range(n)]
    out["skill"] = 0.3
    out["decisions"] = 1000
    out["dd_z"] = level
    out["_se"] = 1.5
    out["dd_excess"] = out["dd_z"] * out["_se"]
    out["partner_z"] = partner_z
    out["_tested"] = tested
    out.attrs["ref_weight"] = 0.0
    return out


def _own_z(excess: np.ndarray, skill: np.ndarray, ok: np.ndarray, se: np.ndarray | None = None) -> np.ndarray:
    out = np.full(len(excess), math.nan)
    out[ok] = excess[ok] / (1.0 if se is None else se[ok])
    return out


def test_a_part_not_read_is_not_counted_in_the_bonferroni(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal's p is the stronger part's, times the parts read: a player with no co-player compared has the
    level part alone (not doubled); a player with both has twice the stronger (the partner's already times the
    co-players compared); a player with neither has p 1, as before (one of the players BH counts). (The level part
    read as the player's own dd_z here, so its p is known.)"""
    monkeypatch.setattr("analyzer.analysis.players._level_z", _own_z)
    t = room_columns(_table([3.0, 3.0, math.nan, 1.0], [math.nan, 1.0, 3.5, 3.5], [0, 5, 4, 4])).set_index("player")
    assert t.loc["p0", "signal_p"] == pytest.approx(float(norm_sf(3.0)))
    assert t.loc["p1", "signal_p"] == pytest.approx(2.0 * float(norm_sf(3.0)))
    assert t.loc["p2", "signal_p"] == pytest.approx(4.0 * float(norm_sf(3.5)))
    assert t.loc["p3", "signal_p"] == pytest.approx(2.0 * 4.0 * float(norm_sf(3.5)))
    none = room_columns(_table([math.nan], [math.nan], [0]))
    assert none["signal_p"].iloc[0] == 1.0 and not none["flag"].iloc[0]


def test_too_few_peers_give_no_level_reading() -> None:
    """A private table of four: no level curve can be fitted, and the model's own z is no reading of "better than
    their level" (honest players beat the model by a margin that grows with skill: competent independent bots read
    z 3-6 after 400 hands, benchmarks/eval_private_table.py). level_z is empty and the signal rests on the partner
    part, here not read either: p 1, nobody flagged; from MIN_PEERS players on, the curve reads them."""
    from analyzer.analysis.players import MIN_PEERS

    four = room_columns(_table([6.0, 4.5, 3.2, 0.4], [math.nan] * 4, [0] * 4))
    assert four["level_z"].isna().all()
    assert (four["signal_p"] == 1.0).all() and not four["flag"].any()
    rng = np.random.default_rng(5)
    excess, skill, se = _honest(rng, MIN_PEERS, 1.0, np.full(MIN_PEERS, 3000))
    assert np.isfinite(_level_z(excess, skill, np.ones(MIN_PEERS, bool), se)).all()
    assert np.isnan(_level_z(excess[:-1], skill[:-1], np.ones(MIN_PEERS - 1, bool), se[:-1])).all()


def test_the_players_command_says_when_there_is_no_level_reading(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A room of fewer than MIN_PEERS players: the command says on standard error why level_z is empty."""
    from conftest import SAMPLES


    r = run_cli("players", str(SAMPLES / "legal.jsonl"), "--samples", "2", "--dd-samples", "0",
                                 "--format", "csv")
    assert r.exit_code == 0, r.output
    assert "no 'better than their level' reading (level_z empty" in r.stderr
    assert "level_z empty" not in r.stdout  # the CSV stays a CSV
