"""Hostile inputs of a sixth hunt: binary data and endless devices given as logs, outputs named by links, leap seconds,
player ids drawn alike in two scripts, audit files too big to read whole, and the cases the hunt tried beyond them.
Each case is a clear problem or error naming the file, never a hang, a traceback, a replaced link or a partial output.

Tried in this hunt and already fine (not repeated here): lone surrogates (\ud800, \udfff) in hand and player ids
(not-json a line, every command exits cleanly); escaped NUL, ESC and bidi characters in ids through audit's and
players' text (escaped); seats 4, -1, 10^20, true, null, 1.5 and "0", doubled and empty action lists, every top-level
field null, empty or 300 characters long, in all three games (problems, no crash); validate --format json and
simulate -o - into `head -c 10` (exit 2 quietly); input names holding a newline or a byte that is not UTF-8 inside a
folder (escaped in text, \xff in JSON); a gzip of random bytes (one io-error); a pipe whose first read is six bytes or
cuts a character in two (read as text); report --audit read a pair at a time on a cut, NaN, repeated-key or trailing
value (refused). Not fixable here: standard input redirected from a folder stops CPython itself before any code of
the analyzer runs (README).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, analyzer_process, clean_exit, feed_fifo, legal_obj, run_cli, variant_record

from analyzer.logs import format_record

FAST = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]
LEGAL = str(SAMPLES / "legal.jsonl")

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _lines(n: int, first: int = 0, players: list[str] | None = None) -> bytes:
    out = []
    for s in range(n):
        obj = legal_obj(first + s, f"h{first + s}")
        if players is not None:
            obj["players"] = players
        out.append(orjson.dumps(obj) + b"\n")
    return b"".join(out)


# --------------------------------------------------------------------------- binary data given as a log

def test_validate_of_an_endless_random_device_gives_it_up_at_once() -> None:
    """`analyzer validate /dev/urandom` never ended (a not-utf8 problem a line, for ever): binary data is now told
    from a log by its first block, said once naming the file, and the next file is read."""
    if not os.path.exists("/dev/urandom"):
        pytest.skip("no /dev/urandom here")
    r = analyzer_process("validate", "/dev/urandom", LEGAL, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("/dev/urandom: [io-error] cannot read /dev/urandom: binary data, not a text log ("), lines
    assert "nothing of it is read" in lines[0]
    assert lines[-1] == "7 hands, 7 valid, 1 problems" and len(lines) == 2


@needs_fifo
def test_a_named_pipe_of_endless_random_bytes_is_one_io_error(tmp_path: Path) -> None:
    """A writer that never stops sending random bytes into a named pipe: one io-error, and the command ends (its
    writer then meets a closed pipe)."""
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    stop = threading.Event()

    def endless() -> None:
        rng = random.Random(6)
        try:
            with open(fifo, "wb") as w:
                while not stop.is_set():
                    w.write(rng.randbytes(1 << 14))
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=endless, daemon=True)
    t.start()
    try:
        r = analyzer_process("validate", str(fifo), timeout=60)
    finally:
        stop.set()
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout.startswith(f"{fifo}: [io-error] cannot read {fifo}: binary data, not a text log"), r.stdout
    assert r.stdout.count("[io-error]") == 1 and "not-utf8" not in r.stdout
    t.join(10)
    assert not t.is_alive()


@needs_fifo
def test_a_named_pipe_of_text_is_still_read_whole(tmp_path: Path) -> None:
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    feed_fifo(fifo, _lines(3))
    r = analyzer_process("validate", str(fifo), timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "3 hands, 3 valid, 0 problems", r.stdout + r.stderr


def test_binary_data_on_standard_input_and_in_a_file_is_one_io_error(tmp_path: Path) -> None:
    rng = random.Random(1)
    data = rng.randbytes(200_000)
    env = {**os.environ, "PYTHONPATH": str(SAMPLES.parent)}
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", "-"], input=data, capture_output=True,
                       env=env, timeout=60)
    assert r.returncode == 2 and r.stdout.decode().startswith("<stdin>: [io-error] cannot read <stdin>: binary data")
    blob = tmp_path / "photo.jsonl"
    blob.write_bytes(data)
    r2 = run_cli("validate", str(blob), LEGAL)
    clean_exit(r2, 1)
    assert r2.output.count("[io-error]") == 1 and "7 hands, 7 valid, 1 problems" in r2.output
    # every command says it as the read error it is (exit 2, nothing written)
    r3 = run_cli("players", str(blob), *FAST)
    clean_exit(r3, 2)
    assert "binary data, not a text log" in r3.output


def test_a_gzip_stream_on_standard_input_is_named_with_how_to_read_it() -> None:
    env = {**os.environ, "PYTHONPATH": str(SAMPLES.parent)}
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", "validate", "-"], input=gzip.compress(_lines(2)),
                       capture_output=True, env=env, timeout=60)
    assert r.returncode == 2
    assert "it holds gzip data" in r.stdout.decode() and "zcat LOG.gz | analyzer" in r.stdout.decode()


def test_only_nul_bytes_are_binary_without_reading_a_gib(tmp_path: Path) -> None:
    """`/dev/zero` was read 1 GiB (the cap of a line without end) before it was given up."""
    zeros = tmp_path / "zeros.jsonl"
    zeros.write_bytes(bytes(1 << 17))
    r = run_cli("validate", str(zeros))
    clean_exit(r, 2)
    assert "binary data, not a text log (only NUL bytes in its first 65,536 bytes" in r.output


def test_what_is_text_stays_a_problem_a_line() -> None:
    """The first block is binary only when it is mostly not text: a log with a corrupt line, Latin-1 or GB18030 text,
    UTF-16 text (each line then says how to convert it), a character cut by the block's end, are not."""
    from analyzer.logs import binary_data

    log = _lines(3)
    corrupt = log[:100] + b"\x00\xff\xfe" + log[100:]
    assert binary_data(corrupt, stream=False) is None and binary_data(corrupt, stream=True) is None
    assert binary_data(log.decode().encode("utf-16"), stream=True) is None
    assert binary_data(log.decode().encode("utf-32"), stream=True) is None
    cut = (log.decode() + "张三").encode()[:-1]
    assert binary_data(cut, stream=True) is None
    latin = log.replace(b'"p1"', "\"alicé\"".encode("latin-1"))
    assert binary_data(latin, stream=False) is None
    assert binary_data(b"", stream=True) is None
    noise = random.Random(2).randbytes(4096)
    assert binary_data(noise, stream=False) is not None and binary_data(noise, stream=True) is not None
    high = bytes(random.Random(3).randrange(0x80, 0x100) for _ in range(4096))  # no controls: not UTF-8 on a stream
    assert binary_data(high, stream=False) is None and "not UTF-8" in str(binary_data(high, stream=True))


