"""Reading the logs (analyzer.logs): files, folders, links, named pipes, descriptors, standard input, gzip and other
compressions, binary data and lines without end: each a clear problem or error naming the file, never a hang."""

from __future__ import annotations

import gzip
import os
import random
import threading
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, analyzer_process, broken_gzip, clean_exit, feed_fifo, hand_line, legal_lines, legal_log, legal_obj, run_cli, write_log

from analyzer.progress import count_lines
from analyzer.validate import validate



def test_the_same_file_given_twice_is_read_once(tmp_path: Path) -> None:
    log = legal_log(tmp_path / "logs")
    r = run_cli("validate", str(log), str(tmp_path / "logs"), str(log))
    clean_exit(r, 0)
    assert "3 hands, 3 valid, 0 problems" in r.output


def test_duplicate_hands_across_files_are_reported(tmp_path: Path) -> None:
    legal_log(tmp_path / "a", n=2)
    legal_log(tmp_path / "b", n=2)  # the same ids in another file
    r = run_cli("validate", str(tmp_path / "a"), str(tmp_path / "b"))
    clean_exit(r, 1)
    assert r.output.count("[duplicate-hand-id]") == 2


def test_a_folder_of_thousands_of_small_files_and_an_empty_one(tmp_path: Path) -> None:
    logs = tmp_path / "many"
    logs.mkdir()
    for i in range(1500):  # each its own hand (one hand under 1,000 ids would be 999 duplicate-deal copies)
        (logs / f"f{i:04d}.jsonl").write_bytes(orjson.dumps(legal_obj(i, f"h{i}")) + b"\n" if i % 3 else b"")
    r = run_cli("validate", str(logs), "--jobs", "2")
    clean_exit(r, 0)
    assert "1000 hands, 1000 valid, 0 problems" in r.output


