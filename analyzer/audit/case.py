"""The case file of one pair, as data the report puts into words: the signal that fired, in its own units
against a typical pair of the room; one row per signal and direction; the outcome figures.

Sentences are not built here: each piece names a label key (``lead_<kind>``, ``meaning_<signal>``) and
its arguments, so the report says it in the page's language.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analyzer.analysis.dist import norm_logsf
from analyzer.audit.calibrate import DEFAULT_ALPHA
from analyzer.audit.evidence import DEFAULT_TOP
#: Signals of the case file's table: (signal, column prefix of its per-direction z, unit of its effect).
ROWS = (
    ("favour", "favour_{t}_z", None),
    ("imm_marginal", "imm_marginal_{t}_z_adj", "cards"),
    ("dd_marginal", "dd_marginal_{t}_z_adj", "points"),
    ("pooled", "pooled_{t}_z_adj", "points"),
    ("marginal", "marginal_{t}_z_adj", "points"),
    ("burst", "burst_{t}_z", "hands"),
    ("think", "think_{t}_z_adj", "ratio"),
)


def p_text(p: float, log10: float | None = None) -> str:
    """A p- or q-value for people, two significant digits (``8.1e-99``); one that underflowed to 0 from its log10
    (``1.2e-452``), never ``0``."""
    if p > 0 or log10 is None or not math.isfinite(log10):
        return f"{p:.2g}"
    exp = math.floor(log10)
    mant = float(f"{10 ** (log10 - exp):.2g}")
    if mant >= 10:  # 9.96 rounds up to 10
        mant, exp = mant / 10, exp + 1
    return f"{mant:g}e{exp}"


def _f(x: Any, digits: int = 2) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return round(v, digits) if math.isfinite(v) else None


def _tags(row: pd.Series) -> list[tuple[str, str, str]]:
    return [("ab", str(row["a"]), str(row["b"])), ("ba", str(row["b"]), str(row["a"]))]


def direction_z(row: pd.Series, signal: str) -> tuple[float, float]:
    """The signal's (a -> b, b -> a) z's; codev (undirected) and unknown signals read favour's."""
    pattern = {s: c for s, c, _ in ROWS}.get(signal, "favour_{t}_z")
    return tuple(float(np.nan_to_num(row.get(pattern.format(t=t), 0.0))) for t in ("ab", "ba"))  # type: ignore[return-value]


def signal_rows(row: pd.Series) -> list[dict[str, Any]]:
    """One row per signal and direction: effect per hand (in its unit, beyond the room's baseline) with
    its standard error, the z, the one-sided p of that z, and the signal's p over both directions."""
    out = []
    for name, pattern, unit in ROWS:
        for tag, actor, partner in _tags(row):
            z = row.get(pattern.format(t=tag))
            if z is None or not np.isfinite(z):
                continue
            per_hand = se = None
            if unit in ("cards", "points"):
                per_hand, se = row.get(f"{name}_{tag}_per_hand"), row.get(f"{name}_{tag}_se_per_hand")
            elif unit == "hands":
                per_hand, se = row.get(f"burst_{tag}_above"), row.get(f"burst_{tag}_expected")
            elif unit == "ratio":
                per_hand = row.get(f"think_{tag}_ratio")
                if per_hand is None or not np.isfinite(per_hand):  # times that cannot be read: no row, not "x1.00"
                    continue
            logp = float(norm_logsf(float(z)))
            out.append({"signal": name, "actor": actor, "partner": partner, "unit": unit,
                        "per_hand": _f(per_hand, 3), "se": _f(se, 3), "z": _f(z),
                        "log10_p": _f(logp / math.log(10), 3), "p": float(f"{math.exp(logp):.3g}"),
                        "signal_p": float(f"{float(row.get(f'{name}_p', 1.0)):.3g}")})
    cd = row.get("codev_observed")
    if cd is not None:
        out.append({"signal": "codev", "actor": str(row["a"]), "partner": str(row["b"]), "unit": "hands",
                    "per_hand": _f(cd, 0), "se": _f(row.get("codev_expected"), 2), "z": _f(row.get("codev_z")),
                    "log10_p": _f(row.get("codev_logp", 0.0) / math.log(10), 3),
                    "p": float(f"{float(row.get('codev_p', 1.0)):.3g}"),
                    "signal_p": float(f"{float(row.get('codev_p', 1.0)):.3g}")})
    return out