def test_a_binary_file_read_in_ranges_is_one_io_error(tmp_path: Path) -> None:
    """A big regular file is read in ranges by worker processes: the same single io-error, before any range."""
    from analyzer.validate import _batches

    blob = tmp_path / "big.jsonl"
    blob.write_bytes(random.Random(4).randbytes(300_000))
    [item] = list(_batches([str(blob)], 1 << 20, 1024, ranges=True))
    assert [p.code for p in item.check.problems] == ["io-error"]
    assert "binary data" in item.check.problems[0].message


# --------------------------------------------------------------------------- outputs named by links

def test_an_output_that_is_a_link_is_written_where_it_leads(tmp_path: Path) -> None:
    """`-o link.csv` (link.csv -> target.csv) replaced the link with a regular file and left target.csv as it was:
    now the file the link leads to is written (through a temporary file beside it, renamed), and the link stays."""
    target = tmp_path / "data" / "target.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    clean_exit(run_cli("players", LEGAL, "-o", str(link), *FAST), 0)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("player,skill")
    assert sorted(p.name for p in target.parent.iterdir()) == ["target.csv"]  # no temporary file left
    # a link to a file not made yet: made where the link leads
    page = tmp_path / "page.html"
    page.symlink_to("pages-made-later.html")
    clean_exit(run_cli("validate", LEGAL, "-o", str(page)), 0)
    assert page.is_symlink() and (tmp_path / "pages-made-later.html").read_text().startswith("<!")


def test_a_loop_of_links_as_an_output_is_refused_and_a_link_to_an_input_still_is(tmp_path: Path) -> None:
    (tmp_path / "a.html").symlink_to("b.html")
    (tmp_path / "b.html").symlink_to("a.html")
    r = run_cli("validate", LEGAL, "-o", str(tmp_path / "a.html"))
    clean_exit(r, 2)
    assert "a loop of links" in r.output
    log = tmp_path / "room.jsonl"
    log.write_bytes(_lines(2))
    before = log.read_bytes()
    (tmp_path / "out.csv").symlink_to(log)
    r = run_cli("players", str(log), "-o", str(tmp_path / "out.csv"), *FAST)
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
    r = run_cli("audit", LEGAL, "-o", str(tmp_path / "out"), "--samples", "1", "--dd-samples", "1")
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
    log.write_bytes(_lines(2))
    r = run_cli("decisions", str(log), "-o", str(tmp_path / "store"), *FAST)
    clean_exit(r, 0)
    assert (tmp_path / "store").is_symlink() and (tmp_path / "stores" / "day1" / "_common_metadata").exists()
    (tmp_path / "more.jsonl").write_bytes(_lines(1, first=5))
    r = run_cli("decisions", str(log), str(tmp_path / "more.jsonl"), "-o", str(tmp_path / "store"), *FAST)
    clean_exit(r, 0)
    assert "from 1 new hands" in r.output and "(2 hands already there)" in r.output


