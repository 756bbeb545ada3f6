"""The audit report (``DIR/report.html``): ranked pairs, flagged first, with pair, player and hand sections."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.report.common import clean, render_page, write_page
from analyzer.report.hand import hand_store
from analyzer.report.pair import evidence_hands, pair_data
from analyzer.report.player import Room, player_data

if TYPE_CHECKING:
    import pandas as pd

#: Pairs (beyond the flagged ones) whose collusion table is computed and evidence hands embedded;
#: the rest keep their audit entry only, so a big room's page stays small and opens fast.
DETAIL_PAIRS = 20
#: Think-time points per player section on the audit page (the player page shows more).
AUDIT_PLAYER_POINTS = 300


def _number(x: Any) -> float | None:
    return clean(float(x)) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


#: Verdicts in the order the page lists them.
VERDICT_ORDER = {"flagged": 0, "review": 1, "clear": 2}


def _rank_key(pair: Mapping[str, Any]) -> tuple[int, float, float]:
    score = _number(pair["score"])
    effect = _number(pair["effect_size"])
    return (VERDICT_ORDER[pair["verdict"]], -score if score is not None else float("inf"),
            -effect if effect is not None else 0.0)


def alarm_line(audit: Mapping[str, Any]) -> dict[str, Any] | None:
    """The alarm as a horizontal line ``{"score": x}`` at the score a p-value of alpha gives (audit.json's
    ``alarm.score``); None when there is none."""
    score = _number(audit.get("alarm", {}).get("score"))
    return None if score is None else {"score": score}


def write_audit_report(out_dir: str | os.PathLike[str], audit: Mapping[str, Any], *,
                       decisions: pd.DataFrame | None = None, records: Iterable[Any] | None = None,
                       lang: str = "en", players: pd.DataFrame | None = None) -> Path:
    """Write ``out_dir/report.html`` from the audit.json object ``analyzer audit`` made (its schema:
    :mod:`analyzer.audit.schema`); returns the path.

    ``decisions`` (the decision rows) adds collusion tables and player sections; ``records`` (or
    validate's Checked items, streamed) lets the evidence hands of the top pairs open in the replayer.
    ``players``: the player table the audit computed from these rows (``Audit.players``), so the page does
    not compute it again (the same figures either way: the table of players with decisions does not depend
    on the seating). Of the rows, the page reads every row's numbers but the options and reasons only of
    the rows it shows (``analysis.reasons.shown_rows``), so the others may have been emptied (``run_audit(..., slim=True)``).
    """
    pairs = sorted(audit["pairs"], key=_rank_key)
    top = {i for i, p in enumerate(pairs) if p["verdict"] != "clear"} | set(range(min(DETAIL_PAIRS, len(pairs))))
    details = [pair_data(str(p["players"][0]), str(p["players"][1]), entry=p,
                         decisions=decisions if i in top else None) for i, p in enumerate(pairs)]
    wanted: set[str] = set().union(*(evidence_hands(details[i]) for i in top)) if top else set()
    hand_ids, hands = hand_store(records or [], decisions, wanted)
    player_ids: list[str] = []
    sections: list[dict[str, Any]] = []
    if decisions is not None and not decisions.empty:
        room = Room(decisions, table=players)
        # positions by player in one pass (not one scan of the room per player); each player's rows are
        # copied only while its section is built, not all at once
        rows = decisions.groupby("player", sort=False).indices
        for pid in (str(p["player"]) for p in audit["players"]):
            if pid in rows:
                player_ids.append(pid)
                sections.append(player_data(decisions.iloc[rows[pid]], pid, room=room,
                                            max_points=AUDIT_PLAYER_POINTS))
    overview = {
        "hands": audit["hands"], "players": [str(p["player"]) for p in audit["players"]],
        "alarm": alarm_line(audit),
        "pairs": [{"i": i, "players": [str(x) for x in p["players"]], "hands_together": p["hands_together"],
                   "score": _number(p["score"]), "z": _number(p["z"]), "p_value": p["p_value"],
                   "log10_p": _number(p["log10_p"]), "q_value": p["q_value"], "flagged": p["flagged"],
                   "verdict": p["verdict"]}
                  for i, p in enumerate(pairs)],
    }
    page = render_page("audit", lang=lang, plotly=True, stores={"pair": details, "player": sections, "hand": hands},
                       data={"audit": overview, "hand_ids": hand_ids, "player_ids": player_ids})
    path = Path(out_dir) / "report.html"
    write_page(path, page)
    return path
