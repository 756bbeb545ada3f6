"""Start times at the gate: UTC offsets out of range, leap seconds, the calendar's ends."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import analyzer_process, legal_obj, variant_record

from analyzer.logs import format_record


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
