"""What sitting together did to a pair's results: combined score per hand and 通 rate, together vs apart,
against the room's baseline (the case file's outcome figures)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

SEATS = 4
#: The seating frame the audit keeps per hand: who sat where, each seat's score and whether it went 通.
SEATING_COLUMNS = ("hand_id", "p0", "p1", "p2", "p3", "score0", "score1", "score2", "score3",
                   "tong0", "tong1", "tong2", "tong3")


def outcome_row(item: Any) -> tuple[Any, ...]:
    """One hand's seating row: players, scores and 通 flags (from the replay, else the recorded result;
    NaN when neither has them, e.g. a variant without scores)."""
    rec = item.record
    players = [str(p) for p in list(rec.players)[:SEATS]]
    out = getattr(getattr(item, "check", None), "outcome", None)
    res = out if out is not None and getattr(out, "scores", None) is not None else getattr(rec, "result", None)
    scores = list(getattr(res, "scores", None) or [])[:SEATS] if res is not None else []
    tong = getattr(res, "tong", None) if res is not None else None
    if len(scores) != SEATS:
        scores = [math.nan] * SEATS
    actions = getattr(rec, "actions", None)
    if tong is None and actions:  # a logged result without 通: a seat went 通 when it covered no card (the replay's rule)
        covered = {a.seat for a in actions if a.kind == "cover"}
        tong = [s for s in range(SEATS) if s not in covered]
    flags = [math.nan] * SEATS if tong is None else [float(s in set(tong)) for s in range(SEATS)]
    return (str(rec.hand_id), *players, *map(float, scores), *flags)


def _long(seating: pd.DataFrame) -> pd.DataFrame:
    """One row per hand and seat: hand_id, player, score, tong."""
    parts = []
    for s in range(SEATS):
        parts.append(pd.DataFrame({
            "hand_id": seating["hand_id"].to_numpy(), "player": seating[f"p{s}"].astype(str).to_numpy(),
            "score": seating[f"score{s}"].to_numpy(np.float64) if f"score{s}" in seating else np.nan,
            "tong": seating[f"tong{s}"].to_numpy(np.float64) if f"tong{s}" in seating else np.nan}))
    return pd.concat(parts, ignore_index=True)


def room_outcomes(seating: pd.DataFrame) -> dict[str, float | None]:
    """The room's baselines: mean and spread of two players' combined score in one hand, and the 通 rate."""
    if seating.empty or "score0" not in seating:
        return {"pair_score_mean": None, "pair_score_sd": None, "tong_rate": None}
    sc = seating[[f"score{s}" for s in range(SEATS)]].to_numpy(np.float64)
    combos = np.concatenate([sc[:, i] + sc[:, j] for i in range(SEATS) for j in range(i + 1, SEATS)])
    combos = combos[np.isfinite(combos)]
    tong = seating[[f"tong{s}" for s in range(SEATS)]].to_numpy(np.float64).ravel()
    tong = tong[np.isfinite(tong)]
    return {"pair_score_mean": _f(combos.mean()) if len(combos) else None,
            "pair_score_sd": _f(combos.std(ddof=1)) if len(combos) > 1 else None,
            "tong_rate": _f(tong.mean()) if len(tong) else None}


def _f(x: float, digits: int = 4) -> float | None:
    return round(float(x), digits) if math.isfinite(float(x)) else None


def _mean_se(x: np.ndarray) -> tuple[float | None, float | None]:
    x = x[np.isfinite(x)]
    if not len(x):
        return None, None
    return _f(x.mean()), (_f(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else None)


def pair_outcomes(seating: pd.DataFrame, a: str, b: str, room: dict[str, float | None] | None = None
                  ) -> dict[str, Any]:
    """The pair's results together and apart, with the room's baseline for as many hands.

    ``together``: a's score + b's score per hand they sat together (honest pairs average the room's
    mean, 0 in a zero-sum room); ``apart``: a's mean score per hand without b plus b's without a.
    ``tong_rate``: share of the two players' hands that went 通, together and apart.
    ``typical``: the room's mean of two players' combined score, ± its spread over as many hands.
    """
    room = room_outcomes(seating) if room is None else room
    names = seating[[f"p{s}" for s in range(SEATS)]].astype(str)
    together_ids = set(seating["hand_id"][((names == a).any(axis=1) & (names == b).any(axis=1)).to_numpy()])
    long = _long(seating)
    mine = long[long["player"].isin([a, b])]
    with_other = mine["hand_id"].isin(together_ids).to_numpy()
    tog = mine[with_other].groupby("hand_id")["score"].sum(min_count=2).to_numpy(np.float64)
    n = len(tog)
    t_mean, t_se = _mean_se(tog)
    apart_means, apart_var, apart_n = [], [], 0
    for p in (a, b):
        x = mine[(mine["player"] == p).to_numpy() & ~with_other]["score"].to_numpy(np.float64)
        x = x[np.isfinite(x)]
        apart_n += len(x)
        if len(x) > 1:
            apart_means.append(x.mean())
            apart_var.append(x.var(ddof=1) / len(x))
    apart = _f(sum(apart_means)) if len(apart_means) == 2 else None
    apart_se = _f(math.sqrt(sum(apart_var))) if len(apart_var) == 2 else None
    tong_t = mine[with_other]["tong"].to_numpy(np.float64)
    tong_a = mine[~with_other]["tong"].to_numpy(np.float64)
    sd = room.get("pair_score_sd")
    return {
        "hands_together": n, "hands_apart": int(apart_n),
        "score_together": t_mean, "score_together_se": t_se, "score_apart": apart, "score_apart_se": apart_se,
        "typical": room.get("pair_score_mean"),
        "typical_sd": _f(sd / math.sqrt(n)) if sd is not None and n else None,
        "tong_together": _mean_se(tong_t)[0], "tong_apart": _mean_se(tong_a)[0], "tong_room": room.get("tong_rate"),
    }
