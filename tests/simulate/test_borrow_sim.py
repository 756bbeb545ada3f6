"""Simulated rooms of the borrowing variant and their audit: cheats are caught, lending pairs stand out."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from scipy.stats import rankdata

from analyzer.audit.borrow import (
    Lend,
    audit_borrow,
    exact_rank_sum_p,
    illegal_borrows,
    lend_goodness,
    lending_favour,
)
from analyzer.cards import BIG_JOKER, mask_of, parse_card
from analyzer.logs import format_record, write_records
from analyzer.problems import Problem
from analyzer.simulate import simulator
from analyzer.simulate.borrow import simulate
from analyzer.validate import validate


def room(tmp_path: Path, **kw: object) -> tuple[str, dict]:
    sim = simulate(**{"hands": 300, "players": 8, "seed": 11, **kw})  # type: ignore[arg-type]
    path = tmp_path / "room.jsonl"
    write_records(path, sim.records)
    return str(path), sim.truth


def test_the_same_seed_gives_the_same_bytes() -> None:
    a = [format_record(r) for r in simulate(hands=20, players=6, seed=4, colluders=1, style="both").records]
    b = [format_record(r) for r in simulator("bieqi-borrow").simulate(hands=20, players=6, seed=4, colluders=1,
                                                                      style="both").records]
    assert a == b and len(a) == 20


def test_an_honest_room_and_a_lending_pair_are_valid_logs(tmp_path: Path) -> None:
    for colluders in (0, 1):
        path, truth = room(tmp_path, colluders=colluders, style="lend")
        summary = validate([path])
        assert (summary.hands, summary.valid_hands, summary.problems) == (300, 300, [])
        assert len(truth["pairs"]) == colluders and truth["cheats"] == []


def test_cheats_are_the_only_illegal_borrowers_and_are_caught(tmp_path: Path) -> None:
    path, truth = room(tmp_path, colluders=1, style="borrow")
    problems = validate([path]).problems
    assert {p.code for p in problems} == {"borrow-with-live"}  # no bad-dealer: cheat hands keep the chain
    assert {p.player for p in problems} == set(truth["cheats"]) and len(truth["cheats"]) == 2
    audit = audit_borrow([path])
    top = audit.players.head(2)
    assert set(top["player"]) == set(truth["cheats"]) and (top["illegal_borrows"] > 0).all()
    assert (audit.players["illegal_borrows"].iloc[2:] == 0).all()
    assert audit.players["illegal_borrows"].sum() == len(problems)


def test_a_lending_pair_is_the_most_significant_pair(tmp_path: Path) -> None:
    path, truth = room(tmp_path, colluders=1, style="lend")
    pairs = audit_borrow([path]).pairs
    first = pairs.iloc[0]
    assert [first["a"], first["b"]] == truth["pairs"][0]
    assert first["p_value"] < 1e-9 and first["favour"] > 0.3
    assert (pairs["p_value"].iloc[1:] > 1e-3).all()  # honest lenders hand over their least useful card


def test_lend_goodness_ranks_the_lent_card_among_the_options() -> None:
    table = mask_of([parse_card("7H")])
    options = mask_of(parse_card(c, jokers=True) for c in ("8H", "TH", "AH", "BJ"))  # steps 0, 2, 6, 13
    assert lend_goodness(table, options, BIG_JOKER) == 0.0
    assert lend_goodness(table, options, parse_card("8H")) == 1.0
    assert lend_goodness(table, options, parse_card("TH")) == pytest.approx(2 / 3)
    assert lend_goodness(table, mask_of([parse_card("6H"), parse_card("8H")]), parse_card("8H")) is None


def test_illegal_borrow_table_counts_from_problems() -> None:
    problems = [Problem("borrow-with-live", "m", hand_id=h, action=a, player="x")
                for h, a in (("1", 3), ("1", 9), ("2", 4))]
    problems.append(Problem("not-live", "m", hand_id="3", action=1, player="y"))
    df = illegal_borrows(problems, borrows={"x": 5, "y": 2}, hands={"x": 3, "y": 3})
    assert df.to_dict("records") == [
        {"player": "x", "hands": 3, "borrows": 5, "illegal_borrows": 3, "hands_with_illegal": 2,
         "first_illegal": "-:0 hand 1 move 4"},
        {"player": "y", "hands": 3, "borrows": 2, "illegal_borrows": 0, "hands_with_illegal": 0, "first_illegal": ""},
    ]


def test_lending_favour_compares_a_pair_with_their_other_lends() -> None:
    rng = random.Random(2)
    lends = [Lend("h", k, "a", "b", 0, 4, rng.uniform(0.6, 1.0)) for k in range(30)]
    lends += [Lend("h", k, "a", "c", 0, 4, rng.uniform(0.0, 0.4)) for k in range(30)]
    lends += [Lend("h", k, "c", "a", 0, 4, rng.uniform(0.0, 0.4)) for k in range(30)]
    df = lending_favour(lends).set_index(["a", "b"])
    ab = df.loc[("a", "b")]
    assert (ab["lends_to_partner"], ab["lends_to_others"]) == (30, 30) and ab["p_value"] < 1e-6
    assert df.loc[("a", "c"), "p_value"] > 0.99  # a lends worse to c than to others


def test_one_lend_carries_no_more_than_one_in_its_lends() -> None:
    """One excellent lend to the partner among 400 tied least-useful lends to others: the exact p is 1/401 (the
    normal approximation of Mann-Whitney read it as 1e-45)."""
    lends = [Lend("h", 0, "a", "b", 0, 4, 1.0)] + [Lend("h", k, "a", "c", 0, 4, 0.0) for k in range(400)]
    ab = lending_favour(lends).set_index(["a", "b"]).loc[("a", "b")]
    assert ab["lends_to_partner"] == 1 and ab["p_value"] == pytest.approx(1 / 401)


def test_exact_rank_sum_p_is_the_share_of_subsets_as_extreme() -> None:
    rng = random.Random(4)
    for _ in range(30):
        partner = [rng.choice([0.0, 0.0, 0.25, 0.5, 1.0]) for _ in range(rng.randint(1, 5))]
        others = [rng.choice([0.0, 0.5, 1.0]) for _ in range(rng.randint(1, 6))]
        ranks = rankdata(partner + others)
        seen = ranks[:len(partner)].sum()
        subsets = list(itertools.combinations(ranks, len(partner)))
        share = sum(sum(c) >= seen - 1e-9 for c in subsets) / len(subsets)
        assert exact_rank_sum_p(partner, others) == pytest.approx(share)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="style"):
        simulate(hands=1, players=8, seed=0, style="share")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pair"):
        simulate(hands=1, players=5, seed=0, colluders=3)
    with pytest.raises(TypeError):
        simulate(hands=1, players=8, seed=0, strength=2.0)  # type: ignore[call-arg]
