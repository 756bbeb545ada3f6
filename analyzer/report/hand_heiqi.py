"""The hand view of 信阳黑七 (xinyang-heiqi): the auction, the bottom, and trick-by-trick snapshots from the engine.

The record is replayed through :class:`analyzer.variants.heiqi.State`. Step 0 is the auction, the
bottom before and after burying and trump; step k (1..) is trick k with the hands as they were before
it, its four plays, the winner, the points it carried and the defenders' running points; the last step
also carries 摳底, the outcome and the settlement. Effective suits and rank levels come from the
engine's card order, so the page groups and sorts cards without knowing the rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from analyzer.cards import NUM_CARDS, SUITS, CardError, parse_card
from analyzer.problems import Problem, path_text
from analyzer.report.views import SHARED_LABELS, HandView
from analyzer.variants.heiqi import (
    BOTTOM_SIZE,
    DEFAULT_RULES,
    KINDS,
    VARIANT,
    HeiqiRecord,
    State,
    bid_action,
    bury_action,
    card_points,
    play_action,
    play_points,
    shape_of,
    trump_action,
)

#: Labels of this view, by language (merged into the page's labels).
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "hq_auction": "Bidding", "hq_first_bidder": "first to bid", "hq_pass": "pass", "hq_bid_bad": "not legal",
        "hq_contract": "contract", "hq_trump": "trump", "hq_bottom": "bottom as dealt", "hq_buried": "buried",
        "hq_passed_out": "all four passed: the cards are dealt again", "hq_no_dealer": "no dealer",
        "hq_defender": "defender", "hq_trick_of": "trick {0} / {1}", "hq_leader": "leads",
        "hq_winner": "wins", "hq_trick_points": "points in the trick", "hq_captured": "to the defenders",
        "hq_kept": "to the dealer (not counted)", "hq_defender_points": "defenders' points",
        "hq_tricks": "Tricks", "hq_trumps": "trumps", "hq_kou": "bottom captured (the defenders won the last trick)",
        "hq_no_kou": "the dealer won the last trick: the bottom is not captured", "hq_bottom_points": "bottom points",
        "hq_factor": "factor", "hq_lead_single": "single", "hq_lead_pair": "pair", "hq_lead_tractor": "tractor",
        "hq_lead_throw": "throw", "hq_last_lead": "last lead", "hq_total": "defenders' total",
        "hq_outcome": "Outcome", "hq_settlement": "settlement", "hq_out_dealer_double": "光头: the dealer wins double",
        "hq_out_dealer": "the dealer wins (below the contract)", "hq_out_draw": "draw (equal to the contract)",
        "hq_out_defenders": "the defenders win (above the contract)", "hq_after_bury": "after burying", "hq_jokers": "jokers",
    },
    "zh": {
        "hq_auction": "叫牌", "hq_first_bidder": "先叫", "hq_pass": "不叫", "hq_bid_bad": "不合规",
        "hq_contract": "叫分", "hq_trump": "主花色", "hq_bottom": "底牌（发牌时）", "hq_buried": "扣底",
        "hq_passed_out": "四家都不叫：重新发牌", "hq_no_dealer": "无庄家",
        "hq_defender": "闲家", "hq_trick_of": "第 {0} / {1} 墩", "hq_leader": "首家",
        "hq_winner": "赢墩", "hq_trick_points": "本墩分", "hq_captured": "归闲家",
        "hq_kept": "归庄家（不计）", "hq_defender_points": "闲家得分",
        "hq_tricks": "各墩", "hq_trumps": "主", "hq_kou": "摳底（末墩闲家赢）",
        "hq_no_kou": "末墩庄家赢：不摳底", "hq_bottom_points": "底牌分",
        "hq_factor": "倍数", "hq_lead_single": "单张", "hq_lead_pair": "对子", "hq_lead_tractor": "拖拉机",
        "hq_lead_throw": "甩牌", "hq_last_lead": "末墩首家出", "hq_total": "闲家总分",
        "hq_outcome": "胜负", "hq_settlement": "积分", "hq_out_dealer_double": "光头：庄家赢，翻倍",
        "hq_out_dealer": "庄家赢（不足叫分）", "hq_out_draw": "平手（与叫分持平）",
        "hq_out_defenders": "闲家赢（超过叫分）", "hq_after_bury": "扣底后", "hq_jokers": "王",
    },
}

#: Group of each card before trump is named (a hand passed out or stopped early): printed suit, jokers apart.
_PRINTED_SUIT = [c // 13 if c < NUM_CARDS else 4 for c in range(KINDS)]
_PRINTED_LEVEL = [(c % 13 + 12) % 13 if c < NUM_CARDS else 13 + c - NUM_CARDS for c in range(KINDS)]  # A high


def _cards(counts: Sequence[int]) -> list[int]:
    return [c for c in range(KINDS) for _ in range(counts[c])]


def _parse(codes: Sequence[str]) -> list[int] | None:
    try:
        return [parse_card(code, jokers=True) for code in codes]
    except CardError:
        return None


def problem_step(p: Problem, n: int) -> int:
    """The step a problem opens at: its trick; otherwise the end (result problems) or the auction."""
    if p.trick is not None:
        return min(p.trick + 1, n)
    return n if p.code.startswith("result") else 0


def _auction(record: HeiqiRecord, st: State) -> list[dict[str, Any]]:
    """The bids as made, each checked by the engine's auction; the first illegal one ends the list."""
    out = []
    for b in record.bids:
        ok = st.phase == "bid" and b.seat == st.bidding.turn and b.bid in st.bidding.legal()
        out.append({"seat": b.seat, "bid": b.bid, "ok": ok})
        if not ok:
            break
        st.push(bid_action(b.bid))
    return out


