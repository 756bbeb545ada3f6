"""``analyzer audit --cases DB``: the audit records its look in the cases database, as ``analyzer cases record`` would."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import run_cli
from desk_fixtures import COLLUDERS, ROOM


def _room(tmp_path: Path) -> Path:
    room = tmp_path / "room.jsonl"
    r = run_cli("simulate", "--hands", str(ROOM["hands"]), "--players", str(ROOM["players"]), "--colluders",
                str(ROOM["colluders"]), "--seed", str(ROOM["seed"]), "-o", str(room))
    assert r.exit_code == 0, r.output
    return room


def test_the_audit_records_its_look_once_and_keeps_its_exit_code(tmp_path: Path) -> None:
    room, db = _room(tmp_path), tmp_path / "cases.sqlite"
    r = run_cli("audit", str(room), "--out", str(tmp_path / "a"), "--jobs", "1", "--cases", str(db))
    assert r.exit_code == 1, r.output  # the colluding pair is flagged: 1, as without --cases
    assert "cases: look 1, 1 new" in r.output
    listed = run_cli("cases", "list", "--db", str(db))
    assert listed.exit_code == 0 and all(p in listed.output for p in COLLUDERS), listed.output
    # the same audit recorded again by hand is the same look, not a second one
    again = run_cli("cases", "record", str(tmp_path / "a"), "--db", str(db))
    assert again.exit_code == 0 and "already recorded as look 1" in again.output, again.output
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM looks").fetchone() == (1,)


def test_an_unusable_cases_database_stops_the_audit_before_any_output(tmp_path: Path) -> None:
    room, db = _room(tmp_path), tmp_path / "cases.sqlite"
    db.write_bytes(b"not a database, some other file" * 100)
    before = db.read_bytes()
    r = run_cli("audit", str(room), "--out", str(tmp_path / "a"), "--jobs", "1", "--cases", str(db))
    assert r.exit_code == 2 and "--cases" in r.output, r.output
    assert not (tmp_path / "a").exists() and db.read_bytes() == before
