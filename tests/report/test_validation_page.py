"""The validation page (`validate -o page.html`): written for inputs read once, reads no further than the last
problem, never draws a problem on a hand that replaced the checked one."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, analyzer_process, feed_fifo, hand_line, legal_lines, legal_obj

from analyzer.validate import validate

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


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
    log.write_bytes(hand_line(1, "h1") + b"not json\n" + b"".join(hand_line(s, f"h{s}") for s in range(2, 40)))
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
    log.write_bytes(legal_lines(1) + orjson.dumps(bad) + b"\n")
    summary = validate([str(log)])
    assert [(p.line, p.hand_id, p.code) for p in summary.problems] == [(2, "bad", "out-of-turn")]

    def replayed(page: Path) -> list[str]:
        write_validation_report(page, [str(log)], summary)
        found = re.search(r'"hand_ids":(\[[^\]]*\])', page.read_text())
        assert found is not None
        return orjson.loads(found.group(1))  # type: ignore[no-any-return]

    assert replayed(tmp_path / "before.html") == ["bad"]
    log.write_bytes(legal_lines(2, first=10))  # the same path, other hands: line 2 holds the valid hand h11 now
    assert replayed(tmp_path / "after.html") == []
