"""The mutation hunt against the log gate (benchmarks/gate_mutations.py), small and seeded: legal hands of every game
changed at one point (a card, a kind, a seat, an order, a dropped or doubled move, a recorded score, the deal, ids,
times, types, spellings, a lender, a trick's leader or play, a bid) and two hands of one table (who deals, who bids
first, when each started). Every mutant is judged by the gate, on its compiled path and its explaining path, and by
the script's own reference written from the seed rules: they must agree, and each rejection must name the line, the
hand and the move or trick the reference finds first."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from analyzer.validate import generate_checked
from benchmarks import gate_mutations as hunt


def _total(table: dict[str, Counter[str]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for t in table.values():
        out.update(t)
    return out


@pytest.mark.parametrize("variant", ["bieqi", "bieqi-borrow", "xinyang-heiqi"])
def test_no_single_point_mutant_fools_the_gate(variant: str) -> None:
    """Every mutant the gate takes is a legal hand rightly scored by the reference (a time left equal, a tong seat's
    multiplier, two cards swapped into another legal hand), every one it refuses is wrong by the reference, its first
    problem is on the mutant's line and hand and at the move or trick the reference finds first, and the compiled path
    says what the explaining path says."""
    table, findings = hunt.run(variant, 3, 0)
    total = _total(table)
    assert findings == []
    assert total["ACCEPTED, WRONG"] == 0 and total["REJECTED, LEGAL"] == 0
    assert total["rejected"] > 300 and total["accepted, legal"] > 10  # the reference judged both ways
    # the kinds of mutation the hunt is about, each refused with its own code
    codes = {k for k, v in total.items() if k.startswith("code ") and v}
    want = {"card-not-held", "missing-actions", "extra-actions", "result-mismatch", "bad-deal", "bad-players",
            "bad-type"}
    want |= {"bieqi": {"out-of-turn", "not-live", "result-not-zero-sum", "time-backwards"},
             "bieqi-borrow": {"out-of-turn", "wrong-lender", "borrow-with-live", "time-backwards"},
             "xinyang-heiqi": {"bad-bidding", "bad-dealer-choice", "wrong-leader", "bad-follow", "bad-bury"}}[variant]
    assert {"code " + c for c in want} <= codes


@pytest.mark.parametrize("variant, code", [("bieqi-borrow", "bad-dealer"), ("xinyang-heiqi", "bad-first-bidder")])
def test_no_table_sequence_mutant_fools_the_gate(variant: str, code: str) -> None:
    """Two hands of one table: the next hand dealt by someone other than the last loser (借牌), bid first by a seat other
    than the one after (信阳黑七; after a pass-out the same seat, or the next under rule ``redeal_first_bidder``), started
    before the hand before: each refused; a newcomer dealing, a forged loser in the hand before (the replay's counts),
    a line that is no record between (the chain starts again), equal starts: each taken."""
    table, findings = hunt.run_sequences(variant, 6, 0)
    total = _total(table)
    assert findings == []
    assert total["code " + code] >= 2 and total["code time-backwards"] >= 2
    assert table["sequence: unchanged (legal)"]["accepted"] == table["sequence: unchanged (legal)"]["mutants"] > 0


def test_the_reference_takes_the_independent_engines_hands() -> None:
    """The hunt's reference is written from the rules, not from the engine: it takes the 200 hands of the independent
    engine in shared/peer as the gate does (were it stricter or looser than the rules, its verdicts would mean
    nothing)."""
    if not hunt.PEER.exists():
        pytest.skip("no shared/peer hands here")
    lines = hunt.PEER.read_bytes().splitlines()
    for line in lines:
        hunt.ref_bieqi(orjson.loads(line))  # raises Bad when it refuses one
    assert all(item.ok for item in generate_checked([str(hunt.PEER)]))


def test_the_reference_refuses_a_forged_multiplier() -> None:
    """A hand where one seat went 通, its score forged as if nobody had (the others' points not doubled), and the
    recorded factors to match: the reference refuses it, as the gate does."""
    from analyzer.logs import format_record
    from analyzer.simulate.room import simulate

    rec = next(r for r in simulate(hands=200, players=6, seed=3).records if len(r.result.tong) == 1)
    obj = orjson.loads(format_record(rec))
    hunt.ref_bieqi(obj)
    points = obj["result"]["points"]
    obj["result"]["scores"] = [sum(points) - 4 * p for p in points]
    obj["result"]["multipliers"] = [1, 1, 1, 1]
    with pytest.raises(hunt.Bad, match="scores"):
        hunt.ref_bieqi(obj)
    (item,) = hunt.gate([orjson.dumps(obj)], 1)
    assert [p.code for p in item.check.problems] == ["result-mismatch", "result-mismatch"]


def test_a_heiqi_dealer_recorded_as_null_is_said_so(tmp_path: Path) -> None:
    """A hand with a lowest bidder whose ``dealer`` is null (as a pass-out's is): the problem says the dealer is
    recorded as null, not as "seat None"."""
    from analyzer.logs import format_record
    from analyzer.simulate.heiqi import simulate

    rec = next(r for r in simulate(hands=4, players=4, seed=2).records if r.dealer is not None)
    obj = orjson.loads(format_record(rec))
    obj["dealer"] = None
    (item,) = hunt.gate([orjson.dumps(obj)], 1)
    (problem,) = item.check.problems
    assert problem.code == "bad-dealer-choice"
    assert "None" not in problem.message
    assert problem.message.startswith("the dealer is recorded as null (nobody: a pass-out), but it is seat "
                                      f"{rec.dealer}, the lowest bidder")


@pytest.mark.parametrize("variant", ["bieqi", "bieqi-borrow"])
def test_a_time_backwards_across_untimed_moves_names_the_move_it_is_compared_with(variant: str) -> None:
    """``ms`` is optional on each action: move 11 without one, move 12 earlier than move 10's time. The problem is at
    move 12 and names move 10 as the time it is earlier than (it said "the previous action's", which move 11 is not);
    one just before keeps the old wording. Pages show both in Chinese."""
    from analyzer.report import i18n

    obj = hunt.legal_hands(variant, 1, 5)[0]
    acts = obj["actions"]
    del acts[10]["ms"]
    acts[11]["ms"] = acts[9]["ms"] - 1
    acts[30]["ms"] = acts[29]["ms"] - 1
    (item,) = hunt.gate([orjson.dumps(obj)], 1)
    found = [(p.code, p.action, p.message) for p in item.check.problems]
    assert found[:2] == [
        ("time-backwards", 11, f"ms {acts[11]['ms']} is earlier than move 10's {acts[9]['ms']}, the last action "
                               f"before it with a time"),
        ("time-backwards", 30, f"ms {acts[30]['ms']} is earlier than the previous action's {acts[29]['ms']}")]
    for _, _, message in found[:2]:
        zh = i18n.translate(message, "time-backwards")
        assert i18n.CHINESE.search(zh) and not i18n.english_words(zh), zh


def test_a_heiqi_shape_problem_inside_a_trick_names_the_trick_and_seat() -> None:
    """A value of the wrong type inside ``tricks`` (a line that is no record, explained against the schema) is placed
    as the replay's problems are: its trick and the seat of that play (the trick's leader, then clockwise), as
    ``$.actions[i]`` gives the standard game's move; a bad value in ``bids`` names the bid's seat. The hunt counted
    130 of 135 such mutants of 10 hands as naming no trick before."""
    obj = hunt.legal_hands("xinyang-heiqi", 1, 5)[0]
    tr = obj["tricks"][5]
    tr["plays"][2][0] = 7
    obj["bids"][0]["bid"] = 85
    (item,) = hunt.gate([orjson.dumps(obj)], 1)
    found = sorted(((p.code, p.trick, p.seat, p.player) for p in item.check.problems), key=str)
    seat = (tr["leader"] + 2) % 4
    bidder = obj["bids"][0]["seat"]
    assert found == sorted([("bad-type", 5, seat, obj["players"][seat]),
                            ("bad-type", None, bidder, obj["players"][bidder])], key=str)
    assert "trick 6, seat" in next(p for p in item.check.problems if p.trick == 5).format()
    tr["leader"] = "x"  # the leader unreadable: the trick still, no seat
    (item,) = hunt.gate([orjson.dumps(obj)], 1)
    assert {(p.trick, p.seat) for p in item.check.problems if p.trick is not None} == {(5, None)}
