"""One vocabulary across the command line: the same option spellings and defaults in every command,
help that says what each command is for (with an example and exit codes), one move numbering
across text, JSON and the HTML page's data, progress only on a terminal, outputs with the umask."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import click
import orjson
import pandas as pd
import pytest
from conftest import run_cli
from report_fixtures import room

from analyzer.cli import COMMANDS, cli
from analyzer.commands.common import AUDIT_POLICY, DD_SAMPLES, MAX_SAMPLES, NOISE, POLICY, POLICY_NAMES, SAMPLES
from analyzer.logs import format_record
from analyzer.progress import Progress, count_lines

#: Commands that write a file or folder.
OUTPUTS = ("validate", "simulate", "decisions", "players", "audit", "report")
ANALYSING = ("decisions", "players", "audit", "report")


def _command(name: str) -> click.Command:
    cmd = cli.get_command(click.Context(cli), name)  # type: ignore[attr-defined]
    assert cmd is not None
    return cmd


def _option(cmd: click.Command, name: str) -> click.Option | None:
    return next((p for p in cmd.params if isinstance(p, click.Option) and p.name == name), None)


def _log(tmp_path: Path, hands: int = 3) -> Path:
    log = tmp_path / "room.jsonl"
    lines = [format_record(r) for r in room(hands)]
    # a hand whose 4th action is out of turn: a problem at move 4 = $.actions[3]
    rec = orjson.loads(lines[1])
    rec["hand_id"] = "bad"
    rec["actions"][3]["seat"] = (rec["actions"][3]["seat"] + 1) % 4
    log.write_bytes(b"\n".join([*lines, orjson.dumps(rec)]) + b"\n")
    return log


def test_every_output_is_dash_o_or_dash_dash_out() -> None:
    for name in OUTPUTS:
        cmd = _command(name)
        out = _option(cmd, "out")
        assert out is not None, name
        assert out.opts == ["-o", "--out"] and out.secondary_opts == [], (name, out.opts)
        shown = cmd.get_help(click.Context(cmd))
        assert "-o, --out" in shown
        assert not [p for p in cmd.params if isinstance(p, click.Option) and p.name in ("output", "html", "out_dir")]


def test_one_default_set_for_the_analysis() -> None:
    from analyzer.analysis.decisions import DEFAULT_DD_SAMPLES, DEFAULT_MAX_SAMPLES, DEFAULT_SAMPLES

    for name in ANALYSING:
        cmd = _command(name)
        got = {k: getattr(_option(cmd, k), "default", None) for k in ("samples", "dd_samples", "seed")}
        assert got == {"samples": SAMPLES, "dd_samples": DD_SAMPLES, "seed": 0}, name
        ceiling = _option(cmd, "max_samples")
        # audit has no --max-samples: it runs the library's ceiling, which is the same number
        assert (ceiling.default if ceiling is not None else DEFAULT_MAX_SAMPLES) == MAX_SAMPLES, name
        helps = {k: _option(cmd, k).help for k in ("samples", "dd_samples", "seed")}  # type: ignore[union-attr]
        assert helps == {k: _option(_command("decisions"), k).help for k in helps}, name  # type: ignore[union-attr]
    assert MAX_SAMPLES == DEFAULT_MAX_SAMPLES
    # the commands compute the rows every detection figure was measured on (eval_audit analyses at the library's set)
    assert (SAMPLES, MAX_SAMPLES, DD_SAMPLES) == (DEFAULT_SAMPLES, DEFAULT_MAX_SAMPLES, DEFAULT_DD_SAMPLES)
    from analyzer.analysis import decisions

    assert (POLICY_NAMES, AUDIT_POLICY) == (tuple(decisions.POLICIES), decisions.AUDIT_POLICY)
    assert (POLICY, NOISE) == (decisions.DEFAULT_POLICY, decisions.DEFAULT_NOISE)
    for name in ("validate", "audit", "report"):
        lang = _option(_command(name), "lang")
        assert lang is not None and lang.default == "en" and list(lang.type.choices) == ["en", "zh"]  # type: ignore[attr-defined]


def test_simulate_help_shows_the_rooms_defaults() -> None:
    from analyzer.commands.simulate import ROOM_DEFAULTS
    from analyzer.simulate.room import Options

    assert ROOM_DEFAULTS == {k: getattr(Options(), k) for k in ROOM_DEFAULTS}
    text = run_cli("simulate", "--help").output
    for name, value in ROOM_DEFAULTS.items():
        if name in ("colluders", "style"):
            assert f"[default for bieqi: {value}]" in text


def test_help_gives_purpose_example_and_exit_codes() -> None:
    top = run_cli("--help")
    assert top.exit_code == 0
    assert "..." not in top.output.split("Commands:")[1]  # no purpose cut short
    for name in COMMANDS:
        line = re.search(rf"^  {name}\s+(.+)$", top.output, re.MULTILINE)
        assert line and line.group(1).endswith("."), name
        text = run_cli(name, "--help").output
        assert re.search(r"Example:\n +analyzer " + name, text), name
        codes = re.search(r"Exit codes:\n((?:    \d: .+\n?)+)", text)
        assert codes and codes.group(1).split()[0] == "0:", name
    assert f"--samples {SAMPLES}" in top.output and f"--dd-samples {DD_SAMPLES}" in top.output and "move 10 is action 9" in top.output


def test_one_move_numbering_across_text_json_and_page(tmp_path: Path) -> None:
    log = _log(tmp_path)
    text = run_cli("validate", str(log))
    js = run_cli("validate", str(log), "--format", "json", "-o", str(tmp_path / "v.html"))
    assert text.exit_code == js.exit_code == 1
    problem = next(p for p in orjson.loads(js.stdout)["problems"] if p["hand_id"] == "bad")
    assert problem["code"] == "out-of-turn" and (problem["action"], problem["move"]) == (3, 4)
    assert f"hand bad, move 4, seat {problem['seat']}" in text.output
    assert "action 3" not in text.output
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    data = orjson.loads(re.search(r'id="report-data">(.*?)</script>', page).group(1))  # type: ignore[union-attr]
    row = next(r for r in data["validation"]["problems"] if r["hand_id"] == "bad")
    assert row["action"] == 3  # the page shows action + 1 (checked in a browser in test_report_i18n)


def test_parquet_is_written_with_the_umask(tmp_path: Path) -> None:
    log = _log(tmp_path, hands=2)
    out = tmp_path / "d.parquet"
    old = os.umask(0o022)
    try:
        res = run_cli("decisions", str(log), "-o", str(out), "--samples", "2", "--dd-samples", "1")
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    # the output is a decision store (a folder of Parquet parts): the folder and every file get the umask
    assert out.stat().st_mode & 0o777 == 0o755
    assert {p.stat().st_mode & 0o777 for p in out.iterdir()} == {0o644}
    assert pd.read_parquet(out)["action"].min() >= 0  # machine outputs keep the 0-based index


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_phase_total_rate_and_eta_on_a_terminal() -> None:
    tty = _Tty()
    with Progress("audit", stream=tty, min_interval=0) as bar:
        tick = bar.phase("analysing", 10)
        assert tick is not None
        for n in range(1, 11):
            tick(n)
        bar.phase("signals")
    shown = tty.getvalue()
    assert "audit: analysing" in shown and "10/10" in shown and "hands/s" in shown and "<" in shown  # ETA
    assert "audit: signals" in shown
    pipe = io.StringIO()  # not a terminal: nothing at all
    with Progress("audit", stream=pipe) as bar:
        assert bar.phase("analysing", 10) is None
    assert pipe.getvalue() == ""


def test_commands_print_no_progress_when_not_on_a_terminal(tmp_path: Path) -> None:
    log = _log(tmp_path)
    res = run_cli("report", str(log), "--player", "p3", "-o", str(tmp_path / "p.html"),
                                   "--samples", "2", "--dd-samples", "1")
    assert res.exit_code == 0, res.output
    assert "\r" not in res.stderr and "hands/s" not in res.stderr


def test_count_lines_gives_the_total_or_none(tmp_path: Path) -> None:
    log = _log(tmp_path)
    assert count_lines([str(log)]) == 4
    assert count_lines(["-"]) is None
    assert count_lines([str(tmp_path / "missing.jsonl")]) is None
    assert count_lines([str(log)], limit=10) is None


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_a_one_line_purpose(name: str) -> None:
    cmd = _command(name)
    assert cmd.short_help and len(cmd.short_help) <= 60 and "\n" not in cmd.short_help


@pytest.mark.parametrize("command", [["validate", "samples/legal.jsonl"], ["players", "samples/legal.jsonl"],
                                     ["report", "samples/legal.jsonl", "--hand", "sample-plain"]])
def test_an_output_file_named_as_a_folder_is_refused(command: list[str], tmp_path) -> None:
    """``-o out/`` means a folder: a file called ``out`` would surprise (it was written)."""
    from conftest import ROOT

    r = run_cli(command[0], str(ROOT / command[1]), *command[2:], "-o", f"{tmp_path}/out/")
    assert r.exit_code == 2 and "a folder" in r.output
    assert list(tmp_path.iterdir()) == []


def test_path_errors_escape_the_names_they_quote(tmp_path) -> None:
    """A file name found in a folder from elsewhere can neither drive the terminal nor forge a second line."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "b\x1b[2J.jsonl").symlink_to(tmp_path / "nowhere")
    r = run_cli("validate", str(tmp_path / "logs"))
    assert r.exit_code == 2 and "\\x1b[2J" in r.output and "\x1b" not in r.output
    r = run_cli("validate", "nope\nanalyzer: forged line.jsonl")
    assert r.exit_code == 2 and "nope\\x0aanalyzer: forged" in r.output
    assert not any(line.startswith("analyzer: forged") for line in r.output.splitlines())


def test_a_folder_output_refuses_dash(tmp_path, monkeypatch) -> None:
    """``decisions -o -`` wrote a store called '-'; a folder of files has no standard output."""
    from conftest import ROOT

    monkeypatch.chdir(tmp_path)
    for command in (["decisions"], ["audit"]):
        r = run_cli(*command, str(ROOT / "samples" / "legal.jsonl"), "-o", "-")
        assert r.exit_code == 2 and "standard output" in r.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,says", [
    (["validate", "--jobs", "0", "samples/legal.jsonl"], "'--jobs'"),
    (["audit", "/no/such/log.jsonl", "--out", "OUT/o"], "/no/such/log.jsonl"),
    (["audit"], "Missing argument"),
    (["nosuch"], "No such command"),
    (["--bogus"], "No such option"),
    (["report", "samples/legal.jsonl", "--hand", "nosuch", "-o", "OUT/x.html"], "no hand 'nosuch'"),
])
def test_usage_and_path_errors_are_one_line(args: list[str], says: str, tmp_path) -> None:
    """click's own errors (bad options, missing paths, unknown commands) read as every other error: one line,
    ``analyzer: error: ...`` naming what is wrong and the help to read, exit 2."""
    from conftest import ROOT

    args = [a.replace("OUT", str(tmp_path)).replace("samples/", f"{ROOT}/samples/") for a in args]
    r = run_cli(*args)
    lines = r.output.splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert lines[0].startswith("analyzer: error: ") and says in lines[0] and lines[0].endswith("--help)"), lines
    assert list(tmp_path.iterdir()) == []


def test_no_arguments_shows_the_help() -> None:
    r = run_cli()
    assert r.output.startswith("Usage: ") and "analyzer: error" not in r.output and "validate" in r.output


def test_help_imports_no_numba_or_pandas() -> None:
    """``analyzer --help`` imports every command's module to list them: none of them pulls in the analysis'
    layers at import (each command imports them when it runs), so the help answers at once."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from click.testing import CliRunner\n"
            "from analyzer.cli import cli\n"
            "r = CliRunner().invoke(cli, ['--help'])\n"
            "assert r.exit_code == 0 and 'decisions' in r.output and 'players' in r.output, r.output\n"
            "print(sorted(m for m in ('numba', 'pandas', 'scipy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
