"""The HTML reports in a real browser (Debian chromium via playwright): replay, pages, XSS, speed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
from conftest import CHROMIUM, watched_page
from report_fixtures import (
    EVIL_HAND,
    EVIL_PLAYER,
    EVIL_TABLE,
    PLAYERS,
    AuditRun,
    big_room,
    room,
)

from analyzer.cards import scan
from analyzer.logs import format_record
from analyzer.report.audit import write_audit_report
from analyzer.report.hand import parse_action, write_hand_report
from analyzer.report.pair import write_pair_report
from analyzer.report.player import player_data, write_player_report
from analyzer.report.validation import write_validation_report
from analyzer.validate import validate
from analyzer.variants.bieqi import COVER, VARIANT, State

#: plotly.js compiles after the first paint; on a busy machine that takes seconds
PLOT_WAIT_MS = 20_000
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]



@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A page that fails the test on any console error, uncaught exception or dialog (an alert = XSS)."""
    with watched_page(browser, {"width": 1300, "height": 1000}) as pg:
        yield pg


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, audit_run: AuditRun) -> dict[str, Path]:
    """Every page type, written from the same hostile-id room and its real audit."""
    out = tmp_path_factory.mktemp("site")
    records = audit_run.records
    decisions = audit_run.decisions
    log = out / "room.jsonl"
    lines = [format_record(r) for r in records[:8]]
    bad = lines[3].replace(b'"kind":"play"', b'"kind":"cover"', 3).replace(  # the first plays become illegal covers
        f'"hand_id":"{records[3].hand_id}"'.encode(), b'"hand_id":"<img src=x onerror=alert(9)>"')
    log.write_bytes(b"\n".join([*lines, bad]) + b"\n")
    write_hand_report(out / "hand.html", records[0], decisions=decisions)
    write_hand_report(out / "hand-plain.html", records[1], lang="zh")
    write_player_report(out / "player.html", EVIL_PLAYER, decisions, records=records)
    write_pair_report(out / "pair.html", EVIL_PLAYER, PLAYERS[1], decisions=decisions, records=records)
    write_audit_report(out, audit_run.audit, decisions=decisions, records=records, lang="zh")
    write_validation_report(out / "validation.html", [str(log)], validate([str(log)]), lang="en", inputs=[str(log)])
    return {"dir": out, "records": records, "decisions": decisions}  # type: ignore[dict-item]


def url(path: Path, hash_: str = "") -> str:
    return path.as_uri() + (f"#{hash_}" if hash_ else "")


def shot(pg: object, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"report-{name}.png"), full_page=True)  # type: ignore[attr-defined]


def cards(pg: object, selector: str, card: str = ".card") -> set[int]:
    """The card ints drawn inside ``selector``."""
    return {int(x) for x in pg.locator(f"{selector} {card}[data-card]").evaluate_all(  # type: ignore[attr-defined]
        "els => els.map(e => e.dataset.card)")}


def assert_no_injection(pg: object) -> None:
    """Hostile ids are on screen as text, and made no element."""
    text = pg.locator("body").inner_text()  # type: ignore[attr-defined]
    assert EVIL_PLAYER in text
    assert pg.locator("img, main svg[onload], main script").count() == 0  # type: ignore[attr-defined]


def open_audit(pg: object, out: Path, audit_run: AuditRun, **changes: Any) -> None:
    """The audit page of ``audit_run``'s audit.json with ``changes`` to its top-level keys, written to ``out`` (made)
    and opened, its pairs drawn."""
    out.mkdir()
    write_audit_report(out, {**audit_run.audit, **changes}, decisions=audit_run.decisions, records=audit_run.records)
    pg.goto(url(out / "report.html"))  # type: ignore[attr-defined]
    expect(pg.locator("[data-role=pair-row]").first).to_be_attached()  # type: ignore[attr-defined]


