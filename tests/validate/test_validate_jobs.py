"""Validation spread over worker processes: a file read in ranges gives the one-process result and reads no range
twice."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from conftest import legal_obj

from analyzer.validate import validate


def test_a_range_inside_a_line_of_many_ranges_reads_no_further_than_its_end(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate --jobs 2`` splits a file into ranges of 4 MB; a range that starts inside a line skipped it to its
    end, so a hostile line of N ranges was read N times over (a 2 GB line of NULs: 84 s instead of 5). A range the
    line goes on past holds no line and stops at its own end."""
    import io

    import analyzer.validate as v

    hand = orjson.dumps(legal_obj(3, "after")) + b"\n"
    log = tmp_path / "long.jsonl"
    log.write_bytes(b"x" * (12 << 20) + b"\n" + hand)
    furthest = [0]

    class Counting(io.BufferedReader):
        def readline(self, size: int | None = -1) -> bytes:
            line = super().readline(size)
            furthest[0] = max(furthest[0], self.tell())
            return line

    monkeypatch.setattr(v, "open", lambda path, mode, buffering: Counting(io.FileIO(path, "rb"), buffering),
                        raising=False)
    assert v._range_lines(v._Range(str(log), 1 << 20, 2 << 20), 1 << 20) == ([], 0)
    assert furthest[0] <= (2 << 20) + (1 << 16)
    lines, count = v._range_lines(v._Range(str(log), 11 << 20, None), 1 << 20)  # the range the hand starts in
    assert [x.data for x in lines] == [hand.rstrip(b"\n")] and count == 1
    monkeypatch.undo()
    s = validate([str(log)], jobs=2)
    assert (s.hands, s.valid_hands, [(p.code, p.line) for p in s.problems]) == (2, 1, [("line-too-long", 1)])


def test_a_binary_file_read_in_ranges_is_one_io_error(tmp_path: Path) -> None:
    """A big regular file is read in ranges by worker processes: the same single io-error, before any range."""
    from analyzer.validate import _batches

    blob = tmp_path / "big.jsonl"
    blob.write_bytes(random.Random(4).randbytes(300_000))
    [item] = list(_batches([str(blob)], 1 << 20, 1024, ranges=True))
    assert [p.code for p in item.check.problems] == ["io-error"]
    assert "binary data" in item.check.problems[0].message
