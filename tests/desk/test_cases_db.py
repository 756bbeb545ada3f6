"""The cases database as a file: migrations by version, files it refuses, writes that are whole transactions (a
killed process mid-look), two writers at once, and the reference page generated from the schema."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT
from desk_fixtures import pair, result

from analyzer.desk import cases, db
from analyzer.desk.db import VERSION, CasesError, open_cases


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("looks", "cases", "case_members", "case_looks", "events")}
    finally:
        conn.close()


def test_a_new_file_is_made_at_the_current_version(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with open_cases(path) as d:
        assert d.conn.execute("PRAGMA user_version").fetchone()[0] == VERSION
        assert d.conn.execute("PRAGMA application_id").fetchone()[0] == db.APPLICATION_ID
        assert d.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(CasesError, match="no cases database"):
        open_cases(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_store_folder_holds_its_database(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    with open_cases(store) as d:
        assert d.path == store / db.STORE_FILE
    assert (store / db.STORE_FILE).is_file()


def write_v1(path: Path) -> None:
    """A file as the version-1 code left it: one look, a flagged pair with a note, a group; no log10_e column."""
    with open_cases(path, version=1) as d:
        assert d.conn.execute("PRAGMA user_version").fetchone()[0] == 1
        with d.writing() as c:
            c.execute("INSERT INTO looks (at, recorded_at, digest, hands, pairs, flagged, review) "
                      "VALUES ('2026-01-01T06:00:00Z', '2026-01-01T06:00:00Z', 'x', 100, 6, 1, 0)")
            c.execute("INSERT INTO cases (kind, subject, opened_look) VALUES ('pair', '[\"a\",\"b\"]', 1)")
            c.execute("INSERT INTO cases (kind, subject, opened_look, status) VALUES ('group', "
                      "'[\"a\",\"b\",\"c\"]', 1, 'dismissed')")
            c.executemany("INSERT INTO case_members VALUES (?, ?)", [(1, "a"), (1, "b"), (2, "a"), (2, "b"), (2, "c")])
            c.execute("INSERT INTO case_looks (case_id, look_id, verdict, hands, score, level, level_kind) "
                      "VALUES (1, 1, 'flagged', 60, 9.0, 9.0, 'score')")
            c.execute("INSERT INTO case_looks (case_id, look_id, verdict, score, level, level_kind) "
                      "VALUES (2, 1, 'review', 4.0, 4.0, 'score')")
            c.execute("INSERT INTO events (case_id, at, who, action, text, look_id) "
                      "VALUES (1, '2026-01-01T07:00:00Z', 'ana', 'note', 'first note', 1)")
        with pytest.raises(sqlite3.IntegrityError):  # version 1 knows no borrow cases
            d.conn.execute("INSERT INTO cases (kind, subject, opened_look) VALUES ('borrow', '[\"x\"]', 1)")


def test_migration_from_version_1_keeps_every_row(tmp_path: Path) -> None:
    """A file of version 1 (pairs and groups only) opens at version 2: every row kept, the new column there, and a
    借牌 borrow case (a kind version 1's CHECK refused) can be recorded."""
    path = tmp_path / "v1.sqlite"
    write_v1(path)
    before = counts(path)
    with open_cases(path) as d:
        assert d.conn.execute("PRAGMA user_version").fetchone()[0] == VERSION
        assert counts(path) == before
        columns = {r[1] for r in d.conn.execute("PRAGMA table_info(case_looks)")}
        assert "log10_e" in columns
        assert d.conn.execute("PRAGMA foreign_key_check").fetchone() is None
        f = cases.show_case(d, "a,b")
        assert [e.text for e in f.events if e.action == "note"] == ["first note"]
        assert [(h.verdict, h.score) for h in f.history] == [("flagged", 9.0)]
        assert cases.show_case(d, 2).summary.status == "dismissed"
        borrow = {"players": [{"player": "x", "hands": 40, "illegal_borrows": 3}]}
        done = cases.record_look(d, result(pair("a", "b", score=10.0), **{"bieqi-borrow": borrow}))
        assert len(done.new) == 1
        (b,) = cases.list_cases(d, kind="borrow")
        assert (b.members, b.level, b.level_kind) == (("x",), 3.0, "count")
        assert len(cases.show_case(d, "a,b").history) == 2


def test_migration_from_version_0_an_empty_file(tmp_path: Path) -> None:
    """An empty file (version 0, as `touch` or a first open left it) is made a cases database."""
    path = tmp_path / "empty.sqlite"
    path.touch()
    with open_cases(path) as d:
        assert d.conn.execute("PRAGMA user_version").fetchone()[0] == VERSION
        assert cases.record_look(d, result(pair("a", "b"))).new == (1,)


def test_a_failed_migration_leaves_the_file_at_its_version(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    write_v1(path)
    broken = {**db.MIGRATIONS, 1: db.MIGRATIONS[1] + "\nALTER TABLE no_such_table ADD COLUMN x;"}
    with pytest.raises(CasesError):
        open_cases(path, migrations=broken)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "log10_e" not in {r[1] for r in conn.execute("PRAGMA table_info(case_looks)")}
    assert conn.execute("SELECT count(*) FROM cases").fetchone()[0] == 2
    conn.close()


def test_a_newer_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    with open_cases(path) as d:
        cases.record_look(d, result(pair("a", "b")))
        d.conn.execute(f"PRAGMA user_version = {VERSION + 1}")
        d.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = digest(path)
    with pytest.raises(CasesError, match=f"schema version {VERSION + 1}, newer than this analyzer's {VERSION}"):
        open_cases(path)
    assert digest(path) == before


@pytest.mark.parametrize("make", ["other-app", "not-sqlite", "folder-file"])
def test_files_that_are_not_a_cases_database(tmp_path: Path, make: str) -> None:
    path = tmp_path / "x.sqlite"
    if make == "other-app":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    elif make == "not-sqlite":
        path.write_bytes(b"this is not a database at all, just some text\n" * 100)
    else:
        path.mkdir()
        (path / db.STORE_FILE).mkdir()  # a store folder whose database is a folder
    before = None if path.is_dir() else digest(path)
    with pytest.raises(CasesError, match="not a cases database|not a file"):
        open_cases(path)
    if before is not None:
        assert digest(path) == before


_KILLER = """
import os, signal, sys, orjson
from analyzer.desk import cases, db
path, result_file, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = db.open_cases(path)
seen = [0]
def trace(statement):
    if statement.startswith("INSERT INTO case_looks"):
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
d.conn.set_trace_callback(trace)
cases.record_look(d, orjson.loads(open(result_file, "rb").read()))
print("recorded")
"""


@pytest.mark.parametrize("kill_at", [1, 2, 3, 0])
def test_a_killed_look_leaves_the_database_as_it_was_or_with_the_whole_look(tmp_path: Path, kill_at: int) -> None:
    """A process recording a look is killed (SIGKILL) after 1, 2 or 3 of its rows were written: the database is as
    before the look; not killed (0): the whole look is there."""
    import orjson

    path = tmp_path / "c.sqlite"
    with open_cases(path) as d:
        cases.record_look(d, result(pair("a", "b"), pair("c", "d")))
    before = counts(path)
    second = tmp_path / "look2.json"
    second.write_bytes(orjson.dumps(result(pair("a", "b", score=9.0), pair("c", "d", score=9.5),
                                           pair("e", "f", score=7.0), hands=300)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", _KILLER, str(path), str(second), str(kill_at)], env=env,
                       capture_output=True, text=True, timeout=120)
    if kill_at:
        assert p.returncode == -9, p.stderr
        assert counts(path) == before
    else:
        assert p.returncode == 0 and "recorded" in p.stdout, p.stderr
        after = counts(path)
        assert after["looks"] == before["looks"] + 1 and after["cases"] == 3 and after["case_looks"] == 5
    with open_cases(path) as d:  # usable afterwards: the same look recorded now is whole
        done = cases.record_look(d, orjson.loads(second.read_bytes()))
        assert done.already == (kill_at == 0)
        assert d.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert counts(path)["case_looks"] == 5


def test_a_second_writer_waits_then_gives_up_having_changed_nothing(tmp_path: Path) -> None:
    """Another process holds the write lock: a writer with a short busy timeout gets CasesError naming the file, and
    the database is unchanged; a reader is not blocked."""
    path = tmp_path / "c.sqlite"
    with open_cases(path) as d:
        cases.record_look(d, result(pair("a", "b")))
    before = counts(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with open_cases(path, timeout=0.2) as d:
            with pytest.raises(CasesError, match="being written by another process"):
                cases.record_look(d, result(pair("a", "b", score=12.0)))
            with pytest.raises(CasesError, match="being written by another process"):
                cases.decide(d, 1, "note", "ana", "hello")
            assert [c.case_id for c in cases.list_cases(d)] == [1]  # reading goes on (WAL)
    finally:
        holder.rollback()
        holder.close()
    assert counts(path) == before


def test_a_second_writer_goes_on_when_the_first_ends_within_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with open_cases(path) as d:
        cases.record_look(d, result(pair("a", "b")))
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)  # committed by the timer's thread
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO events (case_id, at, who, action, text) VALUES (1, '2026-01-01T00:00:00Z', 'x', "
                   "'note', 'from the first writer')")
    release = threading.Timer(0.5, holder.commit)
    start = time.monotonic()
    release.start()
    try:
        with open_cases(path, timeout=30) as d:
            cases.decide(d, 1, "note", "ana", "from the second writer")
            waited = time.monotonic() - start
            notes = [e.text for e in cases.show_case(d, 1).events if e.action == "note"]
    finally:
        release.join()
        holder.close()
    assert waited >= 0.4  # it waited for the first writer's commit
    assert notes == ["from the first writer", "from the second writer"]


def test_the_reference_page_is_the_schemas() -> None:
    """docs/reference/cases.md is what `python -m analyzer.publish` writes from the schema, and it describes every
    table and column a fresh database has."""
    from analyzer.publish import cases_page

    page = ROOT / "docs" / "reference" / "cases.md"
    assert page.read_text(encoding="utf-8") == cases_page()
    conn = sqlite3.connect(":memory:")
    for v in range(VERSION):
        for statement in db._statements(db.MIGRATIONS[v]):
            conn.execute(statement)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert sorted(tables) == sorted(db.DOCS)
    for t in tables:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({t})")]
        assert sorted(columns) == sorted(db.DOCS[t][1]), t
        for c in columns:
            assert f"| `{c}` |" in cases_page()