def test_hand_replay_follows_the_engine_step_by_step(page: object, site: dict) -> None:
    rec = site["records"][0]
    st = State(VARIANT.deal_masks(rec, []))
    page.goto(url(site["dir"] / "hand.html"))  # type: ignore[attr-defined]
    step = page.locator("[data-role=step]")  # type: ignore[attr-defined]
    page.locator("[data-role=reveal]").check()  # type: ignore[attr-defined]
    for k in range(53):
        if k in (0, 1, 13, 30, 52):
            # the move about to be made, numbered as the move list numbers it; after the last, the end
            expect(step).to_have_text(f"move {k + 1} / 52" if k < 52 else "end of the hand (52 moves)")
            assert cards(page, "[data-role=table]") == set(scan(st.table))
            for s in range(4):
                assert cards(page, f"[data-role=seat][data-seat='{s}'] [data-role=hand]") == set(scan(st.hands[s]))
                assert cards(page, f"[data-role=seat][data-seat='{s}'] [data-role=covered]") == set(scan(st.covered[s]))
            if k < 52:
                shown = page.locator("[data-role=options] [data-action]").evaluate_all(  # type: ignore[attr-defined]
                    "els => els.map(e => +e.dataset.action)")
                legal = st.legal_actions()
                assert len(legal) < 2 or sorted(shown) == sorted(legal)
                live = cards(page, ".seat-panel.to-act", ".card.live")
                assert live == {a for a in legal if a < COVER}
        if k < 52:
            st.push(parse_action(rec.actions[k].card, rec.actions[k].kind))
            page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
    out = st.outcome()
    final = page.locator("[data-role=final] tbody tr")  # type: ignore[attr-defined]
    scores = [int(final.nth(s).locator("td").nth(5).inner_text()) for s in range(4)]
    assert scores == list(out.scores)
    page.keyboard.press("ArrowLeft")  # type: ignore[attr-defined]
    assert "step=51" in page.url  # type: ignore[attr-defined]
    assert_no_injection(page)
    assert EVIL_HAND in page.locator("[data-role=hand-id]").inner_text()  # type: ignore[attr-defined]
    assert EVIL_TABLE in page.locator("[data-role=table-id]").inner_text()  # type: ignore[attr-defined]
    shot(page, "hand")


def test_hand_filter_and_deviation_jumps(page: object, site: dict) -> None:
    decisions: pd.DataFrame = site["decisions"]
    mine = decisions[decisions["hand_id"] == EVIL_HAND]
    big = sorted(int(a) for a in mine.loc[mine["regret"] >= 5, "action"])
    page.goto(url(site["dir"] / "hand.html"))  # type: ignore[attr-defined]
    page.locator("[data-role=only-big]").check()  # type: ignore[attr-defined]
    shown = page.locator("[data-role=moves] .move").evaluate_all("els => els.map(e => +e.dataset.step)")  # type: ignore[attr-defined]
    assert shown == big
    page.locator("[data-role=next_dev]").click()  # type: ignore[attr-defined]
    assert f"step={big[0]}" in page.url  # type: ignore[attr-defined]
    assert page.locator("[data-role=verdict]").get_attribute("class").split()[-1] == "dev-big"  # type: ignore[attr-defined]


def test_hand_without_analysis_in_chinese(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "hand-plain.html", "hand=0&step=52"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=step]")).to_have_text("牌局结束（共 52 手）")  # type: ignore[attr-defined]
    assert page.locator("[data-role=explain]").inner_text()  # type: ignore[attr-defined]
    page.keyboard.press("Home")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=options]")).to_contain_text("7♠")  # type: ignore[attr-defined]


