"""The audit report (``DIR/report.html``): ranked pairs, flagged first, with pair, player and hand sections."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzer.report.common import clean, render_page, write_page
from analyzer.report.hand import hand_store
from analyzer.report.pair import TABLE_COLUMNS, evidence_hands, pair_data
from analyzer.report.player import SECTION_COLUMNS, Room, player_data

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.audit.rows import ReportRows

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


def _together(pairs: list[tuple[str, str]]) -> Callable[[pd.DataFrame], np.ndarray]:
    """Rows of the hands where one of ``pairs`` sat together (``report.pair.hands_with`` of any of them)."""
    import pandas as pd

    names = sorted({x for pair in pairs for x in pair})

    def mask(frame: pd.DataFrame) -> np.ndarray:
        # the seats' names as codes of the pairs' players (-1: anyone else), so each player's test compares
        # small ints, not every row's four names once per player
        index = pd.Index(names, dtype=object)
        seats = np.stack([index.get_indexer(frame[f"p{s}"].to_numpy(object)) for s in range(4)], axis=1)
        at = {name: (seats == k).any(axis=1) for k, name in enumerate(names)}
        out = np.zeros(len(frame), bool)
        for a, b in pairs:
            out |= at[a] & at[b]
        return out
    return mask


def write_audit_report(out_dir: str | os.PathLike[str], audit: Mapping[str, Any], *,
                       decisions: pd.DataFrame | ReportRows | None = None, records: Iterable[Any] | None = None,
                       lang: str = "en", players: pd.DataFrame | None = None) -> Path:
    """Write ``out_dir/report.html`` from the audit.json object ``analyzer audit`` made (its schema:
    :mod:`analyzer.audit.schema`); returns the path.

    ``decisions`` (the decision rows: a frame, or the audit's view of its spill, ``Audit.report_rows``) adds
    collusion tables and player sections; ``records`` (or validate's Checked items, streamed) lets the evidence
    hands of the top pairs open in the replayer. ``players``: the player table the audit computed from these
    rows (``Audit.players``), so the page does not compute it again (the same figures either way: the table
    of players with decisions does not depend on the seating; needed with a spill). Of the rows, the page reads
    the options and reasons only of the rows it shows (``analysis.reasons.shown_rows``), so the others may have
    been emptied; and it reads them a player at a time (the player sections), a few hands at a time (the top
    pairs' hands together, the evidence hands) and the room's three figure columns (``Room.of_rows``), so a
    spill's rows are never all in memory.
    """
    import pandas as pd

    from analyzer.audit.rows import FrameRows

    rows = FrameRows(decisions) if isinstance(decisions, pd.DataFrame) else decisions
    has_rows = rows is not None and len(rows) > 0 and not (isinstance(decisions, pd.DataFrame) and decisions.empty)
    pairs = sorted(audit["pairs"], key=_rank_key)
    top = {i for i, p in enumerate(pairs) if p["verdict"] != "clear"} | set(range(min(DETAIL_PAIRS, len(pairs))))
    # the rows of the top pairs' hands together, read once for all their tables (the columns they read)
    together = (rows.where(_together([(str(pairs[i]["players"][0]), str(pairs[i]["players"][1])) for i in sorted(top)]),
                           columns=list(TABLE_COLUMNS))
                if has_rows and rows is not None and top else None)
    details = [pair_data(str(p["players"][0]), str(p["players"][1]), entry=p,
                         decisions=together if i in top else None) for i, p in enumerate(pairs)]
    del together
    wanted: set[str] = set().union(*(evidence_hands(details[i]) for i in top)) if top else set()
    shown = rows.where(lambda f: f["hand_id"].isin(wanted).to_numpy()) if has_rows and rows is not None else None
    hand_ids, hands = hand_store(records or [], shown, wanted)
    player_ids: list[str] = []
    sections: list[dict[str, Any]] = []
    if has_rows and rows is not None:
        room = Room.of_rows(rows, table=players)
        # each player's rows in turn (a frame of one player's rows while its section is built)
        made: dict[Any, dict[str, Any]] = {}
        wanted_players = {str(p["player"]) for p in audit["players"]}
        for part in rows.parts(columns=list(SECTION_COLUMNS)):
            pid = part["player"].iloc[0]
            if pid in wanted_players:
                made[pid] = player_data(part, str(pid), room=room, max_points=AUDIT_PLAYER_POINTS)
        for pid in (str(p["player"]) for p in audit["players"]):
            if pid in made:
                player_ids.append(pid)
                sections.append(made[pid])
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
