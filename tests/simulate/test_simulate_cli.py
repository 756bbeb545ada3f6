"""`analyzer simulate` on the command line: its truth on standard output or beside the log, seeds, gzip, options."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import analyzer_process, clean_exit, run_cli


@pytest.mark.parametrize("args", [["--variant", "bieqi-borrow", "--option", "hands_per_table=0"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=2.5"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=-5"],
                                  ["--variant", "bieqi-borrow", "--option", "hands_per_table=true"],
                                  ["--variant", "bieqi-borrow", "--option", "rules=1"],
                                  ["--variant", "bieqi-borrow", "--option", "cheat_rate=2"],
                                  ["--option", "presence=abc"], ["--option", "presence=1e-300"],
                                  ["--seed", "-5"]])
def test_simulator_options_are_checked(tmp_path: Path, args: list[str]) -> None:
    """A usage error naming the option: not a ZeroDivisionError, an AttributeError, a room that never ends (a presence
    that seats nobody) or a log that does not validate (negative hands a table)."""
    out = tmp_path / "room.jsonl"
    r = run_cli("simulate", "--hands", "3", "-o", str(out), *args)
    clean_exit(r, 2)
    name = args[-1].split("=")[0] if "--option" in args else "--seed"
    assert name in r.output and not out.exists()


def test_simulate_truth_dash_is_standard_output_not_a_file_named_dash(tmp_path: Path) -> None:
    """`--truth -` wrote a file named "-" in the current folder (while `-o -` is standard output everywhere)."""
    log = tmp_path / "room.jsonl"
    r = analyzer_process("simulate", "--hands", "2", "--players", "4", "-o", str(log), "--truth", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) >= {"colluding_pairs", "players", "seed"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["room.jsonl"]


@pytest.mark.parametrize(("out", "truth"), [("-", "-"), ("/dev/stdout", "/dev/fd/1")])
def test_simulate_refuses_the_log_and_its_truth_in_one_stream(tmp_path: Path, out: str, truth: str) -> None:
    r = analyzer_process("simulate", "--hands", "2", "--players", "4", "-o", out, "--truth", truth, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert "the same descriptor as --out" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_simulate_truth_ending_in_a_slash_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("simulate", "--hands", "2", "--players", "4", "-o", str(tmp_path / "r.jsonl"), "--truth",
                str(tmp_path / "t") + "/")
    clean_exit(r, 2)
    assert "a folder (it ends in '/')" in r.output and list(tmp_path.iterdir()) == []


def test_simulate_help_shows_the_seeds_it_takes(tmp_path: Path) -> None:
    """`simulate --help` offered seeds from -2^63 (the shared option), and a negative one was then refused by the
    command: the help now shows the range the simulators take, and click refuses the rest before anything runs."""
    r = analyzer_process("simulate", "--help")
    assert "0<=x<=9223372036854775807" in r.stdout and "-9223372036854775808" not in r.stdout
    out = tmp_path / "room.jsonl"
    r = analyzer_process("simulate", "--hands", "2", "--seed=-1", "-o", str(out))
    assert r.returncode == 2 and "Invalid value for '--seed'" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_simulate_still_gzips_a_log_named_gz(tmp_path: Path) -> None:
    import gzip

    out = tmp_path / "room.jsonl.gz"
    r = analyzer_process("simulate", "--hands", "2", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert gzip.decompress(out.read_bytes()).count(b"\n") == 2


def test_simulate_to_a_stream_sends_nothing_when_its_truth_cannot_be_written(tmp_path: Path) -> None:
    """`simulate -o - --truth T | analyzer validate -`: the log went down the pipe whole, and only then did the truth
    fail (a file in the way of its folder, a read-only folder): exit 2 after a whole room was sent, which the reader
    took as a room. The truth's file is opened first now when the log goes to a stream: nothing is sent."""
    (tmp_path / "afile").write_text("in the way")
    r = analyzer_process("simulate", "--hands", "3", "-o", "-", "--truth", str(tmp_path / "afile" / "truth.json"))
    assert r.returncode == 2 and "a file is in the way" in r.stderr, r.stderr
    assert r.stdout == ""
    good = tmp_path / "truth.json"
    r = analyzer_process("simulate", "--hands", "3", "-o", "-", "--truth", str(good))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 3 and orjson.loads(good.read_bytes())["hands"] == 3