def test_player_page(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "player.html"))  # type: ignore[attr-defined]
    for role in ("plot-time", "plot-think", "plot-hist"):
        expect(page.locator(f"[data-role={role}] .main-svg").first).to_be_attached(timeout=PLOT_WAIT_MS)
    assert page.locator("[data-role=player-id]").inner_text() == EVIL_PLAYER  # type: ignore[attr-defined]
    unread = player_data(site["decisions"], EVIL_PLAYER)["signal_p"] is None  # a room of 6: no level to compare with
    expect(page.locator("[data-role=signal-unread]")).to_have_count(1 if unread else 0)  # type: ignore[attr-defined]
    signal = page.locator("[data-role=signal] b").inner_text()  # type: ignore[attr-defined]
    assert (signal == "–") == unread
    assert_no_injection(page)
    shot(page, "player")
    page.locator("a[href*='focus=']").first.click()  # type: ignore[attr-defined]  # the worst decision's hand
    assert page.locator("[data-role=detail-hand] [data-role=replayer]").count() == 1  # type: ignore[attr-defined]
    worst = player_data(site["decisions"], EVIL_PLAYER)["worst"][0]
    assert page.locator("[data-role=detail-hand] [data-role=hand-id]").inner_text() == worst["hand_id"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("flagged", [False, True])
def test_a_player_signal_read_and_not_flagged_says_why_that_is_no_word_against_a_pair(
        page: object, site: dict, tmp_path: Path, flagged: bool) -> None:
    """A flagged pair's member often reads a large p on the player signal (they play for each other, not for their
    own score): the page says so beside the p, and says nothing of it for a player the signal flags."""
    from analyzer.report.common import render_page, write_page

    pdata = {**player_data(site["decisions"], EVIL_PLAYER), "signal_p": 1e-6 if flagged else 1.0,
             "signal_flag": flagged}
    path = tmp_path / "player.html"
    write_page(path, render_page("player", lang="en", plotly=True, stores={"player": [pdata], "hand": []},
                                 data={"hand_ids": [], "player_ids": [EVIL_PLAYER], "default_view": ["player", 0]}))
    page.goto(url(path))  # type: ignore[attr-defined]
    note = page.locator("[data-role=signal-note]")  # type: ignore[attr-defined]
    if flagged:
        expect(page.locator("[data-role=signal] b")).to_contain_text("⚑")  # type: ignore[attr-defined]
        expect(note).to_have_count(0)
    else:
        expect(page.locator("[data-role=signal] b")).to_have_text("1.0000")  # type: ignore[attr-defined]
        expect(note).to_contain_text("no word against a pair the audit flags")
        page.locator("[data-role=lang][data-lang=zh]").click()  # type: ignore[attr-defined]
        expect(note).to_contain_text("并不与审计对这对搭档的标记相矛盾")


def test_reasons_show_cards_as_cards_in_english(page: object, site: dict) -> None:
    """The rows' reasons carry card codes (played 8C rather than 7D); the English pages show them as cards (8♣), as
    the rest of each reason and every other place on the pages do; the Chinese ones translate them."""
    import re

    code = re.compile(r"\b(10|[2-9AJQKT])[SHDC]\b")
    worst = player_data(site["decisions"], EVIL_PLAYER)["worst"]
    assert any(code.search(str(w["reasons"])) for w in worst)  # the data has codes
    page.goto(url(site["dir"] / "player.html"))  # type: ignore[attr-defined]
    cells = page.locator("[data-role=reasons]")  # type: ignore[attr-defined]
    expect(cells.first).to_be_attached()
    texts = cells.all_inner_texts()
    assert len(texts) == len(worst)
    assert not [x for x in texts if code.search(x)]
    assert any("rather than" in x and re.search("[♠♥♦♣]", x) for x in texts)


def test_pair_page_evidence_opens_the_replayer_at_the_decision(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "pair.html"))  # type: ignore[attr-defined]
    assert page.locator("[data-role=heat-cell]").count() == 7  # type: ignore[attr-defined]
    assert_no_injection(page)
    shot(page, "pair")
    first = page.locator("[data-role=evidence] a").first  # type: ignore[attr-defined]
    step = int(parse_qs(first.get_attribute("href").lstrip("#"))["step"][0])
    first.click()
    expect(page.locator("[data-role=step]")).to_have_text(f"move {step + 1} / 52")  # type: ignore[attr-defined]


def test_audit_page(page: object, site: dict, audit_run: AuditRun) -> None:
    page.goto(url(site["dir"] / "report.html"))  # type: ignore[attr-defined]
    rows = page.locator("[data-role=pair-row]")  # type: ignore[attr-defined]
    # playwright's expect waits for the page's script to draw what a click or a load asks for; a bare count() right
    # after one read the page before it had (a failure under load)
    expect(rows).to_have_count(len(audit_run.audit["pairs"]))
    assert "flagged" in (rows.first.get_attribute("class") or "")
    assert EVIL_PLAYER in rows.first.inner_text() and PLAYERS[1] in rows.first.inner_text()  # the planted pair
    expect(page.locator("[data-role=plot-audit] .main-svg").first).to_be_attached(timeout=PLOT_WAIT_MS)
    assert_no_injection(page)
    shot(page, "audit")
    top = audit_run.audit["pairs"][0]
    rows.first.locator("a", has_text="详情").click()
    detail = page.locator("[data-role=detail-pair]")  # type: ignore[attr-defined]
    expect(detail.locator("[data-role=signal-row]")).to_have_count(len(top["case"]["signals"]))
    # burst's case lists its extreme hands; any other case its evidence moves
    listed = "burst-hand" if "burst_directions" in top["case"] else "evidence"
    expect(detail.locator(f"[data-role={listed}]")).to_have_count(
        sum(len(w["extreme"]) for w in top["case"]["burst_directions"]) if listed == "burst-hand"
        else len(top["evidence"]))
    detail.locator("h2 a").first.click()
    expect(page.locator("[data-role=detail-player] [data-role=player-id]")).to_have_text(EVIL_PLAYER)  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]
    page.locator(f"[data-role={listed}] a").first.click()  # type: ignore[attr-defined]
    expect(page.locator("[data-role=detail-hand] [data-role=hand-id]")).to_have_text(  # type: ignore[attr-defined]
        str(top["evidence"][0]["hand_id"]))


