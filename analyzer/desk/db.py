"""The cases database: one SQLite file, its schema migrated by version, its writes whole transactions.

A database is marked as ours by ``PRAGMA application_id`` and versioned by ``PRAGMA user_version``: opening one at an
earlier version applies the migrations up to :data:`VERSION` inside one transaction (a failure or a kill leaves it at
the version it had); one at a later version is refused, so an older analyzer never writes a newer file's tables.
The file runs in SQLite's write-ahead-log mode, so readers (``analyzer cases list``, the review page) never wait for a
writer; a second writer waits up to the busy timeout, then gets :class:`CasesError` and has changed nothing.

docs/reference/cases.md is generated from the schema a fresh database has (:func:`reference_markdown`, written by
``python -m analyzer.publish``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

#: ``PRAGMA application_id`` of a cases database (the bytes "bqCS"): another program's SQLite file is not read as ours.
APPLICATION_ID = 0x62714353
#: The schema version this code writes (``PRAGMA user_version``).
VERSION = 2
#: The file's name inside a decision store's folder: a leading underscore, so pyarrow and pandas reading the store as a
#: dataset (``pd.read_parquet(STORE)``) skip it, as they skip ``_common_metadata``.
STORE_FILE = "_cases.sqlite"
#: Seconds a writer waits for another process' write to end before it gives up (SQLite's busy timeout).
BUSY_TIMEOUT = 10.0


class CasesError(Exception):
    """A cases database that cannot be used (not ours, newer than this code, locked, missing) or a decision that cannot
    be made (an unknown case, a dismissal without a reason): exit 2 in the commands."""


_V1 = """
CREATE TABLE looks (
    look_id     INTEGER PRIMARY KEY,
    at          TEXT    NOT NULL,
    recorded_at TEXT    NOT NULL,
    label       TEXT,
    digest      TEXT    NOT NULL UNIQUE,
    audit_dir   TEXT,
    hands       INTEGER NOT NULL,
    pairs       INTEGER NOT NULL,
    flagged     INTEGER NOT NULL,
    review      INTEGER NOT NULL,
    alpha       REAL,
    fdr         REAL,
    min_hands   INTEGER
);
CREATE TABLE cases (
    case_id      INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL CHECK (kind IN ('pair', 'group')),
    subject      TEXT    NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed', 'confirmed')),
    opened_look  INTEGER NOT NULL REFERENCES looks (look_id),
    reopen_kind  TEXT,
    reopen_above REAL,
    version      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (kind, subject)
);
CREATE TABLE case_members (
    case_id INTEGER NOT NULL REFERENCES cases (case_id),
    player  TEXT    NOT NULL,
    PRIMARY KEY (case_id, player)
) WITHOUT ROWID;
CREATE INDEX case_members_player ON case_members (player);
CREATE TABLE case_looks (
    case_id      INTEGER NOT NULL REFERENCES cases (case_id),
    look_id      INTEGER NOT NULL REFERENCES looks (look_id),
    verdict      TEXT    NOT NULL CHECK (verdict IN ('flagged', 'review', 'clear', 'absent')),
    hands        INTEGER,
    score        REAL,
    log10_p      REAL,
    p_value      REAL,
    q_value      REAL,
    log10_q      REAL,
    level        REAL,
    level_kind   TEXT,
    main_signal  TEXT,
    signal       TEXT,
    lead         TEXT,
    report_index INTEGER,
    PRIMARY KEY (case_id, look_id)
) WITHOUT ROWID;
CREATE INDEX case_looks_look ON case_looks (look_id);
CREATE TABLE events (
    event_id INTEGER PRIMARY KEY,
    case_id  INTEGER NOT NULL REFERENCES cases (case_id),
    at       TEXT    NOT NULL,
    who      TEXT    NOT NULL,
    action   TEXT    NOT NULL CHECK (action IN ('opened', 'note', 'dismiss', 'confirm', 'reopen', 'auto-reopen')),
    text     TEXT,
    look_id  INTEGER REFERENCES looks (look_id),
    level    REAL
);
CREATE INDEX events_case ON events (case_id);
"""

# 借牌's illegal borrows (a player) and lending pairs become cases, and a look may carry an anytime-valid e-value.
# A CHECK constraint cannot be altered in SQLite: the table is rebuilt (SQLite's documented twelve steps, foreign
# keys off around the transaction: migrate() does that).
_V2 = """
CREATE TABLE cases_v2 (
    case_id      INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL CHECK (kind IN ('pair', 'group', 'borrow', 'lending')),
    subject      TEXT    NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed', 'confirmed')),
    opened_look  INTEGER NOT NULL REFERENCES looks (look_id),
    reopen_kind  TEXT,
    reopen_above REAL,
    version      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (kind, subject)
);
INSERT INTO cases_v2 (case_id, kind, subject, status, opened_look, reopen_kind, reopen_above, version)
    SELECT case_id, kind, subject, status, opened_look, reopen_kind, reopen_above, version FROM cases;
