"""Every figure of a case computed once: the pair's raw favour per hand is the same on the audit's case, on
``report --pair --audit`` and on ``report --pair`` without it (the audit's sums and ``pair_edge`` agree)."""

from __future__ import annotations

from pathlib import Path

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


def test_the_pair_page_without_the_audit_shows_the_audits_results_together_and_apart(audit_run: AuditRun,
                                                                                    tmp_path: Path) -> None:
    """Combined score and 通 rate, together, apart and the room's: the same figures on ``report --pair`` without
    ``--audit`` as in the audit's case (both read the logs' results)."""
    import json
    import re

    from conftest import run_cli

    entry = next(p for p in audit_run.audit["pairs"] if p.get("case"))
    a, b = entry["players"]
    out = tmp_path / "pair.html"
    r = run_cli("report", str(audit_run.log), "--pair", f"{a},{b}", "-o", str(out), "--samples", "1",
                "--dd-samples", "0")
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="s-pair-0">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    want = entry["case"]["outcomes"]
    assert want["tong_together"] is not None and want["tong_room"] is not None
    assert data["entry"] is None and data["outcomes"] == want
