"""Hostile input, round 2 (the CLI's part): non-UTF-8 file names in data, `report --audit` checked against the logs,
`players` given stores and parts as PATHS, output streams that cannot hold the text, the last-resort handler (exit 3),
a repeated --hand, a FIFO inside an input folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import click
import orjson
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from conftest import clean_exit as _clean_exit
from conftest import run_cli as _run

from analyzer.cli import cli
from analyzer.logs import OutputSet
from analyzer.problems import Problem, path_text

ROOT = Path(__file__).resolve().parents[1]
LEGAL = ROOT / "samples" / "legal.jsonl"
PROBLEMS = ROOT / "samples" / "problems.jsonl"
FAST = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]



def _analyzer(*args: str, env: dict[str, str] | None = None, code: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """The command in a process of its own (its streams as a user's shell gives them); ``code`` runs first."""
    prog = (code or "") + "\nfrom analyzer.cli import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", prog, *args], cwd=ROOT, capture_output=True, timeout=300,
                          env={**os.environ, **(env or {})})


# --------------------------------------------------------------------------- F6: file names that are not UTF-8

@pytest.fixture()
def odd_name(tmp_path: Path) -> Path:
    """A folder holding a log whose name is the bytes ``\\xff\\xfe.jsonl`` (valid hands and one invalid)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    bad = PROBLEMS.read_bytes().splitlines(keepends=True)[14]
    with open(os.fsencode(folder) + b"/\xff\xfe.jsonl", "wb") as f:
        f.write(LEGAL.read_bytes() + bad)
    return folder


def test_path_text_escapes_only_what_is_not_utf8() -> None:
    assert path_text("logs/día 1.jsonl") == "logs/día 1.jsonl"  # valid text unchanged
    assert path_text(os.fsdecode(b"a/\xff\xfe.jsonl")) == "a/\\xff\\xfe.jsonl"
    assert path_text("\ud800x") == "\\ud800x"  # a surrogate no file name gives: escaped all the same
    name = os.fsdecode(b"x\xff")
    d = Problem("io-error", f"cannot read {name}: gone", file=name).to_dict()
    assert d["file"] == "x\\xff" and d["message"] == "cannot read x\\xff: gone"
    orjson.dumps(d)  # raised TypeError (surrogates not allowed) before


def test_validate_json_and_page_with_a_non_utf8_file_name(odd_name: Path, tmp_path: Path) -> None:
    r = _run("validate", "--format", "json", str(odd_name))
    _clean_exit(r, 1)
    doc = orjson.loads(r.stdout)  # one whole document (it stopped at '{"problems": [' before)
    assert doc["n_problems"] == 1 and doc["problems"][0]["file"].endswith("/\\xff\\xfe.jsonl")
    text = _run("validate", str(odd_name))
    assert "\\udcff\\udcfe.jsonl:8: hand" in text.stdout  # text output as it was
    page = tmp_path / "page.html"
    _clean_exit(_run("validate", str(odd_name), "-o", str(page)), 1)
    assert "\\\\xff\\\\xfe.jsonl" in page.read_text(encoding="utf-8")


def test_an_output_set_that_fails_leaves_no_folder_it_made(tmp_path: Path) -> None:
    new = tmp_path / "audit"
    with pytest.raises(RuntimeError), OutputSet(new, ["audit.json"]) as tmp:
        (tmp / "audit.json").write_bytes(b"{}")
        raise RuntimeError("a failed write")
    assert not new.exists()
    old = tmp_path / "old"
    old.mkdir()
    with pytest.raises(RuntimeError), OutputSet(old, ["audit.json"]):
        raise RuntimeError("a failed write")
    assert old.is_dir()  # a folder the user had stays


# --------------------------------------------------------------------------- F5: report --audit

def _audit_file(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "audit.json"
    path.write_bytes(orjson.dumps(doc))
    return str(path)


@pytest.mark.parametrize("case", [[], None, {"verdict": {"key": "verdict_flagged", "args": True}}, "NaN"])
def test_report_audit_whose_case_file_is_not_the_audits_is_a_usage_error(tmp_path: Path, case: object) -> None:
    """The pair page draws the entry's case file; one not of the shape `analyzer audit` writes (a list, null, a
    verdict whose args are no list) made the page's script throw: refused, naming where."""
    audit = _audit_file(tmp_path, {"pairs": [{"players": ["alice", "bob"], "hands_together": 1, "case": case}]})
    r = _run("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    _clean_exit(r, 2)
    assert "pairs/0/case" in r.output and "not an audit file" in r.output, r.output
    assert not (tmp_path / "p.html").exists()


def _together(*ids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(hand_id=h) for h in ids]


def test_report_audit_without_pairs_is_a_usage_error(tmp_path: Path) -> None:
    audit = _audit_file(tmp_path, {"format": "bieqi-audit", "players": []})
    r = _run("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    _clean_exit(r, 2)
    assert "'pairs' is a required property" in r.output and "audit.json" in r.output
    assert not (tmp_path / "p.html").exists()


@pytest.mark.parametrize(("key", "value"), [("format", "another-tool"), ("version", 99), ("version", "1")])
def test_report_audit_of_another_format_or_version_is_a_usage_error(tmp_path: Path, key: str, value: object) -> None:
    """A file that says it is not this audit's format, or another version of it, is refused, naming the key; one of
    this format and version (or that does not say) is read."""
    pairs = [{"players": ["alice", "bob"], "hands_together": 1}]
    audit = _audit_file(tmp_path, {"format": "bieqi-audit", "version": 1, "pairs": pairs, key: value})
    r = _run("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
    _clean_exit(r, 2)
    assert f"at {key}" in r.output and "not an audit file" in r.output, r.output
    assert not (tmp_path / "p.html").exists()
    for doc in ({"format": "bieqi-audit", "version": 1, "pairs": pairs}, {"pairs": pairs}):
        audit = _audit_file(tmp_path, doc)
        r = _run("report", str(LEGAL), "--pair", "alice,bob", "--audit", audit, "-o", str(tmp_path / "p.html"))
        _clean_exit(r, 0)


def test_audit_entry_missing_pair_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from analyzer.commands.report import _audit_entry

    audit = _audit_file(tmp_path, {"pairs": [{"players": ["x", "y"], "hands_together": 1}]})
    assert _audit_entry(audit, "a", "b", _together("h1")) is None
    assert "has no entry for a and b" in capsys.readouterr().err


def test_audit_entry_keeps_only_evidence_the_logs_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from analyzer.commands.report import _audit_entry

    rows = [{"hand_id": "h1", "actor": "a", "partner": "b"}, {"hand_id": "nope-0", "actor": "a", "partner": "b"},
            {"hand_id": "h2", "actor": "zed", "partner": "b"}, {"action": 3}]
    audit = _audit_file(tmp_path, {"pairs": [{"players": ["b", "a"], "hands_together": 2, "evidence": rows}]})
    entry = _audit_entry(audit, "a", "b", _together("h1", "h2"))
    assert entry is not None and entry["evidence"] == rows[:1]
    assert "3 of the 4 evidence rows" in capsys.readouterr().err


def test_audit_entry_checks_the_pair_and_caps_its_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from analyzer.commands import report

    bad = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "evidence": [{"hand_id": 1}]}]})
    with pytest.raises(click.BadParameter, match="at pairs/0/evidence/0/hand_id"):
        report._audit_entry(bad, "a", "b", _together("h1"))
    many = [{"hand_id": "h1", "action": i} for i in range(report.MAX_EVIDENCE_SHOWN + 5)]
    big = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "evidence": many}]})
    entry = report._audit_entry(big, "a", "b", _together("h1"))
    assert entry is not None and entry["evidence"] == many[:report.MAX_EVIDENCE_SHOWN]
    assert f"first {report.MAX_EVIDENCE_SHOWN} of the {len(many)}" in capsys.readouterr().err
    over = _audit_file(tmp_path, {"pairs": [{"players": ["a", "b"], "hands_together": 3}]})
    with pytest.raises(click.BadParameter, match="sat together 3 hands; the logs hold 1"):
        report._audit_entry(over, "a", "b", _together("h1"))


