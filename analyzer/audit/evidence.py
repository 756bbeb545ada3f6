"""The decisions that carry a pair's evidence: what was chosen, the sensible alternative, and what
the choice did in points to the partner and to each of the two others."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analyzer.audit.signals import Signals

SEATS = 4
DEFAULT_TOP = 12
#: Signals whose evidence is a list of decisions, and the link column each ranks them by.
RANKED_BY = {"marginal": "marginal", "dd_marginal": "dd_marginal", "pooled": "pooled", "total": "total",
             "imm_marginal": "imm_marginal", "favour": "imm_marginal"}  # favour: its exact, least noisy part


def _effects(values: np.ndarray, actor: int, partner: int) -> dict[str, Any]:
    others = [s for s in range(SEATS) if s not in (actor, partner)]
    return {"actor": round(float(values[actor]), 2), "partner": round(float(values[partner]), 2),
            "others": [round(float(values[s]), 2) for s in others]}


def pair_evidence(sig: Signals, decisions: pd.DataFrame, a: str, b: str, signal: str,
                  top: int = DEFAULT_TOP) -> list[dict[str, Any]]:
    """The ``top`` decisions of a and b towards each other that weigh most in ``signal``.

    Effects are in points against the sensible choice: ``effect`` by the actor's own
    information, ``effect_true_deal`` with every hand known; ``effect_immediate`` is the exact
    immediate effect (cards made live or dead in each hand) against the average option. For co-deviation and think time
    the decisions are ranked by the true-deal favour (where a partner's hand shows).
    """
    col = RANKED_BY.get(signal, "dd_marginal")
    links = sig.links
    lk = links[((links["actor"] == a) & (links["other"] == b)) | ((links["actor"] == b) & (links["other"] == a))]
    lk = lk.nlargest(top, col)
    lk = lk[lk[col] > 0]
    own, dd = sig.effects.own, sig.effects.dd
    imm_cols = [f"imm{s}" for s in range(SEATS)]
    imm = decisions[imm_cols].to_numpy(np.float64) if set(imm_cols) <= set(decisions.columns) else None
    out = []
    for r in lk.itertuples(index=False):
        d = decisions.iloc[r.row]
        seat = int(d["seat"])
        partner = (seat + int(r.offset)) % SEATS
        out.append({
            "hand_id": str(r.hand_id), "action": int(r.action), "actor": r.actor, "partner": r.other,
            "seat": seat, "kind": str(r.kind), "chosen": str(r.chosen), "alternative": str(r.best),
            "regret": round(float(r.regret), 2),
            "effect": _effects(own[r.row], seat, partner),
            "effect_true_deal": _effects(dd[r.row], seat, partner),
            "effect_immediate": None if imm is None else _effects(imm[r.row], seat, partner),
            "weight": round(float(getattr(r, col)), 2), "signal": col,
            "think_ms": None if pd.isna(r.think_ms) else float(r.think_ms),
            "reasons": str(d["reasons"]) if "reasons" in decisions.columns else "",
        })
    return out
