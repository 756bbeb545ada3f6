"""`analyzer audit` on odd inputs: lookalike ids warned and kept, no valid hand, gzip copies cut short."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import SAMPLES, clean_exit, hand_line, run_cli, write_log

FAST = ["--samples", "1", "--dd-samples", "0"]


def test_audit_warns_of_lookalike_ids_and_keeps_the_hands(tmp_path: Path) -> None:
    """The audit says the ids that look like an earlier hand's (warnings on stderr, audit.json's ``lookalike_ids``:
    counted, the first shown as validate's problems), and keeps the hands: they are valid, analysed with their ids
    as written, and no hand is counted invalid; a log without lookalikes has a count of 0."""
    spellings = ["A1", "Ａ1", "A1", "a1"]
    log = write_log(tmp_path / "room.jsonl", [hand_line(s, f"h{s}", [x, "p2", "p3", "p4"]) for s, x in enumerate(spellings)])
    r = run_cli("audit", str(log), "-o", str(tmp_path / "a"), *FAST)
    clean_exit(r, 0)
    assert f"warning: {log}:2: player id 'Ａ1' looks like player id 'A1'" in r.output
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert (audit["valid_hands"], audit["invalid_hands"], audit["problems"]) == (4, 0, [])
    looks = audit["lookalike_ids"]
    assert looks["count"] == 2 and [(p["line"], p["player"], p["code"]) for p in looks["shown"]] == [
        (2, "Ａ1", "lookalike-ids"), (4, "a1", "lookalike-ids")]
    assert {"A1", "Ａ1", "a1"} <= {p["player"] for p in audit["players"]}  # three players, as written
    plain = write_log(tmp_path / "plain.jsonl", [hand_line(s, f"h{s}") for s in range(3)])
    clean_exit(run_cli("audit", str(plain), "-o", str(tmp_path / "b"), *FAST), 0)
    assert json.loads((tmp_path / "b" / "audit.json").read_text())["lookalike_ids"] == {"count": 0, "shown": []}


LEGAL = SAMPLES / "legal.jsonl"


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


@pytest.mark.parametrize("lines,why", [(b"", "the input holds no hands"), (b"{not json\n", "the problems above")])
def test_audit_without_a_valid_hand_says_why(tmp_path: Path, lines: bytes, why: str) -> None:
    log = tmp_path / "room.jsonl"
    log.write_bytes(lines)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"))
    clean_exit(r, 2)
    assert f"analyzer: error: no valid hands to analyse ({why}" in r.output and not (tmp_path / "out").exists()
