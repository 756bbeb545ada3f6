"""The audit page of rooms the pair audit does not read, in a real browser: 借牌's borrows and lending table shown,
信阳黑七's validation said, no empty pair chart."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CHROMIUM, ROOT, run_cli

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect
expect.set_options(timeout=20_000)  # a loaded 2-core machine: waits, not sleeps

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A page that fails the test on any console error or uncaught exception."""
    pg = browser.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    yield pg
    pg.close()
    assert not errors, errors


def _audit(tmp_path: Path, sample: str, code: int) -> Path:
    out = tmp_path / "out"
    r = run_cli("audit", str(ROOT / "samples" / sample), "--out", str(out), catch_exceptions=False)
    assert r.exit_code == code, r.output
    return out / "report.html"


def test_the_borrow_page_shows_the_illegal_borrows_and_lending(page: object, tmp_path: Path) -> None:
    path = _audit(tmp_path, "borrow-cheat.jsonl", 1)
    page.goto(path.as_uri())  # type: ignore[attr-defined]
    expect(page.locator('[data-role="borrow-found"]')).to_have_text(  # type: ignore[attr-defined]
        "4 illegal borrows (borrowing while holding a live card: certain cheating, proven by the replay) by 2 "
        "players. The command exits 1.")
    rows = page.locator('[data-role="borrow-player-row"]')  # type: ignore[attr-defined]
    expect(rows).to_have_count(4)
    expect(rows.first).to_contain_text("bob")
    expect(page.locator('[data-role="lending-row"]')).to_have_count(5)  # type: ignore[attr-defined]
    for role in ("plot-audit", "flagged-count", "pair-row"):  # no empty pair audit
        expect(page.locator(f'[data-role="{role}"]')).to_have_count(0)  # type: ignore[attr-defined]


def test_the_heiqi_page_speaks_of_that_game(page: object, tmp_path: Path) -> None:
    path = _audit(tmp_path, "heiqi-sample.jsonl", 0)
    page.goto(path.as_uri())  # type: ignore[attr-defined]
    box = page.locator('[data-role="game-validated"]')  # type: ignore[attr-defined]
    expect(box).to_contain_text("信阳黑七 (xinyang-heiqi): 4 valid hands")
    expect(box).to_contain_text("The pair audit does not cover this game")
    expect(box).to_contain_text("Validation found no problem.")
    main = page.locator("main") if page.locator("main").count() else page.locator("body")  # type: ignore[attr-defined]
    assert "borrow" not in main.inner_text().lower()
    expect(page.locator('[data-role="plot-audit"]')).to_have_count(0)  # type: ignore[attr-defined]


def test_the_heiqi_page_in_chinese_names_the_game_in_chinese(page: object, tmp_path: Path) -> None:
    from analyzer.report import i18n

    path = _audit(tmp_path, "heiqi-sample.jsonl", 0)
    page.goto(path.as_uri())  # type: ignore[attr-defined]
    page.locator("[data-role=lang][data-lang=zh]").click()  # type: ignore[attr-defined]
    box = page.locator('[data-role="game-validated"]')  # type: ignore[attr-defined]
    expect(box).to_contain_text("信阳黑七：4 局有效牌局")
    text = box.inner_text()
    assert "搭档审计不涵盖这一玩法" in text and not i18n.english_words(text), i18n.english_words(text)


def test_beside_standard_hands_the_page_keeps_the_pair_audit(page: object, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run_cli("audit", str(ROOT / "samples" / "legal.jsonl"), str(ROOT / "samples" / "heiqi-sample.jsonl"),
                "--out", str(out), "--samples", "1", "--dd-samples", "0")
    assert r.exit_code in (0, 1), r.output
    page.goto((out / "report.html").as_uri())  # type: ignore[attr-defined]
    expect(page.locator('[data-role="pair-row"]').first).to_be_visible()  # type: ignore[attr-defined]
    box = page.locator('[data-role="game-validated"]')  # type: ignore[attr-defined]
    expect(box).to_contain_text("信阳黑七 (xinyang-heiqi): 4 valid hands")
    expect(box.locator('[data-role="game-problem-row"]')).to_have_count(0)
    expect(page.locator('[data-role="pair-audit-empty"]')).to_have_count(0)  # type: ignore[attr-defined]


def test_the_lending_table_gives_each_pair_its_verdict_and_q(page: object, tmp_path: Path) -> None:
    log = tmp_path / "lend.jsonl"
    r = run_cli("simulate", "--variant", "bieqi-borrow", "--players", "6", "--hands", "150", "--colluders", "1",
                "--style", "lend", "--seed", "3", "-o", str(log))
    assert r.exit_code == 0, r.output
    path = _audit(tmp_path, str(log), 1)
    import json

    pairs = json.loads((path.parent / "audit.json").read_text())["bieqi-borrow"]["pairs"]
    flagged = [p for p in pairs if p["verdict"] == "flagged"]
    assert len(flagged) == 1
    page.goto(path.as_uri())  # type: ignore[attr-defined]
    expect(page.locator('[data-role="lending-found"]')).to_contain_text(  # type: ignore[attr-defined]
        f"{len(pairs)} pairs compared: 1 flagged, 0 for review")
    row = page.locator('[data-role="lending-row"][data-verdict="flagged"]')  # type: ignore[attr-defined]
    expect(row).to_have_count(1)
    expect(row).to_contain_text(f"{flagged[0]['a']} & {flagged[0]['b']}")
    expect(row.locator('[data-role="verdict"]')).to_have_text("flagged")
    q = row.locator("td").last.inner_text()
    want_q = flagged[0]["q_value"]
    assert want_q > 0 and q == f"{want_q:.1e}", q  # the q audit.json holds, in the last column
    expect(page.locator('[data-role="lending-row"][data-verdict="clear"]')).to_have_count(len(pairs) - 1)  # type: ignore[attr-defined]
    page.locator("[data-role=lang][data-lang=zh]").click()  # type: ignore[attr-defined]
    expect(page.locator('[data-role="lending-found"]')).to_contain_text("1 对已标记")  # type: ignore[attr-defined]
