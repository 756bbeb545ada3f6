"""`report --pair --audit FILE`: the audit file checked against its schema and the logs, read a pair at a time when
big, a device read no further than the cap, --audit refused where no page reads it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import click
import orjson
import pytest
from conftest import SAMPLES, analyzer_process, clean_exit, legal_lines, legal_obj, run_cli


def _log(folder: Path, name: str = "room.jsonl", n: int = 3, first: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n)))
    return p


@pytest.mark.parametrize("entry", [
    {"hands_together": 10**9}, {"hands_together": "many"}, {"score": "high"}, {"evidence": [{"action": -1}]},
    {"players": ["p1"]},
])
def test_report_pair_checks_the_audit_file(tmp_path: Path, entry: dict) -> None:
    log = _log(tmp_path, n=2)
    pair = {"players": ["p1", "p2"], "hands_together": 2, "score": 1.0, **entry}
    audit = tmp_path / "audit.json"
    audit.write_bytes(orjson.dumps({"pairs": [pair]}))
    r = run_cli("report", str(log), "--pair", "p1,p2", "--audit", str(audit), "--out", str(tmp_path / "p.html"),
             "--samples", "1")
    clean_exit(r, 2)
    assert "--audit" in r.output


def test_report_audit_reads_a_device_no_further_than_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--audit /dev/zero`: the size check looked at the file's size (0 for a device) and then read it whole: 23 GB
    before the kernel killed the command. Now it reads at most the cap, then refuses."""
    import analyzer.audit.read as read

    monkeypatch.setattr(read, "MAX_AUDIT_BYTES", 1 << 20)
    out = tmp_path / "pair.html"
    r = run_cli("report", str(SAMPLES / "legal.jsonl"), "--pair", "alice,bob", "--audit", "/dev/zero", "-o", str(out))
    clean_exit(r, 2)
    assert "/dev/zero is larger than 1 MB" in r.output and not out.exists()


ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]




@pytest.mark.parametrize("page", [["--hand", "h0"], ["--player", "p1"]])
def test_report_audit_with_a_hand_or_player_page_is_a_usage_error(tmp_path: Path, page: list[str]) -> None:
    """`report --hand H --audit audit.json` (or --player) wrote the page and exited 0, the audit file unread without a
    word: the person believed the page carried the audit's verdict. It is a usage error now, and nothing is written."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(2))
    audit = tmp_path / "audit.json"
    audit.write_text('{"pairs": []}')
    out = tmp_path / "page.html"
    r = analyzer_process("report", str(log), *page, "--audit", str(audit), "-o", str(out), *ONE_SAMPLE)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--audit goes with --pair" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


LEGAL = SAMPLES / "legal.jsonl"


@pytest.fixture(scope="module")
def audit_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "a"
    clean_exit(run_cli("audit", str(LEGAL), "-o", str(out), "--samples", "1", "--dd-samples", "1"), 0)
    return out / "audit.json"


def test_an_audit_too_big_to_read_whole_is_read_a_pair_at_a_time(tmp_path: Path, audit_file: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An audit file over 256 MB was refused ("larger than 256 MB"): a room of thousands of players writes one. A
    regular file that big is now read a pair at a time (memory of one pair) and gives the same page."""
    import analyzer.audit.read as read

    whole = tmp_path / "whole.html"
    clean_exit(run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", str(audit_file), "-o", str(whole),
                       *ONE_SAMPLE), 0)
    monkeypatch.setattr(read, "MAX_AUDIT_BYTES", 1000)
    streamed = tmp_path / "streamed.html"
    clean_exit(run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", str(audit_file), "-o", str(streamed),
                       *ONE_SAMPLE), 0)
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
    import analyzer.audit.read as read

    monkeypatch.setattr(read, "MAX_AUDIT_BYTES", 1000)
    bad = tmp_path / "audit.json"
    bad.write_text(change(audit_file.read_text()))  # type: ignore[operator]
    out = tmp_path / "pair.html"
    r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", str(bad), "-o", str(out), *ONE_SAMPLE)
    clean_exit(r, 2)
    assert said in r.output and not out.exists(), r.output


