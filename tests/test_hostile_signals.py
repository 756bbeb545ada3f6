"""Ctrl-C: exit 130, quietly (no "Aborted!", no worker traceback), no partial output, no temp file (issue 15, item 11)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _start(args: list[str], **kw: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # a session of its own: the signal goes to its whole process group, as a terminal sends it
    return subprocess.Popen([sys.executable, "-u", "-m", "analyzer.cli", *args], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_validate_exits_130_quietly(jobs: str, tmp_path: Path) -> None:
    html = tmp_path / "v.html"
    proc = _start(["validate", "-", "--jobs", jobs, "--html", str(html)], stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"x\n" * 8192)  # more batches than the workers hold in flight: results come back
    proc.stdin.flush()
    first = proc.stdout.readline()  # the run is under way: it streams its first problem
    assert b"[not-json]" in first
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    proc.stdin.close()
    assert proc.returncode == 130
    assert err == b"", err.decode(errors="replace")
    assert not html.exists()


def test_ctrl_c_during_simulate_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "room.jsonl"
    proc = _start(["simulate", "--hands", "300000", "--players", "8", "--out", str(out), "--truth",
                   str(tmp_path / "truth.json")])
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".room.jsonl.") for p in tmp_path.iterdir()):  # it is writing
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert err == b"", err.decode(errors="replace")
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path: Path) -> None:
    """`analyzer validate ... | head -1`: exit 2, no BrokenPipeError traceback."""
    import gzip

    gz = tmp_path / "bad.jsonl.gz"
    gz.write_bytes(gzip.compress(b"x\n" * 200_000))
    proc = _start(["validate", str(gz)])
    assert proc.stdout is not None and proc.stderr is not None
    assert b"[not-json]" in proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 2
    assert err == b"", err.decode(errors="replace")