# --------------------------------------------------------------------------- leap seconds

@pytest.mark.parametrize("variant", ["bieqi", "bieqi-borrow", "xinyang-heiqi"])
def test_a_leap_second_is_refused_saying_leap_seconds_are_not_supported(tmp_path: Path, variant: str) -> None:
    """`23:59:60Z` was "not an RFC 3339 time (second must be in 0..59)", which is wrong (RFC 3339 writes leap seconds);
    it is still bad-time, now saying that leap seconds are not supported and what to write instead."""
    rec = orjson.loads(format_record(variant_record(variant, 3)))
    lines = []
    for k, t in enumerate(["2016-12-31T23:59:60Z", "2026-06-30T23:59:60.250+00:00", "2026-06-30T23:59:61Z"]):
        lines.append(orjson.dumps({**rec, "hand_id": f"h{k}", "started_at": t}))
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    from analyzer.validate import validate

    s = validate([str(log)])
    assert [p.code for p in s.problems] == ["bad-time"] * 3
    leap, leap2, bad = (p.message for p in s.problems)
    assert "a leap second (second 60)" in leap and "leap seconds are not supported" in leap and ":59" in leap
    assert "a leap second" in leap2
    assert "not an RFC 3339 time (second must be in 0..59)" in bad


# --------------------------------------------------------------------------- ids drawn alike in two scripts

CYRILLIC_P1 = "\u04401"  # Cyrillic er, then 1: drawn as "p1"


def test_a_cyrillic_lookalike_at_one_table_is_bad_players_shown_as_code_points() -> None:
    from analyzer.validate import check_lines
    from analyzer.logs import Line

    obj = legal_obj(1, "h1")
    obj["players"] = ["p1", CYRILLIC_P1, "p3", "p4"]
    [item] = check_lines([Line("f.jsonl", 1, orjson.dumps(obj))])
    [p] = item.check.problems
    assert p.code == "bad-players" and "'\\u04401'" in p.message and "'p1'" in p.message, p.message


