"""The simulator: styles change play in the intended direction, rooms validate and are reproducible."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from analyzer.kernels.hidden import mix
from analyzer.logs import write_records
from analyzer.simulate import simulator
from analyzer.simulate.kernel import _determinize, play_batch
from analyzer.simulate.noise import noisy_room
from analyzer.simulate.players import think_times
from analyzer.simulate.room import _deals
from analyzer.strategy import HONEST, NEXT, NF, style_weights
from analyzer.validate import validate
from analyzer.variants.bieqi import COVER, VARIANT, State

B = 2000
DEALS = _deals(B, np.random.default_rng(11))
A, P = 0, 2  # the colluder and its partner (opposite seats); seats 1 and 3 are the opponents


def _play(style: str | None, *, both: bool, lam: float = 1.0, temp: float = 1.0):
    w = np.broadcast_to(HONEST, (B, 4, NF)).copy()
    partners = np.full((B, 4), -1)
    if style:
        for me, other in [(A, P)] + ([(P, A)] if both else []):
            w[:, me] = style_weights(style, lam)
            partners[:, me] = other
    return play_batch(DEALS, w, np.full((B, 4), temp), partners=partners, seed=5)


HONEST_PLAY = _play(None, both=False)
HONEST_SCORES = HONEST_PLAY.scores()


def _se(x: np.ndarray) -> float:
    return float(x.std() / np.sqrt(len(x)))


def _released_to_partner(played) -> float:
    """Mean number of the partner's cards made live by the colluder's plays, per hand."""
    first = np.argmax((DEALS >> 6) & 1, axis=1)
    total = 0
    for b in range(B):
        for n, a in enumerate(played.actions[b].tolist()):
            if (first[b] + n) % 4 == A and a < COVER:
                total += bin(int(NEXT[a]) & int(DEALS[b, P])).count("1")
    return total / B


def test_feeding_makes_the_partners_cards_live_more_often() -> None:
    fed = _play("feed", both=False)
    assert _released_to_partner(fed) > _released_to_partner(HONEST_PLAY) + 0.3
    gain = fed.scores()[:, P] - HONEST_SCORES[:, P]
    assert gain.mean() > 4 * _se(gain)
    assert fed.points[:, P].mean() < HONEST_PLAY.points[:, P].mean()


def test_hand_sharing_wins_for_the_pair() -> None:
    shared = _play("share", both=True).scores()
    gain = shared[:, [A, P]].sum(1) - HONEST_SCORES[:, [A, P]].sum(1)
    assert gain.mean() > 4 * _se(gain)


def test_blocking_shuts_the_opponents_and_holds_back_sevens() -> None:
    blocked = _play("block", both=True)
    extra = blocked.points[:, [1, 3]].sum(1) - HONEST_PLAY.points[:, [1, 3]].sum(1)
    assert extra.mean() > 4 * _se(extra)

    def seven_turn(played) -> float:  # mean action index at which seat A plays a 7 other than 7S
        first = np.argmax((DEALS >> 6) & 1, axis=1)
        idx = [n for b in range(B) for n, a in enumerate(played.actions[b].tolist())
               if (first[b] + n) % 4 == A and a < COVER and a % 13 == 6 and a != 6]
        return float(np.mean(idx))

    assert seven_turn(blocked) > seven_turn(HONEST_PLAY) + 1


def test_honest_players_of_one_level_score_to_zero() -> None:
    assert (HONEST_SCORES.sum(1) == 0).all()
    for s in range(4):
        assert abs(HONEST_SCORES[:, s].mean()) < 4 * _se(HONEST_SCORES[:, s])


def test_search_player_beats_the_heuristic() -> None:
    n = 400
    w = np.broadcast_to(HONEST, (n, 4, NF))
    samples = np.zeros((n, 4), np.int64)
    samples[:, 0] = 8
    base = play_batch(DEALS[:n], w, np.ones((n, 4)), seed=2).scores()[:, 0]
    search = play_batch(DEALS[:n], w, np.ones((n, 4)) * 0.1, samples=samples, seed=2).scores()[:, 0]
    assert search.mean() - base.mean() > 5


def test_determinized_hands_respect_what_covers_proved() -> None:
    hands = np.array(_deals(1, np.random.default_rng(4))[0])
    covered = np.zeros(4, np.int64)
    notheld = np.zeros(4, np.int64)
    notheld[1] = int(hands[2] | hands[3]) & ((1 << 20) - 1)  # seat 1 proved it lacks these
    out_h, out_c = np.zeros(4, np.int64), np.zeros(4, np.int64)
    rng = np.array([mix(0, 0) | np.uint64(1)], np.uint64)
    seen = set()
    for _ in range(20):
        _determinize(hands, covered, notheld, np.int64(0), 0, -1, out_h, out_c, rng)
        assert out_h[0] == hands[0]
        assert [bin(int(x)).count("1") for x in out_h] == [13] * 4
        assert int(out_h[1]) & int(notheld[1]) == 0
        assert int(out_h[1] | out_h[2] | out_h[3]) == int(hands[1] | hands[2] | hands[3])
        seen.add(tuple(out_h.tolist()))
    assert len(seen) > 15  # the stream advances: deals differ


def test_search_bots_play_legal_reproducible_hands() -> None:
    # search seats (one with a partner's hand) deal hidden hands with the shared sampler; every action
    # they take must be legal for the Python engine, and a batch is a function of its seed
    n = 12
    w = np.broadcast_to(HONEST, (n, 4, NF))
    samples = np.zeros((n, 4), np.int64)
    samples[:, [0, 1]] = 4
    partners = np.full((n, 4), -1)
    partners[:, 1] = 3
    kw = dict(samples=samples, partners=partners, lams=np.ones((n, 4)), seed=9)
    one = play_batch(DEALS[:n], w, np.full((n, 4), 0.2), **kw)
    two = play_batch(DEALS[:n], w, np.full((n, 4), 0.2), **kw)
    assert (one.actions == two.actions).all()
    scores = one.scores()
    for b in range(n):
        st = State([int(x) for x in DEALS[b]])
        for a in one.actions[b].tolist():
            assert st.is_legal(a), (b, a)
            st.push(a)
        assert st.is_terminal() and st.returns() == scores[b].tolist()


def test_think_time_grows_with_difficulty_and_colluders_are_slow() -> None:
    rng = np.random.default_rng(1)
    nopts = np.array([[1] * 26 + [4] * 26] * 200)
    diffs = np.where(nopts > 1, 2.0, 0.0)
    pace = np.full(nopts.shape, 900.0)
    ms = think_times(nopts, diffs, pace, np.zeros(nopts.shape), np.random.default_rng(1))
    step = np.diff(ms, axis=1, prepend=0)
    assert (step >= 0).all() and np.median(step[:, :26]) * 2 < np.median(step[:, 26:])
    slow = think_times(nopts, diffs, pace, np.full(nopts.shape, 1500.0), rng)
    assert slow[:, -1].mean() > ms[:, -1].mean() + 26 * 1000


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    sim = simulator("bieqi").simulate(hands=400, players=14, seed=21, colluders=3, style="mixed", friends=1,
                                      skill_mix="casual:0.5,regular:0.4,expert:0.1")
    path = tmp_path_factory.mktemp("room") / "room.jsonl.gz"
    write_records(path, sim.records)
    return path, sim.truth


def test_room_validates_and_the_truth_names_the_pairs(room: tuple[Path, dict]) -> None:
    path, truth = room
    summary = validate([str(path)])
    assert summary.hands == 400 and summary.valid_hands == 400, summary.problems[:3]
    styles = sorted(p["style"] for p in truth["colluding_pairs"])
    assert styles == ["block", "feed", "share"]
    assert all(p["hands_together"] >= p["colluding_hands"] > 0 for p in truth["colluding_pairs"])
    friends = truth["friend_pairs"][0]["players"]
    assert all(truth["players"][f]["level"] == "novice" for f in friends)
    assert truth["friend_pairs"][0]["hands_together"] > 50


def test_same_seed_same_bytes(tmp_path: Path, room: tuple[Path, dict]) -> None:
    args = ["simulate", "--hands", "400", "--players", "14", "--colluders", "3", "--style", "mixed",
            "--skill-mix", "casual:0.5,regular:0.4,expert:0.1", "--seed", "21", "--out"]
    res = run_cli(*args + [str(tmp_path / "a.jsonl.gz"), "--truth", str(tmp_path / "a.json")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a.jsonl.gz").read_bytes() == room[0].read_bytes()
    other = run_cli(*args[:-2] + ["22", "--out", str(tmp_path / "b.jsonl.gz")])
    assert other.exit_code == 0 and (tmp_path / "b.jsonl.gz").read_bytes() != room[0].read_bytes()


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    for bad in (["--style", "telepathy"], ["--players", "5", "--colluders", "2"], ["--option", "nonsense=1"],
                ["--option", "novalue"]):
        res = run_cli("simulate", "--hands", "5", "--out", str(tmp_path / "x.jsonl"), *bad)
        assert res.exit_code == 2, (bad, res.output)
        assert not (tmp_path / "x.jsonl").exists()


def test_noisy_search_players_play_legal_reproducible_hands() -> None:
    # the noise models' search players deal hidden hands with the shared sampler too
    kw = dict(players=4, hands_per_player=8, seed=3, search=4)
    one = noisy_room("softmax", **kw)
    two = noisy_room("softmax", **kw)
    assert len(one.records) == 8
    assert [VARIANT.actions_of(r) for r in one.records] == [VARIANT.actions_of(r) for r in two.records]
    assert all(VARIANT.check(r).ok for r in one.records)


def _first_fit_by_scanning(units: list[list[int]]) -> list[list[int]]:
    """The packing as it was (each unit into the first table with room, found by scanning every table): the
    reference ``first_fit`` must agree with, so every seeded room keeps its bytes."""
    tables: list[list[int]] = []
    for u in units:
        for t in tables:
            if len(t) + len(u) <= 4:
                t.extend(u)
                break
        else:
            tables.append(list(u))
    return tables


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("size", [0, 1, 7, 60, 1500])
@pytest.mark.parametrize("pair_share", [0.0, 0.3, 1.0])
def test_first_fit_packs_as_scanning_every_table_did(seed: int, size: int, pair_share: float) -> None:
    from analyzer.simulate.room import first_fit

    rng = np.random.default_rng([seed, size])
    units, k = [], 0
    for _ in range(size):
        n = 2 if rng.random() < pair_share else 1
        units.append(list(range(k, k + n)))
        k += n
    order = rng.permutation(len(units))  # pairs and singles mixed (the room puts the pairs first)
    mixed = [units[i] for i in order]
    for case in (units, mixed):
        assert first_fit(case) == _first_fit_by_scanning(case)


@pytest.mark.parametrize("seed", range(4))
def test_tables_of_a_round_are_the_same_draw_for_draw(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round's tables with pairs bound together and players absent: the same tables, and the generator left
    in the same state, as with the scanning packing."""
    from analyzer.simulate import room as room_mod

    opts = room_mod.Options(colluders=5, friends=6, presence=0.7)
    pairs = room_mod._population(41, opts, np.random.default_rng(seed))[1]
    rng = np.random.default_rng(100 + seed)
    got = [room_mod._form_tables(41, pairs, opts, rng) for _ in range(5)]
    state = rng.bit_generator.state
    monkeypatch.setattr(room_mod, "first_fit", _first_fit_by_scanning)
    rng = np.random.default_rng(100 + seed)
    assert got == [room_mod._form_tables(41, pairs, opts, rng) for _ in range(5)]
    assert rng.bit_generator.state == state
    assert any(len(t) for t in got) and all(len(s) == 4 for t in got for s in t)