def burst_look(row: pd.Series) -> str:
    """Which of the burst statistic's looks fired for the pair: ``"mean"`` (many hands a little favoured: the
    pair's hands' mean rank among the actor's) or ``"count"`` (a few hands far out), as ``calibrate`` reads them
    (each look over both directions). Tables without the looks' columns: ``"count"``."""
    from analyzer.audit.calibrate import log_combine_directions

    def z(name: str) -> float:
        return float(np.nan_to_num(row.get(name, 0.0)))

    if "burst_ab_z_mean" not in row.index:
        return "count"
    def both(look: str) -> float:
        return float(log_combine_directions(np.array([z(f"burst_ab_z_{look}")]), np.array([z(f"burst_ba_z_{look}")]))[0])

    mean, count = both("mean"), both("count")
    return "mean" if mean <= count else "count"


def _hands_of(row: pd.Series, tag: str) -> int:
    return int(np.nan_to_num(row.get(f"burst_{tag}_hands", row["hands_together"])))


def lead(row: pd.Series) -> dict[str, Any]:
    """The sentence the case file opens with: the signal that fired (``main_signal``), in the direction where it is
    stronger, in its own plain units against a typical pair of the room with as many hands.

    ``key`` names the label (``lead_<told_by>``); ``args`` fill it: actor, partner, then the signal's own figures.
    ``burst`` says its count: how many of the pair's hands together the actor's favour towards the partner passed
    the actor's top ``level`` of his hands with everyone else, against a typical pair's expected count ± its
    spread (``lead_burst``); when the count is not above what a typical pair has (the mean look fired), the hands'
    mean percentile against 50 ± its standard error (``lead_burst_mean``). ``favour`` (the combination of the three
    exact favour signals) says its exact part (cards freed); ``codev`` its count of hands.
    """
    main = str(row["main_signal"])
    z_ab, z_ba = direction_z(row, main)
    tag, actor, partner = _tags(row)[0 if z_ab >= z_ba else 1]
    told = main
    hands = int(row["hands_together"])
    if told in ("favour", "imm_marginal") and not (abs(float(np.nan_to_num(row.get(f"imm_marginal_{tag}_per_hand", 0.0)))) > 0):
        told = "dd_marginal"  # rows without exact immediate effects (another variant): the true-deal rollouts
    if told in ("favour", "imm_marginal", "dd_marginal", "marginal", "pooled"):
        col = "imm_marginal" if told == "favour" else told
        args = [actor, partner, f"{float(row[f'{col}_{tag}_per_hand']):+.2f}",
                f"{float(np.nan_to_num(row[f'{col}_{tag}_se_per_hand'])):.2f}", str(hands)]
    elif told == "burst":
        above, expected = int(np.nan_to_num(row[f"burst_{tag}_above"])), float(np.nan_to_num(row[f"burst_{tag}_expected"]))
        if above > expected:
            args = [actor, partner, str(above), str(_hands_of(row, tag)),
                    f"{100 * (1 - float(row[f'burst_{tag}_level'])):g}", f"{expected:.1f}",
                    f"{float(np.nan_to_num(row.get(f'burst_{tag}_expected_sd', 0.0))):.1f}"]
        else:  # the mean look fired: in the direction where it is stronger
            z_ab, z_ba = (float(np.nan_to_num(row.get(f"burst_{t}_z_mean", 0.0))) for t in ("ab", "ba"))
            tag, actor, partner = _tags(row)[0 if z_ab >= z_ba else 1]
            told = "burst_mean"
            args = [actor, partner, f"{float(row[f'burst_{tag}_mean_percentile']):.0f}", str(_hands_of(row, tag)),
                    f"{float(np.nan_to_num(row[f'burst_{tag}_percentile_se'])):.1f}"]
    elif told == "think":
        args = [actor, partner, f"{float(np.nan_to_num(row[f'think_{tag}_ratio'], nan=1.0)):.2f}", str(hands)]
    elif told == "codev":
        actor, partner = str(row["a"]), str(row["b"])
        args = [actor, partner, str(int(np.nan_to_num(row.get("codev_observed", 0)))), str(hands),
                f"{float(np.nan_to_num(row.get('codev_expected', 0.0))):.1f}"]
    else:
        args = [actor, partner, str(hands)]
    return {"key": f"lead_{told}", "signal": main, "told_by": told, "actor": actor, "partner": partner, "args": args}


