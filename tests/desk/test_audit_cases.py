"""``analyzer audit --cases DB``: the audit records its look in the cases database, as ``analyzer cases record`` would."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
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


def test_without_cases_the_audit_says_nothing_of_changes(tmp_path: Path) -> None:
    room = _room(tmp_path)
    r = run_cli("audit", str(room), "--out", str(tmp_path / "a"), "--jobs", "1")
    assert r.exit_code == 1, r.output
    assert "cases:" not in r.output and "since the last look" not in r.output
    assert "look-changes" not in (tmp_path / "a" / "report.html").read_text(encoding="utf-8")


def test_a_failed_write_records_no_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look is committed only once the audit's files are in place: a report that cannot be written (a full disk)
    leaves the folder and the database as they were; the audit run again records the look, leading with it."""
    import analyzer.commands.audit as command

    room, db = _room(tmp_path), tmp_path / "cases.sqlite"
    real = command._report

    def full(*args: object, **kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(command, "_report", full)
    r = run_cli("audit", str(room), "--out", str(tmp_path / "a"), "--jobs", "1", "--cases", str(db))
    assert r.exit_code != 0 and not (tmp_path / "a" / "audit.json").exists()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM looks").fetchone() == (0,)
    monkeypatch.setattr(command, "_report", real)
    r = run_cli("audit", str(room), "--out", str(tmp_path / "a"), "--jobs", "1", "--cases", str(db))
    assert r.exit_code == 1 and r.stdout.startswith("cases: look 1, 1 new, 0 reopened, 0 changed"), r.output
    page = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert page.count('data-role="change"') == 2 and "p07 + p08" in page
