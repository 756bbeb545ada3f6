"""The 借牌 and 信阳黑七 hand pages in a real browser (Debian chromium via playwright), on a laptop-sized screen.

Each page is stepped through with the keyboard and what it shows is compared with the engine's own
replay; planted problems open at their move or trick from the validation page; hostile ids stay
text; both languages. Screenshots go to reports/screenshots/ (git-ignored).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from conftest import CHROMIUM, watched_page
from report_variant_fixtures import (
    EVIL_HAND,
    EVIL_PLAYER,
    EVIL_TABLE,
    borrow_records,
    borrow_states,
    cheat_records,
    hand_cards,
    heiqi_records,
    heiqi_tricks,
    kou_hand,
    plant_not_live,
    plant_swapped_follow,
)

from analyzer.cards import parse_card, scan
from analyzer.logs import decoder, format_record
from analyzer.report.hand import write_hand_report
from analyzer.report.validation import write_validation_report
from analyzer.validate import validate
from analyzer.variants import borrow, heiqi

LAPTOP = {"width": 1366, "height": 768}
SHOTS = Path(__file__).resolve().parents[2] / "reports" / "screenshots"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect
# A 2-core CI machine under load can take seconds to render a step; waits, not sleeps.
expect.set_options(timeout=20_000)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]



@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A laptop-sized page that fails the test on any console error, uncaught exception or dialog (XSS)."""
    with watched_page(browser, LAPTOP) as pg:
        yield pg


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Hand pages of both games in both languages, and a validation page with planted problems."""
    out = tmp_path_factory.mktemp("games")
    bw, hq, cheats = borrow_records(), heiqi_records(), cheat_records()
    kou = kou_hand(hq)
    write_hand_report(out / "borrow-en.html", bw[0])
    write_hand_report(out / "borrow-zh.html", bw[0], lang="zh")
    write_hand_report(out / "heiqi-en.html", kou)
    write_hand_report(out / "heiqi-zh.html", kou, lang="zh")
    dead, at = plant_not_live(msgspec.structs.replace(bw[1], hand_id="dead"))
    swapped = plant_swapped_follow(msgspec.structs.replace(kou, hand_id="swapped"), 4)
    log = out / "planted.jsonl"
    log.write_bytes(b"".join(format_record(r) + b"\n" for r in cheats) + dead + b"\n" + swapped + b"\n")
    for lang in ("en", "zh"):
        write_validation_report(out / f"validation-{lang}.html", [str(log)], validate([str(log)]), lang=lang)
    return {"dir": out, "borrow": bw[0], "kou": kou, "cheats": cheats, "dead": decoder().decode(dead), "dead_at": at,
            "swapped": decoder().decode(swapped), "log": log}


def url(path: Path, hash_: str = "") -> str:
    return path.as_uri() + (f"#{hash_}" if hash_ else "")


def shot(pg: object, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"))  # type: ignore[attr-defined]  # the laptop screen as seen


def shown(pg: object, selector: str, card: str = ".card") -> list[int]:
    """Card ints drawn inside ``selector``, sorted (copies kept)."""
    return sorted(int(x) for x in pg.locator(f"{selector} {card}[data-card]").evaluate_all(  # type: ignore[attr-defined]
        "els => els.map(e => e.dataset.card)"))


def seat(s: int) -> str:
    return f"[data-role=seat][data-seat='{s}']"


def assert_inert(pg: object) -> None:
    """Hostile ids are on screen as text and made no element; an RTL override stays inside its own isolate."""
    text = pg.locator("body").inner_text()  # type: ignore[attr-defined]
    assert EVIL_PLAYER in text and "p3</script>" in text
    assert pg.locator("img, main svg:not([data-role=lend-arrow]), main script, main iframe").count() == 0  # type: ignore[attr-defined]
    assert not pg.evaluate(  # type: ignore[attr-defined]  # no element carries an event-handler attribute
        "() => [...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on')))")
    rtl = pg.locator("bdi.name", has_text="evil-rtl").first  # type: ignore[attr-defined]
    assert rtl.evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    after = rtl.evaluate("e => { const n = e.nextElementSibling; return n && n.getBoundingClientRect().left; }")
    box = rtl.bounding_box()
    assert after is None or after >= box["x"] + box["width"] - 1  # what follows the name still reads after it


#: The visible text under a root that is not data (ids and codes are marked data-raw), nor under ``skip``.
VISIBLE_TEXT = """([root, skip]) => {
  const out = [];
  const top = document.querySelector(root);
  const walk = document.createTreeWalker(top, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest("[data-raw], [data-role=lang], script, style" + skip) || !p.getClientRects().length) continue;
    out.push(n.textContent);
  }
  return out.join("\\n");
}"""


def assert_one_language(pg: object, lang: str, root: str = "body") -> None:
    """A Chinese page shows no English words, an English page no Chinese (ids and codes aside; in English the
    validator's messages, which quote the seed's Chinese terms, are left out)."""
    text = pg.evaluate(VISIBLE_TEXT, [root, "" if lang == "zh" else ", [data-role=problem]"])  # type: ignore[attr-defined]
    if lang == "zh":
        assert re.search(r"[\u4e00-\u9fff]", text)
        assert not re.findall(r"[A-Za-z][A-Za-z_'-]*[A-Za-z]", text), text
    else:
        assert not re.findall(r"[\u3000-\u303f\u3400-\u9fff\uff01-\uff0f\uff1a-\uff1f]", text), text


# --------------------------------------------------------------------------- 借牌 table game

def test_borrow_page_follows_the_engine_to_the_end(page: object, site: dict) -> None:
    rec = site["borrow"]
    states = borrow_states(rec)
    n = len(rec.actions)
    borrows = [i for i, a in enumerate(rec.actions) if isinstance(a, borrow.Borrow)]
    check_at = {0, 1, n // 2, n - 1, n, *[i + 1 for i in borrows[:3]]}
    page.goto(url(site["dir"] / "borrow-en.html"))  # type: ignore[attr-defined]
    step = page.locator("[data-role=step]")  # type: ignore[attr-defined]
    for k in range(n + 1):
        if k in check_at:
            st = states[k]
            # the move about to be made, numbered as the move list numbers it (the standard game's counter)
            expect(step).to_have_text(f"move {k + 1} / {n}" if k < n else f"end of the hand ({n} moves)")
            for s in range(4):
                assert shown(page, f"{seat(s)} [data-role=hand]") == hand_cards(st, s)
                finished = page.locator(f"{seat(s)} [data-role=tag]", has_text="no cards left")  # type: ignore[attr-defined]
                assert finished.count() == (s in st.finish_order)
            assert shown(page, "[data-role=table]") == list(scan(st.table))
            if not st.is_terminal():
                assert page.locator(".seat-panel.to-act").get_attribute("data-seat") == str(st.current_player())  # type: ignore[attr-defined]
            if k - 1 in borrows:
                a = rec.actions[k - 1]
                lend = page.locator("[data-role=last-move] [data-role=lend]")  # type: ignore[attr-defined]
                assert (lend.get_attribute("data-from"), lend.get_attribute("data-to")) == (str(a.lender), str(a.seat))
                arrow = page.locator("svg[data-role=lend-arrow]")  # type: ignore[attr-defined]
                assert (arrow.get_attribute("data-from"), arrow.get_attribute("data-to")) == (str(a.lender), str(a.seat))
                assert shown(page, f"{seat(a.seat)} [data-role=hand]", ".card.last") == [parse_card(a.card, jokers=True)]
                assert a.lender == states[k - 1].next_holder(a.seat)
        if k == 1:
            assert_inert(page)
            assert_one_language(page, "en")
            shot(page, "borrow-en")
        if k < n:
            page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
    out = borrow.VARIANT.check(rec).outcome
    order = page.locator("[data-role=finish-order] [data-seat]").evaluate_all("els => els.map(e => +e.dataset.seat)")  # type: ignore[attr-defined]
    assert order == list(out.finish_order)
    assert page.locator("[data-role=loser]").get_attribute("data-seat") == str(out.loser)  # type: ignore[attr-defined]
    assert page.locator(f"{seat(out.loser)} .card.joker").count() == 1  # type: ignore[attr-defined]
    page.keyboard.press("Home")  # type: ignore[attr-defined]
    expect(page).to_have_url(re.compile(r"step=0(?!\d)"))
    expect(page.locator(f"{seat(rec.dealer)} [data-role=hand] .card")).to_have_count(14)  # type: ignore[attr-defined]
    assert EVIL_HAND in page.locator("[data-role=hand-id]").inner_text()  # type: ignore[attr-defined]
    assert EVIL_TABLE in page.locator("[data-role=table-id]").inner_text()  # type: ignore[attr-defined]


def test_borrow_page_in_chinese(page: object, site: dict) -> None:
    rec = site["borrow"]
    n = len(rec.actions)
    page.goto(url(site["dir"] / "borrow-zh.html", f"hand=0&step={n}"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=step]")).to_have_text(f"牌局结束（共 {n} 手）")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=loser]")).to_contain_text("输家")  # type: ignore[attr-defined]
    first_borrow = next(i for i, a in enumerate(rec.actions) if isinstance(a, borrow.Borrow))
    page.goto(url(site["dir"] / "borrow-zh.html", f"hand=0&step={first_borrow + 1}"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=last-move]")).to_contain_text("借出")  # type: ignore[attr-defined]
    assert_inert(page)
    assert_one_language(page, "zh")
    shot(page, "borrow-zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_illegal_borrow_opens_at_its_move_with_the_live_cards_held(page: object, site: dict, lang: str) -> None:
    rec = site["cheats"][0]
    states = borrow_states(rec)
    problems = [p for p in borrow.VARIANT.check(rec).problems if p.code == "borrow-with-live"]
    page.goto(url(site["dir"] / f"validation-{lang}.html"))  # type: ignore[attr-defined]
    row = page.locator("[data-role=problem-row]", has_text="borrow-with-live").first  # type: ignore[attr-defined]
    row.locator("a").click()
    i = problems[0].action
    label = f"move {i + 1} / {len(rec.actions)}" if lang == "en" else f"第 {i + 1} / {len(rec.actions)} 手"
    expect(page.locator("[data-role=detail-hand] [data-role=step]")).to_have_text(label)  # type: ignore[attr-defined]
    banner = page.locator("[data-role=problem][data-code=borrow-with-live]")  # type: ignore[attr-defined]
    held = list(scan(states[i].live_in_hand()))
    assert banner.count() == 1 and shown(page, "[data-role=live-held]") == held
    actor = seat(problems[0].seat)
    assert shown(page, f"{actor} [data-role=hand]") == hand_cards(states[i], problems[0].seat)
    assert shown(page, f"{actor} [data-role=hand]", ".card.illegal-live") == held  # ringed where they are held
    lend = page.locator("[data-role=next-move] [data-role=lend]")  # type: ignore[attr-defined]
    assert "illegal" in (lend.get_attribute("class") or "") and lend.get_attribute("data-to") == str(problems[0].seat)
    assert_inert(page)
    assert_one_language(page, lang, "[data-role=detail-hand]")  # the message is translated on a Chinese page
    shot(page, f"borrow-illegal-{lang}")


def test_a_stopped_borrow_hand_opens_at_the_failing_move(page: object, site: dict) -> None:
    rec, i = site["dead"], site["dead_at"]
    page.goto(url(site["dir"] / "validation-en.html"))  # type: ignore[attr-defined]
    page.locator("[data-role=problem-row]", has_text="not-live").locator("a").click()  # type: ignore[attr-defined]
    # the move the replay stopped at is the one about to be made, and the last the counter counts
    expect(page.locator("[data-role=step]")).to_have_text(f"move {i + 1} / {i + 1}")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=next-move]")).to_contain_text("not legal")  # type: ignore[attr-defined]
    st = borrow_states(rec)[i]
    for s in range(4):
        assert shown(page, f"{seat(s)} [data-role=hand]") == hand_cards(st, s)


# --------------------------------------------------------------------------- 信阳黑七

def _multiset(cards: list[int]) -> list[int]:
    return sorted(Counter(cards).elements())


def test_heiqi_page_follows_the_engine_trick_by_trick(page: object, site: dict) -> None:
    rec = site["kou"]
    tricks = heiqi_tricks(rec)
    n = len(rec.tricks)
    page.goto(url(site["dir"] / "heiqi-en.html"))  # type: ignore[attr-defined]
    step = page.locator("[data-role=step]")  # type: ignore[attr-defined]
    bids = page.locator("[data-role=bid]").evaluate_all("els => els.map(e => +e.dataset.seat)")  # type: ignore[attr-defined]
    assert bids == [b.seat for b in rec.bids]
    assert page.locator("[data-role=dealer]").get_attribute("data-seat") == str(rec.dealer)  # type: ignore[attr-defined]
    assert shown(page, "[data-role=buried]") == sorted(heiqi._parse_cards(rec.buried)[0])
    assert shown(page, "[data-role=bottom]") == sorted(heiqi._parse_cards(rec.bottom)[0])
    expect(step).to_have_text("Bidding")  # step 0: the auction, before the first trick
    for s in range(4):  # step 0: the hands as play starts; the dealer's 33 with the 8 buried marked
        assert shown(page, f"{seat(s)} [data-role=hand]", ".card:not(.buried)") == tricks[0]["hands"][s]
    assert shown(page, f"{seat(rec.dealer)} [data-role=hand]", ".card.buried") == shown(page, "[data-role=buried]")
    for k in range(1, n + 1):
        page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
        expect(step).to_have_text(f"trick {k} / {n}")  # as the trick strip and the trick's line number it
        want = tricks[k - 1]
        if k in (1, 2, n // 2, n):
            for s in range(4):
                assert shown(page, f"{seat(s)} [data-role=hand]") == _multiset(want["hands"][s])
                played = heiqi._parse_cards(rec.tricks[k - 1].plays[(s - rec.tricks[k - 1].leader) % 4])[0]
                assert shown(page, f"[data-role=play][data-seat='{s}']") == sorted(played)
        assert page.locator("[data-role=winner]").get_attribute("data-seat") == str(want["winner"])  # type: ignore[attr-defined]
        assert page.locator(f"[data-role=play][data-seat='{want['winner']}'] [data-role=trick-winner]").count() == 1  # type: ignore[attr-defined]
        assert page.locator("[data-role=defender-points]").inner_text() == str(want["defender_points"])  # type: ignore[attr-defined]
        if k == 3:
            assert_inert(page)
            assert_one_language(page, "en")
            # a 108-card deal on a laptop: no sideways scrolling, the four hands and the trick on one screen
            assert page.evaluate("() => document.documentElement.scrollWidth") <= LAPTOP["width"]  # type: ignore[attr-defined]
            assert page.locator("[data-role=seats]").bounding_box()["y"] + page.locator(  # type: ignore[attr-defined]
                "[data-role=seats]").bounding_box()["height"] <= LAPTOP["height"]
            shot(page, "heiqi-en")
    out = tricks[-1]["outcome"]
    assert page.locator("[data-role=kou]").get_attribute("data-factor") == str(out.bottom_factor)  # type: ignore[attr-defined]
    assert page.locator("[data-role=total]").inner_text() == str(out.defender_points)  # type: ignore[attr-defined]
    assert page.locator("[data-role=outcome]").get_attribute("data-outcome") == out.outcome  # type: ignore[attr-defined]
    settle = [int(page.locator(f"[data-role=settle][data-seat='{s}'] td").nth(3).inner_text()) for s in range(4)]  # type: ignore[attr-defined]
    assert settle == list(out.settlement)
    page.screenshot(path=str(SHOTS / "heiqi-en-end.png"), full_page=True)  # type: ignore[attr-defined]


def test_heiqi_page_in_chinese(page: object, site: dict) -> None:
    rec = site["kou"]
    n = len(rec.tricks)
    page.goto(url(site["dir"] / "heiqi-zh.html", "hand=0&step=5"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=step]")).to_have_text(f"第 5 / {n} 墩")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=trick-no]")).to_have_text(f"第 5 / {n} 墩")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=auction]")).to_contain_text("叫牌")  # type: ignore[attr-defined]
    assert_inert(page)
    assert_one_language(page, "zh")
    shot(page, "heiqi-zh")
    page.keyboard.press("End")  # type: ignore[attr-defined]
    expect(page.locator("[data-role=kou]")).to_contain_text("摳底")  # type: ignore[attr-defined]
    assert_one_language(page, "zh")
    shot(page, "heiqi-zh-end")


def test_heiqi_planted_problem_opens_at_its_trick(page: object, site: dict) -> None:
    rec = site["swapped"]
    problem = heiqi.VARIANT.check(rec).problems[0]
    page.goto(url(site["dir"] / "validation-zh.html"))  # type: ignore[attr-defined]
    row = page.locator("[data-role=problem-row]", has_text=problem.code)  # type: ignore[attr-defined]
    expect(row).to_contain_text(f"墩\u00a0{problem.trick + 1}")
    row.locator("a").click()
    k = problem.trick + 1
    expect(page.locator("[data-role=step]")).to_have_text(f"第 {k} / {k} 墩")  # type: ignore[attr-defined]
    assert page.locator(f"[data-role=problem][data-code={problem.code}]").count() == 1  # type: ignore[attr-defined]
    assert page.locator(f"[data-role=play][data-seat='{problem.seat}'] [data-role=attempted]").count() == 1  # type: ignore[attr-defined]
    before = heiqi_tricks(rec)[problem.trick]["hands"]
    for s in range(4):
        assert shown(page, f"{seat(s)} [data-role=hand]") == _multiset(before[s])
    shot(page, "heiqi-problem-zh")


def test_the_page_switch_changes_language_in_place(page: object, site: dict) -> None:
    n = len(site["kou"].tricks)
    page.goto(url(site["dir"] / "heiqi-en.html", "hand=0&step=4"))  # type: ignore[attr-defined]
    expect(page.locator("[data-role=trick-no]")).to_have_text(f"trick 4 / {n}")  # type: ignore[attr-defined]
    page.locator("[data-role=lang][data-lang=zh]").click()  # type: ignore[attr-defined]
    expect(page.locator("[data-role=trick-no]")).to_have_text(f"第 4 / {n} 墩")  # type: ignore[attr-defined]
    assert_one_language(page, "zh")
    page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]  # the keys still drive the redrawn view
    expect(page.locator("[data-role=step]")).to_have_text(f"第 5 / {n} 墩")  # type: ignore[attr-defined]
    page.locator("[data-role=lang][data-lang=en]").click()  # type: ignore[attr-defined]
    expect(page.locator("[data-role=step]")).to_have_text(f"trick 5 / {n}")  # type: ignore[attr-defined]
    assert_one_language(page, "en")
