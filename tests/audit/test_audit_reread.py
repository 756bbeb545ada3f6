"""The audit reads a few hands of its input a second time (the shown rows' reasons, the report's evidence hands):

- an input that cannot be read twice (a named pipe, ``<(zcat ...)``'s ``/dev/fd/N``; ``logs.read_once``) is audited
  as standard input is, the analysis keeping what it needs the first time: the audit of the file (it once waited
  for ever on a named pipe, and left every evidence reason out from ``/dev/fd/N``);
- a log rewritten while the audit runs is exit 2, "changed while the audit read it", nothing written (it was exit 3
  for hands no longer legal, and reasons or replays of hands that were never analysed otherwise); lines appended
  to it meanwhile change nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import clean_exit, legal_obj, run_cli

FAST = ("--samples", "2", "--dd-samples", "1", "--seed", "3", "--jobs", "1")  # evidence needs the true deal's rollouts


def _audit(out: Path) -> dict[str, Any]:
    return json.loads((out / "audit.json").read_text())


@pytest.fixture(scope="module")
def plain(sharing_room: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The audit of the room's file: its evidence has the reasons the second read gives."""
    out = tmp_path_factory.mktemp("plain") / "out"
    r = run_cli("audit", str(sharing_room), "-o", str(out), *FAST)
    clean_exit(r, 1)  # the room's sharing pair is flagged
    audit = _audit(out)
    assert any(e["reasons"] for p in audit["pairs"] for e in p["evidence"])
    return audit


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_audited_as_its_file(sharing_room: Path, plain: dict[str, Any], tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    data = sharing_room.read_bytes()
    done = threading.Event()

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(data)
        # an audit that opens the pipe again waits for a writer for ever: a writer opening and closing it now and then
        # (no data) lets such a read end, empty, so the test fails instead of hanging
        while not done.wait(0.05):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # nobody reads it
                continue
            os.close(fd)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = tmp_path / "out"
    try:
        r = run_cli("audit", str(fifo), "-o", str(out), *FAST)
    finally:
        done.set()
        writer.join(timeout=60)
    clean_exit(r, 1)
    assert _audit(out) == plain


def test_a_pipe_named_as_dev_fd_is_audited_as_its_file(sharing_room: Path, plain: dict[str, Any],
                                                       tmp_path: Path) -> None:
    """``analyzer audit <(cat room.jsonl)``: the shell passes ``/dev/fd/N`` of a pipe; opened again, it is at its end."""
    if not os.path.isdir("/dev/fd"):
        pytest.skip("no /dev/fd here")
    read_end, write_end = os.pipe()
    data = sharing_room.read_bytes()

    def feed() -> None:
        try:
            with os.fdopen(write_end, "wb") as w:
                w.write(data)
        except BrokenPipeError:  # the reading end closed first (the audit failed)
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out = tmp_path / "out"
    try:
        r = run_cli("audit", f"/dev/fd/{read_end}", "-o", str(out), *FAST)
    finally:
        os.close(read_end)
        writer.join(timeout=60)
    clean_exit(r, 1)
    assert _audit(out) == plain


def _replace(path: Path, lines: list[bytes]) -> None:
    """``path`` rewritten with ``lines`` as a program rewriting a log does it: a new file renamed over it."""
    new = path.with_suffix(".new")
    new.write_bytes(b"".join(line + b"\n" for line in lines))
    os.replace(new, path)


def _tampered(lines: list[bytes]) -> list[bytes]:
    """Every hand with its actions 31 and 32 swapped (the other seat's card: no longer legal)."""
    out = []
    for line in lines:
        rec = json.loads(line)
        rec["actions"][30], rec["actions"][31] = rec["actions"][31], rec["actions"][30]
        out.append(json.dumps(rec).encode())
    return out


@pytest.mark.parametrize("when", ["reasons", "report"])
def test_a_log_rewritten_while_the_audit_runs_is_exit_2(sharing_room: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    """Rewritten once the analysis is done: before the shown rows' reasons are read (its hands no longer legal: once
    exit 3, "action 32 is not legal here"), or, after lines were appended (which changes nothing: the audit goes on),
    before the report reads its evidence hands (the same hands in the reverse order: once a report without them,
    exit 1). Exit 2 with one line, nothing written, the players' spill deleted."""
    import analyzer.audit.core as core
    import analyzer.report.audit as report

    log = tmp_path / "room.jsonl"
    shutil.copy(sharing_room, log)
    lines = log.read_bytes().splitlines()
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    reached: list[str] = []
    audit_rows, write_audit_report = core.audit_rows, report.write_audit_report

    def rows_then(*a: Any, **k: Any) -> Any:  # the one pass and the analysis are done; the reasons are read next
        got = audit_rows(*a, **k)
        if when == "reasons":
            _replace(log, _tampered(lines))
        else:  # a log still being written: a new hand at its end
            with open(log, "ab") as f:
                f.write(json.dumps(legal_obj(5, "appended-1")).encode() + b"\n")
        return got

    def report_then(*a: Any, **k: Any) -> Any:  # the audit is made; the report reads the evidence hands
        reached.append("report")
        _replace(log, lines[::-1])
        return write_audit_report(*a, **k)

    monkeypatch.setattr(core, "audit_rows", rows_then)
    if when == "report":
        monkeypatch.setattr(report, "write_audit_report", report_then)
    out = tmp_path / "out"
    r = run_cli("audit", str(log), "-o", str(out), *FAST)
    clean_exit(r, 2)
    assert f"analyzer: error: {log}: changed while the audit read it" in r.output
    assert reached == (["report"] if when == "report" else [])  # appended lines passed the reasons' read
    assert not out.exists()
    assert not [p.name for p in spill.iterdir() if p.name.startswith("bieqi-")]