# --------------------------------------------------------------------------- F4: players given stores and parts

@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store of samples/legal.jsonl in parts of 3 hands, the same logs at other settings, and a store of other
    hands (legal.jsonl's hands renamed)."""
    root = tmp_path_factory.mktemp("stores")
    other_log = root / "other.jsonl"
    other_log.write_bytes(b"".join(line.replace(b'"hand_id":"', b'"hand_id":"o-') + b"\n"
                                   for line in LEGAL.read_bytes().splitlines()))
    out = {"base": root / "base", "s2": root / "s2", "other": root / "other", "other_log": other_log}
    for name, log, extra in (("base", LEGAL, FAST), ("s2", LEGAL, ["--samples", "2", "--max-samples", "2",
                                                                     "--dd-samples", "0"]),
                             ("other", other_log, FAST)):
        r = _run("decisions", str(log), "-o", str(out[name]), "--batch-hands", "3", *extra)
        assert r.exit_code == 0, r.output
    return out


def _decisions(r: Result) -> int:
    assert r.exit_code == 0, r.output
    return sum(p["decisions"] for p in orjson.loads(r.stdout))


def test_players_reads_a_store_or_part_given_twice_once(stores: dict[str, Path]) -> None:
    base = str(stores["base"])
    part = str(sorted(stores["base"].glob("part-*.parquet"))[0])
    once = _decisions(_run("players", base, "--format", "json"))
    assert once > 0
    assert _decisions(_run("players", base, base, "--format", "json")) == once
    assert _decisions(_run("players", base, part, "--format", "json")) == once
    assert _decisions(_run("players", part, base, "--format", "json")) == once
    assert _decisions(_run("players", "--decisions", base, base, "--format", "json")) == once
    both = _decisions(_run("players", base, str(stores["other"]), "--format", "json"))
    assert both == 2 * once  # other hands (the same games renamed): added


def test_players_refuses_a_hand_from_two_inputs(stores: dict[str, Path], tmp_path: Path) -> None:
    r = _run("players", str(stores["base"]), str(LEGAL), "--format", "json")
    _clean_exit(r, 2)
    assert "hand 'sample-plain' is in both" in r.output and str(stores["base"]) in r.output and str(LEGAL) in r.output
    copy = tmp_path / "copy.parquet"  # a part copied out of its store: the same hands from another file
    part = sorted(stores["base"].glob("part-*.parquet"))[0]
    copy.write_bytes(part.read_bytes())
    r = _run("players", str(stores["base"]), str(copy), "--format", "json")
    _clean_exit(r, 2)
    assert "is in both" in r.output and str(copy) in r.output


def test_players_refuses_stores_of_other_settings(stores: dict[str, Path]) -> None:
    r = _run("players", str(stores["base"]), str(stores["s2"]), "--format", "json")
    _clean_exit(r, 2)
    assert "--samples 2" in r.output and "--samples 1" in r.output and "different settings" in r.output
    part = str(sorted(stores["s2"].glob("part-*.parquet"))[0])
    _clean_exit(_run("players", str(stores["other"]), part, "--format", "json"), 2)
    # logs with a store: analysed at the store's settings unless options say otherwise (then refused)
    r = _run("players", str(stores["base"]), str(stores["other_log"]), "--format", "json", "--samples", "2")
    _clean_exit(r, 2)
    assert "the logs" in r.output and "different settings" in r.output


def test_players_names_the_file_and_column_of_stray_rows(stores: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "rows"
    folder.mkdir()
    part = sorted(stores["base"].glob("part-*.parquet"))[0]
    (folder / "a.parquet").write_bytes(part.read_bytes())
    pd.DataFrame({"a": [1, 2, 3]}).to_parquet(folder / "zzz.parquet")
    r = _run("players", str(folder))
    _clean_exit(r, 2)
    assert str(folder / "zzz.parquet") in r.output and "hand_id" in r.output
    rows = pd.read_parquet(part)
    rows["regret"] = rows["regret"].astype(str)
    (folder / "zzz.parquet").unlink()
    rows.to_parquet(folder / "b.parquet")
    r = _run("players", str(folder))
    _clean_exit(r, 2)
    assert str(folder / "b.parquet") in r.output and "'regret'" in r.output


def test_players_on_a_fifo_says_why(tmp_path: Path) -> None:
    fifo = tmp_path / "x.parquet"
    os.mkfifo(fifo)
    r = _run("players", str(fifo))
    _clean_exit(r, 2)
    assert "not a regular file" in r.output


# --------------------------------------------------------------------------- F8: streams that cannot hold the text

def test_an_ascii_stdout_gets_escapes_not_a_traceback() -> None:
    p = _analyzer("validate", str(PROBLEMS), env={"PYTHONIOENCODING": "ascii"})
    assert p.returncode == 1, p.stderr.decode()
    assert b"Traceback" not in p.stderr and b"\\u2663" in p.stdout
    utf8 = _analyzer("validate", str(PROBLEMS), env={"PYTHONIOENCODING": "utf-8"})
    assert utf8.returncode == 1 and "♣".encode() in utf8.stdout and b"\\u2663" not in utf8.stdout
    assert utf8.stdout.count(b"\n") == p.stdout.count(b"\n")


# --------------------------------------------------------------------------- last resort: exit 3

_BREAK = "import analyzer.commands.validate as v\ndef boom(fmt):\n    raise {exc}\nv.problem_stream = boom\n"


def test_an_unexpected_exception_is_exit_3_with_one_line_and_the_traceback() -> None:
    p = _analyzer("validate", str(LEGAL), code=_BREAK.format(exc="RuntimeError('boom')"))
    assert p.returncode == 3, p.stderr.decode()
    err = p.stderr.decode().splitlines()
    assert err[0] == "analyzer: internal error (a bug in the analyzer, not in your input): RuntimeError: boom"
    assert err[1].startswith("Traceback") and err[-1] == "RuntimeError: boom"


@pytest.mark.parametrize(("exc", "code"), [("KeyboardInterrupt()", 130), ("BrokenPipeError()", 2),
                                           ("click.UsageError('bad')", 2)])
def test_interrupts_pipes_and_usage_errors_keep_their_codes(exc: str, code: int) -> None:
    p = _analyzer("validate", str(LEGAL), code="import click\n" + _BREAK.format(exc=exc))
    assert p.returncode == code, p.stderr.decode()
    assert b"Traceback" not in p.stderr and b"internal error" not in p.stderr


def test_every_help_lists_exit_3() -> None:
    for name in ("validate", "simulate", "decisions", "players", "audit", "report"):
        assert "3: internal error" in _run(name, "--help").output, name


# --------------------------------------------------------------------------- F9

def test_report_hand_given_twice_is_a_usage_error(tmp_path: Path) -> None:
    page = tmp_path / "h.html"
    r = _run("report", str(LEGAL), "--hand", "sample-plain", "--hand", "sample-tong", "-o", str(page))
    _clean_exit(r, 2)
    assert "given 2 times" in r.output and "give it once" in r.output and not page.exists()


def test_a_fifo_inside_an_input_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(LEGAL.read_bytes())
    os.mkfifo(folder / "b.jsonl")
    r = CliRunner().invoke(cli, ["validate", str(folder)])
    _clean_exit(r, 0)
    assert f"{folder / 'b.jsonl'}: not a regular file" in r.stderr and "7 hands, 7 valid" in r.stdout


def test_report_of_a_hand_no_page_can_replay_says_where_and_why(tmp_path: Path) -> None:
    """A hand whose deal is not the cards' (nothing to replay from) is refused with its file, line and problem."""
    page = tmp_path / "h.html"
    r = _run("report", str(PROBLEMS), "--hand", "planted-bad-deal", "-o", str(page))
    _clean_exit(r, 2)
    assert "cannot be replayed" in r.output and "problems.jsonl:2: [bad-deal]" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not page.exists()


# ------------------------------------------------------------ -o naming one of the process' own open files

def test_descriptor_names_are_read_from_the_names_not_from_where_they_lead(tmp_path: Path) -> None:
    from analyzer.logs import descriptor_of, is_special

    assert [descriptor_of(p) for p in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/7",
                                       f"/proc/{os.getpid()}/fd/3")] == [1, 2, 1, 7, 3]
    assert descriptor_of("/proc/1/fd/1") is None or os.getpid() == 1  # another process' descriptor: not ours
    assert descriptor_of(tmp_path / "page.html") is None and descriptor_of("/dev/null") is None
    (tmp_path / "to-out").symlink_to("/dev/stdout")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert descriptor_of(tmp_path / "to-out") == 1 and descriptor_of(tmp_path / "loop") is None
    assert is_special("/dev/stdout") and is_special(tmp_path / "to-out") and not is_special(tmp_path / "loop")


@pytest.mark.parametrize("target", ["/dev/fd/1", "link"])
def test_an_output_named_by_standard_output_writes_into_its_redirect(tmp_path: Path, target: str) -> None:
    """Standard output redirected to a regular file (``-o - > page.html``): the page is written through the
    descriptor, into that file, and the command does not add its path after it. (It was written beside
    ``/dev/stdout`` and renamed over it: the system's link replaced by a regular file, the redirect left empty.)"""
    if target == "link":  # a link to the process' standard output: what `-o -` and /dev/stdout are
        (tmp_path / "link").symlink_to("/proc/self/fd/1")
        target = str(tmp_path / "link")
    page = tmp_path / "page.html"
    with open(page, "wb") as out:
        r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "report", str(LEGAL),
                            "--hand", "sample-plain", "-o", target], cwd=ROOT, stdout=out, stderr=subprocess.PIPE,
                           timeout=300)
    assert r.returncode == 0, r.stderr
    body = page.read_bytes()
    assert body.startswith(b"<!doctype html>") and body.rstrip().endswith(b"</html>"), body[-200:]
    assert target.encode() not in body[-300:] and sorted(p.name for p in tmp_path.iterdir() if p.name != "link") == [
        "page.html"]
    if target == "/dev/fd/1":
        return  # the players table through a link, below: the same writer
    table = tmp_path / "players.txt"
    with open(table, "wb") as out:
        r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "players", str(LEGAL),
                            "--jobs", "1", "-o", target], cwd=ROOT, stdout=out, stderr=subprocess.PIPE, timeout=300)
    assert r.returncode == 0 and b"skill" in table.read_bytes(), r.stderr


