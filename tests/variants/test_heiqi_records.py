"""信阳黑七 records: random legal games validate, each corruption is caught at the right trick, CLI and schema."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import orjson
import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.cards import format_card, parse_card
from analyzer.logs import format_record, parse_record
from analyzer.schema import dumps, variant_schema
from analyzer.simulate.heiqi import simulate
from analyzer.validate import validate
from analyzer.variants.heiqi import (
    KINDS,
    SUITS,
    VARIANT,
    HeiqiRecord,
    HeiqiRules,
    State,
    bid_action,
    bury_action,
    play_action,
    play_points,
    trump_action,
)

ROOT = Path(__file__).resolve().parents[2]
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FEW = settings(max_examples=25, deadline=None, derandomize=True)


def played_hand(seed: int, policy: str = "heuristic", **rules: object) -> HeiqiRecord:
    """A legal hand that reached the tricks (a passed-out deal is skipped)."""
    for rec in simulate(hands=8, players=4, seed=seed, policy=policy, rules=rules or None).records:
        if rec.dealer is not None:
            return rec
    raise AssertionError("eight passed-out hands in a row")


def codes(rec: HeiqiRecord) -> list[tuple[str, int | None, int | None]]:
    return [(p.code, p.trick, p.seat) for p in VARIANT.check(rec).problems]


def state_before(rec: HeiqiRecord, trick: int, k: int) -> State:
    """The engine just before play k of a trick, replayed from the record."""
    hands = [[0] * KINDS for _ in range(4)]
    for s, cs in enumerate(rec.deal):
        for c in cs:
            hands[s][parse_card(c, jokers=True)] += 1
    state = State(hands, [parse_card(c, jokers=True) for c in rec.bottom], rec.first_bidder, rec.rules or HeiqiRules())
    for b in rec.bids:
        state.push(bid_action(b.bid))
    assert rec.buried is not None and rec.trump is not None and rec.tricks is not None
    for c in rec.buried:
        state.push(bury_action(parse_card(c, jokers=True)))
    state.push(trump_action(SUITS.index(rec.trump)))
    for t, tr in enumerate(rec.tricks):
        for j, p in enumerate(tr.plays):
            if (t, j) == (trick, k):
                return state
            state.push(play_action([parse_card(c, jokers=True) for c in p]))
    raise AssertionError("no such play")


def copy(rec: HeiqiRecord) -> HeiqiRecord:
    return parse_record(format_record(rec))  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- legal games

@FEW
@given(SEEDS, st.sampled_from(["heuristic", "random"]))
def test_random_legal_games_validate(seed: int, policy: str) -> None:
    for rec in simulate(hands=3, players=5, seed=seed, policy=policy).records:
        hc = VARIANT.check(copy(rec))
        assert hc.problems == []
        out = hc.outcome
        assert sum(out.settlement) == 0
        if out.dealer is None:
            assert rec.tricks is None and rec.bids and all(b.bid is None for b in rec.bids)
            continue
        assert rec.tricks is not None
        tricks = sum(play_points([parse_card(c, jokers=True) for p in tr.plays for c in p]) for tr in rec.tricks)
        assert tricks + out.bottom_points == 200  # every point is in a trick or the bottom
        assert out.defender_points <= tricks + 4 * out.bottom_points


@FEW
@given(SEEDS)
def test_legal_actions_hold_every_simulated_play(seed: int) -> None:
    rec = played_hand(seed, "random")
    assert rec.tricks is not None
    t = seed % len(rec.tricks)
    for k in range(4):
        state = state_before(rec, t, k)
        action = play_action([parse_card(c, jokers=True) for c in rec.tricks[t].plays[k]])
        assert state.is_legal(action)
        if k == 0:  # leads are few; follows may be many when void
            assert action in state.legal_actions()


def test_passed_out_hand_and_rotation_of_the_first_bid(tmp_path: Path) -> None:
    recs = list(simulate(hands=8, players=4, seed=3, policy="random", run_length=8).records)
    passed = [r for r in recs if r.dealer is None]
    assert passed, "seed 3 should deal at least one passed-out hand"
    path = tmp_path / "table.jsonl"
    path.write_bytes(b"".join(format_record(r) + b"\n" for r in recs))
    assert validate([str(path)]).problems == []
    # drop a played hand: the next one's first bidder is then one seat too far round
    i = next(i for i in range(1, len(recs) - 1) if recs[i].dealer is not None)
    path.write_bytes(b"".join(format_record(r) + b"\n" for r in recs[:i] + recs[i + 1:]))
    found = validate([str(path)]).problems
    assert [(p.code, p.hand_id) for p in found] == [("bad-first-bidder", recs[i + 1].hand_id)]


def test_throws_rule_option_replays() -> None:
    rec = played_hand(11, "random", throws=True)
    assert rec.rules == HeiqiRules(throws=True)
    assert VARIANT.check(rec).problems == []


# --------------------------------------------------------------------------- corruptions

def _follow_spot(rec: HeiqiRecord, start: int) -> tuple[int, int, int, int] | None:
    """(trick, k, led-suit card played, other card held) for the first follow at or after ``start``
    that played a card of the led suit while holding an unplayed card of another suit."""
    assert rec.tricks is not None
    for t in range(start, len(rec.tricks)):
        for k in range(1, 4):
            state = state_before(rec, t, k)
            order = state.order
            assert order is not None
            lead = state.trick[0]
            play = [parse_card(c, jokers=True) for c in rec.tricks[t].plays[k]]
            hand = state.hands[state.current_player()]
            in_suit = [c for c in play if order.suit[c] == order.suit[lead[0]]]
            others = [c for c in range(KINDS) if hand[c] > play.count(c) and order.suit[c] != order.suit[lead[0]]]
            if in_suit and others:
                return t, k, in_suit[0], others[0]
    return None


@FEW
@given(SEEDS)
def test_breaking_follow_suit_is_caught_at_its_trick(seed: int) -> None:
    rec = copy(played_hand(seed))
    assert rec.tricks is not None
    spot = _follow_spot(rec, seed % len(rec.tricks)) or _follow_spot(rec, 0)
    assert spot is not None
    t, k, mine, other = spot
    play = rec.tricks[t].plays[k]
    play[[parse_card(c, jokers=True) for c in play].index(mine)] = format_card(other)
    seat = (rec.tricks[t].leader + k) % 4
    problems = VARIANT.check(rec).problems
    assert [(p.code, p.trick, p.seat, p.action) for p in problems] == [("bad-follow", t, seat, None)]
    assert problems[0].message.startswith(f"seat {seat} held ")


@FEW
@given(SEEDS)
def test_wrong_leader_and_card_not_held_and_bad_lead(seed: int) -> None:
    base = played_hand(seed)
    assert base.tricks is not None
    t = seed % len(base.tricks)
    leader = base.tricks[t].leader

    rec = copy(base)
    rec.tricks[t].leader = (leader + 1) % 4  # type: ignore[index]
    assert codes(rec) == [("wrong-leader", t, (leader + 1) % 4)]

    rec = copy(base)
    hand = state_before(rec, t, 0).hands[leader]
    absent = next(c for c in range(KINDS) if hand[c] == 0)
    rec.tricks[t].plays[0][0] = format_card(absent)  # type: ignore[index]
    assert codes(rec) == [("card-not-held", t, leader)]

    rec = copy(base)
    state = state_before(rec, t, 0)
    assert state.order is not None
    held = [c for c in range(KINDS) if hand[c]]
    a = held[0]
    b = next((c for c in held if state.order.suit[c] != state.order.suit[a]), None)
    if b is not None:  # a lead that mixes two suits
        rec.tricks[t].plays[0] = [format_card(a), format_card(b)]  # type: ignore[index]
        assert codes(rec) == [("bad-lead", t, leader)]


def test_deal_bidding_dealer_bury_result_and_length_corruptions() -> None:
    base = played_hand(5)
    assert base.tricks is not None and base.buried is not None and base.result is not None

    rec = copy(base)
    rec.deal[1][0] = rec.deal[0][0]
    assert [c for c, _, _ in codes(rec)] == ["bad-deal"]

    rec = copy(base)
    rec.bids = [*rec.bids, msgspec.structs.replace(rec.bids[-1])]
    assert [c for c, _, _ in codes(rec)] == ["bad-bidding"]

    rec = copy(base)
    rec.bids[0].seat = (rec.first_bidder + 1) % 4
    assert [c for c, _, _ in codes(rec)] == ["bad-bidding"]

    rec = copy(base)
    rec.dealer = (base.dealer + 1) % 4  # type: ignore[operator]
    assert [c for c, _, _ in codes(rec)] == ["bad-dealer-choice"]

    rec = copy(base)
    dealer_cards = {c for c in rec.deal[rec.dealer] + rec.bottom}  # type: ignore[index]
    rec.buried[0] = next(c for s in range(4) for c in rec.deal[s] if c not in dealer_cards)  # type: ignore[index]
    assert [c for c, _, _ in codes(rec)] == ["bad-bury"]

    rec = copy(base)
    rec.result.settlement = [x + (1 if i == 0 else 0) for i, x in enumerate(rec.result.settlement)]  # type: ignore[union-attr]
    assert sorted(c for c, _, _ in codes(rec)) == ["result-mismatch", "result-not-zero-sum"]

    rec = copy(base)
    rec.tricks = rec.tricks[:-1]  # type: ignore[index]
    assert codes(rec)[0][:2] == ("missing-actions", len(base.tricks) - 1)

    rec = copy(base)
    rec.tricks = [*rec.tricks, rec.tricks[-1]]  # type: ignore[misc]
    assert codes(rec)[0][:2] == ("extra-actions", len(base.tricks))


# --------------------------------------------------------------------------- the CLI, the sample and the schema

def test_cli_validates_the_sample_and_names_the_broken_rule(tmp_path: Path) -> None:
    sample = ROOT / "samples" / "heiqi-sample.jsonl"
    ok = run_cli("validate", str(sample))
    assert ok.exit_code == 0, ok.output
    lines = sample.read_bytes().splitlines()
    obj = orjson.loads(lines[0])
    obj["tricks"][0]["leader"] = (obj["tricks"][0]["leader"] + 1) % 4
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(orjson.dumps(obj) + b"\n")
    res = run_cli("validate", "--format", "json", str(bad))
    assert res.exit_code == 1
    problems = json.loads(res.output)["problems"]
    assert [(p["code"], p["trick"]) for p in problems] == [("wrong-leader", 0)]
    assert "the dealer leads the first trick" in problems[0]["message"]


def test_schema_file_is_generated_and_accepts_the_sample() -> None:
    from jsonschema import Draft202012Validator

    schema = variant_schema("xinyang-heiqi")
    assert (ROOT / "schemas" / "log-v1-xinyang-heiqi.schema.json").read_text(encoding="utf-8") == dumps(schema)
    validator = Draft202012Validator(schema)
    for line in (ROOT / "samples" / "heiqi-sample.jsonl").read_bytes().splitlines():
        assert list(validator.iter_errors(orjson.loads(line))) == []
    bad = orjson.loads((ROOT / "samples" / "heiqi-sample.jsonl").read_bytes().splitlines()[0])
    bad["bids"][0]["bid"] = 85
    assert list(validator.iter_errors(bad))


def test_simulator_options_and_seeding() -> None:
    rec = next(iter(simulate(hands=1, players=4, seed=1, throws=1).records))
    assert rec.rules == HeiqiRules(throws=True)
    a = [format_record(r) for r in simulate(hands=3, players=6, seed=9, colluders=None).records]
    assert a == [format_record(r) for r in simulate(hands=3, players=6, seed=9).records]


@pytest.mark.parametrize("bad", [{"colluders": 2}, {"throws": "often"}, {"policy": "clever"}, {"players": 3}])
def test_simulator_refuses_what_it_cannot_do(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        simulate(**{"hands": 1, "players": 4, "seed": 1, **bad})  # type: ignore[arg-type]


@pytest.mark.parametrize("fields, ok", [
    ({"buried": [], "tricks": []}, True),  # empty lists say what absent fields say (another writer's habit)
    ({"result": {"settlement": [0, 0, 0, 0]}}, True),  # a result of nothing: 0 for each seat
    ({"result": {"settlement": [0, 0, 0, 0], "defender_points": 0, "bottom_factor": 0}}, True),
    ({"buried": ["AS"]}, False),
    ({"tricks": [{"leader": 0, "plays": [["AS"], ["AS"], ["2S"], ["2S"]]}]}, False),
    ({"result": {"settlement": [2, -2, 0, 0]}}, False),
    ({"result": {"settlement": [0, 0, 0, 0], "outcome": "draw"}}, False),
])
def test_a_passed_out_hand_may_say_nothing_in_empty_fields(tmp_path: Path, fields: dict, ok: bool) -> None:
    rec = next(r for r in simulate(hands=8, players=4, seed=3, policy="random", run_length=8).records
               if r.dealer is None)
    obj = {**orjson.loads(format_record(rec)), **fields}
    path = tmp_path / "passed.jsonl"
    path.write_bytes(orjson.dumps(obj) + b"\n")
    codes = [p.code for p in validate([str(path)]).problems]
    assert (codes == []) if ok else (codes and set(codes) <= {"extra-actions", "result-mismatch"}), codes


def test_a_first_bidder_after_a_pass_out_names_the_house_rule(tmp_path: Path) -> None:
    """The expected seat after a pass-out is a house rule's: the message names the option, its value and how to set
    the other; with that option in the hands' rules the same log is valid."""
    recs = list(simulate(hands=16, players=4, seed=3, policy="random", run_length=8,
                         rules={"redeal_first_bidder": "next"}).records)
    path = tmp_path / "next.jsonl"
    path.write_bytes(b"".join(format_record(r) + b"\n" for r in recs))
    assert validate([str(path)]).problems == []
    path.write_bytes(b"".join(format_record(msgspec.structs.replace(r, rules=None)) + b"\n" for r in recs))
    found = validate([str(path)]).problems
    assert found and {p.code for p in found} == {"bad-first-bidder"}
    for p in found:
        assert "passed out" in p.message, p.message
        assert p.message.endswith('by the rule option redeal_first_bidder: "same" (the default); tables whose redeal '
                                  'passes the first bid on clockwise set "rules": {"redeal_first_bidder": "next"} in '
                                  'each hand'), p.message