@pytest.mark.parametrize(("first", "second"), [
    ("p1", CYRILLIC_P1),
    ("Sergei", "\u0405ergei"),  # Cyrillic dze
    ("KAPPA", "\u039a\u0391\u03a1\u03a1\u0391"),  # Greek capitals
    ("cop", "\u0441\u043e\u0440"),  # every letter Cyrillic
])
def test_an_id_in_another_script_drawn_alike_is_said_across_hands(tmp_path: Path, first: str, second: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(_lines(1, 0, [first, "b", "c", "d"]) + _lines(1, 1, [second, "b", "c", "d"]))
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 2
    [p] = s.problems
    assert p.code == "lookalike-ids" and p.line == 2 and p.seat == 0
    assert "\\u" in p.message  # the other script's letters shown as code points: a reader sees they differ


def test_other_scripts_own_ids_are_not_lookalikes(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(_lines(1, 0, ["Иван", "Ivan", "Νίκος", "nikos2"]) + _lines(1, 1, ["Петр", "Ivan", "Νίκος", "张三"]))
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 2 and s.problems == []


def test_cyrillic_lookalikes_are_caught_on_the_compiled_path_and_by_the_other_variants(tmp_path: Path) -> None:
    """A batch of 64 or more hands goes through the compiled scan: the same bad-players there."""
    lines = _lines(70)
    bad = legal_obj(99, "odd")
    bad["players"] = ["p1", CYRILLIC_P1, "p3", "p4"]
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines + orjson.dumps(bad) + b"\n")
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 70 and [p.code for p in s.problems] == ["bad-players"]
    for name in ("bieqi-borrow", "xinyang-heiqi"):
        rec = orjson.loads(format_record(variant_record(name, 2, players=["p1", CYRILLIC_P1, "p3", "p4"])))
        other = tmp_path / f"{name}.jsonl"
        other.write_bytes(orjson.dumps(rec) + b"\n")
        assert "bad-players" in [p.code for p in validate([str(other)]).problems], name


# --------------------------------------------------------------------------- report --pair --audit of a big audit

@pytest.fixture(scope="module")
def audit_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "a"
    clean_exit(run_cli("audit", LEGAL, "-o", str(out), "--samples", "1", "--dd-samples", "1"), 0)
    return out / "audit.json"


def test_an_audit_too_big_to_read_whole_is_read_a_pair_at_a_time(tmp_path: Path, audit_file: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An audit file over 256 MB was refused ("larger than 256 MB"): a room of thousands of players writes one. A
    regular file that big is now read a pair at a time (memory of one pair) and gives the same page."""
    import analyzer.commands.report as report

    whole = tmp_path / "whole.html"
    clean_exit(run_cli("report", LEGAL, "--pair", "alice,bob", "--audit", str(audit_file), "-o", str(whole),
                       *FAST), 0)
    monkeypatch.setattr(report, "MAX_AUDIT_BYTES", 1000)
    streamed = tmp_path / "streamed.html"
    clean_exit(run_cli("report", LEGAL, "--pair", "alice,bob", "--audit", str(audit_file), "-o", str(streamed),
                       *FAST), 0)
    assert streamed.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize(("change", "said"), [
    (lambda t: t.replace('"format"', '"version": 1, "format"', 1), "key 'version' appears twice"),
    (lambda t: t[:-300], "not JSON"),
    (lambda t: t + "{}", "another value follows"),
    (lambda t: t.replace('"hands": ', '"hands": NaN, "x": ', 1), "NaN is not a JSON number"),
    (lambda t: t.replace('"format": "', '"format": "x', 1), "is not an audit file"),
    (lambda t: t.replace('"pairs": [', '"pairs": [{"players": ["a"]}, ', 1), "at pairs/0"),
    (lambda t: t.replace('"pairs": [', '"pairs": [{"players": ["bob", "alice"], "evidence": [{"hand_id": "h", '
                         '"action": -1}]}, ', 1), "at pairs/0/evidence/0/action"),
])
def test_a_big_audit_read_a_pair_at_a_time_is_checked_as_one_read_whole(tmp_path: Path, audit_file: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       change: object, said: str) -> None:
    import analyzer.commands.report as report

    monkeypatch.setattr(report, "MAX_AUDIT_BYTES", 1000)
    bad = tmp_path / "audit.json"
    bad.write_text(change(audit_file.read_text()))  # type: ignore[operator]
    out = tmp_path / "pair.html"
    r = run_cli("report", LEGAL, "--pair", "alice,bob", "--audit", str(bad), "-o", str(out), *FAST)
    clean_exit(r, 2)
    assert said in r.output and not out.exists(), r.output


def test_a_big_audit_without_the_pair_warns_and_draws_the_page(tmp_path: Path, audit_file: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.commands.report as report

    monkeypatch.setattr(report, "MAX_AUDIT_BYTES", 1000)
    doc = json.loads(audit_file.read_text())
    doc["pairs"] = [p for p in doc["pairs"] if sorted(p["players"]) != ["alice", "bob"]]
    other = tmp_path / "audit.json"
    other.write_text(json.dumps(doc, indent=1))
    out = tmp_path / "pair.html"
    r = run_cli("report", LEGAL, "--pair", "alice,bob", "--audit", str(other), "-o", str(out), *FAST)
    clean_exit(r, 0)
    assert "has no entry for alice and bob" in r.output and out.exists()


# --------------------------------------------------------------------------- an output given twice

@pytest.mark.parametrize("args", [
    ["validate", LEGAL, "-o", "a.html", "-o", "b.html"],
    ["validate", LEGAL, "-o", "a.html", "--html", "b.html"],
    ["players", LEGAL, "-o", "a.csv", "--out", "b.csv", *FAST],
    ["report", LEGAL, "--hand", "sample-tong", "-o", "a.html", "-o", "b.html", *FAST],
    ["decisions", LEGAL, "-o", "a", "--output", "b", *FAST],
    ["audit", LEGAL, "-o", "a", "-o", "b", "--samples", "1"],
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
    clean_exit(run_cli("report", LEGAL, "--hand", "sample-tong", *FAST), 0)
    assert (tmp_path / "report.html").exists()
    clean_exit(run_cli("validate", LEGAL, "--html", "v.html"), 0)
    assert (tmp_path / "v.html").exists()


def test_a_small_binary_file_is_still_a_problem_a_line(tmp_path: Path) -> None:
    """Under 4 KiB a regular file is read a line at a time (few problems, each the line's own)."""
    small = tmp_path / "small.jsonl"
    small.write_bytes(random.Random(7).randbytes(600).replace(b"\n", b"") + b"\n" + _lines(1))
    r = run_cli("validate", str(small))
    clean_exit(r, 1)
    assert "[io-error]" not in r.output and ":1: [not-" in r.output and "2 hands, 1 valid, 1 problems" in r.output
