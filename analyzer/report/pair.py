"""The pair page: who helped whom (a collusion table), the pair's signals, and the evidence hands."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzer.report.common import clean, render_page, write_page
from analyzer.report.hand import hand_store

if TYPE_CHECKING:
    import pandas as pd

SEATS = 4
A, B, OTHERS = 0, 1, 2
#: Evidence rows derived from the decisions when no audit entry gives them.
DERIVED_EVIDENCE = 20


def hands_with(decisions: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The decision rows of the hands where a and b both sat."""
    seats = decisions[[f"p{s}" for s in range(SEATS)]]
    return decisions[(seats == a).any(axis=1) & (seats == b).any(axis=1)]


def _roles(names: pd.Series, a: str, b: str) -> np.ndarray:
    return np.where(names == a, A, np.where(names == b, B, OTHERS))


def collusion_table(rows: pd.DataFrame, a: str, b: str, hands: int) -> list[list[dict[str, float | None] | None]]:
    """Cell [actor role][recipient role]: points the actor's decisions gave the recipient against the
    sensible choice (``delta`` columns), per hand and per (actor, recipient) player combination, with
    standard errors. A player's effect on themselves is left out: this is about the others."""
    import pandas as pd

    parts = []
    actor = _roles(rows["player"], a, b)
    for s in range(SEATS):
        keep = rows["seat"].to_numpy() != s
        parts.append(pd.DataFrame({"hand": rows["hand_id"].to_numpy()[keep], "actor": actor[keep],
                                   "to": _roles(rows[f"p{s}"], a, b)[keep],
                                   "delta": rows[f"delta{s}"].to_numpy(float)[keep]}))
    effects = pd.concat(parts, ignore_index=True).dropna(subset=["delta"])
    per_hand = effects.groupby(["actor", "to", "hand"])["delta"].sum()
    # (actor player, recipient player) combinations in one hand: two "others" on either side
    combos = {(A, B): 1, (B, A): 1, (A, OTHERS): 2, (B, OTHERS): 2, (OTHERS, A): 2, (OTHERS, B): 2, (OTHERS, OTHERS): 2}
    cells: list[list[dict[str, float | None] | None]] = [[None] * 3 for _ in range(3)]
    for (i, j), k in combos.items():
        d = effects.loc[(effects["actor"] == i) & (effects["to"] == j), "delta"].to_numpy(float)
        if not len(d) or hands <= 0:
            continue
        got = per_hand.loc[(i, j)].to_numpy(float) / k
        sums = np.zeros(max(hands, len(got)))
        sums[: len(got)] = got  # hands without such a decision count as zero effect
        cells[i][j] = {"sum": float(d.sum()), "n": int(len(d)), "mean": float(d.mean()),
                       "se": clean(float(d.std(ddof=1) / math.sqrt(len(d)))) if len(d) > 1 else None,
                       "per_hand": float(sums.mean()),
                       "se_per_hand": clean(float(sums.std(ddof=1) / math.sqrt(len(sums)))) if len(sums) > 1 else None}
    return cells


def derived_evidence(rows: pd.DataFrame, a: str, b: str, limit: int = DERIVED_EVIDENCE) -> list[dict[str, Any]]:
    """Without an audit entry: the pair's decisions that most favoured the partner over the others."""
    mine = rows[rows["player"].isin([a, b])]
    if mine.empty:
        return []
    partner = np.where(mine["player"] == a, b, a)
    seat_of = mine[[f"p{s}" for s in range(SEATS)]].to_numpy() == partner[:, None]
    deltas = mine[[f"delta{s}" for s in range(SEATS)]].to_numpy(float)
    actor = np.zeros_like(seat_of)
    actor[np.arange(len(mine)), mine["seat"].to_numpy(int)] = True
    to_partner = np.where(seat_of, deltas, 0.0).sum(axis=1)
    others = np.where(~seat_of & ~actor, deltas, 0.0).sum(axis=1) / 2
    edge = to_partner - others
    out = []
    for i in np.argsort(-edge)[:limit]:
        r = mine.iloc[i]
        out.append({"hand_id": str(r["hand_id"]), "action": int(r["action"]), "player": str(r["player"]),
                    "chosen": str(r["chosen"]), "best": str(r["best"]),
                    "effect": {"partner": round(float(to_partner[i]), 3), "others_each": round(float(others[i]), 3)}})
    return out


def pair_data(a: str, b: str, *, decisions: pd.DataFrame | None = None,
              entry: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The pair section's data; ``entry`` is the pair's object from audit.json (any extra keys kept)."""
    rows = hands_with(decisions, a, b) if decisions is not None and not decisions.empty else None
    hands = int(entry["hands_together"]) if entry and "hands_together" in entry else (
        int(rows["hand_id"].nunique()) if rows is not None else 0)
    evidence = list(entry.get("evidence") or []) if entry else (
        derived_evidence(rows, a, b) if rows is not None else [])
    shown = {k: v for k, v in (entry or {}).items() if k != "evidence"}
    return {"players": [a, b], "hands_together": hands, "entry": shown or None, "evidence": evidence,
            "table": {"cells": collusion_table(rows, a, b, hands)} if rows is not None and len(rows) else None}


def evidence_hands(pdata: Mapping[str, Any]) -> set[str]:
    return {str(e["hand_id"]) for e in pdata["evidence"] if isinstance(e, Mapping) and "hand_id" in e}


def write_pair_report(path: str | os.PathLike[str], a: str, b: str, *, decisions: pd.DataFrame | None = None,
                      entry: Mapping[str, Any] | None = None, records: Iterable[Any] | None = None,
                      lang: str = "en") -> None:
    """Write one pair's page; the evidence hands among ``records`` open in the replayer at the decision."""
    pdata = pair_data(a, b, decisions=decisions, entry=entry)
    ids, hands = hand_store(records or [], decisions, evidence_hands(pdata))
    page = render_page("pair", lang=lang, plotly=True, stores={"pair": [pdata], "hand": hands},
                       data={"hand_ids": ids, "player_ids": [a, b], "default_view": ["pair", 0]})
    write_page(path, page)
