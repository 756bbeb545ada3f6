"""The report tests' data is what the audit writes: the real run and its scaled-up copy follow the audit schema."""

from __future__ import annotations

import jsonschema
from report_fixtures import EVIL_HAND, EVIL_TABLE, PLAYERS, AuditRun, big_room

from analyzer.audit.schema import audit_schema


def test_the_real_audit_follows_its_schema_and_flags_the_planted_pair(audit_run: AuditRun) -> None:
    audit = audit_run.audit
    jsonschema.Draft202012Validator(audit_schema()).validate(audit)
    flagged = {tuple(sorted(p["players"])) for p in audit["pairs"] if p["verdict"] == "flagged"}
    assert flagged == {tuple(sorted(audit_run.planted))}
    assert {p["player"] for p in audit["players"]} == set(PLAYERS)  # the hostile ids went through the audit
    assert audit_run.records[0].hand_id == EVIL_HAND and audit_run.records[0].table_id == EVIL_TABLE
    assert EVIL_HAND in set(audit_run.decisions["hand_id"])
    top = audit["pairs"][0]
    assert top["case"] and top["evidence"] and set(top["signals"]) >= {"favour", "imm_marginal", "codev"}


def test_the_big_room_audit_follows_the_schema(audit_run: AuditRun) -> None:
    frame, audit = big_room(audit_run, hands=400, players=12)
    jsonschema.Draft202012Validator(audit_schema()).validate(audit)
    assert len(audit["pairs"]) == 66 and audit["verdicts"]["flagged"] == 2
    assert {p["player"] for p in audit["players"]} == set(frame["player"])
    hands = set(frame["hand_id"])
    assert all(e["hand_id"] in hands for p in audit["pairs"] for e in p["evidence"])