def test_validation_page_shows_the_hand_up_to_the_failing_action(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "validation.html"))  # type: ignore[attr-defined]
    row = page.locator("[data-role=problem-row]").first  # type: ignore[attr-defined]
    assert "first-action" in row.inner_text() and "<img src=x onerror=alert(9)>" in row.inner_text()
    shot(page, "validation")
    row.locator("a").click()
    expect(page.locator("[data-role=detail-hand] [data-role=problem]").first).to_be_attached()  # type: ignore[attr-defined]
    assert_no_injection(page)


def test_the_tiers_help_says_a_laxer_alarm_as_the_chance_it_allows(page: object, tmp_path: Path,
                                                                     audit_run: AuditRun) -> None:
    """The measured false-alarm rate (well under one in 10,000 honest pairs) is the default alarm's: an audit run with
    a laxer --alpha says its own threshold instead."""
    for alpha, want, unwanted in ((1e-5, "well under once in 10,000 honest pairs", "this run"),
                                  (0.01, "this run's alarm, p ≤ 0.01", None)):
        open_audit(page, tmp_path / f"a{alpha:g}", audit_run, alarm={**audit_run.audit["alarm"], "alpha": alpha})
        help_text = page.locator("[data-role=tiers-help]")  # type: ignore[attr-defined]
        expect(help_text).to_contain_text(want)
        if unwanted:
            assert unwanted not in help_text.inner_text()


def test_the_audit_page_lists_lookalike_ids_as_text(page: object, tmp_path: Path, audit_run: AuditRun) -> None:
    """audit.json's lookalike_ids: the page says how many and lists the first, each id drawn as text (a hostile
    spelling stays text); without any, no such box."""
    evil = "Ａ<img src=x onerror=alert(7)>"
    shown = [{"file": "room.jsonl", "line": 2, "hand_id": "h2", "seat": 0, "player": evil, "code": "lookalike-ids",
              "message": f"player id {evil!r} looks like player id 'A<img src=x onerror=alert(7)>' of the hand at "
                         "room.jsonl:1 (the same once normalised)"}]
    for looks, rows in (({"count": 3, "shown": shown}, 1), ({"count": 0, "shown": []}, 0)):
        open_audit(page, tmp_path / f"l{rows}", audit_run, lookalike_ids=looks)
        found = page.locator("[data-role=lookalike-row]")  # type: ignore[attr-defined]
        expect(found).to_have_count(rows)
        if rows:
            assert evil in found.first.inner_text() and "room.jsonl:2" in found.first.inner_text()
            assert "3" in page.locator("section", has=found.first).locator("p").first.inner_text()  # type: ignore[attr-defined]
        assert_no_injection(page)


def test_big_audit_opens(page: object, tmp_path: Path, audit_run: AuditRun) -> None:
    """The 10,000-hand audit page opens whole (its load time is measured by benchmarks/bench_report.py:
    a shared machine's clock makes no assertion)."""
    decisions, audit = big_room(audit_run)
    write_audit_report(tmp_path, audit, decisions=decisions, records=room(30))
    page.goto(url(tmp_path / "report.html"))  # type: ignore[attr-defined]
    assert page.locator("[data-role=pair-row]").count() == 100  # type: ignore[attr-defined]
    expect(page.locator("[data-role=plot-audit] .main-svg").first).to_be_attached(timeout=PLOT_WAIT_MS)  # type: ignore[attr-defined]
    shot(page, "audit-big")


