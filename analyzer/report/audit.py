"""The audit report (``DIR/report.html``): ranked pairs, flagged first, with pair, player and hand sections."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzer.report.changes import lead_with_changes
from analyzer.report.common import clean, render_page, write_page
from analyzer.report.findings import page_games
from analyzer.report.hand import hand_store
from analyzer.report.pair import evidence_hands, pair_data
from analyzer.report.player import Room, player_section
from analyzer.report.room_pass import Piece, Plan, Reading, joined, read_players, start_reading

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.audit.rows import PlayerSpill, ReportRows, SpilledRows

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


#: The ``lookalike-ids`` warnings of audit.json the page lists (it says how many there are in all).
LOOKALIKES_SHOWN = 20


def alarm_line(audit: Mapping[str, Any]) -> dict[str, Any] | None:
    """The alarm as a horizontal line ``{"score": x}`` at the score a p-value of alpha gives (audit.json's
    ``alarm.score``), with its ``alpha`` and ``fdr`` when audit.json gives them (the tiers' help says a laxer alarm
    than the default as the chance it allows); None when there is none."""
    alarm = audit.get("alarm", {})
    score = _number(alarm.get("score"))
    if score is None:
        return None
    given = {k: _number(alarm.get(k)) for k in ("alpha", "fdr")}
    return {"score": score, **{k: v for k, v in given.items() if v is not None}}


def _players(audit: Mapping[str, Any]) -> list[str]:
    """The room's players: audit.json's ``players`` table, or (the nightly look's result has none) the players of
    its pairs."""
    if "players" in audit:
        return [str(p["player"]) for p in audit["players"]]
    return sorted({str(x) for p in audit["pairs"] for x in p["players"]})


#: A nightly look's pair figures the page shows beside the fixed-sample ones (``audit.ledger.Look.summary``).
E_VALUE_KEYS = ("log10_e", "max_log10_e", "flagged_day")


def _e_values(pair: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _number(pair[k]) if k != "flagged_day" else pair[k] for k in E_VALUE_KEYS if k in pair}


def _room(rows: ReportRows, pieces: list[Piece], table: pd.DataFrame | None) -> Room:
    """The room's figures from the players' pieces (a spill's: every row's regret put back in the rows' order, as
    ``SpilledRows.regret`` does), or from the frame's columns (a frame's, and the player table when not given)."""
    import pandas as pd

    from analyzer.audit.rows import FrameRows, SpilledRows

    if isinstance(rows, FrameRows):
        return Room.of_rows(rows, table=table)
    if table is None:
        raise ValueError("the room of spilled rows needs the audit's player table")
    assert isinstance(rows, SpilledRows)
    regret = np.full(len(rows), np.nan, rows.spill.dtype("regret"))
    for p in pieces:
        regret[p.at] = p.regret
    by = pd.concat([p.by_player for p in pieces]).sort_index() if pieces else pd.DataFrame({"mean": [], "size": []})
    timed = [p.timed for p in pieces if p.timed is not None]
    return Room.of_parts(table, pd.Series(regret, name="regret", copy=False), by,
                         pd.concat(timed, ignore_index=True) if timed else None)


def _add_reasons(rows: SpilledRows, facts: list[dict[str, Any]]) -> None:
    """Spilled players' largest deviations with their reasons (the rows shown carry them), as their sections read
    them from the rows."""
    import pandas as pd

    if not facts:
        return
    at = np.concatenate([f["worst_at"] for f in facts])
    got = rows.texted(pd.DataFrame(index=pd.Index(at)), ["reasons"])
    if "reasons" not in got:
        return
    reasons = iter(got["reasons"].tolist())
    for f in facts:
        f["worst"] = [{**w, "reasons": str(next(reasons) or "")} for w in f["worst"]]


def _ranked(audit: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], set[int]]:
    """The pairs in the page's order and the places of those shown in detail (not clear, or among the first
    :data:`DETAIL_PAIRS`)."""
    pairs = sorted(audit["pairs"], key=_rank_key)
    return pairs, {i for i, p in enumerate(pairs) if p["verdict"] != "clear"} | set(range(min(DETAIL_PAIRS, len(pairs))))


def _plan(audit: Mapping[str, Any]) -> Plan:
    """What the page reads of each player's rows: from audit.json's ``pairs`` (their evidence) and ``players``."""
    pairs, top = _ranked(audit)
    return Plan(players=frozenset(str(p["player"]) for p in audit["players"]),
                pairs=tuple((str(pairs[i]["players"][0]), str(pairs[i]["players"][1])) for i in sorted(top)),
                hands=frozenset(set().union(*(evidence_hands({"evidence": list(pairs[i].get("evidence") or [])})
                                              for i in top)) if top else set()),
                max_points=AUDIT_PLAYER_POINTS)


def read_ahead(entries: Mapping[str, Any], spill: PlayerSpill) -> Reading | None:
    """The page's reads of the players' spill started on its Dask workers now (when they share it), from the
    audit's pairs entries and players' names (``audit.core.OnEntries``): :func:`write_audit_report` given the result as
    ``ahead`` gathers them. None when the spill is read here."""
    return start_reading(spill, _plan(entries))


def write_audit_report(out_dir: str | os.PathLike[str], audit: Mapping[str, Any], *,
                       decisions: pd.DataFrame | ReportRows | None = None, records: Iterable[Any] | None = None,
                       lang: str = "en", players: pd.DataFrame | None = None, ahead: Reading | None = None,
                       changes: Mapping[str, Any] | None = None) -> Path:
    """Write ``out_dir/report.html`` from the audit.json object ``analyzer audit`` made (its schema:
    :mod:`analyzer.audit.schema`); returns the path.

    ``decisions`` (the decision rows: a frame, or the audit's view of its spill, ``Audit.report_rows``) adds
    collusion tables and player sections; ``records`` (or validate's Checked items, streamed) lets the evidence
    hands of the top pairs open in the replayer. ``players``: the player table the audit computed from these
    rows (``Audit.players``), so the page does not compute it again (the same figures either way: the table
    of players with decisions does not depend on the seating; needed with a spill). Of the rows, the page reads
    the options and reasons only of the rows it shows (``analysis.reasons.shown_rows``), so the others may have
    been emptied; and it reads each player's rows once (:func:`analyzer.report.room_pass.read_players`: on the Dask
    workers when they share the spill), keeping of them the player's section, its regret and think times (the room's
    figures) and its rows in the top pairs' hands together and in the evidence hands, so a spill's rows are never
    all in memory. ``ahead``: those reads started earlier (:func:`read_ahead`), used when they are of this page's plan.
    ``changes``: what the look recorded in a cases database opened, reopened and changed (the page leads with it).
    """
    import pandas as pd

    from analyzer.audit.rows import FrameRows, SpilledRows

    rows = FrameRows(decisions) if isinstance(decisions, pd.DataFrame) else decisions
    has_rows = rows is not None and len(rows) > 0 and not (isinstance(decisions, pd.DataFrame) and decisions.empty)
    pairs, top = _ranked(audit)
    player_ids: list[str] = []
    sections: list[dict[str, Any]] = []
    together = shown = None
    if has_rows and rows is not None:
        # each player's rows read once (on the Dask workers when they share the audit's spill): its section's own
        # figures, the room's regret and think times, its rows in the top pairs' hands together and in the evidence
        # hands (the evidence of a pair with its audit entry is the entry's: known before any row is read)
        pieces = list(read_players(rows, _plan(audit), ahead))
        together = joined([p.together for p in pieces])
        shown = joined([p.shown for p in pieces])
        if isinstance(rows, SpilledRows):  # the texts of the rows shown: the spill's pieces leave them out
            shown = rows.texted(shown)
        room = _room(rows, pieces, players)
        facts = {p.player: (p.facts, p.regret) for p in pieces if p.facts is not None}
        if isinstance(rows, SpilledRows):  # the reasons of the players' largest deviations, from the rows shown
            _add_reasons(rows, [f for f, _ in facts.values()])
        for pid in (str(p["player"]) for p in audit["players"]):
            if pid in facts:
                mine, regret = facts[pid]
                player_ids.append(pid)
                sections.append(player_section(mine, pd.Series(regret, copy=False), room))
        del pieces, facts
        # the top pairs' tables compare names and group by hand: as codes, once for every pair
        for c in ("hand_id", "player", *(f"p{s}" for s in range(4))):
            if c in together:
                together[c] = together[c].astype("category")
    details = [pair_data(str(p["players"][0]), str(p["players"][1]), entry=p,
                         decisions=together if i in top else None) for i, p in enumerate(pairs)]
    del together
    wanted: set[str] = set().union(*(evidence_hands(details[i]) for i in top)) if top else set()
    hand_ids, hands = hand_store(records or [], shown, wanted)
    overview = {
        "hands": audit["hands"], "players": _players(audit),
        "alarm": alarm_line(audit),
        "pairs": [{"i": i, "players": [str(x) for x in p["players"]], "hands_together": p["hands_together"],
                   "score": _number(p["score"]), "z": _number(p.get("z")), "p_value": p["p_value"],
                   "log10_p": _number(p["log10_p"]), "q_value": p["q_value"], "log10_q": _number(p.get("log10_q")),
                   "flagged": p["flagged"],
                   "verdict": p["verdict"], **_e_values(p)}
                  for i, p in enumerate(pairs)],
    }
    nightly = audit.get("nightly")
    if nightly:  # the nightly look's ledger: its days and the window read (the pairs carry their e-values)
        overview["nightly"] = {"days": [{k: d.get(k) for k in ("day", "date", "hands", "parts")}
                                        for d in nightly.get("days", [])],
                               "window": nightly.get("window") or {},
                               **{k: _number(audit.get("alarm", {}).get(k)) for k in ("e_threshold", "fdr")}}
    groups = audit.get("groups") or []
    if groups:  # players joined by marked pairs, each pair linked to its place in the page's order
        place = {tuple(sorted(str(x) for x in p["players"])): i for i, p in enumerate(pairs)}
        overview["groups"] = [{**g, "pairs": [{**p, "i": place.get(tuple(sorted(str(x) for x in p["players"])))}
                                              for p in g["pairs"]]} for g in groups]
    skipped = {str(g): int(n) for g, n in (audit.get("skipped_hands") or {}).items() if isinstance(n, int) and n > 0}
    if skipped:  # valid hands of games the pair audit does not read (信阳黑七; 借牌 has its own section)
        overview["skipped_hands"] = skipped
    games = page_games(audit)
    if games:  # the other games' findings (借牌's borrows and lending), or what was checked of a game validated only
        overview["games"] = games
    looks = audit.get("lookalike_ids") or {}
    if looks.get("count"):  # ids that look like an earlier hand's: the first few, as the validation page shows problems
        overview["lookalikes"] = {"count": looks["count"], "shown": [
            {k: p.get(k) for k in ("file", "line", "hand_id", "seat", "player", "code", "message")}
            for p in looks.get("shown", [])[:LOOKALIKES_SHOWN]]}
    page = render_page("audit", lang=lang, plotly=True, stores={"pair": details, "player": sections, "hand": hands},
                       data={"audit": overview, "hand_ids": hand_ids, "player_ids": player_ids})
    page = lead_with_changes(page, changes)
    path = Path(out_dir) / "report.html"
    write_page(path, page)
    return path
