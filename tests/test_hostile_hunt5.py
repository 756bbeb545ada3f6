"""Hostile inputs of a fifth hunt over the commands: commands run on a terminal (the progress bar's pre-count of a
named pipe), option combinations that were ignored without a word (report --audit with --hand or --player), start
times the reader refuses in Python's words or takes, logs compressed otherwise than by gzip or named .gz without being
gzip, plain outputs under a compressed file's name, a log replaced while validate writes its page, a store's metadata
file named as a decision file, simulate sending a whole room to a stream before its truth failed. Each case is a clear
problem or error naming the file, never a hang, a traceback, a silently empty or wrong result or a partial output.

Tried in this hunt and already fine (not repeated here): ids 'nan', 'None', 'NA', 'null', '1', '-0', 'true' through
audit, players (csv, json) and report; HTML and script payloads as player and hand ids in every page in chromium
(no dialog, no request, no page error); think times of 0, of 2^53 - 1, missing on some moves, one of 10^15 ms;
start times in year 1 and 9999 with offsets; mixed games in one file and one hand id used by all three games;
semantically odd 信阳黑七 hands (passed out with tricks or a result, no bids, empty or short tricks, bad buries,
rule options of the other games) in validate and report --hand; unusual but legal rule options of the standard game
(unsorted and repeated cover_doubling thresholds, the largest factors) on the compiled and the Python path; 1,000
distinct players in 600 hands; a decision store of other logs, of a hand changed under the same id, of out-of-range
values; outputs onto a folder, a file, a link to an input, a link loop, into a store; a file that grows or shrinks
during an audit; sparse files of GBs without a line end; unreachable and malformed --dask addresses; every simulate
option misused; gzip, bzip2, xz and zstd data under either kind of name (see below).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from conftest import ROOT, analyzer_process, feed_fifo, legal_obj

FAST = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
needs_pty = pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")


def _lines(n: int, first: int = 0) -> bytes:
    return b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n))






def _on_a_terminal(*args: str, timeout: float = 90) -> tuple[int, str, str]:
    """The real command with standard error on a pseudo-terminal (as a person runs it: the progress bar is on) and
    standard output on a pipe: (exit code, standard output, what the terminal showed)."""
    master, slave = os.openpty()
    shown: list[bytes] = []

    def drain() -> None:  # the terminal's reader: a full pty buffer would stop the command
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the slave side closed (Linux: EIO)
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    try:
        r = subprocess.run([sys.executable, "-m", "analyzer.cli", *args], stdout=subprocess.PIPE, stderr=slave,
                           stdin=subprocess.DEVNULL, env=env, timeout=timeout, text=True)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return r.returncode, r.stdout, b"".join(shown).decode("utf-8", "replace")


# --------------------------------------------------------------------------- the progress bar's count of a stream

@needs_fifo
@needs_pty
@pytest.mark.parametrize("command", ["decisions", "audit"])
def test_a_named_pipe_on_a_terminal_is_read_by_the_command_not_by_the_progress_count(tmp_path: Path,
                                                                                      command: str) -> None:
    """On a terminal, `decisions` and `audit` count the input's lines first, for the progress bar's ETA. The count
    opened a named pipe (``<(zcat log.gz)``) and read it to its end, so the command itself then read nothing:
    `decisions` said "0 decisions from 0 new hands" and exited 0, `audit` "no valid hands" (exit 2); only on a
    terminal, so a script's run was right and the person's silently empty. Only regular files are counted now."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    writer = feed_fifo(fifo, _lines(3))
    extra = FAST if command == "decisions" else ["--samples", "1", "--dd-samples", "1", "--min-hands", "1"]
    code, stdout, shown = _on_a_terminal(command, str(fifo), "-o", str(out), *extra)
    writer.join(timeout=10)
    assert "Traceback" not in shown
    assert code == 0, shown
    if command == "decisions":
        assert "from 3 new hands" in shown, shown
        assert list(out.glob("part-*.parquet"))
    else:
        assert stdout.startswith("3 hands, 6 pairs"), stdout + shown
        assert (out / "audit.json").is_file()


