"""Every figure of a case computed once: the pair's raw favour per hand is the same on the audit's case, on
``report --pair --audit`` and on ``report --pair`` without it (the audit's sums and ``pair_edge`` agree)."""

from __future__ import annotations

import pytest
from report_fixtures import AuditRun

from analyzer.report.pair import entry_edge, hands_with, pair_data, pair_edge


def test_pair_edge_is_the_audits_raw_favour_per_hand(audit_run: AuditRun) -> None:
    cases = [p for p in audit_run.audit["pairs"] if p.get("case")]
    assert cases
    for entry in cases:
        a, b = entry["players"]
        got = {e["actor"]: e for e in pair_edge(hands_with(audit_run.decisions, a, b), a, b)}
        for tag in ("ab", "ba"):
            for key, signal in (("imm", "imm_marginal"), ("dd", "dd_marginal")):
                d = entry["signals"][signal][tag]
                # audit.json keeps four significant digits; the pages show two decimals
                want = d["points_per_hand"]
                assert got[d["actor"]][key]["per_hand"] == pytest.approx(want, rel=1e-3, abs=1e-4), (a, b, signal)


def test_a_page_with_the_entry_shows_the_entrys_figures(audit_run: AuditRun) -> None:
    entry = next(p for p in audit_run.audit["pairs"] if p.get("case"))
    a, b = entry["players"]
    page = pair_data(a, b, decisions=audit_run.decisions, entry=entry)
    assert page["edge"] == entry_edge(entry)
    imm = entry["signals"]["imm_marginal"]["ab"]
    first = next(e for e in page["edge"] if e["actor"] == imm["actor"])
    assert first["imm"] == {"per_hand": imm["points_per_hand"], "se": imm["se_per_hand"], "z": None}
