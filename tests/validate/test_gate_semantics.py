"""A hunt for logs the gate judged wrongly by their meaning: well-formed records of a hand that could not have happened
(or a wrong score) that `analyzer validate` passed, and legal hands it refused. Each case below was one; its test
shows the input, what the gate says now, and (where the old answer was a false alarm) that the legal log passes.

Tried in this hunt and already handled (each giving the problem named, in the engine's path, the compiled path over
a line's bytes and the compiled path over records alike; not repeated here):
- 憋七: a card moved between two seats' deals (a permutation still: card-not-held at its move), dealt twice or missing,
  a joker, 14/12 cards (bad-deal, bad-card); a seat or kind changed (out-of-turn, not-live); a cover while a live card
  was held (cover-with-live); 51 or 53 moves; ms -1 (bad-type), ms going back (time-backwards; all ms 0 is legal);
  scores that sum to zero but are split wrongly, rotated, points, ranking (wrong or a seat twice), tong and dutou
  claimed, missed or doubled, multipliers of a non-通 seat, 独头七 recorded as a plain 通 (x2 instead of x16) and
  `"dutou": "replace"` against stacked scores, tong_factors changed under recorded scores (all result-mismatch);
  the same player twice (bad-players); the variant tag changed (shape problems); numbers written `02`, `01443` (not
  JSON), `1443.0` (bad-type), `-0` (0, as JSON says) read alike by every path. A 通 seat's multiplier is not compared
  (docs/log-format.md: some writers put the table's factor there), whatever it holds; the same deal and seating with
  other moves is no copy (tests/validate/test_validate.py).
- 借牌: the dealer not holding 14, two jokers (bad-deal); a borrow from the wrong seat (wrong-lender), a borrow turned
  into a play of a card not held (card-not-held), a borrow first (first-action), moves missing or after the end,
  loser and finish order changed (result-mismatch); the joker played (not-live: 王永远是死牌), the other joker lent or
  renamed in the deal (card-not-held), the joker lent under `lend_joker: false` (bad-lend).
- 信阳黑七: a trick led by the wrong seat (a trick winner changed: wrong-leader), two seats' plays swapped
  (bad-follow), defender points, bottom factor and settlement changed (result-mismatch), a third copy of a card
  (bad-deal), the dealer not the lowest bidder, a bid out of turn, a buried card not held, the trump changed under the
  plays, a trick missing or added, the first bidder changed. The replay's check of a play (``play_problem``) and the
  engine's legal plays agree on every lead of up to 6 cards and every follow of up to 4 in 100 random hands (22
  million plays).
- All 200 games of the independent engine (../shared/peer/) still validate clean, and so do the samples.

Open in the seed texts (docs, not code): whether 信阳黑七's first bid passes by seat or by person when a table's
seating changes between hands (docs/heiqi.md); whether a table's rule options may change between its hands
(docs/log-format.md: they may, so a hand's options edited with its result pass). The start order of the standard
game's hands of one table is not checked: no rule spans them.
"""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

import orjson
import pytest
from conftest import legal_obj

from analyzer.logs import Line, format_record
from analyzer.validate import check_lines, generate_checked
from analyzer.variants.borrow import VARIANT as BORROW
from analyzer.variants.borrow import BorrowDeal
from analyzer.variants.borrow import random_deal as borrow_deal
from analyzer.variants.heiqi import (
    ORDERS,
    TRUMP,
    HeiqiDeal,
    HeiqiRules,
    bid_action,
    bury_action,
    play_action,
    play_cards,
    random_deal,
    shape_of,
    suit_cards,
    trick_winner,
    trump_action,
)
from analyzer.variants.heiqi import (
    VARIANT as HEIQI,
)


def _codes(data: bytes) -> list[str]:
    [item] = check_lines([Line("f.jsonl", 1, data)])
    return [p.code for p in item.check.problems]


# --------------------------------------------------------------------------- a copy found whichever path checks it

def test_a_copy_in_a_spaced_log_is_found_whichever_batch_it_falls_in(tmp_path: Path) -> None:
    """A log written with spaces (Python's ``json.dumps``: ``", "``): a legal standard hand in a batch of 64 or more is
    read from the line's bytes, one in a smaller batch (a file's last lines) decoded whole, and the two were hashed
    each its own way, so a copy of a hand under a new id that fell in the last batch was valid (``duplicate-deal``
    missed; ``--jobs`` changed what was found). Now both paths hash the line as written."""
    lines = [json.dumps(legal_obj(seed, f"h{seed}")) for seed in range(1, 65)]
    lines.append(json.dumps(legal_obj(1, "copy-of-h1")))
    log = tmp_path / "spaced.jsonl"
    log.write_text("\n".join(lines) + "\n")
    for batch_size in (64, 1024):  # the copy alone in a batch of its own; every line in one batch
        found = [(item.line, p.code) for item in generate_checked([str(log)], batch_size=batch_size,
                                                                    keep_records=False) for p in item.check.problems]
        assert found == [(65, "duplicate-deal")], (batch_size, found)


