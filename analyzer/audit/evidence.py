"""The decisions that carry a pair's evidence: what was chosen, the sensible alternative, and what
the choice did to the partner and to each of the two others.

The rows are the ones behind the signal that fired, ranked by that signal's own quantity:

- the exact favour signals (``imm_marginal``, ``favour``, ``codev``) and ``think``: decisions ranked by their
  *card edge*, the partner's cards freed (+) or stranded (-) minus the mean of the two opponents', exact on the
  true deal, against the average option (the quantity ``imm_marginal`` sums);
- the true-deal point signals (``dd_marginal``, ``pooled``, ``marginal``): by the *points edge*, the partner's
  true-deal gain minus the opponents' mean, chosen option against the average one (as ``dd_marginal`` sums it),
  uncapped;
- ``burst``: its extreme hands (the hands its count counts, ``burst._burst_one``: the pair's hands whose per-hand
  favour is above the actor's level), largest favour first, each with the actor's decisions in it that carried
  the favour (largest card edge first).

A row whose own quantity does not favour the partner is left out (it would contradict the claim), and so are the
moves of a player who shows no sign of knowing the other's hand (in one-way feeding only the feeder's moves are
evidence).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analyzer.audit.signals import seat_effects

SEATS = 4
DEFAULT_TOP = 12
#: Signals whose evidence is ranked by the true-deal points edge; every other by the card edge.
POINT_SIGNALS = frozenset({"dd_marginal", "pooled", "marginal"})
#: An extreme burst hand lists at most this many of the actor's decisions (those with the largest card edge).
HAND_DECISIONS = 3
#: At most this many of a direction's extreme burst hands are listed in the case (largest favour first; the case
#: says how many there are in all); the first of them (:func:`burst_share`) with their moves, whose hands the report
#: embeds for the replayer (so a page's size does not grow with the room).
BURST_HANDS = 200
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


def rank_key(signal: str) -> str:
    """The evidence row's field the signal's evidence is ranked by: ``edge`` (points) or ``edge_immediate``
    (cards)."""
    return "edge" if signal in POINT_SIGNALS else "edge_immediate"


def burst_share(top: int, directions: int) -> int:
    """How many of each direction's extreme hands get their moves (and a replay): ``top`` in all, split evenly, so
    a case embeds no more hands than ``top`` decisions would."""
    return max(1, top // max(1, directions))


def burst_hands(text: Any) -> list[tuple[str, float]]:
    """A pair table's ``burst_<dir>_extreme`` cell (JSON ``[[hand_id, favour], ...]``, largest first) as pairs."""
    import orjson

    if not isinstance(text, (str, bytes)) or not text:
        return []
    return [(str(h), float(x)) for h, x in orjson.loads(text)]


def pair_evidence(decisions: pd.DataFrame, a: str, b: str, *, actors: Iterable[str] | None = None,
                  top: int = DEFAULT_TOP, signal: str = "imm_marginal",
                  extreme: Mapping[str, Sequence[tuple[str, float]]] | None = None) -> list[dict[str, Any]]:
    """The decisions by ``actors`` (default both) towards the other in their hands together behind ``signal``
    (see the module doc): the ``top`` by the signal's quantity, or for ``burst`` with ``extreme`` (per actor, the
    hands its count counts and their per-hand favour, :func:`burst_hands`) the decisions that carried the favour
    in each of the first extreme hands of each actor (``top`` hands in all, :func:`burst_share`), hand by hand.
    Rows whose ranking quantity is not positive are dropped.

    Each row: the hand, action, ``direction`` (actor -> partner), what was chosen and the sensible
    alternative, the regret, ``effect`` (own information, against the sensible choice), ``effect_true_deal``
    (points on the true deal) and ``effect_immediate`` (exact cards made playable (+) or stranded (-) in each
    hand), both against the average option, ``edge`` (points) and ``edge_immediate`` (cards): the partner's minus
    the opponents' mean of those two, ``rank_by`` (which of the two ranks the rows); a burst row also
    ``hand_favour`` (the hand's favour in the actor's spreads per hand, what the count compares) and
    ``hand_rank`` (the hand's place among the extreme hands, 1 first).
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
    e_dd = edge(eff.dd_avg, seat, partner)  # as dd_marginal sums it: against the average option
    e_imm = edge(eff.imm, seat, partner)
    by = rank_key(signal)
    key = e_dd if by == "edge" else e_imm
    hand_of: dict[int, tuple[float, int]] = {}  # row -> (its hand's favour, the hand's rank)
    if signal == "burst" and extreme is not None:
        hands = rows["hand_id"].astype(str).to_numpy()
        picked: list[int] = []
        share = burst_share(top, len(extreme))
        for who, listed in extreme.items():
            mine = np.flatnonzero(actor_name == str(who))
            for rank, (hand, favour) in enumerate(listed[:share], start=1):
                at = mine[hands[mine] == hand]
                at = at[np.argsort(-e_imm[at], kind="stable")]
                for i in [int(i) for i in at if e_imm[i] > 1e-9][:HAND_DECISIONS]:
                    hand_of[i] = (favour, rank)
                    picked.append(i)
        order = picked
    else:
        order = [int(i) for i in np.argsort(-key, kind="stable") if key[i] > 1e-9][:top]
    out = []
    for i in order:
        d = rows.iloc[i]
        s, p = int(seat[i]), int(partner[i])
        row: dict[str, Any] = {
            "hand_id": str(d["hand_id"]), "action": int(d["action"]), "actor": actor_name[i],
            "partner": str(partner_name[i]), "direction": f"{actor_name[i]} -> {partner_name[i]}", "seat": s,
            "kind": str(d["kind"]), "chosen": str(d["chosen"]), "alternative": str(d["best"]),
            "regret": round(float(d["regret"]), 2),
            "effect": _effects(eff.own[i], s, p), "effect_true_deal": _effects(eff.dd_avg[i], s, p),
            "effect_immediate": _effects(eff.imm[i], s, p),
            "edge": round(float(e_dd[i]), 2), "edge_immediate": round(float(e_imm[i]), 2), "rank_by": by,
            "think_ms": None if pd.isna(d["think_ms"]) else float(d["think_ms"]),
            "reasons": str(d["reasons"]) if "reasons" in rows.columns and d["reasons"] is not None else "",
        }
        if i in hand_of:
            row["hand_favour"], row["hand_rank"] = round(hand_of[i][0], 2), hand_of[i][1]
        out.append(row)
    return out
