"""The case file in a real browser: the leading sentence, the outcome figures, the pair marked in the replayer."""

from __future__ import annotations

import os
from typing import Any

import pytest
from conftest import CHROMIUM, watched_page
from report_fixtures import AuditRun

from analyzer.report.audit import write_audit_report

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]

VIEWPORT = {"width": 1280, "height": 900}


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
    with watched_page(browser, VIEWPORT) as page:
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
        if "burst_directions" in case:  # burst's extreme hands, a table a direction of an actor who could know
            actors = [d.get_attribute("data-actor") for d in detail.locator("[data-role=burst-direction]").all()]
            assert actors and set(actors) <= set(case["evidence_actors"])
            detail.locator("[data-role=burst-hand] [data-role=evidence-link]").first.click()
        else:
            directions = detail.locator("[data-role=direction]").all_inner_texts()
            assert directions and all(d.split(" -> ")[0] in case["evidence_actors"] for d in directions)
            detail.locator("[data-role=evidence] a").first.click()
        replay = page.locator("[data-role=detail-hand]")
        expect(replay.locator("[data-role=suspect-pair]")).to_contain_text(a)
        marked = replay.locator("[data-role=seat].suspect [data-role=player]").all_inner_texts()
        assert sorted(marked) == sorted([a, b])


@pytest.fixture(scope="module")
def burst_site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A seeded room whose colluding pair helps in a share of its hands (burst fires), audited and written whole."""
    from analyzer.audit.core import run_audit
    from analyzer.logs import write_records
    from analyzer.simulate.room import simulate

    out = tmp_path_factory.mktemp("burst")
    sim = simulate(hands=300, players=8, seed=3, colluders=1, share=0.4, friends=0)
    records = list(sim.records)
    write_records(out / "room.jsonl", records)
    result = run_audit([str(out / "room.jsonl")], samples=4, dd_samples=2, seed=0)
    write_audit_report(out, result.result, decisions=result.decisions, records=records)
    return {"dir": out, "audit": result.result, "records": {r.hand_id: r for r in records},
            "pair": sim.truth["colluding_pairs"][0]["players"]}


def _partner_marks(record: Any, action: int, partner: str) -> set[str]:
    """The partner's cards the move at ``action`` made live (a play) or unplayable (a cover), replayed here from the
    rule tables: what the replayer must frame."""
    from analyzer.cards import scan
    from analyzer.report.hand import parse_action
    from analyzer.rules import BEYOND, NEXT_LIVE
    from analyzer.variants.bieqi import COVER, VARIANT, State

    st = State(VARIANT.deal_masks(record, []))
    acts = [parse_action(a.card, a.kind) for a in record.actions]
    for a in acts[:action]:
        st.push(a)
    a = acts[action]
    dead = 0
    for c in scan(st.covered[0] | st.covered[1] | st.covered[2] | st.covered[3]):
        dead |= BEYOND[c]
    touched = NEXT_LIVE[a] if a < COVER else BEYOND[a % COVER] & ~dead
    seat = list(record.players).index(partner)
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    return {ranks[c % 13] + "♠♥♦♣"[c // 13] for c in scan(touched & st.hands[seat])}  # as the page writes cards


def test_burst_case_lists_its_extreme_hands_and_opens_the_replayer_at_a_move_with_its_marks(
        browser: Any, burst_site: dict) -> None:
    audit = burst_site["audit"]
    k, entry = next((i, p) for i, p in enumerate(audit["pairs"]) if p.get("case"))
    assert sorted(entry["players"]) == sorted(burst_site["pair"]) and entry["main_signal"] == "burst"
    case = entry["case"]
    lead_args = case["lead"]["args"]
    with watched_page(browser, VIEWPORT) as page:
        page.goto((burst_site["dir"] / "report.html").as_uri() + f"#pair={k}")
        detail = page.locator("[data-role=detail-pair]")
        lead = detail.locator("[data-role=lead]").inner_text()
        # the plain claim: the count of extreme hands, the hands together, against a typical pair's count ± its spread
        assert case["lead"]["key"] == "lead_burst"
        assert f"In {lead_args[2]} of their {lead_args[3]} hands together" in lead
        assert f"{lead_args[5]} ± {lead_args[6]} such hands" in lead
        # the evidence is burst's own hands: every hand the count counts, in its order, per direction
        rows = detail.locator("[data-role=burst-hand]")
        listed = [h for w in case["burst_directions"] for h, _ in w["extreme"]]
        expect(rows).to_have_count(len(listed))
        assert [r.get_attribute("data-hand") for r in rows.all()] == listed
        counted = {d["actor"]: d["above"] for d in case["burst_directions"]}
        assert counted[case["lead"]["actor"]] == int(lead_args[2])
        edges = detail.locator("[data-role=burst-hand] [data-role=edge]").all_inner_texts()
        assert edges and all(e.strip().startswith("+") for e in edges)  # no move against the claim
        # a move that marks some of the partner's cards: its link opens the replayer there, with the marks
        pick = next(x for x in entry["evidence"] if _partner_marks(burst_site["records"][x["hand_id"]], x["action"],
                                                                     x["partner"]))
        want = _partner_marks(burst_site["records"][pick["hand_id"]], pick["action"], pick["partner"])
        link = detail.locator("[data-role=burst-hand] [data-role=evidence-link]").filter(
            has_text=f"move {pick['action'] + 1} ")
        hrefs = [a.get_attribute("href") for a in link.all()]
        hand_at = page.evaluate("(id) => HAND_INDEX.get(id)", pick["hand_id"])
        target = next(h for h in hrefs if f"hand={hand_at}&step={pick['action']}&" in h)
        detail.locator(f"a[href='{target}']").first.click()
        replay = page.locator("[data-role=detail-hand]")
        n = len(burst_site["records"][pick["hand_id"]].actions)
        expect(replay.locator("[data-role=step]")).to_have_text(f"move {pick['action'] + 1} / {n}")
        expect(replay.locator("[data-role=move-edge]")).to_contain_text(f"edge {pick['edge_immediate']:+.2f} cards")
        marked = replay.locator("[data-role=seat] .card.freed, [data-role=seat] .card.blocked")
        assert {c.inner_text().strip() for c in marked.all()} == want
        legend = replay.locator("[data-role=legend]").inner_text()
        assert "made playable" in legend and "unplayable" in legend
