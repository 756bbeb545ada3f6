"""Decision analysis: known positions ranked right, forced moves skipped, seeded, convergent, skill recovered."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
from conftest import run_cli

from analyzer.analysis.decisions import COLUMNS, analyse, evaluate_position
from analyzer.analysis.players import COLUMNS as PLAYER_COLUMNS
from analyzer.analysis.players import player_table
from analyzer.cards import FULL_DECK, mask_of, parse_card, scan
from analyzer.logs import format_record
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import COVER, NEXT_LIVE, VARIANT, State, make_record, random_deal

Policy = Callable[[State, random.Random], int]


def position(hands: list[str], covered: list[str], n: int) -> State:
    """A position built from its cards (seat 0 to act); the table is every card not named."""
    hm = [mask_of(parse_card(c) for c in h.split()) for h in hands]
    cm = [mask_of(parse_card(c) for c in h.split()) for h in covered]
    table = FULL_DECK
    for m in hm + cm:
        table &= ~m
    live = 0
    for c in scan(table):
        live |= NEXT_LIVE[c]
    st = State([FULL_DECK, 0, 0, 0])
    st.hands, st.covered, st.table, st.live, st.turn, st.n = hm, cm, table, live & ~table, 0, n
    return st


def random_player(st: State, rng: random.Random) -> int:
    return rng.choice(st.legal_actions())


def greedy_player(st: State, rng: random.Random) -> int:
    """Cover the cheapest card; play the live card that frees the most of one's own cards."""
    legal = st.legal_actions()
    hand = st.hands[st.turn]
    if legal[0] >= COVER:
        return min(legal, key=lambda a: (a % COVER) % 13)

    def own_behind(c: int) -> int:
        r, base = c % 13, c - c % 13
        ranks = range(r) if r < 6 else range(r + 1, 13) if r > 6 else [x for x in range(13) if x != 6]
        return sum(hand >> (base + x) & 1 for x in ranks)

    return max(legal, key=lambda a: (own_behind(a), -a))


def room(hands: int, seats: list[tuple[str, Policy]], seed: int) -> list[Checked]:
    """Valid hands of a fixed table; seats rotate each hand so no player keeps one seat."""
    rng = random.Random(seed)
    out = []
    for h in range(hands):
        order = seats[h % 4:] + seats[:h % 4]
        deal = random_deal(rng)
        st = State(deal)
        ms, t = [], 0
        while not st.is_terminal():
            st.push(order[st.turn][1](st, rng))
            t += 300 + rng.randrange(2000)
            ms.append(t)
        rec = make_record(st, deal, hand_id=f"r{seed}-{h}", players=[p for p, _ in order], table_id="t1", ms=ms)
        out.append(Checked("room", h + 1, rec.hand_id, rec, HandCheck()))
    return out


# --------------------------------------------------------------------------- known positions

def test_cover_that_saves_a_santong_is_ranked_first() -> None:
    # Seat 0 must cover 6D or KS. Covering KS lets 7D-8D, JH-9D, QH-5D all run out: 三通, x8 on seat 0.
    st = position(["6D KS", "7D 8D", "JH 9D", "QH 5D"], ["AD 2D 3D 4D TD JD QD KD QS KH", "", "", ""], 44)
    v = evaluate_position(st, samples=64, dd_samples=4, seed=1)
    save = v.options.index(COVER + parse_card("6D"))
    assert v.best(0) == save and v.best(0, dd=True) == save
    other = 1 - save
    assert v.ev_dd[save, 0] - v.ev_dd[other, 0] == pytest.approx(2256 - 1180)  # exact: every later move is forced
    assert v.ev[save, 0] - v.ev[other, 0] > 3 * v.se[other]


def test_covering_the_dead_card_first_is_ranked_first() -> None:
    # KS can never be played (QS is covered); 8D will be once 7D, which someone must play, is out.
    st = position(["8D KS", "7D 6D", "5D 4D", "3D 2D"], ["AD 9D TD JD QD KD QS", "", "", ""], 44)
    v = evaluate_position(st, samples=32, dd_samples=4, seed=2)
    dead = v.options.index(COVER + parse_card("KS"))
    assert v.best(0) == dead and v.best(0, dd=True) == dead
    assert v.se[1 - dead] < (v.ev[dead, 0] - v.ev[1 - dead, 0]) / 3


# --------------------------------------------------------------------------- rows

@pytest.fixture(scope="module")
def mixed_room() -> list[Checked]:
    return room(8, [("g1", greedy_player), ("r1", random_player), ("g2", greedy_player), ("r2", random_player)], 5)


