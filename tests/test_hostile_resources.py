"""Memory, workers and what the output shows (issue 15, items 4-7, 14 and 15)."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from conftest import legal_obj

import analyzer.validate as validate_mod
from analyzer.cli import cli
from analyzer.problems import Problem, printable
from analyzer.validate import MAX_KEPT_PROBLEMS, generate_checked, validate

HOSTILE_IDS = ["h\r\x1b]0;owned\x07\nfake.jsonl:1: hand x: [not-live] forged", "evil\u202e", "\u200bp06", "a\x00b"]


def _bad_gz(tmp_path: Path, n: int) -> Path:
    p = tmp_path / "bad.jsonl.gz"
    p.write_bytes(gzip.compress(b"x\n" * n))
    return p


def test_problems_stream_out_and_the_summary_stays_bounded(tmp_path: Path) -> None:
    n = MAX_KEPT_PROBLEMS + 2500
    gz = _bad_gz(tmp_path, n)
    seen: list[int] = []
    summary = validate([str(gz)], on_problem=lambda p: seen.append(p.line or 0))
    assert summary.n_problems == n and len(seen) == n and seen[:3] == [1, 2, 3]
    assert len(summary.problems) == MAX_KEPT_PROBLEMS and summary.truncated == 2500
    assert summary.by_code == {"not-json": n}


def test_json_output_is_one_document_written_as_it_goes(tmp_path: Path) -> None:
    gz = _bad_gz(tmp_path, MAX_KEPT_PROBLEMS + 10)
    r = CliRunner().invoke(cli, ["validate", str(gz), "--format", "json"])
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["hands"] == MAX_KEPT_PROBLEMS + 10 and len(doc["problems"]) == MAX_KEPT_PROBLEMS + 10
    assert doc["problem_counts"] == {"not-json": MAX_KEPT_PROBLEMS + 10}
    ok = CliRunner().invoke(cli, ["validate", str(_log(tmp_path)), "--format", "json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["problems"] == []


def test_memory_stays_flat_however_many_bad_lines(tmp_path: Path) -> None:
    """Peak traced memory for 60,000 bad lines is no more than for 12,000 plus a small margin."""
    def peak(n: int) -> int:
        gz = _bad_gz(tmp_path, n)
        tracemalloc.start()
        validate([str(gz)], on_problem=lambda p: None)
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    peak(1000)  # imports and caches first
    small, big = peak(12_000), peak(60_000)
    assert big < small + (1 << 20), (small, big)


def _log(tmp_path: Path, objs: list[dict] | None = None, name: str = "log.jsonl") -> Path:
    p = tmp_path / name
    objs = objs if objs is not None else [legal_obj(s, f"h{s}") for s in range(3)]
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


def test_a_tables_last_hand_is_kept_as_its_outcome_and_old_tables_are_forgotten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.logs import format_record
    from analyzer.simulate.borrow import simulate

    recs = list(simulate(hands=6, players=4, seed=2).records)
    log = tmp_path / "borrow.jsonl"
    log.write_bytes(b"".join(format_record(r) + b"\n" for r in recs))
    items = list(generate_checked([str(log)], keep_records=False))
    assert all(it.record is None for it in items)  # nothing of a hand outlives its check
    assert all(it.ok for it in items)
    # with room for one table only, a table's chain is still checked hand after hand
    monkeypatch.setattr(validate_mod, "MAX_OPEN_TABLES", 1)
    assert [it.ok for it in generate_checked([str(log)], keep_records=False)] == [True] * 6


def test_workers_are_capped_by_cores_and_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import concurrent.futures

    started: list[int] = []

    class Recording(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers: int, **kw: object) -> None:
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    log = _log(tmp_path, [legal_obj(s, f"h{s}") for s in range(25)])
    items = list(generate_checked([str(log)], jobs=1000, batch_size=10, keep_records=False))
    assert len(items) == 25 and all(it.ok for it in items)
    assert all(n <= 3 for n in started)  # 3 batches: never 1000 workers


def test_simulate_plans_lazily() -> None:
    from analyzer.simulate.room import simulate

    next(simulate(hands=4, players=12, seed=2).records)  # compiled first (a cold numba cache compiles here,
    # allocating far more than the plan; that is not what is measured)
    tracemalloc.start()
    sim = simulate(hands=100_000, players=12, seed=1)
    first = [next(sim.records) for _ in range(3)]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(first) == 3 and sim.truth["hands"] == 100_000
    assert peak < 30 << 20, peak  # planning every hand first held ~100 MB here


@pytest.mark.parametrize("hand_id", HOSTILE_IDS)
def test_text_output_escapes_control_characters(tmp_path: Path, hand_id: str) -> None:
    o = legal_obj(1, hand_id)
    o["actions"] = o["actions"][:10]
    o["players"][1] = hand_id + "-p"
    r = CliRunner().invoke(cli, ["validate", str(_log(tmp_path, [o]))])
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
    r = CliRunner().invoke(cli, ["validate", str(_log(tmp_path, [o]))])
    assert r.exit_code == 1
    assert "hand sample-plain\\U000e0020\\U000e0061\\U000e0062\\xad" in r.output, r.output
    assert not any(0xE0000 <= ord(c) <= 0xE007F or c == "\u00ad" for c in r.output)


def test_html_text_shows_soft_hyphens_joiners_and_tag_characters() -> None:
    from analyzer.report.common import json_for_script, visible_text

    assert visible_text("al\u00adice\u034f\U000e0041") == "al\u2039U+00AD\u203aice\u2039U+034F\u203a\u2039U+E0041\u203a"
    assert "\U000e0041" not in json_for_script({"player": "alice\U000e0041"})


def test_html_pages_isolate_ids_and_show_hidden_characters(tmp_path: Path) -> None:
    objs = [legal_obj(s, f"h{s}") for s in range(2)]
    for o in objs:
        o["players"] = ["evil\u202e", "p06", "x\x1b[31m", "\u2067y"]
    log = _log(tmp_path, objs)
    out = tmp_path / "pair.html"
    r = CliRunner().invoke(cli, ["report", str(log), "--pair", "evil\u202e,p06", "--out", str(out), "--samples", "1"])
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    page = "".join(re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.DOTALL))
    page += html.split("<main>")[0]  # the head and its subtitle
    assert "\u202e" not in page and "\u2067" not in page and "\x1b" not in page and "\\u001b" not in page
    assert "evil\u2039U+202E\u203a" in page and "\u241b[31m" in page
    assert "unicode-bidi: isolate" in html
    bad = _log(tmp_path, [dict(objs[0], hand_id="h\u202e", actions=objs[0]["actions"][:3])], name="bad.jsonl")
    v = tmp_path / "v.html"
    assert CliRunner().invoke(cli, ["validate", str(bad), "--html", str(v)]).exit_code == 1
    vhtml = v.read_text(encoding="utf-8")
    assert "\u202e" not in "".join(re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', vhtml, re.DOTALL))
    assert "h\u2039U+202E\u203a" in vhtml


def test_a_gzip_of_millions_of_empty_lines_is_read_quickly(tmp_path: Path) -> None:
    """A 100 KB gzip that holds 100 million empty lines around a hand: the hand found with its line number, the
    empty lines passed in bulk (a line at a time, this took minutes)."""
    import gzip
    import time

    from analyzer.validate import validate

    hand = orjson.dumps(legal_obj(1))
    p = tmp_path / "blank.jsonl.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        for _ in range(50):
            f.write(b"\n" * 1_000_000)
        f.write(hand + b"\n")
        for _ in range(50):
            f.write(b"\n" * 1_000_000)
    t0 = time.process_time()
    summary = validate([str(p)], jobs=1)
    assert summary.hands == 1 and summary.valid_hands == 1
    assert time.process_time() - t0 < 30  # ~1 s here; a line at a time ~200 s
    from analyzer.logs import generate_lines

    assert [x.line for x in generate_lines(str(p))] == [50_000_001]


def test_long_hand_ids_are_cut_in_lines_and_pages_not_repeated_whole(tmp_path: Path) -> None:
    """A 40 KB hand id with 20 problems: each text line and page row shows its start and its size (the page was
    hundreds of times the log: each problem repeated the whole id); JSON carries it cut too (id-too-long)."""
    from analyzer.report.validation import write_validation_report
    from analyzer.validate import cut_id, validate

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
