"""Readable reasons for the decision rows that are shown (evidence, report pages), computed after the fact.

Reasons are text from the strategy features of a replayed position: writing them for every decision of a
room costs a fifth of the analysis and most of a row's memory, while a report shows a few hundred rows.
So the audit analyses without them and fills them here for the rows it shows, from the records of those
hands only; the text is the same ``decisions.analyse(..., reasons=True)`` writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

#: Largest deviations per player that the pages list (``report.player.player_data``'s ``worst``).
PLAYER_WORST = 10


def shown_rows(decisions: pd.DataFrame, audit: Mapping[str, Any], worst: int = PLAYER_WORST) -> np.ndarray:
    """Positions of the rows an audit shows: every decision of its evidence hands (the replayer lists
    them all) and each player's ``worst`` largest deviations."""
    hands = {str(e["hand_id"]) for p in audit.get("pairs", []) for e in p.get("evidence", [])}
    pos = np.arange(len(decisions))
    picked = set(pos[decisions["hand_id"].isin(hands).to_numpy()].tolist())
    if len(decisions):
        for _, g in pd.Series(decisions["regret"].to_numpy(), index=pos).groupby(decisions["player"].to_numpy()):
            picked.update(g.nlargest(worst).index.tolist())
    return np.array(sorted(picked), np.int64)


def reasons_for(decisions: pd.DataFrame, rows: np.ndarray, records: Mapping[str, Any]) -> list[str]:
    """Reasons of the rows at positions ``rows`` (records by hand id; a row whose record is missing gets "")."""
    from analyzer.analysis.decisions import _reasons
    from analyzer.cards import parse_card
    from analyzer.variants.bieqi import COVER, DEFAULT_RULES, VARIANT, State

    sub = decisions.iloc[rows]
    order = np.lexsort((sub["action"].to_numpy(), sub["hand_seq"].to_numpy()))
    out = [""] * len(rows)
    state: Any = None
    rec: Any = None
    cols = [sub[c].to_numpy() for c in ("hand_id", "action", "kind", "chosen", "best", "regret", "regret_se")]
    for k in order.tolist():
        hand_id, action, kind, chosen, best, regret, se = (c[k] for c in cols)
        r = records.get(str(hand_id))
        if r is None:
            continue
        if r is not rec or state is None or state.n > int(action):
            rec = r
            deal = VARIANT.deal_masks(rec, [])
            assert deal is not None  # valid hands only
            state = State(deal, rec.rules or DEFAULT_RULES)
        while state.n < int(action):
            a = rec.actions[state.n]
            card = parse_card(a.card)
            state.push(COVER + card if a.kind == "cover" else card)
        offset = COVER if kind == "cover" else 0  # the options of one decision are all plays or all covers
        out[k] = _reasons(state, offset + parse_card(str(chosen)), offset + parse_card(str(best)), float(regret),
                          float(se))
    return out


def fill_reasons(decisions: pd.DataFrame, rows: np.ndarray, records: Iterable[Any]) -> dict[tuple[str, int], str]:
    """Write the reasons of ``rows`` into ``decisions`` (in place) from the records among ``records``
    (records or validate's Checked items, streamed); returns them by (hand id, action)."""
    if len(rows) == 0:
        return {}
    wanted = set(decisions["hand_id"].iloc[rows].astype(str))
    found: dict[str, Any] = {}
    for item in records:
        rec = getattr(item, "record", item)
        hid = str(getattr(rec, "hand_id", ""))
        if hid in wanted:
            found[hid] = rec
    text = reasons_for(decisions, rows, found)
    # the column replaced whole, not written into (iloc): a frame of one-column blocks (``audit.rows``)
    # would be consolidated by pandas, a copy of every number
    column = decisions["reasons"].to_numpy(object).copy()
    column[rows] = text
    decisions["reasons"] = pd.Series(column, index=decisions.index, dtype=object)
    keys = zip(decisions["hand_id"].iloc[rows].astype(str), decisions["action"].iloc[rows].astype(int))
    return dict(zip(keys, text))
