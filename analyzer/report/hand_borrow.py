"""The hand view of the 借牌 table game (bieqi-borrow): per-move snapshots from the engine, for the page.

The record is replayed through :class:`analyzer.variants.borrow.State`; every step's hands, table,
live cards, finishers and the move that led there are embedded as data, so the page only draws.
The replay follows the validator: an illegal borrow (拿着活牌还借牌) is marked at its move with the
live cards the borrower held and the replay goes on; any other illegal move ends it there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer.cards import NUM_CARDS, SEVEN_OF_SPADES, CardError, parse_card, scan
from analyzer.problems import Problem, path_text
from analyzer.report.views import SHARED_LABELS, HandView
from analyzer.variants.borrow import (
    BORROW,
    DEFAULT_RULES,
    JOKERS,
    LEND,
    Borrow,
    BorrowRecord,
    State,
    deal_masks,
)

SEATS = 4

#: Labels of this view, by language (merged into the page's labels).
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "bw_dealer14": "dealer (dealt 14)", "bw_joker_dead": "the joker is never live", "bw_lends": "lends", "bw_play": "plays",
        "bw_finished": "no cards left · #{0}", "bw_moves": "Moves", "bw_borrows": "Borrows so far",
        "bw_no_borrows": "no borrow yet", "bw_illegal": "illegal borrow: held live card(s)",
        "bw_finish_order": "finish order", "bw_loser": "loser (holds the joker)", "bw_next_dealer": "deals the next hand",
        "bw_result": "Result", "bw_live_held": "live cards held",
        "bw_legend_live": "live card", "bw_legend_illegal": "live card held by a borrower",
        "bw_legend_lend": "the last borrow, lender to borrower", "bw_last_move": "last move",
        "bw_next_move": "next move", "bw_hand_over": "all 52 cards are on the table",
    },
    "zh": {
        "bw_dealer14": "发牌人（发 14 张）", "bw_joker_dead": "王永远是死牌", "bw_lends": "借出", "bw_play": "出",
        "bw_finished": "已出完 · 第 {0}", "bw_moves": "出牌记录", "bw_borrows": "借牌记录",
        "bw_no_borrows": "还没有人借牌", "bw_illegal": "违规借牌：手里拿着活牌",
        "bw_finish_order": "出完顺序", "bw_loser": "输家（手里拿着王）", "bw_next_dealer": "下一局发牌",
        "bw_result": "结果", "bw_live_held": "手中的活牌",
        "bw_legend_live": "活牌", "bw_legend_illegal": "借牌人手里的活牌",
        "bw_legend_lend": "上一次借牌：借出者 → 借牌人", "bw_last_move": "上一步",
        "bw_next_move": "下一步", "bw_hand_over": "52 张牌全部接满",
    },
}


def _snapshot(st: State) -> dict[str, Any]:
    """What the page shows after some moves: straight from the engine's state."""
    return {
        "hands": [list(scan(h)) for h in st.hands],
        "table": list(scan(st.table)),
        "live": list(scan(st.live & ~st.table)),
        "turn": -1 if st.is_terminal() else st.current_player(),
        "finished": list(st.finish_order),
    }


def _card_or_code(code: str) -> tuple[int | None, str]:
    try:
        return parse_card(code, jokers=True), code
    except CardError:
        return None, code


def _move(a: Any) -> dict[str, Any]:
    """A logged action as the page reads it (the card as an int when it names one, the code always)."""
    card, code = _card_or_code(a.card)
    out: dict[str, Any] = {"seat": a.seat, "kind": "borrow" if isinstance(a, Borrow) else "play", "card": card,
                           "code": code}
    if isinstance(a, Borrow):
        out["lender"] = a.lender
    return out


def _legal_borrow(st: State, a: Borrow, c: int) -> bool:
    """A borrow the engine can apply: from the next seat holding cards, of a card it may lend.
    Holding a live card does not make it unplayable (the validator replays on past it)."""
    t = st.turn
    lender = st.next_holder(t)
    return a.lender == lender and lender != t and bool(st.lendable(lender) >> c & 1)


def problem_step(p: Problem, n: int) -> int:
    """The step a problem opens at: its move; otherwise the end (result problems) or the deal."""
    if p.action is not None:
        return min(p.action, n)
    return n if p.code.startswith("result") or p.code == "missing-actions" else 0


def hand_data(record: Any, decisions: Mapping[str, Any] | None = None,
              problems: Sequence[Problem] = ()) -> dict[str, Any] | None:
    """Everything the page needs to step through one hand of the borrowing game, or None when the deal
    cannot be read. ``steps[k]`` is the position after k moves; ``moves[k]`` the move from k to k+1."""
    if not isinstance(record, BorrowRecord):
        return None
    masks = deal_masks(record, [])
    if masks is None:
        return None
    st = State(masks, record.rules or DEFAULT_RULES)
    steps = [_snapshot(st)]
    moves: list[dict[str, Any]] = []
    stopped: dict[str, Any] | None = None
    for a in record.actions:
        move = _move(a)
        c = move["card"]
        t = st.turn
        ok = (c is not None and not st.is_terminal() and a.seat == t and bool(st.hands[t])
              and (bool(moves) or c == SEVEN_OF_SPADES and not isinstance(a, Borrow)))  # 7♠ opens, as validated
        if ok and isinstance(a, Borrow):
            ok = _legal_borrow(st, a, c)
            if ok:
                live = st.live_in_hand()
                if live:
                    move["live_held"] = list(scan(live))  # 拿着活牌还借牌: marked, and the replay goes on
                st.push(BORROW)
                st.push(LEND + c)
        elif ok:
            ok = c < NUM_CARDS and st.is_legal(c)
            if ok:
                st.push(c)
        if not ok:
            stopped = move
            break
        moves.append(move)
        steps.append(_snapshot(st))
    n = len(moves)
    outcome = None
    if st.is_terminal():
        out = st.outcome()
        outcome = {"finish_order": list(out.finish_order), "loser": out.loser, "ranking": list(out.ranking)}
    joker = next(scan(sum(masks) & JOKERS))
    return {
        "view": "borrow", "id": record.hand_id, "table": record.table_id, "players": list(record.players),
        "dealer": record.dealer,
        "joker": joker, "deal": [list(scan(m)) for m in masks], "steps": steps, "moves": moves,
        "attempted": stopped, "ms": [a.ms for a in record.actions[:n]] if all(
            a.ms is not None for a in record.actions[:n]) else None,
        "outcome": outcome,
        "problems": [{"action": p.action, "seat": p.seat, "code": p.code, "message": path_text(p.message),
                      "step": problem_step(p, n)} for p in problems],
    }


#: This game's hand view (named by ``analyzer.variants.borrow.VARIANT.offers.hand_view``).
VIEW = HandView("borrow", hand_data, scripts=("hand_games.js", "hand_borrow.js"), styles=("hand_games.css",),
                labels={lang: {**SHARED_LABELS[lang], **table} for lang, table in LABELS.items()})
