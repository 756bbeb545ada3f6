"""What the commands print: names that are not UTF-8, streams that cannot hold the text, control and invisible
characters in ids and output names, long ids cut."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, analyzer_process, clean_exit, legal_obj, run_cli

from analyzer.problems import Problem, path_text, printable

FAST = ["--samples", "1", "--dd-samples", "0"]


def test_an_extremely_long_id_is_one_line_of_output(tmp_path: Path) -> None:
    o = legal_obj(2, "h" * 200_000 + "\x1b")
    o["actions"] = o["actions"][:5]
    p = tmp_path / "long.jsonl"
    p.write_bytes(orjson.dumps(o) + b"\n")
    r = run_cli("validate", str(p))
    clean_exit(r, 1)
    assert len(r.output.splitlines()) == 2 and "\x1b" not in r.output
    clean_exit(run_cli("validate", str(p), "--max-line-bytes", "1000"), 1)


def test_player_ids_cannot_drive_the_terminal_from_the_players_table(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl"
    evil = ["evil\x1b[2J\x1b[31mRED", "\u202eEVIL\nFAKE LINE: all clear", "bob", "carol"]
    lines = []
    for s in range(3):
        rec = legal_obj(s, f"h{s}")
        rec["players"] = evil
        lines.append(orjson.dumps(rec) + b"\n")
    log.write_bytes(b"".join(lines))
    r = run_cli("players", str(log), *FAST)
    clean_exit(r, 0)
    assert "\x1b" not in r.output and "\u202e" not in r.output and "FAKE LINE" in r.output
    assert not any(line.startswith("FAKE LINE") for line in r.output.splitlines())
    assert "evil\\x1b[2J" in r.output


LEGAL = SAMPLES / "legal.jsonl"


PROBLEMS = SAMPLES / "problems.jsonl"


ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]


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
    r = run_cli("validate", "--format", "json", str(odd_name))
    clean_exit(r, 1)
    doc = orjson.loads(r.stdout)  # one whole document (it stopped at '{"problems": [' before)
    assert doc["n_problems"] == 1 and doc["problems"][0]["file"].endswith("/\\xff\\xfe.jsonl")
    text = run_cli("validate", str(odd_name))
    assert "\\udcff\\udcfe.jsonl:8: hand" in text.stdout  # text output as it was
    page = tmp_path / "page.html"
    clean_exit(run_cli("validate", str(odd_name), "-o", str(page)), 1)
    assert "\\\\xff\\\\xfe.jsonl" in page.read_text(encoding="utf-8")


def test_an_ascii_stdout_gets_escapes_not_a_traceback() -> None:
    p = analyzer_process("validate", str(PROBLEMS), env={"PYTHONIOENCODING": "ascii"}, text=False)
    assert p.returncode == 1, p.stderr.decode()
    assert b"Traceback" not in p.stderr and b"\\u2663" in p.stdout
    utf8 = analyzer_process("validate", str(PROBLEMS), env={"PYTHONIOENCODING": "utf-8"}, text=False)
    assert utf8.returncode == 1 and "♣".encode() in utf8.stdout and b"\\u2663" not in utf8.stdout
    assert utf8.stdout.count(b"\n") == p.stdout.count(b"\n")


@pytest.mark.parametrize("command", ["report", "decisions", "simulate"])
def test_an_output_name_with_control_characters_is_echoed_escaped(tmp_path: Path, command: str) -> None:
    """A name given with an escape sequence (here one that would clear the screen) is printed escaped, whatever line
    echoes it: the page's path (report), the store's (decisions), the log's (simulate)."""
    name = str(tmp_path / "out\x1b[2J")
    args = {"report": ["report", str(LEGAL), "--hand", "sample-plain", "-o", name + ".html", *ONE_SAMPLE],
            "decisions": ["decisions", str(LEGAL), "-o", name, *ONE_SAMPLE],
            "simulate": ["simulate", "--hands", "2", "--players", "4", "-o", name + ".jsonl"]}[command]
    r = analyzer_process(*args, text=False)
    assert r.returncode == 0, r.stderr
    said = r.stdout + r.stderr
    assert b"\x1b" not in said and b"out\\x1b[2J" in said


HOSTILE_IDS = ["h\r\x1b]0;owned\x07\nfake.jsonl:1: hand x: [not-live] forged", "evil\u202e", "\u200bp06", "a\x00b"]


def _log_of(tmp_path: Path, objs: list[dict] | None = None, name: str = "log.jsonl") -> Path:
    p = tmp_path / name
    objs = objs if objs is not None else [legal_obj(s, f"h{s}") for s in range(3)]
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