def test_a_big_audit_without_the_pair_warns_and_draws_the_page(tmp_path: Path, audit_file: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.audit.read as read

    monkeypatch.setattr(read, "MAX_AUDIT_BYTES", 1000)
    doc = json.loads(audit_file.read_text())
    doc["pairs"] = [p for p in doc["pairs"] if sorted(p["players"]) != ["alice", "bob"]]
    other = tmp_path / "audit.json"
    other.write_text(json.dumps(doc, indent=1))
    out = tmp_path / "pair.html"
    r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", str(other), "-o", str(out), *ONE_SAMPLE)
    clean_exit(r, 0)
    assert "has no entry for alice and bob" in r.output and out.exists()


def _audit_file(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "audit.json"
    path.write_bytes(orjson.dumps(doc))
    return str(path)


@pytest.mark.parametrize("case", [[], None, {"verdict": {"key": "verdict_flagged", "args": True}}, "NaN"])
def test_report_audit_whose_case_file_is_not_the_audits_is_a_usage_error(tmp_path: Path, case: object) -> None:
    """The pair page draws the entry's case file; one not of the shape `analyzer audit` writes (a list, null, a
    verdict whose args are no list) made the page's script throw: refused, naming where."""
    audit = _audit_file(tmp_path, {"pairs": [{"players": ["alice", "bob"], "hands_together": 1, "case": case}]})
    r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    clean_exit(r, 2)
    assert "pairs/0/case" in r.output and "not an audit file" in r.output, r.output
    assert not (tmp_path / "p.html").exists()


def _together(*ids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(hand_id=h) for h in ids]


def test_report_audit_without_pairs_is_a_usage_error(tmp_path: Path) -> None:
    audit = _audit_file(tmp_path, {"format": "bieqi-audit", "players": []})
    r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    clean_exit(r, 2)
    assert "'pairs' is a required property" in r.output and "audit.json" in r.output
    assert not (tmp_path / "p.html").exists()


@pytest.mark.parametrize(("key", "value"), [("format", "another-tool"), ("version", 99), ("version", "1")])
def test_report_audit_of_another_format_or_version_is_a_usage_error(tmp_path: Path, key: str, value: object) -> None:
    """A file that says it is not this audit's format, or another version of it, is refused, naming the key; one of
    this format and version (or that does not say) is read."""
    pairs = [{"players": ["alice", "bob"], "hands_together": 1}]
    audit = _audit_file(tmp_path, {"format": "bieqi-audit", "version": 1, "pairs": pairs, key: value})
    r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    clean_exit(r, 2)
    assert f"at {key}" in r.output and "not an audit file" in r.output, r.output
    assert not (tmp_path / "p.html").exists()
    for doc in ({"format": "bieqi-audit", "version": 1, "pairs": pairs}, {"pairs": pairs}):
        audit = _audit_file(tmp_path, doc)
        r = run_cli("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
        clean_exit(r, 0)


def test_audit_entry_missing_pair_warns(tmp_path: Path) -> None:
    from analyzer.audit.read import pair_entry

    audit = _audit_file(tmp_path, {"pairs": [{"players": ["x", "y"], "hands_together": 1}]})
    said: list[str] = []
    assert pair_entry(audit, "a", "b", _together("h1"), warn=said.append) is None
    assert len(said) == 1 and "has no entry for a and b" in said[0]


def test_audit_entry_keeps_only_evidence_the_logs_back(tmp_path: Path) -> None:
    from analyzer.audit.read import pair_entry

    rows = [{"hand_id": "h1", "actor": "a", "partner": "b"}, {"hand_id": "nope-0", "actor": "a", "partner": "b"},
            {"hand_id": "h2", "actor": "zed", "partner": "b"}, {"action": 3}]
    audit = _audit_file(tmp_path, {"pairs": [{"players": ["b", "a"], "hands_together": 2, "evidence": rows}]})
    said: list[str] = []
    entry = pair_entry(audit, "a", "b", _together("h1", "h2"), warn=said.append)
    assert entry is not None and entry["evidence"] == rows[:1]
    assert "3 of the 4 evidence rows" in " ".join(said)


def test_audit_entry_checks_the_pair_and_caps_its_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from analyzer.audit import read
    from analyzer.commands import report

    bad = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "evidence": [{"hand_id": 1}]}]})
    with pytest.raises(read.AuditFileError, match="at pairs/0/evidence/0/hand_id"):
        read.pair_entry(bad, "a", "b", _together("h1"))
    with pytest.raises(click.BadParameter, match="at pairs/0/evidence/0/hand_id"):  # the command's usage error
        report._audit_entry(bad, "a", "b", _together("h1"))
    many = [{"hand_id": "h1", "action": i} for i in range(read.MAX_EVIDENCE_SHOWN + 5)]
    big = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "evidence": many}]})
    entry = report._audit_entry(big, "a", "b", _together("h1"))
    assert entry is not None and entry["evidence"] == many[:read.MAX_EVIDENCE_SHOWN]
    assert f"report: showing the first {read.MAX_EVIDENCE_SHOWN} of the {len(many)}" in capsys.readouterr().err
    over = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "hands_together": 3}]})
    with pytest.raises(read.AuditFileError, match="sat together 3 hands; the logs hold 1"):
        read.pair_entry(over, "a", "b", _together("h1"))
