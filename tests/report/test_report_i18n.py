"""Both languages in every page (switch, remembered, nothing left in the other language), the
replayer for a person (legend, who moved, running cover points, multiplier breakdown, suspected
pair, a player's own deviations), and screenshots of every page type in both languages."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pandas as pd
import pytest
from conftest import CHROMIUM
from report_fixtures import (
    EVIL_HAND,
    EVIL_PLAYER,
    EVIL_TABLE,
    PLAYERS,
    AuditRun,
)
from report_variant_fixtures import PLAYERS as GAME_PLAYERS
from report_variant_fixtures import borrow_records, heiqi_records, kou_hand

from analyzer.logs import format_record
from analyzer.report import i18n
from analyzer.report.audit import write_audit_report
from analyzer.report.common import render_page, write_page
from analyzer.report.hand import (
    hand_data,
    multiplier_factors,
    parse_action,
    write_hand_report,
)
from analyzer.report.pair import write_pair_report
from analyzer.report.player import write_player_report
from analyzer.report.validation import write_validation_report
from analyzer.validate import validate
from analyzer.variants.bieqi import (
    DEFAULT_RULES,
    VARIANT,
    Outcome,
    Rules,
    State,
    make_record,
    play_random,
    random_deal,
)

PLOT_WAIT_MS = 20_000
#: Screenshots for a person to look at (git-ignored, like every report).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "reports" / "screenshots"
#: Ids of the fixtures: data, shown as they are in either language (marked data-raw in the page; plot
#: labels cannot be).
IDS = [*PLAYERS, *GAME_PLAYERS, EVIL_HAND, EVIL_TABLE]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect


def test_multiplier_factors_multiply_up() -> None:
    """x16 = 通 x2 x 独头七 x8 (stacking), x8 alone under 'replace', house doubling on top."""
    out = Outcome(points=(0, 5, 40, 1), tong=(0,), dutou=(0,), multipliers=(1, 16, 32, 16),
                  final_points=(0, 80, 1280, 16), scores=(0, 0, 0, 0), ranking=(0, 3, 2, 1))
    got = multiplier_factors(out, Rules(cover_doubling=(30,)))
    assert got == [[], [["tong", 2, 1], ["dutou", 8, 1]], [["tong", 2, 1], ["dutou", 8, 1], ["doubling", 2, 30]],
                   [["tong", 2, 1], ["dutou", 8, 1]]]
    replaced = Outcome(points=(0, 5, 3, 1), tong=(0,), dutou=(0,), multipliers=(1, 8, 8, 8),
                       final_points=(0, 40, 24, 8), scores=(0, 0, 0, 0), ranking=(0, 3, 2, 1))
    assert multiplier_factors(replaced, Rules(dutou="replace"))[1] == [["dutou", 8, 1]]
    assert multiplier_factors(replaced, DEFAULT_RULES) is None  # does not multiply up: no breakdown shown


def test_translations_cover_the_engine_messages() -> None:
    """The phrase table turns the validator's and the analysis' sentences into Chinese without English."""
    samples = {
        "not-live": "play Q♣ is not live; live cards in hand: 9♠ 10♥ J♣",
        "cover-with-live": "covered 2♣ while holding live card(s) 8♠; a player with a live card must play one",
        "out-of-turn": "it is seat 2's turn (p2); found seat 3 play 8♥",
        "card-not-held": "play 8♥: seat 3 does not hold 8♥ (in seat 1's hand)",
        "missing-actions": "the hand ends after 40 actions; expected 52 (seat 0 was to act, holding 3♠ K♦)",
        "result-mismatch": "result.scores is recorded as [1, -1, 0, 0] but the replay gives [6, -6, 22, -22] (x)",
    }
    for code, message in samples.items():
        zh = i18n.translate(message, code)
        assert zh != i18n.code_meaning(code, "zh") and not i18n.english_words(zh), (code, zh)
        assert i18n.CHINESE.search(zh)
    reason = ("covered 2♣ rather than Q♦ (rollouts: 3.2 ± 1.0 points worse); covering 2♣ strands own 3♣ 4♣; "
              "playing 9♥ makes 10♥ live for others")
    assert i18n.translate(reason) == ("扣 2♣ 而不是 Q♦（模拟：差 3.2 ± 1.0 分）；扣 2♣ 会卡死自己的 3♣ 4♣；"
                                      "放 9♥ 让别人的 10♥ 变成活牌")
    head = "covered 8H rather than TC (rollouts: 22.1 ± 6.7 points worse)"
    assert i18n.translate(head) == "扣 8♥ 而不是 10♣（模拟：差 22.1 ± 6.7 分）"
    # a part no phrase knows is left out, and the reader is told the original (the tooltip) says more
    assert i18n.translate(head + "; a brand new reason").endswith("分）（其余见原文）")
    assert i18n.translate("a brand new reason") == "（见英文原文，悬停可看）"
    # a sentence no phrase knows falls back to the code's meaning, never to English
    assert i18n.translate("$.deal[0] is 5: 5 is not of type 'array'", "bad-type") == i18n.code_meaning("bad-type", "zh")


def test_glossary_doc_is_made_from_the_data_file() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "glossary.md"
    assert doc.read_text(encoding="utf-8") == i18n.glossary_markdown()
    terms = {g["key"]: g["zh"] for g in i18n.data()["glossary"]}
    assert (terms["pair"], terms["suspicion"], terms["score"], terms["place"], terms["live"], terms["play"],
            terms["cover"]) == ("搭档", "嫌疑分", "得分", "名次", "活牌", "放牌", "扣牌")
    from analyzer.report.common import LABELS

    zh = LABELS["zh"]  # every label a page can show, the case file's included
    # 组合 is not the players' word; 名次 means finishing place only
    assert not [k for k, v in zh.items() if "组合" in v]
    assert [k for k, v in zh.items() if "名次" in v] == ["place"]
    assert zh["suspicion"] == "嫌疑分" and zh["score"] == "得分" and zh["pair"] == "搭档"


# --------------------------------------------------------------------------- in the browser

needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed")


def _tong_hand() -> tuple[object, Outcome]:
    """A seeded legal hand in which somebody went 通 (so the final table has a multiplier)."""
    rng = random.Random(5)
    while True:
        deal = random_deal(rng)
        st = play_random(deal, rng)
        if st.outcome().tong:
            return make_record(st, deal, hand_id="tong-hand", players=["a1", "b2", "c3", "d4"]), st.outcome()



@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh context (empty localStorage) that fails the test on any console or page error."""
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000})  # type: ignore[attr-defined]
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    yield pg
    ctx.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, audit_run: AuditRun) -> dict[str, object]:
    out = tmp_path_factory.mktemp("i18n")
    records = audit_run.records
    decisions = audit_run.decisions
    log = out / "room.jsonl"
    lines = [format_record(r) for r in records[:8]]
    bad = lines[3].replace(b'"kind":"play"', b'"kind":"cover"', 3)
    log.write_bytes(b"\n".join([*lines, bad, lines[5][:-40] + b'"}', b"[1, 2]"]) + b"\n")
    write_hand_report(out / "hand.html", records[0], decisions=decisions)
    tong, _ = _tong_hand()
    write_hand_report(out / "hand-tong.html", tong, lang="zh")
    # a hand whose end is a 通 that is a 独头七: the replayer only draws it, so its outcome is set by hand
    hd = hand_data(records[1])
    assert hd is not None
    fake = Outcome(points=(0, 5, 8, 1), tong=(0,), dutou=(0,), multipliers=(1, 16, 16, 16),
                   final_points=(0, 80, 128, 16), scores=(224, -16, -128, 96 - 176), ranking=(0, 3, 1, 2))
    hd["outcome"] = {"points": fake.points, "tong": fake.tong, "dutou": fake.dutou, "multipliers": fake.multipliers,
                     "final_points": fake.final_points, "scores": fake.scores, "ranking": fake.ranking,
                     "factors": multiplier_factors(fake, DEFAULT_RULES)}
    write_page(out / "hand-dutou.html", render_page("hand", lang="en", data={"hand_ids": ["x"], "default_view": ["hand", 0]},
                                                    stores={"hand": [hd]}))
    write_hand_report(out / "hand-borrow.html", borrow_records()[0])  # the other games' views switch too
    write_hand_report(out / "hand-heiqi.html", kou_hand(heiqi_records()))
    write_player_report(out / "player.html", EVIL_PLAYER, decisions, records=records)
    write_pair_report(out / "pair.html", EVIL_PLAYER, PLAYERS[1], decisions=decisions, records=records)
    write_audit_report(out, audit_run.audit, decisions=decisions, records=records)
    write_validation_report(out / "validation.html", [str(log)], validate([str(log)]))
    return {"dir": out, "records": records, "decisions": decisions, "tong": tong}


