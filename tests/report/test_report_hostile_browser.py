"""The report pages against hostile ids in a real browser (Debian chromium via playwright, a 1366x768 screen).

Ids are data of any length and any text: a 64-character hash or a 10,000-character id must not push the seats,
the table or a table's columns (the scores, the verdicts) off the screen; ids named like Object.prototype's
members (``constructor``, ``toString`` ...) must not break the Chinese view; an id holding ``{1}`` is shown as
written in the sentences built around it. Also: the pair page carries no plotly.js (it draws no chart), and the
move and trick chips are reached and opened with the keyboard.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd
import pytest
from conftest import CHROMIUM, SAMPLES
from report_fixtures import PLAYERS, AuditRun, _renamed

from analyzer.logs import parse_record
from analyzer.report import i18n
from analyzer.report.audit import write_audit_report
from analyzer.report.hand import write_hand_report
from analyzer.report.pair import write_pair_report
from analyzer.report.validation import write_validation_report
from analyzer.validate import validate

LAPTOP = {"width": 1366, "height": 768}
#: How much wider than the screen a page may be (a scrollbar, rounding); the pages before the fix were
#: 2,500 to 180,000 px wide.
SLACK = 24
#: A realistic hashed id (64 hex characters) and an abusive one.
HEX = [hashlib.sha256(f"player-{i}".encode()).hexdigest() for i in range(4)]
LONG = "x" * 10_000
#: Ids that are the names of Object.prototype's members.
PROTO = ["constructor", "toString", "__proto__", "valueOf"]
#: An id with label placeholders in it, and its partner.
BRACES = "{{7*7}}{0}{1}{2}{3}"
OTHER = "javascript:window.__x=1//"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect
expect.set_options(timeout=20_000)  # a busy 2-core machine can take seconds to draw a step

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]


@pytest.fixture
def page(browser: object) -> Iterator[Any]:
    """A laptop-sized page (its own context: fresh localStorage) that fails the test on any console error,
    uncaught exception or dialog."""
    pg: Any = browser.new_page(viewport=LAPTOP)  # type: ignore[attr-defined]
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))

    def dialog(d: Any) -> None:
        errors.append(f"dialog: {d.message}")
        d.dismiss()

    pg.on("dialog", dialog)
    yield pg
    pg.close()
    assert not errors, errors


def url(path: Path, hash_: str = "") -> str:
    return path.as_uri() + (f"#{hash_}" if hash_ else "")


def sample(name: str, i: int = 0) -> dict[str, Any]:
    """The i-th record of a sample log, as JSON."""
    lines = [x for x in (SAMPLES / name).read_bytes().splitlines() if x.strip()]
    obj: dict[str, Any] = json.loads(lines[i])
    return obj


def record(obj: dict[str, Any]) -> Any:
    """The record of ``obj``, its ids as given: a log's ids are bounded (id-too-long) but a record made in code is
    not, and the pages must hold a 10,000-character id too (parsed with short ids, then given the long ones)."""
    ids = {"hand_id": obj["hand_id"], "table_id": obj.get("table_id"), "players": obj["players"]}
    short = {**obj, "hand_id": "h", "players": ["a", "b", "c", "d"], **({"table_id": "t"} if "table_id" in obj else {})}
    return msgspec.structs.replace(parse_record(json.dumps(short, ensure_ascii=False).encode()), **ids)


def box(pg: Any, selector: str) -> list[dict[str, float]]:
    return pg.locator(selector).evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, r: r.right, b: r.bottom}; })")


def page_width(pg: Any) -> int:
    return int(pg.evaluate("document.documentElement.scrollWidth"))


def players(game: str) -> list[str]:
    return [LONG if s == LONG_SEAT[game] else HEX[s] for s in range(4)]


def inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return inner["x"] >= outer["x"] - 1 and inner["r"] <= outer["r"] + 1


# --------------------------------------------------------------------------- long ids on the table

#: Where the 10,000-character id sits in each game's hand page.
LONG_SEAT = {"bieqi": 0, "borrow": 3, "heiqi": 1}


@pytest.fixture(scope="module")
def hands(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A hand page of each game whose players have 64-character hex ids, one of them a 10,000-character id
    (in the middle column of the 憋七 felt, in a side column of the 借牌 one), and long hand and table ids."""
    out = tmp_path_factory.mktemp("long-ids")
    pages = {}
    for game, log in (("bieqi", "legal.jsonl"), ("borrow", "borrow-sample.jsonl"), ("heiqi", "heiqi-sample.jsonl")):
        obj = sample(log)
        obj["players"] = players(game)
        obj["hand_id"] = "H" * 10_000 if game == "bieqi" else HEX[0]
        obj["table_id"] = "T" * 5_000
        pages[game] = out / f"{game}.html"
        write_hand_report(pages[game], record(obj))
    return pages


