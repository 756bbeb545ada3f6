"""Hostile inputs of a fourth hunt over the commands (named pipes where a file is read twice or a store's part is
expected, blank hand ids, logs written otherwise than one hand per line, an empty folder named as a store, gzip
copies cut short): each a clear problem or error naming the file, never a hang, a traceback or a partial output."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, analyzer_process, clean_exit, feed_fifo, legal_obj, run_cli

from analyzer.logs import Line
from analyzer.validate import check_lines, validate

FAST = ["--samples", "1", "--dd-samples", "0"]
LEGAL = SAMPLES / "legal.jsonl"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _hand(seed: int, hand_id: str | None = None, **fields: object) -> bytes:
    obj = legal_obj(seed, hand_id)
    obj.update(fields)
    return orjson.dumps(obj) + b"\n"






# --------------------------------------------------------------------------- the validation page of a named pipe

@needs_fifo
def test_the_validation_page_of_a_named_pipe_is_written_without_waiting_for_a_second_writer(tmp_path: Path) -> None:
    """`validate FIFO -o page.html`: the problems and the summary came out, then the page opened the pipe again to
    replay the hands with problems and waited for ever for a writer that was gone (no page; SIGTERM unheard). An input
    that can be read once (logs.read_once) now has its hands listed without a replay, as standard input's are."""
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, (SAMPLES / "problems.jsonl").read_bytes())
    page = tmp_path / "page.html"
    r = analyzer_process("validate", str(fifo), "-o", str(page))
    writer.join(timeout=10)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "27 hands, 1 valid, 28 problems" in r.stdout
    html = page.read_text(encoding="utf-8")
    assert "planted-out-of-turn" in html and str(fifo) in html