def test_the_progress_count_never_opens_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """The count itself: a FIFO (opening it would wait for a writer), a device, a folder: unknown (None), nothing
    read; regular files, plain and gzip, are counted."""
    import gzip

    from analyzer.progress import count_lines

    plain = tmp_path / "a.jsonl"
    plain.write_bytes(b"1\n2\n3\n")
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(b"1\n2\n"))
    assert count_lines([str(plain), str(packed)]) == 5
    assert count_lines([str(plain), os.devnull]) is None
    assert count_lines([str(tmp_path)]) is None
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        writer = feed_fifo(fifo, b"4\n")  # so that a count that opens the FIFO reads a line (and fails) instead of waiting
        assert count_lines([str(plain), str(fifo)]) is None
        with open(fifo, "rb") as f:  # the line is still there for the command: the count did not take it
            assert f.read() == b"4\n"
        writer.join(timeout=10)


# --------------------------------------------------------------------------- report: --audit where it is not read

@pytest.mark.parametrize("page", [["--hand", "h0"], ["--player", "p1"]])
def test_report_audit_with_a_hand_or_player_page_is_a_usage_error(tmp_path: Path, page: list[str]) -> None:
    """`report --hand H --audit audit.json` (or --player) wrote the page and exited 0, the audit file unread without a
    word: the person believed the page carried the audit's verdict. It is a usage error now, and nothing is written."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(_lines(2))
    audit = tmp_path / "audit.json"
    audit.write_text('{"pairs": []}')
    out = tmp_path / "page.html"
    r = analyzer_process("report", str(log), *page, "--audit", str(audit), "-o", str(out), *FAST)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--audit goes with --pair" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


# --------------------------------------------------------------------------- start times

@pytest.mark.parametrize("offset", ["+24:00", "-99:99", "+23:60", "+2400"])
def test_a_start_time_with_an_offset_out_of_range_says_so_in_the_logs_words(offset: str) -> None:
    """A UTC offset of 24 hours or more was explained in Python's words: "offset must be a timedelta strictly between
    -timedelta(hours=24) and timedelta(hours=24), not datetime.timedelta(days=-5, seconds=69660)"."""
    from analyzer.logs import Line
    from analyzer.validate import check_lines

    obj = legal_obj(1, "h1")
    obj["started_at"] = f"2026-11-01T20:00:00{offset}"
    [item] = check_lines([Line("f.jsonl", 3, orjson.dumps(obj))])
    [p] = item.check.problems
    assert p.code == "bad-time" and p.line == 3 and p.hand_id == "h1"
    assert "its UTC offset must be from -23:59 to +23:59" in p.message
    assert "timedelta" not in p.message