@pytest.mark.parametrize("game", ["bieqi", "borrow", "heiqi"])
def test_long_ids_stay_inside_their_seats(page: Any, hands: dict[str, Path], game: str) -> None:
    page.goto(url(hands[game]))
    expect(page.locator("[data-role=seat]")).to_have_count(4)
    for key in ("Home", "ArrowRight", "End"):  # the deal, a step in, the end (names, tags, the final table)
        page.keyboard.press(key)
        assert page_width(page) <= LAPTOP["width"] + SLACK, key
        felt = box(page, ".felt, .hq-seats")[0]
        seats = box(page, "[data-role=seat]")
        assert all(inside(s, felt) for s in seats), (key, felt, seats)
        for s, pid in enumerate(players(game)):
            name = f"[data-role=seat][data-seat='{s}'] [data-role=player]"
            assert page.locator(name).text_content() == pid  # the whole id is in the page
            assert page.locator(name).get_attribute("title") == pid  # and is the tooltip
            if game == "heiqi":  # 信阳黑七 cuts a name with an ellipsis on one line (it always did)
                continue
            b = box(page, name)[0]
            assert inside(b, seats[s]), (key, s, b, seats[s])
            assert b["b"] - b["y"] < 60  # two lines at most: a 64-character id whole, a longer one cut
        if game != "heiqi":
            assert inside(box(page, "[data-role=table]")[0], felt)
    heading = box(page, "[data-role=hand-id]")[0]
    assert heading["r"] <= LAPTOP["width"] and heading["b"] - heading["y"] < 120  # cut to a few lines


# --------------------------------------------------------------------------- the audit with a long id