# --------------------------------------------------------------------------- 信阳黑七: a throw of trumps

def _trump_throw_hand(seed: int) -> tuple[object, HeiqiDeal, int | None]:
    """A hand under rule ``throws`` (spades trump, seat 0 the dealer at 80) whose leaders throw their two lowest distinct
    trumps as two singles once, and otherwise lead singles; everyone else plays a legal play at random. Returns the
    state, the deal and the first trick where a follower played two trumps whose higher one outranks the throw's."""
    rng = random.Random(seed)
    hands, bottom = random_deal(rng)
    deal = HeiqiDeal(hands, bottom, 0)
    st = HEIQI.new_initial_state(deal, HeiqiRules(throws=True))
    st.push(bid_action(80))
    held = [c for c, n in enumerate(st.hands[0]) for _ in range(n)]
    for card in sorted(held)[:8]:
        st.push(bury_action(card))
    st.push(trump_action(0))
    order = ORDERS[0]
    found = None
    thrown = False
    while not st.is_terminal():
        hand = st.hands[st.current_player()]
        if not st.trick:
            trumps = sorted(set(suit_cards(hand, TRUMP, order)), key=lambda c: order.level[c])
            if not thrown and len(trumps) >= 2 and order.level[trumps[0]] != order.level[trumps[1]]:
                st.push(play_action(trumps[:2]))
                thrown = True
            else:
                st.push(rng.choice([a for a in st.legal_actions() if len(play_cards(a)) == 1]))
            continue
        st.push(rng.choice(st.legal_actions()))
        if not st.trick and found is None and thrown:
            plays = st.tricks[-1][1]
            lead = shape_of(plays[0], order)
            if lead.parts == 2 and order.suit[plays[0][0]] == TRUMP:
                if any(all(order.suit[c] == TRUMP for c in p) and shape_of(p, order).signature == lead.signature
                       and shape_of(p, order).top > lead.top for p in plays[1:]):
                    found = len(st.tricks) - 1
                else:
                    thrown = False  # throw again at the next lead
    return st, deal, found


def test_a_throw_of_trumps_is_won_by_its_leader() -> None:
    """Rule ``throws`` (docs/heiqi.md): a throw is won by its leader unless a player out of the suit trumps it with the
    same shape. A throw of trumps was beaten by a follower's higher trumps of its shape (following suit), so the log
    where the thrower leads the next trick, as the rule says, was refused (``wrong-leader``) and the one where the
    follower leads passed. Seed 0: seat 2 throws 4♠ 8♠ (spades trump); seat 1 follows with 7♠ 2♥."""
    st, deal, t = _trump_throw_hand(0)
    assert t is not None
    leader, plays = st.tricks[t]
    assert plays[0] == (3, 7) and plays[3] == (6, 14), plays
    assert trick_winner(plays, ORDERS[0]) == 0
    assert trick_winner([(6, 14), *plays[1:3], plays[0]], ORDERS[0]) == 0  # 7♠ 2♥ thrown: 4♠ 8♠ after it loses
    rec = orjson.loads(format_record(HEIQI.make_record(st, deal, hand_id="throw", players=["a", "b", "c", "d"])))
    assert rec["tricks"][t + 1]["leader"] == leader == 2
    assert _codes(orjson.dumps(rec)) == []
    rec["tricks"][t + 1]["leader"] = (leader + 3) % 4  # the follower's seat: what the gate used to want
    assert _codes(orjson.dumps(rec)) == ["wrong-leader"]


def test_a_plain_throw_is_still_beaten_by_a_trump_of_its_shape() -> None:
    order = ORDERS[0]  # spades trump
    lead = (13 + 12, 13 + 0)  # K♥ A♥: two singles of hearts
    assert shape_of(lead, order).parts == 2
    assert trick_winner([lead, (26 + 3, 26 + 4), (3, 7), (39 + 3, 39 + 5)], order) == 2  # 4♠ 8♠ trumps it
    assert trick_winner([lead, (13 + 3, 13 + 4), (39 + 3, 39 + 5), (26 + 3, 26 + 4)], order) == 0  # hearts follow


# --------------------------------------------------------------------------- a table's hands out of their order

