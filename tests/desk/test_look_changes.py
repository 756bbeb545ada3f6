"""What a look changed, as the audit's summary and page lead with it: recorded in the transaction the audit's files are
written in (a failure leaves neither), the same for a result recorded again, 借牌 lending pairs as cases, and the
page's block in both languages."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from desk_fixtures import pair, result

from analyzer.desk import cases
from analyzer.desk.db import Cases, open_cases
from analyzer.report import i18n
from analyzer.report.changes import changes_html, lead_with_changes


@pytest.fixture
def d(tmp_path: Path) -> Iterator[Cases]:
    with open_cases(tmp_path / "cases.sqlite") as found:
        yield found


def lending(*rows: tuple[str, str, str, float]) -> dict[str, object]:
    """A 借牌 section whose lending table holds ``rows`` (a, b, verdict, p)."""
    return {"bieqi-borrow": {"players": [], "pairs": [
        {"a": a, "b": b, "lends_to_partner": 30, "lends_to_others": 200, "favour": 0.5, "p_value": p, "q_value": p,
         "score": None, "verdict": v} for a, b, v, p in rows]}}


def test_the_block_fails_and_no_look_is_recorded(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b")))
    with pytest.raises(OSError, match="disk full"):
        with cases.recording(d, result(pair("a", "b", score=9.5), pair("c", "d"), hands=300)) as looked:
            assert [ch.what for ch in looked.changes] == ["new", "changed"]  # seen inside the transaction
            raise OSError("disk full")
    assert len(cases.looks(d)) == 1 and [c.members for c in cases.list_cases(d)] == [("a", "b")]
    with cases.recording(d, result(pair("a", "b", score=9.5), pair("c", "d"), hands=300)) as looked:
        pass
    assert looked.look_id == 2 and looked.previous is not None and looked.previous["look_id"] == 1
    assert [(ch.what, ch.members) for ch in looked.changes] == [("new", ("c", "d")), ("changed", ("a", "b"))]
    ab = looked.changes[1]
    assert (ab.before_verdict, ab.before_level, ab.verdict, ab.level) == ("flagged", 8.0, "flagged", 9.5)


def test_a_result_recorded_again_shows_that_looks_changes(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b")))
    second = result(pair("a", "b", verdict="review", score=4.0), hands=300)
    with cases.recording(d, second) as first_time:
        pass
    with cases.recording(d, second) as again:
        pass
    assert again.already and not first_time.already and again.look_id == first_time.look_id == 2
    assert again.changes == first_time.changes and [ch.what for ch in again.changes] == ["changed"]
    lines = cases.change_lines(again, "db")
    assert lines[0] == "cases: look 2, 0 new, 0 reopened, 1 changed (since look 1, " + cases.looks(d)[0]["at"] + \
        ", recorded before: nothing written) -> db"
    assert lines[1].startswith("  CHANGED  case #1 pair a + b: flagged -> review, score 8 -> 4")


def test_reopened_comes_before_changed_and_nothing_is_said_when_nothing_changed(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b"), pair("c", "d")))
    cases.decide(d, "a,b", "dismiss", "ana", "friends")
    with cases.recording(d, result(pair("a", "b", score=9.5), pair("c", "d", score=6.0), hands=300)) as looked:
        pass
    assert [(ch.what, ch.members, ch.status) for ch in looked.changes] == [
        ("reopened", ("a", "b"), "open"), ("changed", ("c", "d"), "open")]
    with cases.recording(d, result(pair("a", "b", score=9.6), pair("c", "d", score=6.2), hands=400)) as quiet:
        pass
    assert quiet.changes == () and cases.change_lines(quiet, "db")[1] == "  nothing new or changed since the last look"


def test_lending_pairs_are_cases(d: Cases) -> None:
    first = cases.record_look(d, result(**lending(("x", "y", "flagged", 1e-9), ("x", "z", "review", 1e-3),
                                                  ("y", "z", "clear", 0.4))))
    assert len(first.new) == 2
    listed = {c.members: c for c in cases.list_cases(d, kind="lending")}
    assert set(listed) == {("x", "y"), ("x", "z")}
    xy = listed[("x", "y")]
    assert (xy.verdict, xy.level_kind, xy.main_signal, xy.hands) == ("flagged", "score", "lending_favour", 30)
    assert xy.level == pytest.approx(9.0)
    with cases.recording(d, result(**lending(("x", "y", "clear", 0.3)), hands=300)) as looked:
        pass
    assert {ch.members: ch.verdict for ch in looked.changes} == {("x", "y"): "clear", ("x", "z"): "absent"}
    history = cases.show_case(d, xy.case_id).history
    assert [h.verdict for h in history] == ["flagged", "clear"] and history[0].signal["lends_to_partner"] == 30


def test_the_page_block_in_both_languages_and_none_without_a_database(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b")))
    with cases.recording(d, result(pair("a", "b"), pair("<c>", "d"), hands=300)) as looked:
        pass
    data = looked.to_dict()
    block = changes_html(data)
    for lang in ("en", "zh"):
        w = i18n.data()["changes"][lang]
        assert f'data-lang="{lang}"' in block and w["what_new"] in block and w["col_members"] in block
    assert "&lt;c&gt; + d" in block and "<c>" not in block  # ids are the logs' text
    page = "<html><body><main><div id=\"overview\"></div></main></body></html>"
    assert lead_with_changes(page, None) == page
    led = lead_with_changes(page, data)
    assert led.index("look-changes") < led.index('id="overview"') and led.count('data-role="change"') == 2
    assert set(i18n.data()["changes"]["en"]) == set(i18n.data()["changes"]["zh"])


def test_a_busy_database_is_said_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "cases.sqlite"
    with open_cases(db) as first, open_cases(db, timeout=0.1) as second:
        cases.record_look(first, result(pair("a", "b")))
        with cases.recording(first, result(pair("a", "b", score=12.0), hands=300)):
            with pytest.raises(cases.CasesError, match="being written by another process"):
                with cases.recording(second, result(pair("c", "d"), hands=500)):
                    pass
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM looks").fetchone() == (2,)