@pytest.mark.parametrize("name", ["players", "seed", "hands"])
def test_the_commands_own_options_are_not_simulator_options(tmp_path: Path, name: str) -> None:
    res = run_cli("simulate", "--hands", "5", "--out", str(tmp_path / "x.jsonl"), "--option",
                                   f"{name}=5")
    assert res.exit_code == 2 and f"use the command's own --{name} option" in res.output, res.output
    assert "multiple values" not in res.output and not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("mix", ["novice:nan", "novice:inf,expert:1", "novice:-1,expert:1", "novice:1e308,expert:1e308",
                                 "novice:0", "wizard:1", "novice:x", "novice:1,novice:1"])
def test_skill_mix_refused_with_a_reason(mix: str) -> None:
    from analyzer.simulate.players import parse_skill_mix

    with pytest.raises(ValueError, match="skill"):
        parse_skill_mix(mix)
    result = run_cli("simulate", "--players", "8", "--hands", "2", "--skill-mix", mix,
                                      "--out", os.devnull)
    assert result.exit_code == 2
    assert "Probabilities" not in result.output and "skill" in result.output


def test_skill_mix_shares_normalised() -> None:
    from analyzer.simulate.players import parse_skill_mix

    assert parse_skill_mix("novice:1, expert:3") == {"novice": 0.25, "expert": 0.75}


