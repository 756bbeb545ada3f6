"""The decisions that carry a pair's evidence: what was chosen, the sensible alternative, and what
the choice did on the true deal to the partner and to each of the two others.

Decisions are ranked by their *edge*: the partner's gain minus the mean of the two opponents' on the
true deal (with every hand known), chosen option against the sensible one, in points and uncapped.
Decisions with no edge (the sensible choice itself, or nothing that helped the partner more than
the opponents) are left out, and so are the moves of a player who shows no sign of knowing the
other's hand (in one-way feeding only the feeder's moves are evidence).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from analyzer.audit.signals import seat_effects

SEATS = 4
DEFAULT_TOP = 12
#: A direction's moves are listed when its z is at least this (one-sided 5%) or it is the pair's stronger one.
DIRECTION_Z = 1.645


def _effects(values: np.ndarray, actor: int, partner: int) -> dict[str, Any]:
    others = [s for s in range(SEATS) if s not in (actor, partner)]
    return {"actor": round(float(values[actor]), 2), "partner": round(float(values[partner]), 2),
            "others": [round(float(values[s]), 2) for s in others]}


def edge(values: np.ndarray, actor: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """Per row of (rows, 4) seat values: the partner's value minus the mean of the two opponents'."""
    rows = np.arange(len(values))
    total = values.sum(axis=1)
    rest = (total - values[rows, actor] - values[rows, partner]) / 2
    return values[rows, partner] - rest


def directions(z_ab: float, z_ba: float) -> list[int]:
    """Which actors' moves are evidence: 0 (a towards b), 1 (b towards a), from their directed z's."""
    best = 0 if z_ab >= z_ba else 1
    keep = {best} | {k for k, z in ((0, z_ab), (1, z_ba)) if z >= DIRECTION_Z}
    return sorted(keep)


def evidence_rows(decisions: pd.DataFrame, a: str, b: str, actors: Iterable[str] | None = None) -> np.ndarray:
    """Positions of the rows :func:`pair_evidence` ranks: decisions by ``actors`` (default both) in the
    hands where ``a`` and ``b`` sat together (the only rows whose options it reads)."""
    actors = {a, b} if actors is None else set(actors)
    seats = decisions[[f"p{s}" for s in range(SEATS)]].astype(str)
    together = (seats == a).any(axis=1) & (seats == b).any(axis=1)
    return np.flatnonzero(together.to_numpy() & decisions["player"].astype(str).isin(actors).to_numpy())


def pair_evidence(decisions: pd.DataFrame, a: str, b: str, *, actors: Iterable[str] | None = None,
                  top: int = DEFAULT_TOP) -> list[dict[str, Any]]:
    """The ``top`` decisions by ``actors`` (default both) towards the other in their hands together,
    ranked by the true-deal edge (see the module doc); rows without a positive edge are dropped.

    Each row: the hand, action, ``direction`` (actor -> partner), what was chosen and the sensible
    alternative, the regret, ``effect`` (own information), ``effect_true_deal`` and ``effect_immediate``
    (exact cards made playable (+) or stranded (-) in each hand, against the average option), ``edge``
    (the ranking key, points) and ``edge_immediate`` (cards).
    """
    rows = decisions.iloc[evidence_rows(decisions, a, b, actors)]
    if rows.empty:
        return []
    eff = seat_effects(rows)
    names = rows[[f"p{s}" for s in range(SEATS)]].astype(str).to_numpy()
    actor_name = rows["player"].astype(str).to_numpy()
    partner_name = np.where(actor_name == a, b, a)
    partner = (names == partner_name[:, None]).argmax(axis=1)
    seat = rows["seat"].to_numpy(np.int64)
    e_dd = edge(eff.dd, seat, partner)
    e_imm = edge(eff.imm, seat, partner)
    order = [i for i in np.argsort(-e_dd, kind="stable") if e_dd[i] > 1e-9][:top]
    out = []
    for i in order:
        d = rows.iloc[i]
        s, p = int(seat[i]), int(partner[i])
        out.append({
            "hand_id": str(d["hand_id"]), "action": int(d["action"]), "actor": actor_name[i],
            "partner": str(partner_name[i]), "direction": f"{actor_name[i]} -> {partner_name[i]}", "seat": s,
            "kind": str(d["kind"]), "chosen": str(d["chosen"]), "alternative": str(d["best"]),
            "regret": round(float(d["regret"]), 2),
            "effect": _effects(eff.own[i], s, p), "effect_true_deal": _effects(eff.dd[i], s, p),
            "effect_immediate": _effects(eff.imm[i], s, p),
            "edge": round(float(e_dd[i]), 2), "edge_immediate": round(float(e_imm[i]), 2),
            "think_ms": None if pd.isna(d["think_ms"]) else float(d["think_ms"]),
            "reasons": str(d["reasons"]) if "reasons" in rows.columns and d["reasons"] is not None else "",
        })
    return out
