"""The case file in a real browser: the leading sentence, the outcome figures, the pair marked in the replayer."""

from __future__ import annotations

import os
from typing import Any

import pytest
from conftest import CHROMIUM
from report_fixtures import AuditRun

from analyzer.report.audit import write_audit_report

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def case_site(tmp_path_factory: pytest.TempPathFactory, audit_run: AuditRun) -> dict[str, Any]:
    """The real audit of the small room with a planted pair, written as report.html."""
    out = tmp_path_factory.mktemp("case")
    write_audit_report(out, audit_run.audit, decisions=audit_run.decisions, records=audit_run.records)
    return {"dir": out, "audit": audit_run.audit}



def test_case_file_leads_with_the_signal_and_shows_outcomes_and_marks_the_pair(browser: Any, case_site: dict) -> None:
    audit = case_site["audit"]
    # the page lists pairs flagged first, then review, then by score: the same order as audit.json here
    k, entry = next((i, p) for i, p in enumerate(audit["pairs"]) if p.get("case") and p["evidence"])
    assert entry["verdict"] == "flagged"  # the planted pair leads the ranking, with its case
    a, b = entry["players"]
    case = entry["case"]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((case_site["dir"] / "report.html").as_uri() + f"#pair={k}")
    detail = page.locator("[data-role=detail-pair]")
    lead = detail.locator("[data-role=lead]").inner_text()
    assert case["lead"]["actor"] in lead and case["lead"]["partner"] in lead
    assert "typical" in lead or "a typical pair" in lead or "such hands" in lead
    score_row = detail.locator("[data-role=outcome-score]").inner_text()
    o = case["outcomes"]
    assert f"{o['score_together']:+.1f}" in score_row  # the pair's combined score per hand together
    assert detail.locator("[data-role=outcome-tong] td").count() == 4  # together, apart, room
    assert detail.locator("[data-role=signal-row]").count() == len(case["signals"])
    assert "standard deviations" in detail.locator("[data-role=glossary]").inner_text()
    directions = detail.locator("[data-role=direction]").all_inner_texts()
    assert directions and all(d.split(" -> ")[0] in case["evidence_actors"] for d in directions)
    detail.locator("[data-role=evidence] a").first.click()
    replay = page.locator("[data-role=detail-hand]")
    expect(replay.locator("[data-role=suspect-pair]")).to_contain_text(a)
    marked = replay.locator("[data-role=seat].suspect [data-role=player]").all_inner_texts()
    assert sorted(marked) == sorted([a, b])
    assert not errors, errors
    page.close()