def url(path: Path, hash_: str = "") -> str:
    return path.as_uri() + (f"#{hash_}" if hash_ else "")


#: Every visible text of the page that is not data (ids, codes, unknown keys are marked data-raw),
#: plus the title and input placeholders.
VISIBLE_TEXT = """() => {
  const out = [document.title];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const p = n.parentElement;
    // data, and the switch, where each language names itself
    if (!p || p.closest("[data-raw], [data-role=lang], script, style")) continue;
    if (!p.getClientRects().length) continue;  // not rendered (hidden, collapsed)
    out.push(n.textContent);
  }
  document.querySelectorAll("input[placeholder]").forEach((e) => out.push(e.placeholder));
  return out.join("\\n");
}"""


def switch(pg: object, lang: str) -> None:
    pg.locator(f"[data-role=lang][data-lang={lang}]").click()  # type: ignore[attr-defined]
    expect(pg.locator("html")).to_have_attribute("lang", "zh-CN" if lang == "zh" else "en")


def assert_one_language(pg: object, lang: str, where: str) -> None:
    text = pg.evaluate(VISIBLE_TEXT)  # type: ignore[attr-defined]
    for x in IDS:
        text = text.replace(x, " ")
    if lang == "zh":
        assert not i18n.english_words(text), (where, i18n.english_words(text))
        assert i18n.CHINESE.search(text)
    else:
        assert not i18n.CHINESE.findall(text), (where, sorted(set(i18n.CHINESE.findall(text))))