DROP TABLE cases;
ALTER TABLE cases_v2 RENAME TO cases;
ALTER TABLE case_looks ADD COLUMN log10_e REAL;
"""

#: The migrations: ``MIGRATIONS[v]`` takes a database from version ``v`` to ``v + 1``.
MIGRATIONS: dict[int, str] = {0: _V1, 1: _V2}

#: What each table and column holds: docs/reference/cases.md is generated from these and the schema itself (a test
#: checks every column of a fresh database is described here, and the page is what this module writes).
DOCS: dict[str, tuple[str, dict[str, str]]] = {
    "looks": ("One row per look: an audit's result recorded (`analyzer cases record`, or the audit itself).", {
        "look_id": "1, 2, ... in the order the looks were recorded: \"the last look\" is the highest",
        "at": "the look's time, UTC, ISO 8601 (`2024-05-01T06:00:00Z`): given with `--at`, else when recorded",
        "recorded_at": "when it was recorded, UTC",
        "label": "a name for the look (`--label day-4`), or NULL",
        "digest": "SHA-256 of the audit's result as canonical JSON: the same result is recorded once",
        "audit_dir": "the folder its audit.json and report.html are in (absolute), for the review page's links; NULL "
                     "when the result came from a program",
        "hands": "hands the audit read in every game: the pair audit's, 借牌's (its illegal borrows' hands included) "
                 "and those of a game validated only",
        "pairs": "pairs in the audit",
        "flagged": "pairs, 借牌 lending pairs and illegal borrowers it flagged (its flagged cases but groups)",
        "review": "pairs and lending pairs it marked for review",
        "alpha": "its alarm's family-wise level (audit.json `alarm.alpha`)",
        "fdr": "its review tier's false-discovery rate (`alarm.fdr`)",
        "min_hands": "hands together a pair needs for a verdict (`alarm.min_hands`)",
    }),
    "cases": ("One row per case: a pair, a group (ring) of three or more, a player who borrowed illegally (借牌), or "
              "a lending pair, from the first look that marked it.", {
        "case_id": "the case's number (`analyzer cases show 3`)",
        "kind": "`pair`, `group`, `borrow` (a player's illegal borrows) or `lending` (a 借牌 lending pair)",
        "subject": "the members as a JSON array of their ids, sorted (`[\"p02\",\"p12\"]`); with kind, unique",
        "status": "`open`, `dismissed` or `confirmed`: a person's decision (a look changes it only by reopening "
                  "a dismissed case)",
        "opened_look": "the look that first marked it",
        "reopen_kind": "while dismissed: the measure its reopening is read on (`score`, `log10_e` or `count`)",
        "reopen_above": "while dismissed: the level a later look must pass for the case to reopen by itself (the "
                        "level at dismissal plus the margin)",
        "version": "counts the case's status changes: a decision made on a page opened before the last change is "
                   "refused",
    }),
    "case_members": ("The players of each case, one row a player (to find every case of a player).", {
        "case_id": "the case",
        "player": "a member's id, as the logs spell it",
    }),
    "case_looks": ("A case's verdict and evidence at every look since it was opened: one row per case and look.", {
        "case_id": "the case",
        "look_id": "the look",
        "verdict": "`flagged`, `review` or `clear` as the audit gave it (a group's: the audit's verdict of that group, "
                   "else the strongest of its members' pairs); `absent` when the look did not see the case's members "
                   "together",
        "hands": "hands together (pair), hands with two or more members (group), hands played (borrow), lends to each "
                 "other (lending)",
        "score": "the pair's score, -log10 p (a group: its best pair's; a lending pair: its lending test's)",
        "log10_p": "log10 of the pair's p-value",
        "p_value": "the pair's p-value",
        "q_value": "the pair's Benjamini-Hochberg q-value",
        "log10_q": "log10 of the q-value",
        "log10_e": "log10 of the pair's anytime-valid e-value, when the audit gives one; NULL otherwise",
        "level": "the case's evidence level at this look: `log10_e` when the audit gives an e-value, else `score`; "
                 "a `borrow` case's count of illegal borrows",
        "level_kind": "which measure `level` is: `log10_e`, `score` or `count`",
        "main_signal": "the signal that fired (audit.json `main_signal`; `illegal_borrows` or `lending_favour` for "
                       "借牌's cases), or NULL",
        "signal": "that signal's numbers as JSON (audit.json `signals[main_signal]`; a group's, a borrow's or a "
                  "lending pair's own figures)",
        "lead": "the case file's lead sentence as JSON (`{\"key\": ..., \"args\": [...]}`), or NULL",
        "report_index": "the pair's place in the look's report.html (`report.html#pair=N`), or NULL",
    }),
    "events": ("What happened to a case, oldest first: its opening, notes, decisions, reopenings.", {
        "event_id": "1, 2, ... in the order they happened",
        "case_id": "the case",
        "at": "when, UTC",
        "who": "the reviewer's name; `analyzer` for what a look did itself",
        "action": "`opened`, `note`, `dismiss`, `confirm`, `reopen` (a person) or `auto-reopen` (a look whose "
                  "evidence passed the dismissal's level)",
        "text": "the note, the reason of a dismissal (required), or what a look saw when it reopened the case",
        "look_id": "the last look when it happened",
        "level": "a dismissal: the level the case was dismissed at; an auto-reopen: the level that passed it",
    }),
}


def now() -> str:
    """The time now, UTC, as the database writes times (``2024-05-01T06:00:00Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> str:
    """``text`` (ISO 8601: a date, a date and time, with or without a zone; no zone is UTC) as the database writes
    times, or :class:`CasesError`."""
    try:
        t = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise CasesError(f"{text!r} is not a time (ISO 8601: 2024-05-01 or 2024-05-01T06:00:00Z)") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def database_path(path: str | os.PathLike[str]) -> Path:
    """The database a ``--db`` names: the file itself, or a folder's :data:`STORE_FILE` (a decision store)."""
    p = Path(path)
    return p / STORE_FILE if p.is_dir() else p


class Cases:
    """An open cases database (one connection; a thread uses its own). Use as a context manager, or call close()."""

    def __init__(self, path: Path, conn: sqlite3.Connection, timeout: float) -> None:
        self.path, self.conn, self.timeout = path, conn, timeout

    def __enter__(self) -> Cases:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it committed at the end of the block, or none of it (an exception, Ctrl-C or
        a killed process rolls it back). Taken at once (``BEGIN IMMEDIATE``), so two writers never both read and then
        both write: the second waits up to the busy timeout, then :class:`CasesError`."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise _locked(self.path, self.timeout, e) from None
        try:
            yield self.conn
        except BaseException:
            self.conn.rollback()
            raise
        try:
            self.conn.commit()
        except sqlite3.OperationalError as e:
            self.conn.rollback()
            raise _locked(self.path, self.timeout, e) from None

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every query in the block sees the same state (a write committed meanwhile is not
        half seen)."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.rollback()


def _locked(path: Path, timeout: float, e: sqlite3.OperationalError) -> CasesError:
    if "locked" in str(e) or "busy" in str(e):
        return CasesError(f"{path} is being written by another process (waited {timeout:g} s): try again when it "
                          f"is done")
    return CasesError(f"{path}: {e}")


def open_cases(path: str | os.PathLike[str], *, create: bool = True, timeout: float = BUSY_TIMEOUT,
               migrations: dict[int, str] | None = None, version: int = VERSION) -> Cases:
    """The cases database at ``path`` (a file, or a decision store's folder: its :data:`STORE_FILE`), made when missing
    and ``create``, migrated to ``version``. ``migrations`` and ``version`` are for tests (a database left at an
    earlier version)."""
    db = database_path(path)
    if not db.exists():
        if not create:
            raise CasesError(f"{db}: no cases database (record a look first: analyzer cases record AUDIT_DIR --db {db})")
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CasesError(f"{db}: cannot make its folder: {e.strerror or e}") from None
    elif not db.is_file():
        raise CasesError(f"{db}: not a file")
    try:
        conn = sqlite3.connect(db, timeout=timeout, isolation_level=None)
    except sqlite3.Error as e:
        raise CasesError(f"{db}: cannot open: {e}") from None
    try:
        _check_ours(db, conn, version)
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(db, conn, MIGRATIONS if migrations is None else migrations, version, timeout)
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
    except sqlite3.DatabaseError as e:
        conn.close()
        if isinstance(e, sqlite3.OperationalError):
            raise _locked(db, timeout, e) from None
        raise CasesError(f"{db}: not a cases database ({e})") from None
    except BaseException:
        conn.close()
        raise
    return Cases(db, conn, timeout)


def _check_ours(db: Path, conn: sqlite3.Connection, version: int) -> None:
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app != APPLICATION_ID and (app != 0 or tables or found):
        raise CasesError(f"{db}: an SQLite database, but not a cases database (application id {app:#x})")
    if found > version:
        raise CasesError(f"{db}: a cases database of schema version {found}, newer than this analyzer's {version}: "
                         f"use a newer analyzer (this one does not change the file)")


def _migrate(db: Path, conn: sqlite3.Connection, migrations: dict[int, str], version: int, timeout: float) -> None:
    """The migrations from the file's version to ``version``, in one transaction. Foreign keys are off while it runs (a
    rebuilt table is dropped and renamed: SQLite's way), checked before the commit."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= version:
        return
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as e:
        raise _locked(db, timeout, e) from None
    try:
        found = conn.execute("PRAGMA user_version").fetchone()[0]  # again: another process may have migrated it
        _check_ours(db, conn, version)
        for v in range(found, version):
            for statement in _statements(migrations[v]):
                conn.execute(statement)
        if conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
            raise CasesError(f"{db}: migrating to version {version} broke a reference between tables")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")


def _statements(script: str) -> list[str]:
    """A migration's statements, one at a time (``executescript`` would commit the transaction first)."""
    out, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            out.append(current.strip())
            current = ""
    if current.strip():
        out.append(current.strip())
    return out


def reference_markdown() -> str:
    """docs/reference/cases.md without its generated-page note: every table and column of a fresh database at
    :data:`VERSION`, with its SQL type and constraints as SQLite reports them and what it holds (:data:`DOCS`)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for v in range(VERSION):
        for statement in _statements(MIGRATIONS[v]):
            conn.execute(statement)
    lines = ["# The cases database", "",
             "The fair-play desk's cases in one SQLite file (`analyzer cases`, `analyzer serve`); how the desk uses "
             "it day to day: [the cases desk](../guide/cases.md).", "",
             f"Schema version {VERSION} (`PRAGMA user_version`), application id `{APPLICATION_ID:#x}` "
             f"(`PRAGMA application_id`). A file at an earlier version is migrated when opened, in one transaction; "
             f"one at a later version is refused and left as it is. The file is in write-ahead-log mode; times are "
             f"UTC, ISO 8601 (`2024-05-01T06:00:00Z`).", ""]
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"):
        what, columns = DOCS[table]
        lines += [f"## `{table}`", "", what, "", "| column | type | constraints | what it holds |", "|---|---|---|---|"]
        keys = {row[3]: row for row in conn.execute(f"PRAGMA foreign_key_list({table})")}
        for _cid, name, kind, notnull, default, pk in conn.execute(f"PRAGMA table_info({table})"):
            rules = (["primary key"] if pk else []) + (["not null"] if notnull and not pk else []) + (
                [f"default {default}"] if default is not None else []) + (
                [f"references {keys[name][2]}"] if name in keys else [])
            lines.append(f"| `{name}` | {kind} | {', '.join(rules)} | {columns[name]} |")
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        lines += ["", "```sql", sql + ";", "```", ""]
    indexes = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
    lines += ["## Indexes", "", "```sql", *(sql + ";" for (sql,) in indexes), "```"]
    conn.close()
    return "\n".join(lines) + "\n"
