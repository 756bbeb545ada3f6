"""Test data for the 借牌 and 信阳黑七 hand pages: seeded hands with hostile ids, planted problems, engine replays."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson

from analyzer.cards import NUM_CARDS, format_card, parse_card, scan
from analyzer.logs import format_record
from analyzer.simulate import borrow as borrow_sim
from analyzer.simulate import heiqi as heiqi_sim
from analyzer.variants import borrow, heiqi

#: A right-to-left override in an id must not reorder the page around it.
EVIL_RTL = "\u202eevil-rtl\u202c"
EVIL_PLAYER = "<img src=x onerror=alert(1)>"
EVIL_HAND = "</script><script>alert(2)</script>"
EVIL_TABLE = "\"'><svg onload=alert(3)>&amp;"
PLAYERS = [EVIL_PLAYER, "北风", EVIL_RTL, "p3</script>"]


def _renamed(records: Iterator[Any], prefix: str) -> list[Any]:
    """Hostile hand and table ids on the first hand; the others get ``prefix`` ids."""
    out = []
    for k, r in enumerate(records):
        out.append(msgspec.structs.replace(r, hand_id=EVIL_HAND if k == 0 else f"{prefix}{k}",
                                           table_id=EVIL_TABLE))
    return out


def borrow_records(hands: int = 3, seed: int = 3, **kw: Any) -> list[borrow.BorrowRecord]:
    """Seeded hands of the borrowing game at one table, hostile ids on hand 0."""
    sim = borrow_sim.simulate(hands=hands, players=PLAYERS, seed=seed, hands_per_table=hands, **kw)
    return _renamed(sim.records, "b")


def cheat_records(seed: int = 12) -> list[borrow.BorrowRecord]:
    """Hands with illegal borrows (拿着活牌还借牌), hostile ids on hand 0."""
    return borrow_records(2, seed, colluders=1, style="borrow", cheat_rate=1.0, cheat_limit=1)


def heiqi_records(hands: int = 30, seed: int = 7) -> list[heiqi.HeiqiRecord]:
    """Seeded hands of 信阳黑七 (random legal play, so 摳底 happens), hostile ids on hand 0."""
    sim = heiqi_sim.simulate(hands=hands, players=PLAYERS, seed=seed, run_length=hands, policy="random")
    return _renamed(sim.records, "x")


def kou_hand(records: list[heiqi.HeiqiRecord]) -> heiqi.HeiqiRecord:
    """A played hand whose last trick the defenders won with points in the bottom."""
    return next(r for r in records if r.result and r.result.bottom_factor and r.result.bottom_points)


# --------------------------------------------------------------------------- engine replays (independent of the page)

def borrow_states(rec: borrow.BorrowRecord) -> list[borrow.State]:
    """The engine's state after each of the first k logged actions (k = 0..), up to the first one it cannot apply."""
    masks = borrow.deal_masks(rec, [])
    assert masks is not None
    st = borrow.State(masks, rec.rules or borrow.DEFAULT_RULES)
    out = [st.copy()]
    for a in rec.actions:
        c = parse_card(a.card, jokers=True)
        if isinstance(a, borrow.Borrow):
            if a.lender != st.next_holder(st.turn) or not st.lendable(a.lender) >> c & 1:
                break
            st.push(borrow.BORROW)
            st.push(borrow.LEND + c)
        else:
            if a.seat != st.turn or not st.is_legal(c):
                break
            st.push(c)
        out.append(st.copy())
    return out


def hand_cards(st: Any, seat: int) -> list[int]:
    """A seat's cards, sorted, with copies (both games)."""
    h = st.hands[seat]
    if isinstance(h, int):
        return list(scan(h))
    return [c for c in range(heiqi.KINDS) for _ in range(h[c])]


def heiqi_tricks(rec: heiqi.HeiqiRecord) -> list[dict[str, Any]]:
    """Per trick, from the engine: the hands before it, its winner and the defenders' points after it; then the
    final hands and outcome (or, at a trick the engine refuses, the hands before it and ``failed``)."""
    dealt = heiqi.VARIANT.deal_counts(rec, [])
    assert dealt is not None
    st = heiqi.State(dealt[0], dealt[1], rec.first_bidder, rec.rules or heiqi.DEFAULT_RULES)
    for b in rec.bids:
        st.push(heiqi.bid_action(b.bid))
    for code in rec.buried or []:
        st.push(heiqi.bury_action(parse_card(code, jokers=True)))
    st.push(heiqi.trump_action("SHDC".index(rec.trump or "S")))
    out = []
    for tr in rec.tricks or []:
        before = [hand_cards(st, s) for s in range(4)]
        for codes in tr.plays:
            cards = [parse_card(x, jokers=True) for x in codes]
            if st.play_error(cards) is not None:
                out.append({"hands": before, "failed": True})
                return out
            st.push(heiqi.play_action(cards))
        out.append({"hands": before, "winner": st.leader, "defender_points": st.defender_points})
    out.append({"hands": [hand_cards(st, s) for s in range(4)], "outcome": st.outcome()})
    return out


# --------------------------------------------------------------------------- planted problems

def plant_not_live(rec: borrow.BorrowRecord, seed: int = 0) -> tuple[bytes, int]:
    """A play of a card that is not live at a random action: (line, action index)."""
    states = borrow_states(rec)
    rng = random.Random(seed)
    idx = [i for i in range(1, len(rec.actions)) if isinstance(rec.actions[i], borrow.Play)]
    rng.shuffle(idx)
    for i in idx:
        st = states[i]
        dead = [c for c in scan(st.hands[st.turn] & ~st.live) if c < NUM_CARDS]
        if dead:
            obj = orjson.loads(format_record(rec))
            obj["actions"][i]["card"] = format_card(dead[0])
            return orjson.dumps(obj), i
    raise AssertionError("no action to plant a dead card at")


def plant_swapped_follow(rec: heiqi.HeiqiRecord, trick: int) -> bytes:
    """Trick ``trick``'s second and third plays swapped: the second seat plays cards it may not play."""
    obj = orjson.loads(format_record(rec))
    plays = obj["tricks"][trick]["plays"]
    plays[1], plays[2] = plays[2], plays[1]
    return orjson.dumps(obj)
