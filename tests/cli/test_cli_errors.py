"""Exit codes and error lines: the last-resort handler (exit 3), interrupts and pipes, read errors named in every
command, numbers out of range, closed standard streams."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import SAMPLES, analyzer_process, broken_gzip, clean_exit, legal_lines, legal_log, run_cli



@pytest.mark.parametrize("args", [
    ["validate", "LOG", "--max-line-bytes", "99999999999999999999"],
    ["audit", "LOG", "--out", "OUT", "--alpha", "nan"],
    ["audit", "LOG", "--out", "OUT", "--fdr", "inf"],
    ["decisions", "LOG", "-o", "OUT", "--noise", "nan"],
    ["simulate", "--out", "OUT", "--strength", "nan"],
    ["simulate", "--out", "OUT", "--share", "nan"],
    ["simulate", "--out", "OUT", "--option", "seek=nan"],
    ["simulate", "--out", "OUT", "--players", "3"],
])
def test_options_out_of_range_or_nan_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    log = legal_log(tmp_path)
    out = tmp_path / "o"
    r = run_cli(*[str(log) if a == "LOG" else str(out) if a == "OUT" else a for a in args])
    clean_exit(r, 2)
    assert not out.exists()


HUGE = str(2**70)


@pytest.mark.parametrize("args", [["audit", "-o", "{o}", "--min-hands", HUGE], ["audit", "-o", "{o}", "--seed", HUGE],
                                  ["audit", "-o", "{o}", "--seed", str(-(2**63) - 1)],
                                  ["audit", "-o", "{o}", "--samples", HUGE], ["audit", "-o", "{o}", "--dd-samples", HUGE],
                                  ["decisions", "-o", "{o}", "--max-samples", HUGE], ["decisions", "-o", "{o}", "--seed", HUGE],
                                  ["players", "--jobs", str(2**31)], ["audit", "-o", "{o}", "--evidence", HUGE]])
def test_integers_beyond_what_the_kernels_hold_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    """Not a TypeError from orjson, an OverflowError from numpy or a typing error from numba, with an empty folder
    left behind."""
    log = legal_log(tmp_path / "in")
    out = tmp_path / "o"
    r = run_cli(args[0], str(log), *[a.format(o=out) for a in args[1:]])
    clean_exit(r, 2)
    assert "is not in the range" in r.output and not out.exists()


def test_closed_standard_streams_are_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    log = legal_log(tmp_path)
    run = [sys.executable, "-c", "import sys; from analyzer.cli import main; sys.argv[0] = 'analyzer'; main()"]
    closed_out = subprocess.run([*run, "validate", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, timeout=120, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert closed_out.returncode == 0 and "Traceback" not in closed_out.stderr, closed_out.stderr
    closed_in = subprocess.run([*run, "validate", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=120, preexec_fn=lambda: os.close(0))
    assert "Traceback" not in closed_in.stderr and "0 hands" in closed_in.stdout, closed_in.stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            helped = subprocess.run([*run, "--help"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert helped.returncode == 2 and "No space left" in helped.stderr and "Traceback" not in helped.stderr


FAST = ["--samples", "1", "--dd-samples", "0"]




@pytest.mark.parametrize("command", [["validate"], ["players", *FAST], ["decisions", *FAST, "-o", "{o}"],
                                     ["report", "--hand", "h0", "-o", "{o}"]])
def test_every_command_names_a_gzip_of_broken_data(tmp_path: Path, command: list[str]) -> None:
    bad = broken_gzip(tmp_path / "bad.jsonl.gz")
    out = tmp_path / "out"
    r = run_cli(command[0], str(bad), *(a.replace("{o}", str(out)) for a in command[1:]))
    clean_exit(r, 2)
    assert f"{bad}" in r.output and "broken compressed data" in r.output
    assert not out.exists()


def test_a_failure_on_rows_computed_from_the_logs_is_a_bug_not_a_users_store(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows the command computed itself cannot be "not decision rows written by `analyzer decisions`": a failure on
    them (as the LAPACK one above was) is exit 3, the analyzer's bug, not exit 2 blaming the input."""
    import analyzer.analysis.players as players

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("SVD did not converge")

    monkeypatch.setattr(players, "player_table", broken)
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(2))
    r = run_cli("players", str(log), *FAST)
    assert r.exit_code != 2 and isinstance(r.exception, ValueError)
    assert "not decision rows" not in r.output


LEGAL = SAMPLES / "legal.jsonl"


_BREAK = "import analyzer.commands.validate as v\ndef boom(fmt):\n    raise {exc}\nv.problem_stream = boom\n"


def test_an_unexpected_exception_is_exit_3_with_one_line_and_the_traceback() -> None:
    p = analyzer_process("validate", str(LEGAL), code=_BREAK.format(exc="RuntimeError('boom')"), text=False)
    assert p.returncode == 3, p.stderr.decode()
    err = p.stderr.decode().splitlines()
    assert err[0] == "analyzer: internal error (a bug in the analyzer, not in your input): RuntimeError: boom"
    assert err[1].startswith("Traceback") and err[-1] == "RuntimeError: boom"


@pytest.mark.parametrize(("exc", "code"), [("KeyboardInterrupt()", 130), ("BrokenPipeError()", 2),
                                           ("click.UsageError('bad')", 2)])
def test_interrupts_pipes_and_usage_errors_keep_their_codes(exc: str, code: int) -> None:
    p = analyzer_process("validate", str(LEGAL), code="import click\n" + _BREAK.format(exc=exc), text=False)
    assert p.returncode == code, p.stderr.decode()
    assert b"Traceback" not in p.stderr and b"internal error" not in p.stderr


def test_every_help_lists_exit_3() -> None:
    for name in ("validate", "simulate", "decisions", "players", "audit", "report"):
        assert "3: internal error" in run_cli(name, "--help").output, name