def test_the_validation_page_reads_a_file_no_further_than_its_last_problem(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The page re-reads the lines with problems only: a big log whose problems are all near its start is no longer
    read again to its end."""
    import analyzer.report.validation as page

    log = tmp_path / "day.jsonl"
    log.write_bytes(_hand(1, "h1") + b"not json\n" + b"".join(_hand(s, f"h{s}") for s in range(2, 40)))
    summary = validate([str(log)])
    assert [(p.code, p.line) for p in summary.problems] == [("not-json", 2)]
    read: list[int] = []
    real = page.generate_lines

    def counting(path: str, *args: object, **kw: object):  # type: ignore[no-untyped-def]
        for line in real(path, *args, **kw):  # type: ignore[arg-type]
            read.append(line.line)
            yield line

    monkeypatch.setattr(page, "generate_lines", counting)
    page.write_validation_report(tmp_path / "v.html", [str(log)], summary)
    assert max(read) <= 3


# --------------------------------------------------------------------------- a store whose part is no regular file

@pytest.fixture(scope="module")
def legal_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("legal") / "store"
    clean_exit(run_cli("decisions", str(LEGAL), "-o", str(store), *FAST), 0)
    return store


@needs_fifo
def test_a_store_part_that_is_a_named_pipe_is_refused_not_waited_on(legal_store: Path, tmp_path: Path) -> None:
    """A part replaced by a named pipe: Arrow opened it and waited for a writer for ever, Ctrl-C and SIGTERM unheard
    (it retries the open in C++), in every command that opens the store. Now exit 2 naming the part."""
    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    part.unlink()
    os.mkfifo(part)
    out = tmp_path / "out"
    for args in (["players", str(store)], ["players", str(LEGAL), "--decisions", str(store)],
                 ["audit", str(LEGAL), "--decisions", str(store), "-o", str(out)],
                 ["decisions", str(LEGAL), "-o", str(store), *FAST]):
        r = analyzer_process(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert f"{part}: not a regular file (a FIFO, socket or device)" in r.stderr, r.stderr
    assert not out.exists() and sorted(p.name for p in store.iterdir()) == ["_common_metadata", part.name]


def test_a_store_part_that_is_a_folder_is_named_as_one(legal_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    part.unlink()
    part.mkdir()
    r = run_cli("players", str(store))
    clean_exit(r, 2)
    assert f"{part}: not a regular file (a folder)" in r.output


def test_an_empty_folder_named_as_the_store_says_to_name_a_new_one(tmp_path: Path) -> None:
    """`mkdir store; analyzer decisions LOG -o store` was told "not a decision store (no _common_metadata); write one
    with `analyzer decisions LOGS --out STORE`": what the user had just done. Now it says the command makes the
    folder itself; nothing is written."""
    store = tmp_path / "store"
    store.mkdir()
    r = run_cli("decisions", str(LEGAL), "-o", str(store), *FAST)
    clean_exit(r, 2)
    assert "an empty folder, not a decision store" in r.output and "name one that does not exist yet" in r.output
    assert list(store.iterdir()) == []
    r = run_cli("players", str(LEGAL), "--decisions", str(store), *FAST)
    clean_exit(r, 2)
    assert "an empty folder, not a decision store" in r.output


# --------------------------------------------------------------------------- blank hand ids

@pytest.mark.parametrize("blank", ["   ", "\u200b", "\t", "\u3000 \u00ad"])
def test_a_hand_id_blank_once_normalised_is_bad_type(blank: str) -> None:
    """`""` was refused (bad-type) but `"   "` or a zero-width space passed: a hand no page, problem or report can
    name so a person sees it, and no `report --hand` a person can type. Refused as a blank player id is."""
    [item] = check_lines([Line("f.jsonl", 1, _hand(3, blank))])
    (p,) = item.check.problems
    assert (p.code, p.hand_id) == ("bad-type", blank) and "$.hand_id is" in p.message and "blank" in p.message
    [item] = check_lines([Line("f.jsonl", 1, _hand(3, blank + "h3"))])
    assert item.check.problems == []


def test_blank_hand_ids_are_refused_in_a_batch_and_not_called_lookalikes(tmp_path: Path) -> None:
    """Through the compiled check too (70 hands), each one problem: not a second `lookalike-ids` for two blanks."""
    log = tmp_path / "room.jsonl"
    ids = [f"h{s}" for s in range(70)]
    ids[40], ids[41] = " ", "\u200b"
    log.write_bytes(b"".join(_hand(s, x) for s, x in enumerate(ids)))
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (70, 68)
    assert [(p.code, p.line) for p in s.problems] == [("bad-type", 41), ("bad-type", 42)]


@pytest.mark.parametrize("name", ["bieqi", "bieqi-borrow", "xinyang-heiqi"])
def test_every_variant_refuses_a_blank_hand_id_and_checks_the_rest(name: str) -> None:
    import msgspec
    from conftest import variant_record

    from analyzer.variants import registry

    game = registry()[name]
    good = variant_record(name, 5)
    assert game.check(good).ok
    bad = msgspec.structs.replace(good, hand_id=" \u200b", players=["ann", "bo", "Ann", "di"])
    assert [p.code for p in game.check(bad).problems] == ["bad-type", "bad-players"]


def test_a_blank_hand_id_is_left_out_of_the_analysis(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl"
    log.write_bytes(_hand(1, "h1") + _hand(2, "\u200b"))
    r = run_cli("decisions", str(log), "-o", str(tmp_path / "store"), *FAST)
    clean_exit(r, 0)
    assert "1 new hands" in r.output and "1 invalid hand(s) left out" in r.output


# --------------------------------------------------------------------------- logs not written one hand per line

def _records(n: int = 3) -> list[dict]:
    return [legal_obj(s, f"h{s}") for s in range(n)]


def test_a_pretty_printed_log_says_each_hand_must_be_on_one_line(tmp_path: Path) -> None:
    """`json.dump(hand, indent=2)` per hand: every line a problem that said only "unexpected content after document"
    or "unexpected end of data"; each now says the log looks pretty-printed and how to make it one hand a line."""
    log = tmp_path / "pretty.jsonl"
    log.write_text("".join(json.dumps(h, indent=2) + "\n" for h in _records(1)))
    s = validate([str(log)])
    assert s.valid_hands == 0 and s.n_problems == s.hands > 100
    said = [p for p in s.problems if "pretty-printed" in p.message]
    assert len(said) >= 0.9 * s.n_problems and "jq -c . FILE" in said[0].message
    assert s.problems[0].line == 1 and "pretty-printed" in s.problems[0].message  # the "{" line


def test_a_json_array_of_hands_says_one_hand_per_line(tmp_path: Path) -> None:
    log = tmp_path / "array.jsonl"
    log.write_text(json.dumps(_records()) + "\n")
    (p,) = validate([str(log)]).problems
    assert p.code == "not-object" and "an array of 3" in p.message and "jq -c '.[]' FILE" in p.message


def test_the_lines_of_a_json_array_say_the_comma_after_the_record(tmp_path: Path) -> None:
    log = tmp_path / "array-lines.jsonl"
    log.write_text("[\n" + ",\n".join(json.dumps(h) for h in _records()) + "\n]\n")
    s = validate([str(log)])
    assert s.valid_hands == 1  # the last record, with no comma after it
    by_line = {p.line: p.message for p in s.problems}
    assert sorted(by_line) == [1, 2, 3, 5]
    assert "a comma or bracket follows the record" in by_line[2] and "a comma or bracket" in by_line[3]


def test_two_hands_on_one_line_say_where_the_second_starts(tmp_path: Path) -> None:
    first, second = (json.dumps(h) for h in _records(2))
    log = tmp_path / "joined.jsonl"
    log.write_text(first + second + "\n")
    (p,) = validate([str(log)]).problems
    assert p.code == "not-json" and f"another value follows the first at character {len(first) + 1}" in p.message


def test_a_hand_encoded_twice_says_so(tmp_path: Path) -> None:
    log = tmp_path / "twice.jsonl"
    log.write_text("".join(json.dumps(json.dumps(h)) + "\n" for h in _records(2)))
    s = validate([str(log)])
    assert [p.code for p in s.problems] == ["not-object"] * 2
    assert all("encoded twice" in p.message for p in s.problems)


def test_ordinary_garbage_gets_no_guess(tmp_path: Path) -> None:
    log = tmp_path / "junk.jsonl"
    log.write_bytes(b"hello world\n<html><body>502 Bad Gateway</body></html>\n{\"a\": 1} trailing\n[1, 2, 3]\n")
    s = validate([str(log)])
    assert s.n_problems == 4
    assert not [p for p in s.problems if "pretty-printed" in p.message or "array" in p.message
                or "another value" in p.message], [p.message for p in s.problems]


# --------------------------------------------------------------------------- gzip copies cut short

def _cut_gzip(path: Path) -> Path:
    data = gzip.compress(LEGAL.read_bytes(), mtime=0)
    path.write_bytes(data[: len(data) // 2])
    return path


def _bad_crc_gzip(path: Path) -> Path:
    data = gzip.compress(LEGAL.read_bytes(), mtime=0)
    path.write_bytes(data[:-8] + b"\0" * 8)  # every hand decompresses; the trailer's CRC and size are wrong
    return path


@pytest.mark.parametrize(("make", "said"), [(_cut_gzip, "ended before the end-of-stream marker"),
                                            (_bad_crc_gzip, "CRC check failed")])
def test_an_audit_of_a_gzip_cut_short_or_of_a_bad_checksum_writes_nothing(tmp_path: Path, make: object,
                                                                          said: str) -> None:
    """A copy interrupted half way (or one whose checksum fails after every hand read): the audit exits 2 naming
    the file and why, and leaves no output folder, not an audit of the hands before the cut."""
    log = make(tmp_path / "day.jsonl.gz")  # type: ignore[operator]
    out = tmp_path / "audit"
    r = run_cli("audit", str(log), "-o", str(out), *FAST)
    clean_exit(r, 2)
    assert str(log) in r.output and said in r.output
    assert not out.exists()