def _bury(record: HeiqiRecord, st: State) -> bool:
    """Bury and name trump as recorded, when the engine allows it; False when play cannot start."""
    trump = record.trump
    if st.phase != "bury" or record.dealer != st.dealer or trump is None or record.tricks is None:
        return False
    buried = _parse(record.buried or [])
    held = st.hands[st.dealer]
    if buried is None or len(buried) != BOTTOM_SIZE or any(held[c] < k for c, k in Counter(buried).items()):
        return False
    for c in buried:
        st.push(bury_action(c))
    st.push(trump_action(SUITS.index(trump)))
    return True


def _trick(st: State, leader: int, plays: Sequence[Sequence[str]], t: int) -> tuple[dict[str, Any], bool]:
    """Trick ``t`` replayed from the position before it: its step, and whether it was completed."""
    dealer = st.dealer
    step: dict[str, Any] = {"trick": t, "leader": leader, "hands": [_cards(h) for h in st.hands], "plays": [],
                            "seats": []}
    if leader != st.leader:
        step["attempted"] = {"seat": leader, "codes": list(plays[0]) if plays else [], "cards": None,
                             "expected_leader": st.leader}
        return step, False
    for codes in plays:
        seat = st.current_player()
        cards = _parse(codes)
        if cards is None or st.play_error(cards) is not None:
            step["attempted"] = {"seat": seat, "codes": list(codes), "cards": cards}
            return step, False
        st.push(play_action(cards))
        step["plays"].append(sorted(cards))
        step["seats"].append(seat)
    assert st.order is not None
    done = st.tricks[-1][1]
    points = sum(play_points(p) for p in done)
    step.update(winner=st.leader, points=points, captured=points if st.leader != dealer else 0,
                defender_points=st.defender_points, lead_kind=shape_of(done[0], st.order).kind)
    return step, True


def hand_data(record: Any, decisions: Mapping[str, Any] | None = None,
              problems: Sequence[Problem] = ()) -> dict[str, Any] | None:
    """Everything the page needs to step through one hand of 信阳黑七 trick by trick, or None when the deal
    cannot be read. The replay stops at the first thing the engine does not allow, as the validator does."""
    if not isinstance(record, HeiqiRecord):
        return None
    dealt = VARIANT.deal_counts(record, [])
    if dealt is None:
        return None
    counts, bottom = dealt
    st = State(counts, bottom, record.first_bidder, record.rules or DEFAULT_RULES)
    bids = _auction(record, st)
    dealer = st.dealer if st.phase not in ("bid", "done") else None
    taken = _cards(st.hands[dealer]) if dealer is not None else None
    playing = _bury(record, st)
    order = st.order
    steps: list[dict[str, Any]] = [{"hands": [_cards(h) for h in st.hands], "defender_points": 0}]
    if playing:
        for t, tr in enumerate(record.tricks or []):
            if st.is_terminal():
                break
            step, complete = _trick(st, tr.leader, tr.plays, t)
            steps.append(step)
            if not complete:
                break
    outcome = None
    if st.is_terminal():
        out = st.outcome()
        outcome = {"contract": out.contract, "defender_points": out.defender_points,
                   "trick_points": st.defender_points if out.dealer is not None else 0,
                   "bottom_points": out.bottom_points, "bottom_factor": out.bottom_factor, "outcome": out.outcome,
                   "settlement": list(out.settlement), "last_winner": st.last_winner if out.dealer is not None else None,
                   "last_lead_kind": shape_of(st.last_lead, order).kind if order is not None and st.last_lead else None}
    n = len(steps) - 1
    return {
        "view": "heiqi", "id": record.hand_id, "table": record.table_id, "players": list(record.players),
        "first_bidder": record.first_bidder, "bids": bids, "dealer": dealer,
        "contract": st.contract if dealer is not None else None,
        "trump": SUITS.index(record.trump) if playing and record.trump else None,
        "deal": [_cards(h) for h in counts], "bottom": sorted(bottom), "taken": taken,
        "buried": sorted(st.buried) if playing else None,
        "suit": list(order.suit) if order else _PRINTED_SUIT, "level": list(order.level) if order else _PRINTED_LEVEL,
        "points": [card_points(c) for c in range(KINDS)],
        "steps": steps, "outcome": outcome,
        "problems": [{"trick": p.trick, "seat": p.seat, "code": p.code, "message": path_text(p.message),
                      "step": problem_step(p, n)} for p in problems],
    }


#: This game's hand view (named by ``analyzer.variants.heiqi.VARIANT.offers.hand_view``).
VIEW = HandView("heiqi", hand_data, scripts=("hand_games.js", "hand_heiqi.js"), styles=("hand_games.css",),
                labels={lang: {**SHARED_LABELS[lang], **table} for lang, table in LABELS.items()})
