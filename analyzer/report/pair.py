"""The pair page (the case file): the signal that fired in plain words, the pair's results together and
apart, who helped whom (exact and true-deal measures), the signals table, and the evidence hands."""

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
#: The columns a pair section with its audit entry reads of the rows (:func:`hands_with`, :func:`collusion_table`).
TABLE_COLUMNS = ("hand_id", "player", "seat", *(f"p{s}" for s in range(SEATS)),
                 *(f"{m}{s}" for m in ("imm", "dd_delta", "delta") for s in range(SEATS)))
#: Evidence rows derived from the decisions when no audit entry gives them.
DERIVED_EVIDENCE = 20


def hands_with(decisions: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The decision rows of the hands where a and b both sat."""
    seats = decisions[[f"p{s}" for s in range(SEATS)]]
    return decisions[(seats == a).any(axis=1) & (seats == b).any(axis=1)]


def _roles(names: pd.Series, a: str, b: str) -> np.ndarray:
    return np.where(names == a, A, np.where(names == b, B, OTHERS))


def measure(rows: pd.DataFrame) -> str:
    """The column family the pair page measures with: ``imm`` (exact immediate effect on the true deal,
    cards made playable or stranded) when the rows carry it, else ``dd_delta`` (true-deal rollouts, points).
    Own-information deltas are not used: any costly mistake spreads points over the three others, so an
    honest weak player would look as if it helped everyone."""
    cols = [f"imm{s}" for s in range(SEATS)]
    if set(cols) <= set(rows.columns) and np.nansum(np.abs(rows[cols].to_numpy(float))) > 0:
        return "imm"
    # rows from elsewhere may lack the true-deal columns: the own-information ones are all there is
    return "dd_delta" if {f"dd_delta{s}" for s in range(SEATS)} <= set(rows.columns) else "delta"


def collusion_table(rows: pd.DataFrame, a: str, b: str, hands: int) -> list[list[dict[str, float | None] | None]]:
    """Cell [actor role][recipient role]: what the actor's decisions did to the recipient on the true deal
    (see :func:`measure`), per hand and per (actor, recipient) player combination, with standard errors.
    A player's effect on themselves is left out: this is about the others."""
    import pandas as pd

    actor = _roles(rows["player"], a, b)
    col = measure(rows)
    seat = rows["seat"].to_numpy()
    # the hands as codes in their sorted order (a group's per-hand sums come out in the order of the hand ids)
    hand = pd.factorize(rows["hand_id"], sort=True)[0].astype(np.int64)
    # every (decision, other seat) link, seat by seat, as one frame of links would hold them
    keep = [seat != s for s in range(SEATS)]
    actors = np.concatenate([actor[k] for k in keep])
    to = np.concatenate([_roles(rows[f"p{s}"], a, b)[k] for s, k in enumerate(keep)])
    delta = np.concatenate([np.nan_to_num(rows[f"{col}{s}"].to_numpy(float))[k] for s, k in enumerate(keep)])
    # per (actor, recipient, hand): one integer key, so pandas adds each group's links in their order, as before
    span = int(hand.max()) + 1 if len(hand) else 1
    cell = actors * 3 + to
    hands_of = np.concatenate([hand[k] for k in keep])
    per_hand = pd.Series(delta, copy=False).groupby(cell * span + hands_of).sum()
    keys = per_hand.index.to_numpy()
    sums_of = per_hand.to_numpy(float)
    # (actor player, recipient player) combinations in one hand: two "others" on either side
    combos = {(A, B): 1, (B, A): 1, (A, OTHERS): 2, (B, OTHERS): 2, (OTHERS, A): 2, (OTHERS, B): 2, (OTHERS, OTHERS): 2}
    cells: list[list[dict[str, float | None] | None]] = [[None] * 3 for _ in range(3)]
    for (i, j), k in combos.items():
        d = delta[cell == i * 3 + j]
        if not len(d) or hands <= 0:
            continue
        lo, hi = np.searchsorted(keys, [(i * 3 + j) * span, (i * 3 + j + 1) * span])
        got = sums_of[lo:hi] / k
        sums = np.zeros(max(hands, len(got)))
        sums[: len(got)] = got  # hands without such a decision count as zero effect
        cells[i][j] = {"sum": float(d.sum()), "n": len(d), "mean": float(d.mean()),
                       "se": clean(float(d.std(ddof=1) / math.sqrt(len(d)))) if len(d) > 1 else None,
                       "per_hand": float(sums.mean()),
                       "se_per_hand": clean(float(sums.std(ddof=1) / math.sqrt(len(sums)))) if len(sums) > 1 else None}
    return cells


def pair_edge(rows: pd.DataFrame, a: str, b: str) -> list[dict[str, Any]]:
    """Per actor: the partner's gain minus the mean of the two opponents', per hand together, exact
    (``imm``, cards) and on the true deal (``dd``, points), both against the average option, with standard
    errors (the pair's own hands' spread) and z = mean / s.e.: the raw per-hand figure the audit's
    ``imm_marginal`` and ``dd_marginal`` signals read (audit.json's ``points_per_hand``), before the room's
    baseline is taken off. Honest play gives about 0; this alone is not calibrated against the room (the audit
    is). A page with the pair's audit entry shows the entry's own figures instead (:func:`entry_edge`: the
    audit's rows need not carry the options the average option is read from)."""
    import pandas as pd

    from analyzer.audit.evidence import edge
    from analyzer.audit.signals import seat_effects

    out = []
    for actor, partner in ((a, b), (b, a)):
        mine = rows[rows["player"].astype(str) == actor]
        hands = int(rows["hand_id"].nunique())
        entry: dict[str, Any] = {"actor": actor, "partner": partner, "hands": hands}
        if mine.empty or hands < 2:
            out.append(entry)
            continue
        eff = seat_effects(mine)
        names = mine[[f"p{s}" for s in range(SEATS)]].astype(str).to_numpy()
        seat = mine["seat"].to_numpy(np.int64)
        pseat = (names == partner).argmax(axis=1)
        for tag, values in (("imm", eff.imm), ("dd", eff.dd_avg)):  # what imm_ and dd_marginal sum, uncentred
            e = pd.Series(edge(np.nan_to_num(values), seat, pseat)).groupby(mine["hand_id"].to_numpy()).sum()
            per = np.zeros(hands)
            per[: len(e)] = e.to_numpy()  # hands without a decision of the actor count as zero
            se = float(per.std(ddof=1) / math.sqrt(hands))
            entry[tag] = {"per_hand": clean(float(per.mean())), "se": clean(se),
                          "z": clean(float(per.mean() / se)) if se > 0 else None}
        out.append(entry)
    return out


def entry_edge(entry: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """:func:`pair_edge`'s figures from an audit entry (the same per-hand quantity, summed by the audit over the
    pair's hands together: ``signals.imm_marginal`` and ``dd_marginal``'s ``points_per_hand``), each ± a typical
    pair's standard error (``se_per_hand``); None when the entry lacks them."""
    signals = entry.get("signals")
    if not isinstance(signals, Mapping):
        return None
    out = []
    for tag in ("ab", "ba"):
        got: dict[str, Any] = {}
        for key, name in (("imm", "imm_marginal"), ("dd", "dd_marginal")):
            d = signals.get(name, {}).get(tag) if isinstance(signals.get(name), Mapping) else None
            if isinstance(d, Mapping) and "points_per_hand" in d:
                got.setdefault("actor", d.get("actor"))
                got.setdefault("partner", d.get("partner"))
                got[key] = {"per_hand": d.get("points_per_hand"), "se": d.get("se_per_hand"), "z": None}
        if "imm" in got or "dd" in got:
            out.append({"hands": entry.get("hands_together"), **got})
    return out or None


def pair_data(a: str, b: str, *, decisions: pd.DataFrame | None = None,
              entry: Mapping[str, Any] | None = None, outcomes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The pair section's data; ``entry`` is the pair's object from audit.json (any extra keys kept); ``outcomes``
    the pair's results together and apart (``analyzer.audit.outcomes.pair_outcomes``) when no entry's case has them."""
    rows = hands_with(decisions, a, b) if decisions is not None and not decisions.empty else None
    hands = int(entry["hands_together"]) if entry and "hands_together" in entry else (
        int(rows["hand_id"].nunique()) if rows is not None else 0)
    if entry:
        evidence = list(entry.get("evidence") or [])
    else:
        from analyzer.audit.evidence import pair_evidence

        evidence = pair_evidence(rows, a, b, top=DERIVED_EVIDENCE) if rows is not None and len(rows) else []
    shown = {k: v for k, v in (entry or {}).items() if k != "evidence"}
    has_rows = rows is not None and len(rows) > 0
    return {"players": [a, b], "hands_together": hands, "entry": shown or None, "evidence": evidence,
            "outcomes": dict(outcomes) if outcomes is not None else None,
            "edge": entry_edge(entry) if entry else (
                pair_edge(rows, a, b) if has_rows and measure(rows) != "delta" else None),
            "table": {"cells": collusion_table(rows, a, b, hands), "measure": measure(rows)} if has_rows else None}


def evidence_hands(pdata: Mapping[str, Any]) -> set[str]:
    """Hand ids the pair's evidence rows point to (the hands the page embeds for the replayer; for ``burst`` the
    first extreme hands of each direction, those listed with their moves)."""
    return {str(e["hand_id"]) for e in pdata["evidence"] if isinstance(e, Mapping) and "hand_id" in e}


def write_pair_report(path: str | os.PathLike[str], a: str, b: str, *, decisions: pd.DataFrame | None = None,
                      entry: Mapping[str, Any] | None = None, records: Iterable[Any] | None = None,
                      lang: str = "en", outcomes: Mapping[str, Any] | None = None) -> None:
    """Write one pair's page; the evidence hands among ``records`` open in the replayer at the decision."""
    pdata = pair_data(a, b, decisions=decisions, entry=entry, outcomes=outcomes)
    ids, hands = hand_store(records or [], decisions, evidence_hands(pdata))
    # the pair page draws tables only (report.js renderPair plots nothing): no plotly.js, a page of kilobytes
    page = render_page("pair", lang=lang, stores={"pair": [pdata], "hand": hands},
                       data={"hand_ids": ids, "player_ids": [a, b], "default_view": ["pair", 0], "suspects": [a, b]})
    write_page(path, page)