@pytest.mark.parametrize("order", [["-", "LOG"], ["LOG", "-"]])
def test_standard_input_redirected_from_a_named_file_is_read_once(tmp_path: Path, order: list[str]) -> None:
    """``analyzer validate - log.jsonl < log.jsonl`` (either order) reads the file once, as ``/dev/stdin`` does: its
    hands are not duplicates of themselves. Another file on standard input is still read."""
    log = legal_log(tmp_path)
    args = [str(log) if a == "LOG" else a for a in order]
    with open(log, "rb") as f:
        r = analyzer_process("validate", *args, stdin=f)
    assert r.returncode == 0 and "3 hands, 3 valid, 0 problems" in r.stdout, r.stdout + r.stderr
    other = legal_log(tmp_path / "b", first=10)
    with open(other, "rb") as f:
        r = analyzer_process("validate", *args, stdin=f)
    assert r.returncode == 0 and "6 hands, 6 valid, 0 problems" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_as_a_log_is_read_whole(tmp_path: Path) -> None:
    """A FIFO (or ``<(cat log)``) is read once, from its first byte: looking for a decision store must not take
    the first bytes of the stream, nor open it a second time (which waits forever once the writer is gone)."""
    import threading

    log = legal_log(tmp_path, n=5)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(log.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = analyzer_process("validate", str(fifo), timeout=60)
    writer.join(timeout=10)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 hands, 5 valid, 0 problems" in r.stdout


def test_broken_links_inside_a_folder_are_named(tmp_path: Path) -> None:
    """Not skipped without a word (the command would run on part of the input)."""
    folder = tmp_path / "logs"
    legal_log(folder)
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    r = run_cli("validate", str(folder))  # validate: an io-error naming it among the problems, the other logs read
    clean_exit(r, 1)
    assert "gone.jsonl: [io-error] cannot read" in r.output and "a link that leads to no file" in r.output
    assert "1 problems" in r.output and " 0 hands" not in r.output
    r = run_cli("players", str(folder), "-o", str(tmp_path / "p.csv"))  # the others: no output from part of the input
    clean_exit(r, 2)
    assert "gone.jsonl: a link that leads to no file" in r.output and not (tmp_path / "p.csv").exists()


def test_validate_reads_every_path_it_can_and_names_the_missing_one(tmp_path: Path) -> None:
    """A missing path among good ones is an io-error problem (exit 1, the page written), the good ones validated;
    only missing paths: exit 2."""
    folder = tmp_path / "logs"
    legal_log(folder)
    page = tmp_path / "v.html"
    r = run_cli("validate", str(tmp_path / "nope.jsonl"), str(folder), "-o", str(page))
    clean_exit(r, 1)
    assert "nope.jsonl: [io-error] cannot read" in r.output and "valid" in r.output and page.exists()
    r = run_cli("validate", str(tmp_path / "nope.jsonl"))
    clean_exit(r, 2)
    assert "nope.jsonl: [io-error]" in r.output and "0 hands" in r.output




def test_a_gzip_of_broken_compressed_data_is_an_io_error_problem(tmp_path: Path) -> None:
    bad = broken_gzip(tmp_path / "bad.jsonl.gz")
    good = tmp_path / "good.jsonl"
    good.write_bytes(legal_lines(2, 10))
    s = validate([str(bad), str(good)])
    assert s.valid_hands == 2
    assert [(p.code, p.file) for p in s.problems] == [("io-error", str(bad))]
    assert "broken compressed data" in s.problems[0].message
    assert count_lines([str(bad)]) is None  # the progress bar's pre-count gives up, the command reports it


def test_a_link_to_a_folder_inside_an_input_folder_is_said_not_skipped_silently(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Links to folders are not followed (a link back up would loop), but the logs below one were left out without a
    word: the command ran on part of the input. Now each is named in a warning, as a FIFO inside a folder is."""
    from analyzer.logs import expand_paths

    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.jsonl").write_bytes(legal_lines(2))
    top = tmp_path / "top"
    top.mkdir()
    (top / "new.jsonl").write_bytes(legal_lines(1, 5))
    (top / "march").symlink_to(tmp_path / "archive")
    (top / "loop").symlink_to(top)
    assert expand_paths([str(top)]) == [str(top / "new.jsonl")]
    err = capsys.readouterr().err
    assert f"{top / 'march'}: a link to a folder; not followed" in err and f"{top / 'loop'}: a link" in err
    assert len(err.splitlines()) == 2


def test_a_folder_given_as_a_descriptor_is_read_as_a_folder(tmp_path: Path) -> None:
    """`analyzer validate /dev/fd/3 3< somedir`: the folder is read as a folder named directly (its logs), never a
    traceback. (`- < somedir` cannot be helped: CPython stops before any code runs, docs/design.md.)"""
    import os

    folder = tmp_path / "logs"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        r = analyzer_process("validate", f"/dev/fd/{fd}", pass_fds=(fd,))
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert f"no *.jsonl or *.jsonl.gz files under: /dev/fd/{fd}" in r.stderr
        write_log(folder / "a.jsonl", [hand_line(1, "h1")])
        r = analyzer_process("validate", f"/dev/fd/{fd}", pass_fds=(fd,))
        assert r.returncode == 0 and "1 hands, 1 valid, 0 problems" in r.stdout
    finally:
        os.close(fd)


def test_validate_reports_a_name_too_long_among_the_others(tmp_path: Path) -> None:
    """A path the system refuses to look up (ENAMETOOLONG) stopped the whole run with exit 2 before any path was read,
    where a missing one is an io-error among the others (README): now the same, the name said once."""
    long = str(tmp_path / ("x" * 300 + ".jsonl"))
    missing = str(tmp_path / "missing.jsonl")
    r = run_cli("validate", str(SAMPLES / "legal.jsonl"), long, missing)
    clean_exit(r, 1)
    assert f"{long}: [io-error] cannot read {long}: File name too long\n" in r.output
    assert f"{missing}: [io-error] cannot read {missing}: No such file or directory\n" in r.output
    assert "7 hands, 7 valid, 2 problems" in r.output


def test_other_commands_name_a_path_too_long_as_a_usage_error(tmp_path: Path) -> None:
    long = str(tmp_path / ("x" * 300 + ".jsonl"))
    r = run_cli("players", str(SAMPLES / "legal.jsonl"), long)
    clean_exit(r, 2)
    assert f"{long}: File name too long" in r.output


def test_a_line_that_never_ends_gives_the_file_up_with_an_io_error(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`validate /dev/zero` read for ever (one line with no end, skipped as too long while looking for its end). A
    too-long line is now skipped for at most ``SKIP_CAP`` bytes (4x the line limit at least); past it the rest of the
    file is given up with an io-error, the hands before it checked and the other files read."""
    from analyzer import logs

    monkeypatch.setattr(logs, "SKIP_CAP", 1 << 16)
    log = tmp_path / "junk.jsonl"
    log.write_bytes(hand_line(1, "h1") + hand_line(2, "h2") + b"x" * (1 << 19))  # 512 KB after the hands, no line end
    ok = write_log(tmp_path / "ok.jsonl", [hand_line(3, "h3")])
    s = validate([str(log), str(ok)], max_line_bytes=1 << 12)
    assert (s.hands, s.valid_hands) == (3, 3)
    (p,) = s.problems
    assert p.code == "io-error" and p.file == str(log) and "line 3 runs on past 65,536 bytes" in p.message
    zero = validate(["/dev/zero", str(ok)], max_line_bytes=1 << 12)  # ends (it read for ever)
    assert [p.code for p in zero.problems] == ["io-error"] and zero.valid_hands == 1
    assert "/dev/zero" in zero.problems[0].message
    # a long line that does end is still one `line-too-long` hand, the lines after it read
    log.write_bytes(hand_line(1, "h1") + b"x" * 9000 + b"\n" + hand_line(2, "h2"))
    s = validate([str(log)], max_line_bytes=1 << 12)
    assert (s.hands, s.valid_hands) == (3, 2) and [p.code for p in s.problems] != ["io-error"]


ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


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
    gz.write_bytes(_packed(kind, legal_lines(3)))
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
    r = analyzer_process("decisions", str(gz), "-o", str(tmp_path / "store"), *ONE_SAMPLE)
    assert r.returncode == 2 and f"it holds {kind} data" in r.stderr, r.stderr
    assert not (tmp_path / "store").exists()


def test_plain_text_named_gz_is_told_to_lose_the_suffix(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl.gz"
    log.write_bytes(legal_lines(2))
    r = analyzer_process("validate", str(log))
    assert r.returncode == 2
    assert "it holds plain text (a record), not gzip: name it without .gz" in r.stdout, r.stdout


@needs_fifo
def test_a_named_pipe_named_gz_of_other_data_is_not_opened_again_for_the_hint(tmp_path: Path) -> None:
    """The hint above looks at a .gz file's first bytes again; a named pipe is read once (its writer is gone after):
    opening it again would wait for ever. It gets gzip's words alone."""
    fifo = tmp_path / "pipe.jsonl.gz"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, _packed("bzip2", legal_lines(2)))
    r = analyzer_process("validate", str(fifo), timeout=60)
    writer.join(timeout=10)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Not a gzipped file" in r.stdout and "it holds" not in r.stdout


LEGAL = SAMPLES / "legal.jsonl"


def test_validate_of_an_endless_random_device_gives_it_up_at_once() -> None:
    """`analyzer validate /dev/urandom` never ended (a not-utf8 problem a line, for ever): binary data is now told
    from a log by its first block, said once naming the file, and the next file is read."""
    if not os.path.exists("/dev/urandom"):
        pytest.skip("no /dev/urandom here")
    r = analyzer_process("validate", "/dev/urandom", str(LEGAL), timeout=60)
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
    feed_fifo(fifo, legal_lines(3))
    r = analyzer_process("validate", str(fifo), timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "3 hands, 3 valid, 0 problems", r.stdout + r.stderr


def test_binary_data_on_standard_input_and_in_a_file_is_one_io_error(tmp_path: Path) -> None:
    rng = random.Random(1)
    data = rng.randbytes(200_000)
    r = analyzer_process("validate", "-", input=data, text=False, timeout=60)
    assert r.returncode == 2 and r.stdout.decode().startswith("<stdin>: [io-error] cannot read <stdin>: binary data")
    blob = tmp_path / "photo.jsonl"
    blob.write_bytes(data)
    r2 = run_cli("validate", str(blob), str(LEGAL))
    clean_exit(r2, 1)
    assert r2.output.count("[io-error]") == 1 and "7 hands, 7 valid, 1 problems" in r2.output
    # every command says it as the read error it is (exit 2, nothing written)
    r3 = run_cli("players", str(blob), *ONE_SAMPLE)
    clean_exit(r3, 2)
    assert "binary data, not a text log" in r3.output


def test_a_gzip_stream_on_standard_input_is_named_with_how_to_read_it() -> None:
    r = analyzer_process("validate", "-", input=gzip.compress(legal_lines(2)), text=False, timeout=60)
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

    log = legal_lines(3)
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


def test_a_small_binary_file_is_still_a_problem_a_line(tmp_path: Path) -> None:
    """Under 4 KiB a regular file is read a line at a time (few problems, each the line's own)."""
    small = tmp_path / "small.jsonl"
    small.write_bytes(random.Random(7).randbytes(600).replace(b"\n", b"") + b"\n" + legal_lines(1))
    r = run_cli("validate", str(small))
    clean_exit(r, 1)
    assert "[io-error]" not in r.output and ":1: [not-" in r.output and "2 hands, 1 valid, 1 problems" in r.output


def test_a_fifo_inside_an_input_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(LEGAL.read_bytes())
    os.mkfifo(folder / "b.jsonl")
    r = run_cli("validate", str(folder))
    clean_exit(r, 0)
    assert f"{folder / 'b.jsonl'}: not a regular file" in r.stderr and "7 hands, 7 valid" in r.stdout


def test_a_gzip_of_millions_of_empty_lines_is_read_quickly(tmp_path: Path) -> None:
    """A 100 KB gzip that holds 100 million empty lines around a hand: the hand found with its line number, the
    empty lines passed in bulk (a line at a time, this took minutes)."""
    import gzip
    import time

    from analyzer.validate import validate

    hand = orjson.dumps(legal_obj(1))
    p = tmp_path / "blank.jsonl.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        for _ in range(50):
            f.write(b"\n" * 1_000_000)
        f.write(hand + b"\n")
        for _ in range(50):
            f.write(b"\n" * 1_000_000)
    t0 = time.process_time()
    summary = validate([str(p)], jobs=1)
    assert summary.hands == 1 and summary.valid_hands == 1
    assert time.process_time() - t0 < 30  # ~1 s here; a line at a time ~200 s
    from analyzer.logs import generate_lines

    assert [x.line for x in generate_lines(str(p))] == [50_000_001]