def burst_detail(row: pd.Series) -> dict[str, Any]:
    """burst's other look as a detail below the lead: where the pair's hands rank on average among the actor's
    hands towards whoever sat in that seat (``lead_burst_mean``'s figures), in the direction where it is stronger."""
    z_ab, z_ba = (float(np.nan_to_num(row.get(f"burst_{t}_z_mean", 0.0))) for t in ("ab", "ba"))
    tag, actor, partner = _tags(row)[0 if z_ab >= z_ba else 1]
    return {"key": "detail_burst_mean", "args": [
        actor, partner, f"{float(np.nan_to_num(row.get(f'burst_{tag}_mean_percentile', 50.0), nan=50.0)):.0f}",
        str(_hands_of(row, tag)), f"{float(np.nan_to_num(row.get(f'burst_{tag}_percentile_se', 0.0))):.1f}"]}


def extreme_hands(row: pd.Series, actors: list[str]) -> dict[str, list[tuple[str, float]]]:
    """Per evidence actor, burst's extreme hands towards the other (the hands its count counts, largest favour
    first): the pair table's ``burst_<dir>_extreme``."""
    from analyzer.audit.evidence import burst_hands

    return {actor: burst_hands(row.get(f"burst_{tag}_extreme")) for tag, actor, _ in _tags(row) if actor in actors}


def evidence_of(row: pd.Series, actors: list[str]) -> dict[str, Any]:
    """What the pair's evidence is (:func:`analyzer.audit.evidence.pair_evidence`'s keywords): the signal that fired,
    and for ``burst`` its extreme hands by actor."""
    main = str(row["main_signal"])
    return {"signal": main, **({"extreme": extreme_hands(row, actors)} if main == "burst" else {})}


def case_details(row: pd.Series, actors: list[str], top: int = DEFAULT_TOP) -> dict[str, Any]:
    """The case's figures beside the lead: for ``burst``, per evidence direction (``burst_directions``) its count,
    hands, level and a typical pair's count ± its spread, its extreme hands (``extreme``: ``[hand_id, favour]``,
    largest first, as the evidence lists them), how many are listed and how many with their moves (the evidence's:
    ``top`` hands in all); and its other look (``detail``)."""
    if str(row["main_signal"]) != "burst":
        return {}
    from analyzer.audit.evidence import BURST_HANDS, burst_share

    share = burst_share(top, len([t for t, actor, _ in _tags(row) if actor in actors]))
    ways = []
    for tag, actor, partner in _tags(row):
        if actor not in actors:
            continue
        hands = extreme_hands(row, [actor])[actor]
        level = _f(row.get(f"burst_{tag}_level"), 3)
        ways.append({"actor": actor, "partner": partner, "above": len(hands), "hands": _hands_of(row, tag),
                     "level": level, "expected": _f(row.get(f"burst_{tag}_expected"), 1),
                     "expected_sd": _f(row.get(f"burst_{tag}_expected_sd"), 1), "listed": min(len(hands), BURST_HANDS),
                     "with_moves": min(len(hands), share),
                     "extreme": [[hand, round(favour, 2)] for hand, favour in hands[:BURST_HANDS]]})
    return {"burst_directions": ways, "detail": burst_detail(row)}


def verdict_line(row: pd.Series, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """Why the pair has its verdict, as a label key and arguments (score, q, hands to the alarm; and the alarm's
    ``alpha`` when it is above the default, whose false-alarm rate the flagged line would otherwise claim)."""
    more = row.get("hands_to_alarm")
    more_s = "–" if more is None or not np.isfinite(more) else str(int(more))
    key = f"verdict_{row['verdict']}"
    args = [f"{float(row['score']):.2f}", p_text(float(row["q_value"]), row.get("log10_q")), more_s]
    if row["verdict"] == "review" and bool(row.get("corroboration_only", False)):
        key = "verdict_review_corroboration"  # slower together, nothing in the play: review, never the alarm
    elif row["verdict"] == "flagged" and alpha > DEFAULT_ALPHA:  # a laxer alarm than the one measured
        key = "verdict_flagged_alpha"
        args.append(f"{alpha:.2g}")
    return {"key": key, "args": args}
