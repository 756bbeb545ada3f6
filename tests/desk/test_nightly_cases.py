"""The nightly look with ``--cases``: each night's summary leads with what its look changed, recorded with its files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from audit_synth import as_decision_rows, synthetic_room
from conftest import run_cli

from analyzer.analysis.execute import Settings
from analyzer.analysis.store import StoreWriter
from analyzer.desk import cases
from analyzer.desk.db import open_cases

NIGHTS = 3
PAIR = ("p00", "p01")


def _days() -> list[pd.DataFrame]:
    """A synthetic room (16 players, one colluding pair) in the decision rows' schema, cut into nights."""
    df = synthetic_room(players=16, hands=240, colluders=(PAIR,), favour=2.0, seed=3)
    df = as_decision_rows(df)
    ids = list(dict.fromkeys(df["hand_id"]))
    return [df[df["hand_id"].isin([ids[i] for i in c])] for c in np.array_split(np.arange(len(ids)), NIGHTS)]


def _add_day(store: Path, day: pd.DataFrame) -> None:
    ids = list(dict.fromkeys(day["hand_id"]))
    with StoreWriter(store, Settings.of(8, 1, 0)) as w:
        w.add(day, ids, [f"fp-{h}" for h in ids])
        w.commit()


def test_each_night_leads_with_its_looks_changes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    firsts = []
    for night, day in enumerate(_days(), 1):
        _add_day(store, day)
        out = tmp_path / f"night-{night}"
        r = run_cli("audit", "--decisions", str(store), "--out", str(out), "--cases", str(store))
        assert r.exit_code in (0, 1), r.output
        lines = r.stdout.splitlines()
        firsts.append(lines[0])
        assert lines[0].startswith(f"cases: look {night}, ")
        with open_cases(store) as db, db.reading() as c:
            looked = cases.look_changes(c, night)
        listed = [x for x in lines[1:] if x.startswith(("  NEW", "  REOPENED", "  CHANGED"))]
        assert [int(x.split("#")[1].split()[0]) for x in listed] == [ch.case_id for ch in looked.changes]
        assert (out / "audit.json").is_file()
    assert "the first look in this database" in firsts[0] and "since look 1, night-1, " in firsts[1]
    with open_cases(store) as db:
        assert [x["label"] for x in cases.looks(db)] == [f"night-{k}" for k in range(1, NIGHTS + 1)]
        (case,) = [c for c in cases.list_cases(db) if c.members == PAIR]
        assert case.looks == NIGHTS - case.opened_look + 1 and case.level_kind == "log10_e"