def test_the_score_axis_turns_logarithmic_when_one_pair_dwarfs_the_room(page: object, tmp_path: Path,
                                                                         audit_run: AuditRun) -> None:
    """A pair at a score of hundreds would flatten every other pair and the alarm line onto the floor of a linear
    axis: the page then draws log(1 + score), ticks labelled in scores; scores within 20 stay linear."""
    import math

    pairs = [dict(p) for p in audit_run.audit["pairs"]]
    alarm = audit_run.audit["alarm"]["score"]
    for top, log in ((450.0, True), (12.0, False)):
        pairs[0] = {**pairs[0], "score": top}
        open_audit(page, tmp_path / f"s{int(top)}", audit_run, pairs=pairs)
        expect(page.locator("[data-role=plot-audit] .main-svg").first).to_be_attached(timeout=PLOT_WAIT_MS)  # type: ignore[attr-defined]
        got = page.evaluate("""() => { const gd = document.querySelector('[data-role=plot-audit]');
            return { ticks: gd.layout.yaxis.ticktext || null,
                     traces: gd.data.map((d) => ({ y: d.y, n: d.name, text: d.text || [] })) }; }""")  # type: ignore[attr-defined]
        line = [tr for tr in got["traces"] if len(tr["y"]) == 2 and tr["y"][0] == tr["y"][1]][-1]
        ys = sorted(y for tr in got["traces"] if tr is not line for y in tr["y"])
        want_top = math.log10(1 + top) if log else top
        assert abs(ys[-1] - want_top) < 1e-9
        assert abs(line["y"][0] - (math.log10(1 + alarm) if log else alarm)) < 1e-9
        texts = [x for tr in got["traces"] for x in tr["text"]]
        assert any(x.endswith(f"<br>{pairs[0]['hands_together']} · {top:.2f}") for x in texts)  # the real score
        assert not [x for x in texts if "‹br›" in x or "<img" in x]  # the break is markup, the ids are not
        if log:
            assert got["ticks"][0] == "0" and "5" in got["ticks"] and "100" in got["ticks"]
        else:
            assert got["ticks"] is None


def test_p_and_q_below_double_precision_read_from_their_logs(page: object, tmp_path: Path, audit_run: AuditRun) -> None:
    """A pair whose p and q underflowed to 0 (the demo room's top pair: score 454): the pairs table writes both from
    their logs, as the command line does (1.2e-454, 1.4e-452), never 0 or a floor of 1e-300."""
    pairs = [dict(p) for p in audit_run.audit["pairs"]]
    pairs[0] = {**pairs[0], "score": 453.93, "p_value": 0.0, "log10_p": -453.93, "q_value": 0.0, "log10_q": -451.85}
    open_audit(page, tmp_path / "q", audit_run, pairs=pairs)
    row = page.locator("[data-role=pair-row]").first.inner_text()  # type: ignore[attr-defined]
    assert "1.2e-454" in row and "1.4e-452" in row and "1e-300" not in row


def test_the_audit_page_says_which_hands_the_pair_audit_did_not_read(page: object, tmp_path: Path,
                                                                    audit_run: AuditRun) -> None:
    """audit.json's skipped_hands (valid hands of games without decision rows, e.g. 信阳黑七): the summary says how
    many of which game; without any, no such line."""
    for skipped, shown in (({"xinyang-heiqi": 4, "bieqi-borrow": 0}, True), ({}, False)):
        open_audit(page, tmp_path / f"k{int(shown)}", audit_run, skipped_hands=skipped)
        line = page.locator("[data-role=skipped-hands]")  # type: ignore[attr-defined]
        expect(line).to_have_count(1 if shown else 0)
        if shown:
            assert "xinyang-heiqi: 4 hands" in line.inner_text() and "bieqi-borrow" not in line.inner_text()


def test_the_audit_page_lists_groups_of_marked_pairs(page: object, tmp_path: Path, audit_run: AuditRun) -> None:
    """Players joined by marked pairs (audit.json's groups): one row a group, its members drawn as text (a hostile id
    stays text), every pair among them linked to that pair's section; without groups, no such box."""
    from analyzer.audit.groups import marked_groups

    a, b = audit_run.planted
    third = next(p for p in audit_run.audit["pairs"] if a in p["players"] and b not in p["players"])
    c = next(x for x in third["players"] if x != a)
    pairs = [{**p, "verdict": "review"} if p is third else p for p in audit_run.audit["pairs"]]
    groups = marked_groups(pairs, {})
    assert [sorted(g["players"]) for g in groups] == [sorted([a, b, c])]
    for groups_, count in ((groups, 1), ([], 0)):
        open_audit(page, tmp_path / f"g{count}", audit_run, pairs=pairs, groups=groups_)
        found = page.locator("[data-role=group-row]")  # type: ignore[attr-defined]
        expect(found).to_have_count(count)
        if count:
            assert all(x in found.first.inner_text() for x in (a, b, c))
            links = found.first.locator("[data-role=group-pair]")
            assert links.count() == len(groups[0]["pairs"])
            links.first.click()
            expect(page.locator("[data-role=pair-title], h1, h2").filter(has_text=a).first).to_be_visible()  # type: ignore[attr-defined]
            assert "#pair=" in page.url  # type: ignore[attr-defined]
        assert_no_injection(page)