def wait_plots(pg: object) -> None:
    plots = pg.locator("[data-role^=plot-]")  # type: ignore[attr-defined]
    for i in range(plots.count()):
        expect(plots.nth(i).locator(".main-svg").first).to_be_attached(timeout=PLOT_WAIT_MS)


def both_languages(pg: object, name: str, views: list[tuple[str, str]]) -> None:
    """Each view (a #hash) in Chinese then English, switched in the page; screenshots of the first."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for lang in ("zh", "en"):
        switch(pg, lang)
        for i, (hash_, label) in enumerate(views):
            pg.evaluate(f"location.hash = {hash_!r}")  # type: ignore[attr-defined]
            wait_plots(pg)
            assert_one_language(pg, lang, f"{name} {label} {lang}")
            if i == 0:
                pg.screenshot(path=str(SCREENSHOTS / f"{name}-{lang}.png"), full_page=True)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name,file,views", [
    ("hand", "hand.html", [("hand=0&step=52", "end"), ("hand=0&step=0", "start"), ("hand=0&step=17", "middle")]),
    ("hand-tong", "hand-tong.html", [("hand=0&step=52", "end")]),
    ("hand-borrow", "hand-borrow.html", [("hand=0&step=4", "start"), ("hand=0&step=500", "end")]),
    ("hand-heiqi", "hand-heiqi.html", [("hand=0&step=0", "start"), ("hand=0&step=3", "trick"), ("hand=0&step=99", "end")]),
    ("player", "player.html", [("", "page"), ("hand=0&step=3&focus=x", "hand")]),
    ("pair", "pair.html", [("", "page")]),
    ("audit", "report.html", [("", "overview"), ("pair=0", "pair"), ("player=0", "player"), ("hand=0&step=5", "hand")]),
    ("validation", "validation.html", [("", "overview"), ("hand=0", "hand")]),
])
@pytest.mark.browser
@needs_chromium
def test_every_page_in_both_languages(page: object, site: dict, name: str, file: str, views: list) -> None:
    page.goto(url(site["dir"] / file))  # type: ignore[attr-defined]
    both_languages(page, name, views)


@pytest.mark.browser
@needs_chromium
def test_choice_is_remembered_across_pages(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "hand.html"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=step]")).to_have_text("move 1 / 52")  # the move about to be made, as the list numbers it
    switch(page, "zh")
    expect(page.locator("[data-role=step]")).to_have_text("第 1 / 52 手")
    page.goto(url(site["dir"] / "player.html"))  # another page of the same reader opens in Chinese
    # a player page carries plotly (~3.5 MB of script): under a loaded CI machine its parse took over expect's 5 s
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN", timeout=30_000)
    expect(page.locator("#page-title")).to_have_text("玩家报告")
    switch(page, "en")
    page.goto(url(site["dir"] / "hand-tong.html"))  # written with --lang zh, the reader's choice wins
    expect(page.locator("[data-role=step]")).to_contain_text("move")


@pytest.mark.browser
@needs_chromium
def test_replayer_legend_movers_points_and_suspects(page: object, site: dict) -> None:
    rec = site["records"][0]
    suspects = [PLAYERS[1], next(p for p in rec.players if p in ("p3", "p4", "p5"))]  # two who sat in the hand
    assert PLAYERS[1] in rec.players
    page.goto(url(site["dir"] / "hand.html", f"hand=0&step=0&suspect={suspects[0]}&suspect={suspects[1]}"))  # type: ignore[attr-defined]
    legend = page.locator("[data-role=legend]")  # type: ignore[attr-defined]
    for key in ("lg_live", "lg_last", "lg_back", "lg_best", "lg_big", "lg_suspect"):
        expect(legend).to_contain_text(i18n.labels("en")[key])
    assert legend.locator(".card.live").count() == 1 and legend.locator(".move.dev-big").count() == 1
    marked = page.locator(".seat-panel.suspect [data-role=player]").all_inner_texts()  # type: ignore[attr-defined]
    assert sorted(marked) == sorted(suspects)
    # who made each move: the column of each move is the seat the engine says acted
    st = State(VARIANT.deal_masks(rec, []))
    heads = page.locator("[data-role=moves] thead th[data-seat]").evaluate_all("els => els.map(e => +e.dataset.seat)")  # type: ignore[attr-defined]
    chips = page.locator("[data-role=moves] tbody tr")  # type: ignore[attr-defined]
    for k in range(52):
        row, col = divmod(k, 4)
        chip = chips.nth(row).locator("td").nth(col).locator(".move")
        assert chip.get_attribute("data-step") == str(k) and heads[col] == st.turn
        assert chips.nth(row).locator("td").nth(col).locator(".move").get_attribute("data-seat") == str(st.turn)
        st.push(parse_action(rec.actions[k].card, rec.actions[k].kind))
    # running cover points, stepping with the keyboard
    st = State(VARIANT.deal_masks(rec, []))
    for k in range(53):
        if k in (0, 10, 26, 40, 52):
            shown = page.locator("[data-role=cover-points]").all_inner_texts()  # type: ignore[attr-defined]
            assert [int(x) for x in shown] == [sum(c % 13 + 1 for c in range(52) if st.covered[s] >> c & 1) for s in range(4)]
        if k < 52:
            st.push(parse_action(rec.actions[k].card, rec.actions[k].kind))
            page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
    assert "suspect=" in page.url  # the marks stay in the link as the reader steps


@pytest.mark.browser
@needs_chromium
def test_multiplier_breakdown(page: object, site: dict) -> None:
    page.goto(url(site["dir"] / "hand-dutou.html", "hand=0&step=52"))  # type: ignore[attr-defined]
    mult = page.locator("[data-role=final] [data-role=multiplier]").all_inner_texts()  # type: ignore[attr-defined]
    assert mult == ["×1", "×16 = tong ×2 × lone seven ×8", "×16 = tong ×2 × lone seven ×8", "×16 = tong ×2 × lone seven ×8"]
    switch(page, "zh")
    mult = page.locator("[data-role=final] [data-role=multiplier]").all_inner_texts()  # type: ignore[attr-defined]
    assert mult[1] == "×16 = 通 ×2 × 独头七 ×8"
    expect(page.locator("[data-role=explain]")).to_contain_text("×16 = 通 ×2 × 独头七 ×8")
    # a real hand: the breakdown multiplies up to the engine's multipliers
    page.goto(url(site["dir"] / "hand-tong.html", "hand=0&step=52"))  # type: ignore[attr-defined]
    out = site["tong"]
    got = page.locator("[data-role=final] [data-role=multiplier]").all_inner_texts()  # type: ignore[attr-defined]
    st = State(VARIANT.deal_masks(out, []))
    for a in out.actions:
        st.push(parse_action(a.card, a.kind))
    assert [g.split(" ")[0] for g in got] == [f"×{m}" for m in st.outcome().multipliers]
    assert any("通 ×" in g for g in got)


@pytest.mark.browser
@needs_chromium
def test_player_page_deviation_jump_goes_to_the_players_own(page: object, site: dict) -> None:
    decisions: pd.DataFrame = site["decisions"]
    page.goto(url(site["dir"] / "player.html"))  # type: ignore[attr-defined]
    link = page.locator("a[href*='focus=']").first  # type: ignore[attr-defined]
    q = parse_qs(link.get_attribute("href").lstrip("#"))
    assert q["focus"] == [EVIL_PLAYER]
    link.click()
    hand_id = page.locator("[data-role=detail-hand] [data-role=hand-id]").inner_text()  # type: ignore[attr-defined]
    mine = decisions[decisions["hand_id"] == hand_id]
    start = int(q["step"][0])
    own = sorted(int(a) for a in mine.loc[(mine["regret"] >= 5) & (mine["player"] == EVIL_PLAYER), "action"] if a > start)
    others = {int(a) for a in mine.loc[(mine["regret"] >= 5) & (mine["player"] != EVIL_PLAYER), "action"]}
    assert others, "the fixture should have other players' big deviations in this hand"
    page.locator("[data-role=next_dev]").click()  # type: ignore[attr-defined]
    step = int(parse_qs(page.url.split("#", 1)[1])["step"][0])  # type: ignore[attr-defined]
    assert step == (own[0] if own else start)
    assert step not in others or step in own


@pytest.mark.browser
@needs_chromium
def test_validation_page_counts_moves_as_the_text_does(page: object, site: dict) -> None:
    problems = [p for p in validate([str(site["dir"] / "room.jsonl")]).problems if p.action is not None]
    assert problems
    page.goto(url(site["dir"] / "validation.html"))  # type: ignore[attr-defined]
    rows = page.locator("[data-role=problem-row]")  # type: ignore[attr-defined]
    shown = {rows.nth(i).locator("td").nth(4).inner_text(): rows.nth(i).locator("td").nth(2).inner_text()
             for i in range(rows.count())}
    for p in problems:
        assert shown[p.code] == str(p.to_dict()["move"]) and f"move {p.action + 1}" in p.format()


def test_a_page_carries_the_words_its_script_uses_and_not_the_look_changes_words() -> None:
    """The "since the last look" block is HTML made in Python: its words ride only in the pages that have the block."""
    import json as _json
    import re as _re

    from analyzer.report.changes import changes_html, lead_with_changes
    from analyzer.report.common import render_page

    page = render_page("validation", lang="en", data={})
    data = _json.loads(_re.search(r'id="report-data">(.*?)</script>', page, _re.S).group(1))  # type: ignore[union-attr]
    assert "labels" in data["i18n"] and "changes" not in data["i18n"]
    changes_title = i18n.data()["changes"]["en"]["title"].split("{")[0].strip()
    assert changes_title and changes_title not in page
    block = {"look_id": 2, "at": "2026-12-02T06:00:00Z", "label": None, "counts": {"new": 0, "reopened": 0, "changed": 0},
             "previous": None, "changes": []}
    led = lead_with_changes(page, block)
    assert changes_title in led and changes_html(block) in led