@pytest.mark.parametrize("hand_id", HOSTILE_IDS)
def test_text_output_escapes_control_characters(tmp_path: Path, hand_id: str) -> None:
    o = legal_obj(1, hand_id)
    o["actions"] = o["actions"][:10]
    o["players"][1] = hand_id + "-p"
    r = run_cli("validate", str(_log_of(tmp_path, [o])))
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert len(lines) == 2 and "[missing-actions]" in lines[0], r.output  # one problem line, one summary
    assert not any(ch in r.output for ch in "\r\x1b\x07\x00\u202e\u200b")


def test_printable_escapes_and_keeps_ordinary_text() -> None:
    assert printable("北风 p06 ♠") == "北风 p06 ♠"
    assert printable("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    p = Problem("bad-type", "m\nforged", hand_id="h\r")
    assert "\n" not in p.format() and "\r" not in p.format()


@pytest.mark.parametrize(("text", "shown"), [
    ("sample-plain\U000e0020\U000e0061\U000e0062\u00ad", "sample-plain\\U000e0020\\U000e0061\\U000e0062\\xad"),
    ("alice\U000e0041", "alice\\U000e0041"),  # a tag character
    ("a\u034fb", "a\\u034fb"),  # the combining grapheme joiner
    ("x\u2800y\u3164z", "x\\u2800y\\u3164z"),  # blank marks Python counts as printable
    ("p\ue000q\U000f0000", "p\\ue000q\\U000f0000"),  # private use
    ("u\U000e0080v", "u\\U000e0080v"),  # unassigned
    ("s\udc80t", "s\\udc80t"),  # a lone surrogate
    ("no\u00a0break\u3000wide", "no\\xa0break\\u3000wide"),  # spaces that are not the ASCII one
    ("\u2066x\u2069\u200d", "\\u2066x\\u2069\\u200d"),
])
def test_printable_escapes_every_format_and_invisible_character(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(shown) == shown  # what it shows is plain ASCII


def test_printable_keeps_visible_text_of_any_script() -> None:
    for text in ("北风 p06 ♠ 10♥", "café cafe\u0301 Zoë", "Ελληνικά русский עברית", "😀 👍🏽", "plain ascii ~!@#$%^&*()"):
        assert printable(text) == text


def test_text_output_of_the_probe_case_shows_every_hidden_character(tmp_path: Path) -> None:
    """A hand id ending in tag characters and a soft hyphen, a player id ending in a tag character: the line reads
    differently from ``hand sample-plain`` and ``alice``."""
    o = legal_obj(3, "sample-plain\U000e0020\U000e0061\U000e0062\u00ad")
    o["players"][0] = "alice\U000e0041"
    o["actions"] = o["actions"][:10]
    r = run_cli("validate", str(_log_of(tmp_path, [o])))
    assert r.exit_code == 1
    assert "hand sample-plain\\U000e0020\\U000e0061\\U000e0062\\xad" in r.output, r.output
    assert not any(0xE0000 <= ord(c) <= 0xE007F or c == "\u00ad" for c in r.output)


def test_long_hand_ids_are_cut_in_lines_and_pages_not_repeated_whole(tmp_path: Path) -> None:
    """A 40 KB hand id with 20 problems: each text line and page row shows its start and its size (the page was
    hundreds of times the log: each problem repeated the whole id); JSON carries it cut too (id-too-long)."""
    from analyzer.report.validation import write_validation_report
    from analyzer.explain import cut_id
    from analyzer.validate import validate

    long_id = "H" * 40_000
    o = legal_obj(2, long_id)
    for act in o["actions"][:20]:
        act["x"] = 1  # an extra field: one problem a move
    log = tmp_path / "long.jsonl"
    log.write_bytes(b"".join(orjson.dumps({**o, "hand_id": f"{long_id}-{i}"}) + b"\n" for i in range(10)))
    said: list[str] = []
    summary = validate([str(log)], jobs=1, on_problem=lambda p: said.append(p.format()))
    assert summary.n_problems >= 200 and all(len(line) < 1000 for line in said)
    assert "(40,002 characters)" in said[0]
    # an id past the format's bound (id-too-long) is carried in the data (JSON) as its start, size and digest
    assert summary.problems[0].hand_id == cut_id(f"{long_id}-0") != cut_id(f"{long_id}-1")
    page = tmp_path / "v.html"
    write_validation_report(page, [str(log)], summary)
    assert page.stat().st_size < log.stat().st_size  # was ~20x the log