def _borrow_hand(seed: int, dealer: int, hand_id: str, started: str) -> bytes:
    rng = random.Random(seed)
    deal = BorrowDeal(borrow_deal(rng, dealer), dealer)
    st = BORROW.new_initial_state(deal)
    while not st.is_terminal():
        st.push(rng.choice(st.legal_actions()))
    return format_record(BORROW.make_record(st, deal, hand_id=hand_id, players=["a", "b", "c", "d"], table_id="t",
                                            started_at=datetime.fromisoformat(started)))


def _heiqi_hand(seed: int, first_bidder: int, hand_id: str, started: str) -> bytes:
    rng = random.Random(seed)
    hands, bottom = random_deal(rng)
    deal = HeiqiDeal(hands, bottom, first_bidder)
    st = HEIQI.new_initial_state(deal)
    while not st.is_terminal():
        st.push(rng.choice(st.legal_actions()))
    return format_record(HEIQI.make_record(st, deal, hand_id=hand_id, players=["a", "b", "c", "d"], table_id="t",
                                           started_at=datetime.fromisoformat(started)))


def _problems(tmp_path: Path, lines: list[bytes]) -> list[tuple[int, str, str]]:
    log = tmp_path / "table.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return [(item.line, p.code, p.message) for item in generate_checked([str(log)]) for p in item.check.problems]


def test_a_tables_hand_that_starts_before_the_previous_one_is_time_backwards(tmp_path: Path) -> None:
    """Hands of one table are logged in the order they were played, and the cross-hand checks (借牌: the loser deals
    next; 信阳黑七: the first bid passes on) read them in that order. A hand that started before the table's previous
    hand passed: the two were compared as if played in the logged order, and nothing said the order was wrong."""
    first = _borrow_hand(1, 0, "b1", "2026-11-01T20:00:00+00:00")
    loser = orjson.loads(first)["result"]["loser"]
    assert _problems(tmp_path, [first, _borrow_hand(2, loser, "b2", "2026-11-01T20:05:00+00:00")]) == []
    found = _problems(tmp_path, [first, _borrow_hand(2, loser, "b2", "2026-11-01T19:55:00+00:00")])
    assert [(line, code) for line, code, _ in found] == [(2, "time-backwards")]
    assert "2026-11-01T19:55:00+00:00" in found[0][2] and "table.jsonl:1" in found[0][2]
    # the same instant in another offset is not earlier; a hand without a start is not compared
    assert _problems(tmp_path, [first, _borrow_hand(2, loser, "b2", "2026-11-01T21:00:00+01:00")]) == []
    no_start = orjson.loads(_borrow_hand(2, loser, "b2", "2026-11-01T19:55:00+00:00"))
    del no_start["started_at"]
    assert _problems(tmp_path, [first, orjson.dumps(no_start)]) == []

    h1 = _heiqi_hand(3, 0, "x1", "2026-11-01T20:00:00+00:00")
    assert _problems(tmp_path, [h1, _heiqi_hand(4, 1, "x2", "2026-11-01T20:10:00+00:00")]) == []
    assert [(line, code) for line, code, _ in _problems(
        tmp_path, [h1, _heiqi_hand(4, 1, "x2", "2026-11-01T19:10:00+00:00")])] == [(2, "time-backwards")]


@pytest.mark.parametrize("blank", ["", "   ", "\u200b"])
def test_hands_with_a_blank_table_id_are_not_one_table(tmp_path: Path, blank: str) -> None:
    """A blank ``table_id`` names no table: a writer that fills it with "" for "no table" got every such hand of the log
    chained into one table, and a false ``bad-dealer`` (借牌) or ``wrong-first-bidder``-style problem (信阳黑七) on
    unrelated hands. A named table is still checked."""
    def with_table(line: bytes, table: str) -> bytes:
        return orjson.dumps({**orjson.loads(line), "table_id": table})

    first = _borrow_hand(1, 0, "b1", "2026-11-01T20:00:00+00:00")
    not_loser = (orjson.loads(first)["result"]["loser"] + 1) % 4
    second = _borrow_hand(2, not_loser, "b2", "2026-11-01T20:05:00+00:00")
    assert [code for _, code, _ in _problems(tmp_path, [first, second])] == ["bad-dealer"]
    assert _problems(tmp_path, [with_table(first, blank), with_table(second, blank)]) == []

    h1, h2 = _heiqi_hand(3, 0, "x1", "2026-11-01T20:00:00+00:00"), _heiqi_hand(4, 3, "x2", "2026-11-01T20:10:00+00:00")
    assert _problems(tmp_path, [h1, h2]) != []  # the first bid did not pass on at table "t"
    assert _problems(tmp_path, [with_table(h1, blank), with_table(h2, blank)]) == []
