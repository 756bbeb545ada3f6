"""Report test data: seeded legal hands with hostile ids, decision rows shaped like docs/design.md, an audit."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import orjson
import pandas as pd

from analyzer.cards import format_card
from analyzer.variants.bieqi import COVER, Record, State, make_record, play_random, random_deal

#: Ids a log could carry to attack a page: each must show as text and never run.
EVIL_PLAYER = "<img src=x onerror=alert(1)>"
EVIL_HAND = "</script><script>alert(2)</script>"
EVIL_TABLE = "\"'><svg onload=alert(3)>&amp;"
PLAYERS = [EVIL_PLAYER, "北风", "p2</script>", "p3"]


def room(hands: int = 6, seed: int = 1) -> list[Record]:
    """Seeded legal hands; seats rotate so every player sits everywhere; hostile ids on hand 0."""
    rng = random.Random(seed)
    out = []
    for h in range(hands):
        deal = random_deal(rng)
        st = play_random(deal, rng)
        ms = [1500 * (i + 1) + rng.randrange(1200) for i in range(52)]
        players = PLAYERS[h % 4:] + PLAYERS[: h % 4]
        out.append(make_record(st, deal, hand_id=EVIL_HAND if h == 0 else f"h{h}", players=players,
                               table_id=EVIL_TABLE, ms=ms))
    return out


def decision_rows(records: list[Record], seed: int = 7) -> pd.DataFrame:
    """Synthetic decision rows (columns as docs/design.md) for every decision with 2+ options."""
    from analyzer.variants.bieqi import VARIANT

    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for seq, rec in enumerate(records):
        st = State(VARIANT.deal_masks(rec, []))
        prev = None
        for i, a in enumerate(rec.actions):
            legal = st.legal_actions()
            act = next(x for x in legal if format_card(x % COVER) == a.card)
            if len(legal) > 1:
                s = st.turn
                ev = {x: [round(rng.uniform(-20, 20), 2) for _ in range(4)] for x in legal}
                best = max(legal, key=lambda x: ev[x][s])
                kind = "cover" if act >= COVER else "play"
                rows.append({
                    "hand_id": rec.hand_id, "table_id": rec.table_id, "hand_seq": seq, "action": i, "seat": s,
                    "player": rec.players[s], **{f"p{k}": rec.players[k] for k in range(4)}, "kind": kind,
                    "n_options": len(legal), "chosen": a.card, "best": format_card(best % COVER),
                    "rank": sorted(legal, key=lambda x: -ev[x][s]).index(act), "regret": ev[best][s] - ev[act][s],
                    "regret_se": 0.3, **{f"delta{k}": ev[act][k] - ev[best][k] for k in range(4)},
                    **{f"dd_delta{k}": ev[act][k] - ev[best][k] for k in range(4)},
                    "dd_regret": ev[best][s] - ev[act][s], "think_ms": float(a.ms - prev) if prev else float("nan"),
                    "difficulty": rng.random(), "reasons": f"why <b>{EVIL_PLAYER}</b>",
                    "options": orjson.dumps([{"card": format_card(x % COVER), "kind": kind, "ev": ev[x], "ev_dd": ev[x]}
                                             for x in legal]).decode()})
            prev = a.ms
            st.push(act)
    return pd.DataFrame(rows)


def audit_dict(records: list[Record]) -> dict[str, Any]:
    """A hand-made audit.json object in issue 5's shape, with extra keys the page must tolerate."""
    pairs = []
    names = sorted(PLAYERS)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            flagged = {a, b} == {EVIL_PLAYER, "北风"}
            pairs.append({
                "players": [a, b], "hands_together": len(records), "score": 9.5 if flagged else 0.1 * len(pairs),
                "z": 4.2 if flagged else 0.3, "p_value": 1e-6 if flagged else 0.4, "q_value": 1e-5 if flagged else 0.8,
                "flagged": flagged, "model_version": "x",
                "signals": {"total_impact": {"value": 3.1, "se": 0.8, "n": 120},
                            "pooled_info": {"estimate": 1.2, "ci": [0.2, 2.2], "decisions": 40, "note": EVIL_PLAYER},
                            "co_deviation": 0.7},
                "evidence": [{"hand_id": r.hand_id, "action": 5, "effect": {"partner": 4.0, "others": -2.0},
                              "alternative": "KD", "seat": 1} for r in records[:3]] if flagged else []})
    return {"hands": len(records), "players": names, "pairs": pairs, "alarm": {"score": 5.0}, "extra": {"x": 1}}


def big_room(hands: int = 10_000, players: int = 40, per_hand: int = 30, seed: int = 3) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Decision rows of a large room (built with numpy, no replay) and its audit.json, for page speed."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:02d}" for i in range(players)]
    seats = np.argsort(rng.random((hands, players)), axis=1)[:, :4]
    n = hands * per_hand
    hand = np.repeat(np.arange(hands), per_hand)
    seat = np.tile(np.arange(per_hand) % 4, hands)
    names = np.array(ids, dtype=object)
    regret = rng.exponential(1.0, n) * (rng.random(n) < 0.6)
    frame = pd.DataFrame({
        "hand_id": np.char.add("b", hand.astype(str)).astype(object), "hand_seq": hand,
        "action": np.tile(np.arange(per_hand), hands) + 1, "seat": seat, "player": names[seats[hand, seat]],
        **{f"p{k}": names[seats[hand, k]] for k in range(4)}, "kind": "play",
        "chosen": np.where(regret > 0, "8H", "6H").astype(object), "best": "6H", "rank": (regret > 0).astype(int),
        "regret": regret, "regret_se": 0.3, **{f"delta{k}": rng.normal(0, 1, n) for k in range(4)},
        "dd_regret": regret, "think_ms": rng.lognormal(7, 0.5, n), "difficulty": rng.random(n),
        "reasons": "", "options": "[]"})
    pairs = []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            flagged = (a, b) in (("q00", "q01"), ("q02", "q03"))
            pairs.append({"players": [a, b], "hands_together": int(rng.integers(50, 400)),
                          "score": float(rng.normal(8 if flagged else 0, 1)), "z": 0.0, "p_value": 0.5,
                          "q_value": 0.9, "flagged": flagged, "signals": {"total_impact": {"value": 1.0, "se": 0.2}},
                          "evidence": [{"hand_id": f"b{h}", "action": 3, "effect": 2.0}
                                       for h in rng.integers(0, hands, 25)]})
    return frame, {"hands": hands, "players": ids, "pairs": pairs, "alarm": {"score": 5.0}}
