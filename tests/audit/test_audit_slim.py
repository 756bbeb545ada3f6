"""The audit's report from the audit's own player table and rows slimmed to the shown texts (and without the
columns no page reads) is the same page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from report_fixtures import AuditRun

from analyzer.analysis.players import player_table
from analyzer.analysis.reasons import shown_rows
from analyzer.audit.core import SHOWN_ONLY, keep_shown_texts
from analyzer.audit.rows import UNREAD_COLUMNS
from analyzer.report.audit import write_audit_report


def test_slim_rows_and_given_player_table_make_the_same_page(audit_run: AuditRun, tmp_path: Path) -> None:
    full = audit_run.decisions
    (tmp_path / "full").mkdir()
    (tmp_path / "slim").mkdir()
    before = write_audit_report(tmp_path / "full", audit_run.audit, decisions=full, records=audit_run.records)
    slim = full.copy()
    shown = shown_rows(slim, audit_run.audit)
    keep_shown_texts(slim, shown)
    dropped = np.setdiff1d(np.arange(len(slim)), shown)
    assert len(dropped) and len(shown)  # the fixture shows some rows and not all, so both sides are checked
    for col in SHOWN_ONLY:
        empty = slim[col].list.len() == 0 if col == "options" else slim[col] == ""
        assert empty.iloc[dropped].all()
        assert slim[col].iloc[shown].tolist() == full[col].iloc[shown].tolist()
    assert (full["options"].iloc[dropped].list.len() > 0).any()
    # the audit's table is made with the seating (players without decisions get a row too)
    seating = full.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    # the columns the slim audit does not hold are read by no page
    slim = slim.drop(columns=list(UNREAD_COLUMNS))
    after = write_audit_report(tmp_path / "slim", audit_run.audit, decisions=slim, records=audit_run.records,
                               players=player_table(full, seating))
    assert after.read_bytes() == before.read_bytes()


def test_room_think_figures_with_missing_think_times() -> None:
    import pandas as pd
    from audit_synth import synthetic_room

    from analyzer.report.player import DIFFICULTY_BINS, Room

    df = synthetic_room(players=8, hands=60, decisions=4, seed=6)
    df.loc[df.index[::5], "think_ms"] = np.nan  # rows without a think time (logs that lack some)
    room = Room(df, table=pd.DataFrame({"player": sorted(df["player"].unique())}))
    # the figures of the rows with both values, as whole rows dropped would give them
    ok = df.dropna(subset=["think_ms", "difficulty"])
    edges = np.unique(np.quantile(ok["difficulty"], np.linspace(0, 1, DIFFICULTY_BINS + 1)))
    groups = ok.groupby(np.digitize(ok["difficulty"], edges[1:-1]))
    assert room.think is not None and len(ok) < len(df)
    assert room.think["room_x"] == groups["difficulty"].median().tolist()
    assert room.think["room_median"] == (groups["think_ms"].median() / 1000).tolist()