def _renamed_rows(rows: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """The decision rows with players renamed (their name columns: pandas' ``replace`` does not compare the typed
    options column with texts)."""
    return rows.assign(**{c: rows[c].replace(names) for c in ("player", "p0", "p1", "p2", "p3")})


@pytest.fixture(scope="module")
def long_audit(tmp_path_factory: pytest.TempPathFactory, audit_run: AuditRun) -> dict[str, Any]:
    """The session's real audit (a small room), its planted pair's first player renamed to a 10,000-character
    id and another player to a 64-character hash, written as the audit page; and a pair page of that pair."""
    out = tmp_path_factory.mktemp("long-audit")
    names = {PLAYERS[0]: "y" * 10_000, PLAYERS[2]: HEX[2]}
    audit = _renamed(audit_run.audit, names)
    decisions = _renamed_rows(audit_run.decisions, names)
    records = [msgspec.structs.replace(r, players=[names.get(p, p) for p in r.players]) for r in audit_run.records]
    write_audit_report(out, audit, decisions=decisions, records=records)
    write_pair_report(out / "pair.html", names[PLAYERS[0]], PLAYERS[1], decisions=decisions, records=records)
    return {"dir": out, "audit": audit, "long": names[PLAYERS[0]]}


def test_audit_verdicts_stay_on_the_first_screen(page: Any, long_audit: dict[str, Any]) -> None:
    page.goto(url(long_audit["dir"] / "report.html"))
    rows = page.locator("[data-role=pair-row]")
    expect(rows).to_have_count(len(long_audit["audit"]["pairs"]))
    assert page_width(page) <= LAPTOP["width"] + SLACK
    assert long_audit["long"] in rows.first.text_content()  # the flagged pair is the one with the long id
    for i in range(rows.count()):
        row = rows.nth(i)
        for cell in (row.locator("[data-role=verdict]"), row.locator("a[href^='#pair=']")):
            b = cell.bounding_box()
            assert b is not None and b["x"] + b["width"] <= LAPTOP["width"], (i, b)
        assert row.bounding_box()["height"] < 100, i  # a long id is cut to a few lines
    long_link = rows.first.locator("a[href^='#player=']").first
    assert long_link.get_attribute("title") == long_audit["long"]
    # the flagged pair's case file: its sentence names the pair, the long id cut in it and whole in the tooltip
    rows.first.locator("a[href^='#pair=']").click()
    lead = page.locator("[data-role=detail-pair] [data-role=lead]")
    expect(lead).to_be_visible()
    assert len(lead.text_content()) < 1_000 and long_audit["long"] in lead.get_attribute("title")
    # every pair and player section of the page
    for kind in ("pair", "player"):
        n = len(long_audit["audit"]["pairs"]) if kind == "pair" else len(long_audit["audit"]["players"])
        for i in range(n):
            page.evaluate(f"location.hash = '{kind}={i}'")
            expect(page.locator(f"[data-role=detail-{kind}]")).to_have_count(1)
            assert page_width(page) <= LAPTOP["width"] + SLACK, (kind, i)
            heading = page.locator(f"[data-role=detail-{kind}] h2").first.bounding_box()
            assert heading["height"] < 160, (kind, i)


def test_pair_page_with_a_long_id(page: Any, long_audit: dict[str, Any]) -> None:
    page.goto(url(long_audit["dir"] / "pair.html"))
    expect(page.locator("[data-role=heat-cell]")).to_have_count(7)
    assert page_width(page) <= LAPTOP["width"] + SLACK
    heading = page.locator("h2").first
    assert heading.bounding_box()["height"] < 160
    assert heading.locator("[data-raw]").first.get_attribute("title") == long_audit["long"]
    for row in page.locator("[data-role=edge-row], [data-role=evidence]").all():
        assert row.bounding_box()["height"] < 100  # an id in a cell is cut to a few lines


# --------------------------------------------------------------------------- ids named like Object.prototype's members

@pytest.fixture(scope="module")
def proto_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two invalid hands of samples/problems.jsonl (a wrong first action, a move out of turn) whose players
    are named constructor, toString, __proto__ and valueOf: the validation page in Chinese."""
    out = tmp_path_factory.mktemp("proto")
    keep = []
    for line in (SAMPLES / "problems.jsonl").read_bytes().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("hand_id") in ("planted-first-action", "planted-out-of-turn"):
            obj["players"] = PROTO
            keep.append(json.dumps(obj, ensure_ascii=False))
    log = out / "proto.jsonl"
    log.write_text("\n".join(keep) + "\n", encoding="utf-8")
    summary = validate([str(log)])
    write_validation_report(out / "validation.html", [str(log)], summary, lang="zh", inputs=[str(log)])
    return {"dir": out, "hands": len(keep)}


def test_prototype_names_in_the_chinese_view(page: Any, proto_pages: dict[str, Any]) -> None:
    assert proto_pages["hands"] == 2
    page.goto(url(proto_pages["dir"] / "validation.html"))
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    rows = page.locator("[data-role=problem-row]")
    expect(rows).to_have_count(int(page.locator("[data-role=problem-count] b").text_content()))
    assert rows.count() >= 2
    text = page.locator("[data-role=problem-row]").all_text_contents()
    assert any("toString" in x or "__proto__" in x or "constructor" in x for x in text)
    for i in range(rows.count()):  # each problem opens its hand, the problem shown at its step
        link = rows.nth(i).locator("a")
        if not link.count():
            continue
        link.click()
        expect(page.locator("[data-role=detail-hand] [data-role=problem]").first).to_be_visible()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("End")
        page.go_back()
    # and in English, then back in Chinese (the switch redraws in place)
    page.locator("[data-role=lang][data-lang=en]").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.locator("[data-role=lang][data-lang=zh]").click()
    expect(rows).to_have_count(int(page.locator("[data-role=problem-count] b").text_content()))


def test_a_stored_language_that_is_no_language_is_ignored(page: Any, proto_pages: dict[str, Any]) -> None:
    """Any file:// page may write the key: "constructor" is not a language, the page's own default is used."""
    page.add_init_script("try { localStorage.setItem('bieqi-report-lang', 'constructor'); } catch (e) {}")
    page.goto(url(proto_pages["dir"] / "validation.html"))
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    assert page.title() == i18n.labels("zh")["title_validation"]
    expect(page.locator("[data-role=problem-row]").first).to_be_visible()


# --------------------------------------------------------------------------- placeholders in ids; no plotly on pair pages

@pytest.fixture(scope="module")
def braces_pair(tmp_path_factory: pytest.TempPathFactory, audit_run: AuditRun) -> dict[str, Any]:
    """The planted pair's page with its audit entry (the case file), the pair renamed to an id holding
    {0}..{3} and a javascript: id."""
    out = tmp_path_factory.mktemp("braces")
    names = {PLAYERS[0]: BRACES, PLAYERS[1]: OTHER}
    entry = next(p for p in audit_run.audit["pairs"] if set(p["players"]) == set(names))
    assert entry.get("case"), "the planted pair's entry has its case file"
    records = [msgspec.structs.replace(r, players=[names.get(p, p) for p in r.players]) for r in audit_run.records]
    decisions = _renamed_rows(audit_run.decisions, names)
    write_pair_report(out / "pair.html", BRACES, OTHER, decisions=decisions, entry=_renamed(entry, names), records=records)
    return {"page": out / "pair.html"}


def test_placeholders_in_an_id_are_shown_as_written(page: Any, braces_pair: dict[str, Any]) -> None:
    page.goto(url(braces_pair["page"]))
    lead = page.locator("[data-role=lead]")
    expect(lead).to_contain_text(BRACES)
    assert OTHER in lead.text_content()
    assert BRACES in page.locator("h2").first.text_content()
    page.locator("[data-role=lang][data-lang=zh]").click()
    expect(lead).to_contain_text(BRACES)


def test_pair_page_carries_no_plotly(page: Any, braces_pair: dict[str, Any]) -> None:
    html = braces_pair["page"].read_text(encoding="utf-8")
    assert 'id="plotly-js"' not in html
    assert len(html.encode()) < 1_000_000  # plotly alone is ~4.8 MB
    page.goto(url(braces_pair["page"]))
    expect(page.locator("[data-role=signal-row]").first).to_be_visible()
    expect(page.locator("[data-role=evidence], [data-role=burst-hand]").first).to_be_visible()
    assert page.locator("[data-role^=plot-], .main-svg").count() == 0  # and no chart asks for it


# --------------------------------------------------------------------------- the keyboard

def tab_to(pg: Any, selector: str, limit: int = 60) -> str:
    """Press Tab until the focused element matches ``selector``; its data-step."""
    for _ in range(limit):
        pg.keyboard.press("Tab")
        step = pg.evaluate(f"(() => {{ const e = document.activeElement; return e && e.matches({selector!r}) ? e.dataset.step : null; }})()")
        if step is not None:
            return str(step)
    raise AssertionError(f"Tab never reached {selector}")


def focused_step(pg: Any) -> str | None:
    return pg.evaluate("document.activeElement && document.activeElement.dataset.step || null")


@pytest.mark.parametrize("game", ["bieqi", "borrow", "heiqi"])
def test_move_chips_are_reached_and_opened_with_the_keyboard(page: Any, hands: dict[str, Path], game: str) -> None:
    page.goto(url(hands[game], "hand=0&step=0"))
    step = page.locator("[data-role=step]")
    chips = "[data-role=moves] .move, [data-role=tricks] .move"
    first = tab_to(page, chips)
    assert first == "0"
    assert page.evaluate("document.activeElement.getAttribute('role')") == "button"
    for _ in range(3):
        page.keyboard.press("Tab")
    target = focused_step(page)
    assert target is not None and int(target) > 0
    page.keyboard.press("Enter")
    # 憋七's and 借牌's counters name the move about to be made; 信阳黑七's the trick shown
    shown = (lambda s: int(s) + 1) if game in ("bieqi", "borrow") else int
    expect(step).to_have_text(re.compile(rf"(^|\D){shown(target)} / "))
    assert f"step={target}" in page.url
    assert focused_step(page) == target  # the focus stays on the chip (the list was redrawn)
    page.keyboard.press("Tab")
    nxt = focused_step(page)
    assert nxt is not None and int(nxt) == int(target) + 1
    page.keyboard.press(" ")
    expect(step).to_have_text(re.compile(rf"(^|\D){shown(nxt)} / "))
    assert f"step={nxt}" in page.url


def test_step_buttons_have_names_in_both_languages(page: Any, hands: dict[str, Path]) -> None:
    for game in ("bieqi", "borrow"):
        page.goto(url(hands[game]))
        for lang in ("zh", "en"):
            page.locator(f"[data-role=lang][data-lang={lang}]").click()
            expect(page.locator("html")).to_have_attribute("lang", "zh-CN" if lang == "zh" else "en")
            labels = i18n.labels(lang)
            for role in ("first", "back", "forward", "last", *(("prev_dev", "next_dev") if game == "bieqi" else ())):
                button = page.locator(f"button[data-role={role}]")
                assert button.get_attribute("aria-label") == labels[f"aria_{role}"], (game, lang, role)
                assert button.get_attribute("title") == labels[f"aria_{role}"]
    # the buttons still step
    page.goto(url(hands["bieqi"], "hand=0&step=0"))
    page.get_by_role("button", name=i18n.labels("en")["aria_forward"]).click()
    assert "step=1" in page.url