def test_validate_refuses_its_page_on_standard_output() -> None:
    """Standard output carries validate's problems: a page there too would be mixed into them."""
    r = _run("validate", str(LEGAL), "-o", "-")
    _clean_exit(r, 2)
    assert "name a file for the page" in r.output


@pytest.mark.parametrize("lines,why", [(b"", "the input holds no hands"), (b"{not json\n", "the problems above")])
def test_audit_without_a_valid_hand_says_why(tmp_path: Path, lines: bytes, why: str) -> None:
    log = tmp_path / "room.jsonl"
    log.write_bytes(lines)
    r = _run("audit", str(log), "--out", str(tmp_path / "out"))
    _clean_exit(r, 2)
    assert f"analyzer: error: no valid hands to analyse ({why}" in r.output and not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- output names that would drive a terminal

@pytest.mark.parametrize("command", ["report", "decisions", "simulate"])
def test_an_output_name_with_control_characters_is_echoed_escaped(tmp_path: Path, command: str) -> None:
    """A name given with an escape sequence (here one that would clear the screen) is printed escaped, whatever line
    echoes it: the page's path (report), the store's (decisions), the log's (simulate)."""
    name = str(tmp_path / "out\x1b[2J")
    args = {"report": ["report", str(LEGAL), "--hand", "sample-plain", "-o", name + ".html", *FAST],
            "decisions": ["decisions", str(LEGAL), "-o", name, *FAST],
            "simulate": ["simulate", "--hands", "2", "--players", "4", "-o", name + ".jsonl"]}[command]
    r = _analyzer(*args)
    assert r.returncode == 0, r.stderr
    said = r.stdout + r.stderr
    assert b"\x1b" not in said and b"out\\x1b[2J" in said