def test_an_option_another_variants_simulator_takes_is_named_not_a_python_error() -> None:
    result = run_cli("simulate", "--variant", "bieqi-borrow", "--hands", "2", "--friends", "2",
                                      "--out", os.devnull)
    assert result.exit_code == 2
    assert "has no option friends" in result.output and "cheat_rate" in result.output
    assert "unexpected keyword" not in result.output


def test_a_room_beyond_a_million_players_is_refused() -> None:
    result = run_cli("simulate", "--players", "100000000", "--hands", "2", "--out", os.devnull)
    assert result.exit_code == 2 and "--players" in result.output


def test_dash_writes_the_log_to_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o -`` is standard output (it wrote a file called '-'); a folder output refuses it."""
    import subprocess
    import sys

    from conftest import ROOT

    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "analyzer.cli", "simulate", "--players", "8", "--hands", "3", "-o", "-"],
                         capture_output=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.splitlines()) == 3 and validate_bytes(run.stdout) == 3
    assert list(tmp_path.iterdir()) == []
    result = run_cli("audit", str(ROOT / "samples" / "legal.jsonl"), "-o", "-")
    assert result.exit_code == 2 and "standard output" in result.output
    assert list(tmp_path.iterdir()) == []


def validate_bytes(data: bytes) -> int:
    """The valid hands among ``data``'s lines."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(data)
        f.flush()
        return validate([f.name]).valid_hands


def test_simulate_plans_lazily() -> None:
    from analyzer.simulate.room import simulate

    next(simulate(hands=4, players=12, seed=2).records)  # compiled first (a cold numba cache compiles here,
    # allocating far more than the plan; that is not what is measured)
    tracemalloc.start()
    sim = simulate(hands=100_000, players=12, seed=1)
    first = [next(sim.records) for _ in range(3)]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(first) == 3 and sim.truth["hands"] == 100_000
    assert peak < 30 << 20, peak  # planning every hand first held ~100 MB here