def test_start_times_at_the_ends_of_the_calendar_pass_through_every_page(tmp_path: Path) -> None:
    """Years 1 and 9999 with offsets that take them past the calendar's ends in UTC are valid times: validated, and
    a hand page drawn, without an overflow anywhere."""
    log = tmp_path / "room.jsonl"
    objs = []
    for k, t in enumerate(["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]):
        obj = legal_obj(k, f"h{k}")
        obj["started_at"] = t
        objs.append(orjson.dumps(obj) + b"\n")
    log.write_bytes(b"".join(objs))
    r = analyzer_process("validate", str(log))
    assert r.returncode == 0 and "2 hands, 2 valid, 0 problems" in r.stdout, r.stdout + r.stderr
    r = analyzer_process("report", str(log), "--hand", "h1", "-o", str(tmp_path / "h1.html"))
    assert r.returncode == 0 and (tmp_path / "h1.html").is_file(), r.stderr


# --------------------------------------------------------------------------- logs compressed otherwise than by gzip

_PACKERS = {"bzip2": ("bz2", "compress"), "xz": ("lzma", "compress")}


def _packed(kind: str, data: bytes) -> bytes:
    import importlib

    module, fn = _PACKERS[kind]
    return getattr(importlib.import_module(module), fn)(data)  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", sorted(_PACKERS))
def test_a_log_of_another_compression_is_named_as_such(tmp_path: Path, kind: str) -> None:
    """A bzip2 or xz log named .jsonl.gz was "Not a gzipped file (b'BZ')", and named .jsonl one not-utf8 a line with
    no word of compression: both now say what the file holds and how to decompress it."""
    gz = tmp_path / "room.jsonl.gz"
    plain = tmp_path / "room.jsonl"
    gz.write_bytes(_packed(kind, _lines(3)))
    plain.write_bytes(gz.read_bytes())
    tool = {"bzip2": "bzcat", "xz": "xzcat"}[kind]
    r = analyzer_process("validate", str(gz))
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"room.jsonl.gz: [io-error] cannot read {gz}: Not a gzipped file" in r.stdout
    assert f"it holds {kind} data" in r.stdout and tool in r.stdout
    r = analyzer_process("validate", str(plain))
    assert r.returncode == 1, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"{plain}:1: [not-utf8]") and f"it starts as {kind} data does" in first, first
    r = analyzer_process("decisions", str(gz), "-o", str(tmp_path / "store"), *FAST)
    assert r.returncode == 2 and f"it holds {kind} data" in r.stderr, r.stderr
    assert not (tmp_path / "store").exists()


def test_plain_text_named_gz_is_told_to_lose_the_suffix(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl.gz"
    log.write_bytes(_lines(2))
    r = analyzer_process("validate", str(log))
    assert r.returncode == 2
    assert "it holds plain text (a record), not gzip: name it without .gz" in r.stdout, r.stdout


# --------------------------------------------------------------------------- simulate's seed

def test_simulate_help_shows_the_seeds_it_takes(tmp_path: Path) -> None:
    """`simulate --help` offered seeds from -2^63 (the shared option), and a negative one was then refused by the
    command: the help now shows the range the simulators take, and click refuses the rest before anything runs."""
    r = analyzer_process("simulate", "--help")
    assert "0<=x<=9223372036854775807" in r.stdout and "-9223372036854775808" not in r.stdout
    out = tmp_path / "room.jsonl"
    r = analyzer_process("simulate", "--hands", "2", "--seed=-1", "-o", str(out))
    assert r.returncode == 2 and "Invalid value for '--seed'" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


# --------------------------------------------------------------------------- outputs named as compressed files

@pytest.mark.parametrize("command", [["players", *FAST, "-o", "{}/players.csv.gz"], ["validate", "-o", "{}/page.html.gz"],
                                     ["report", "--hand", "h0", "-o", "{}/hand.HTML.BZ2"],
                                     ["simulate", "--hands", "2", "-o", "{}/room.jsonl", "--truth", "{}/truth.json.xz"]])
def test_a_plain_output_under_a_compressed_files_name_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """`players -o players.csv.gz` wrote the people's table (not even CSV: the name's last suffix is not .csv) as plain
    text under a gzip name, which neither gunzip nor pandas.read_csv opens; `report -o hand.html.gz` a page a browser
    shows as bytes. A compressed file's name is a usage error for a plain output now, and nothing is written."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(_lines(1))
    args = [a.format(tmp_path) for a in command]
    r = analyzer_process(*args[:1], *([str(log)] if args[0] != "simulate" else []), *args[1:])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "a compressed file's name, and this command writes plain text" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["room.jsonl"]


def test_simulate_still_gzips_a_log_named_gz(tmp_path: Path) -> None:
    import gzip

    out = tmp_path / "room.jsonl.gz"
    r = analyzer_process("simulate", "--hands", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert gzip.decompress(out.read_bytes()).count(b"\n") == 2


# --------------------------------------------------------------------------- a log replaced while validate runs

def test_the_validation_page_does_not_draw_problems_on_a_hand_that_replaced_the_checked_one(tmp_path: Path) -> None:
    """`validate LOG -o page.html` reads the log twice: once to check it, then the lines with problems again, to
    replay them on the page. A log replaced in between (rotated, rewritten by its server) gave the page the new
    file's lines: each problem was drawn on whatever valid hand now stood at its line number ("card-not-held at
    move 10" on a hand without it). A line whose hand is not the one checked there is not replayed now."""
    import re

    from analyzer.report.validation import write_validation_report
    from analyzer.validate import validate

    log = tmp_path / "room.jsonl"
    bad = legal_obj(1, "bad")
    bad["actions"][9]["seat"] = (bad["actions"][9]["seat"] + 1) % 4
    log.write_bytes(_lines(1) + orjson.dumps(bad) + b"\n")
    summary = validate([str(log)])
    assert [(p.line, p.hand_id, p.code) for p in summary.problems] == [(2, "bad", "out-of-turn")]

    def replayed(page: Path) -> list[str]:
        write_validation_report(page, [str(log)], summary)
        found = re.search(r'"hand_ids":(\[[^\]]*\])', page.read_text())
        assert found is not None
        return orjson.loads(found.group(1))  # type: ignore[no-any-return]

    assert replayed(tmp_path / "before.html") == ["bad"]
    log.write_bytes(_lines(2, first=10))  # the same path, other hands: line 2 holds the valid hand h11 now
    assert replayed(tmp_path / "after.html") == []


# --------------------------------------------------------------------------- players given a store's metadata file

def test_players_of_a_stores_metadata_file_names_the_store(tmp_path: Path) -> None:
    """`players STORE/_common_metadata` (the file a tab completion offers first) read the store's schema as a decision
    file of no rows: "no decisions to analyse", an empty table, exit 0, for a store full of rows."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(_lines(2))
    store = tmp_path / "store"
    r = analyzer_process("decisions", str(log), "-o", str(store), *FAST)
    assert r.returncode == 0, r.stderr
    r = analyzer_process("players", str(store / "_common_metadata"), "--format", "json")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "is a decision store's metadata file and holds no rows: name the store's folder" in r.stderr
    assert str(store) in r.stderr and r.stdout == ""
    r = analyzer_process("players", str(store), "--format", "json")  # the folder itself: its rows
    assert r.returncode == 0 and len(orjson.loads(r.stdout)) == 4, r.stdout + r.stderr


@needs_fifo
def test_a_named_pipe_named_gz_of_other_data_is_not_opened_again_for_the_hint(tmp_path: Path) -> None:
    """The hint above looks at a .gz file's first bytes again; a named pipe is read once (its writer is gone after):
    opening it again would wait for ever. It gets gzip's words alone."""
    fifo = tmp_path / "pipe.jsonl.gz"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, _packed("bzip2", _lines(2)))
    r = analyzer_process("validate", str(fifo), timeout=60)
    writer.join(timeout=10)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Not a gzipped file" in r.stdout and "it holds" not in r.stdout


# --------------------------------------------------------------------------- simulate -o - with a truth it cannot write

def test_simulate_to_a_stream_sends_nothing_when_its_truth_cannot_be_written(tmp_path: Path) -> None:
    """`simulate -o - --truth T | analyzer validate -`: the log went down the pipe whole, and only then did the truth
    fail (a file in the way of its folder, a read-only folder): exit 2 after a whole room was sent, which the reader
    took as a room. The truth's file is opened first now when the log goes to a stream: nothing is sent."""
    (tmp_path / "afile").write_text("in the way")
    r = analyzer_process("simulate", "--hands", "3", "-o", "-", "--truth", str(tmp_path / "afile" / "truth.json"))
    assert r.returncode == 2 and "a file is in the way" in r.stderr, r.stderr
    assert r.stdout == ""
    good = tmp_path / "truth.json"
    r = analyzer_process("simulate", "--hands", "3", "-o", "-", "--truth", str(good))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 3 and orjson.loads(good.read_bytes())["hands"] == 3
