"""`analyzer cases` on the command line: record, list (filters, json), show, looks, the decisions, and the errors a
person meets (exit 2, one line, nothing changed)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import orjson
import pytest
from conftest import clean_exit, run_cli
from desk_fixtures import pair, result

from analyzer.desk.db import STORE_FILE, VERSION


def audit_dir(tmp_path: Path, name: str, res: dict) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "audit.json").write_bytes(orjson.dumps(res))
    return folder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A decision store's folder with two looks recorded: a, b flagged both days, c, d for review on day 2."""
    s = tmp_path / "store"
    s.mkdir()
    for k, res in enumerate([result(pair("a", "b", score=8.0)),
                             result(pair("a", "b", score=8.2), pair("c", "d", verdict="review", score=4.0),
                                    hands=400)], 1):
        r = run_cli("cases", "record", str(audit_dir(tmp_path, f"day{k}", res)), "--db", str(s),
                    "--at", f"2026-12-0{k}", "--label", f"day-{k}")
        clean_exit(r, 0)
        assert f"look {k} (2026-12-0{k}T00:00:00Z" in r.output
    assert (s / STORE_FILE).is_file()
    return s


def test_record_says_what_the_look_did(tmp_path: Path, store: Path) -> None:
    day3 = audit_dir(tmp_path, "day3", result(pair("a", "b", score=8.3), pair("c", "d", verdict="flagged",
                                                                               score=9.0), pair("e", "f"), hands=600))
    r = run_cli("cases", "record", str(day3 / "audit.json"), "--db", str(store))
    clean_exit(r, 0)
    assert "3 case(s), 1 new (#3), 0 reopened, 2 changed (#2, #3)" in r.output
    lines = r.output.splitlines()  # then the cases one a line, as the audit's summary leads with them
    assert lines[1].startswith("  NEW      case #3 pair e + f: flagged, score 8") and lines[2].startswith(
        "  CHANGED  case #2 pair c + d: ")
    r = run_cli("cases", "record", str(day3), "--db", str(store))
    clean_exit(r, 0)
    assert "already recorded as look 3" in r.output


def test_list_filters_and_json(store: Path) -> None:
    r = run_cli("cases", "list", "--db", str(store))
    clean_exit(r, 0)
    lines = r.output.splitlines()
    assert lines[0].split()[:3] == ["CASE", "KIND", "STATUS"]
    assert lines[1].startswith("#1") and "a + b" in lines[1] and "flagged" in lines[1]
    assert lines[2].startswith("#2") and "c + d" in lines[2] and "new" in lines[2]
    r = run_cli("cases", "list", "--new", "--db", str(store), "--format", "json")
    clean_exit(r, 0)
    rows = json.loads(r.output)
    assert [(x["case_id"], x["members"], x["verdict"], x["new"]) for x in rows] == [(2, ["c", "d"], "review", True)]
    r = run_cli("cases", "list", "--status", "dismissed", "--db", str(store))
    clean_exit(r, 0)
    assert r.output.strip() == "no cases match"


def test_dismiss_show_reopen_note(store: Path) -> None:
    r = run_cli("cases", "dismiss", "a,b", "--reason", "cousins | family", "--by", "ana", "--db", str(store))
    clean_exit(r, 0)
    assert "case #1: dismiss by ana" in r.output and "(level 8.2)" in r.output
    r = run_cli("cases", "list", "--status", "dismissed", "--db", str(store), "--format", "json")
    assert [x["case_id"] for x in json.loads(r.output)] == [1]
    r = run_cli("cases", "show", "1", "--db", str(store))
    clean_exit(r, 0)
    assert "case #1: pair a + b, dismissed" in r.output
    assert "reopens by itself when a look's score passes 9.2" in r.output
    assert "ana  dismiss: cousins | family" in r.output
    assert "day-1" in r.output and "day-2" in r.output
    r = run_cli("cases", "note", "1", "--text", "asked the club", "--by", "bo", "--db", str(store))
    clean_exit(r, 0)
    r = run_cli("cases", "reopen", "1", "--by", "bo", "--db", str(store))
    clean_exit(r, 0)
    r = run_cli("cases", "show", "1", "--db", str(store), "--format", "json")
    f = json.loads(r.output)
    assert [e["action"] for e in f["events"]] == ["opened", "dismiss", "note", "reopen"]
    assert f["summary"]["status"] == "open" and f["summary"]["notes"] == 1
    r = run_cli("cases", "looks", "--db", str(store))
    clean_exit(r, 0)
    assert [line.split()[0] for line in r.output.splitlines()] == ["LOOK", "1", "2"]