@pytest.fixture(scope="module")
def mixed_rows(mixed_room: list[Checked]) -> pd.DataFrame:
    return analyse(mixed_room, samples=8, dd_samples=2, seed=3)


def test_rows_are_the_decisions_with_a_choice_and_nothing_else(mixed_room: list[Checked],
                                                                mixed_rows: pd.DataFrame) -> None:
    assert tuple(mixed_rows.columns) == COLUMNS
    expected = []
    for item in mixed_room:
        rec = item.record
        st = State(VARIANT.deal_masks(rec, []))
        for i, a in enumerate(rec.actions):
            if len(st.legal_actions()) > 1:
                expected.append((rec.hand_id, i))
            c = parse_card(a.card)
            st.push(COVER + c if a.kind == "cover" else c)
    assert list(zip(mixed_rows.hand_id, mixed_rows.action)) == expected
    assert (mixed_rows.n_options >= 2).all()
    r = mixed_rows
    assert (r.regret >= 0).all() and (r.dd_regret >= 0).all() and (r.regret_se >= 0).all()
    assert ((r["rank"] == 0) == (r.regret == 0)).all()
    assert np.allclose(r.delta0.where(r.seat == 0).dropna(), -r.regret.where(r.seat == 0).dropna())
    assert r.think_ms.between(300, 2300).all()
    assert (r.player == r.apply(lambda x: x[f"p{x.seat}"], axis=1)).all()
    first = r.options.iloc[0]
    assert len(first) == r.n_options.iloc[0] and list(first[0]) == ["card", "kind", "ev", "ev_dd", "loss", "loss_dd",
                                                                     "loss_ref"]
    assert (r.options.list.len() == r.n_options).all()  # every row's options, each its card and kind
    assert r.reasons.str.len().gt(0).all()
    assert r.loc[r.chosen != r.best, "reasons"].str.contains("rather than").all()


def test_same_seed_same_rows_whatever_the_batching(mixed_room: list[Checked], mixed_rows: pd.DataFrame) -> None:
    again = analyse(mixed_room, samples=8, dd_samples=2, seed=3, batch_decisions=7)
    pd.testing.assert_frame_equal(again, mixed_rows)
    other = analyse(mixed_room[:2], samples=8, dd_samples=2, seed=4, reasons=False)
    assert not np.allclose(other.regret, mixed_rows.regret[: len(other)])


def test_estimates_converge_as_samples_grow(mixed_room: list[Checked]) -> None:
    hands = mixed_room[:2]
    ref = analyse(hands, samples=512, dd_samples=0, seed=100, reasons=False, max_samples=None).regret.to_numpy()
    err = [np.abs(analyse(hands, samples=s, dd_samples=0, seed=s, reasons=False, max_samples=None).regret.to_numpy()
                  - ref).mean() for s in (4, 32)]
    assert err[1] < 0.6 * err[0]


def test_regret_recovers_the_skill_ordering(mixed_rows: pd.DataFrame) -> None:
    by = mixed_rows.groupby("player").regret.mean()
    assert max(by["g1"], by["g2"]) < min(by["r1"], by["r2"])
    table = player_table(mixed_rows).set_index("player")
    assert tuple(["player", *table.columns]) == PLAYER_COLUMNS
    assert min(table.skill[["g1", "g2"]]) > max(table.skill[["r1", "r2"]])
    assert min(table.match_rate[["g1", "g2"]]) > max(table.match_rate[["r1", "r2"]])
    assert (table.skill_lo <= table.skill).all() and (table.skill <= table.skill_hi).all()
    assert table.think_difficulty_rho.notna().all()


# --------------------------------------------------------------------------- commands

def test_decisions_and_players_commands(tmp_path: Path, mixed_room: list[Checked]) -> None:
    log = tmp_path / "room.jsonl"
    log.write_bytes(b"".join(format_record(i.record) + b"\n" for i in mixed_room[:3]) + b"{bad\n")
    out = tmp_path / "d.parquet"
    res = run_cli("decisions", str(log), "-o", str(out), "--samples", "4", "--dd-samples", "1")
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out)
    assert tuple(rows.columns) == COLUMNS and rows.hand_id.nunique() == 3
    res = run_cli("players", str(out), "--format", "json")
    assert res.exit_code == 0, res.output
    assert {p["player"] for p in orjson.loads(res.stdout)} == {"g1", "g2", "r1", "r2"}
    res = run_cli("players", str(log), "--format", "csv", "--samples", "2", "--dd-samples", "0")
    assert res.exit_code == 0 and res.stdout.splitlines()[0].startswith("player,skill,skill_lo,skill_hi")
    res = run_cli("decisions", str(log), "-o", str(log))
    assert res.exit_code == 2 and log.read_bytes().endswith(b"{bad\n")