@pytest.mark.parametrize("args, message", [
    (["dismiss", "1", "--by", "ana"], "Missing option '--reason'"),
    (["dismiss", "1", "--reason", " ", "--by", "ana"], "needs its reason"),
    (["confirm", "9", "--by", "ana"], "no case 9"),
    (["show", "x,y"], "no case of x, y"),
    (["confirm", "1", "--by", "analyzer"], "sign with your own"),
    (["dismiss", "1", "--reason", "r", "--by", "ana", "--margin", "-1"], "--margin"),
])
def test_decisions_that_fail_exit_2_and_change_nothing(store: Path, args: list[str], message: str) -> None:
    db = store / STORE_FILE
    before = sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()[0]
    r = run_cli("cases", *args, "--db", str(store))
    clean_exit(r, 2)
    assert message in r.output
    assert sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()[0] == before


def test_unusable_databases_and_audits(tmp_path: Path, store: Path) -> None:
    r = run_cli("cases", "list", "--db", str(tmp_path / "none.sqlite"))
    clean_exit(r, 2)
    assert "no cases database" in r.output and not (tmp_path / "none.sqlite").exists()
    newer = tmp_path / "newer.sqlite"
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA application_id = {0x62714353}")
    conn.execute(f"PRAGMA user_version = {VERSION + 5}")
    conn.close()
    r = run_cli("cases", "list", "--db", str(newer))
    clean_exit(r, 2)
    assert "newer than this analyzer's" in r.output
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "audit.json").write_text('{"format": "bieqi-audit", "version": 1, "hands": -1, "pairs": []}')
    r = run_cli("cases", "record", str(bad), "--db", str(store))
    clean_exit(r, 2)
    assert "audit.json: not an audit's result: at hands" in r.output
    (bad / "audit.json").write_text("{not json")
    r = run_cli("cases", "record", str(bad), "--db", str(store))
    clean_exit(r, 2)
    assert "not JSON" in r.output
    r = run_cli("cases", "looks", "--db", str(store))
    assert len(r.output.splitlines()) == 3  # nothing recorded from them


def test_the_db_may_come_from_the_environment(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANALYZER_CASES", str(store))
    r = run_cli("cases", "list", "--format", "json")
    clean_exit(r, 0)
    assert len(json.loads(r.output)) == 2


def test_a_look_at_a_room_of_another_game_counts_its_hands_and_flags(tmp_path: Path) -> None:
    """A 借牌 room's look is not "0 hands, 0 flagged": its hands (invalid ones with illegal borrows too) and its
    flagged cases; a 信阳黑七 room's look counts the hands validation checked. A count level reads whole."""
    from conftest import ROOT

    db = tmp_path / "c.sqlite"
    r = run_cli("audit", str(ROOT / "samples" / "borrow-cheat.jsonl"), "--out", str(tmp_path / "borrow"),
                "--cases", str(db))
    assert r.exit_code == 1, r.output
    assert "NEW      case #1 borrow bob: flagged, count 2, 2 hands" in r.output
    r = run_cli("cases", "list", "--db", str(db))
    assert "2 count" in r.output and "e+" not in r.output, r.output
    r = run_cli("audit", str(ROOT / "samples" / "heiqi-sample.jsonl"), "--out", str(tmp_path / "heiqi"),
                "--cases", str(db))
    assert r.exit_code == 0, r.output
    r = run_cli("cases", "looks", "--db", str(db), "--format", "json")
    clean_exit(r, 0)
    looks = json.loads(r.output)
    borrow = json.loads((tmp_path / "borrow" / "audit.json").read_text())["bieqi-borrow"]
    assert [(x["hands"], x["pairs"], x["flagged"], x["review"]) for x in looks] == [
        (borrow["hands"], 0, sum(p["illegal_borrows"] > 0 for p in borrow["players"]), 0), (4, 0, 0, 0)]
