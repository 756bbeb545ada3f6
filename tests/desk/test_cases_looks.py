"""Cases across looks: four daily audits of a room give one case per marked pair with its history; a dismissed case
stays dismissed until its evidence passes its dismissal level plus the margin, then reopens by itself; what is new
and changed at the last look; groups, 借牌 borrowers, e-values; decisions that cannot be made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from desk_fixtures import CASES_FILE, COLLUDERS, daily_audits, pair, result, summary_of

from analyzer.desk import cases
from analyzer.desk.cases import REOPEN_MARGIN
from analyzer.desk.db import Cases, CasesError, open_cases
from analyzer.desk.looks import read_audit, subject_of


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return daily_audits(tmp_path_factory.mktemp("daily"))


@pytest.fixture
def d(tmp_path: Path) -> Cases:
    with open_cases(tmp_path / "cases.sqlite") as found:
        yield found


def record_day(d: Cases, folder: Path, k: int) -> cases.Recorded:
    res, where = read_audit(folder)
    return cases.record_look(d, res, audit_dir=where, at=f"2026-12-0{k}T06:00:00Z", label=f"day-{k}")


def marked_pairs(folder: Path) -> set[str]:
    res = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    return {subject_of(p["players"]) for p in res["pairs"] if p["verdict"] in ("flagged", "review")}


def colluders_score(folder: Path) -> float:
    res = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    (p,) = [p for p in res["pairs"] if tuple(sorted(p["players"])) == COLLUDERS]
    return float(p["score"])


def test_four_daily_looks_give_one_case_per_pair_with_its_history(d: Cases, audits: list[Path]) -> None:
    done = [record_day(d, folder, k) for k, folder in enumerate(audits, 1)]
    assert [r.look_id for r in done] == [1, 2, 3, 4]
    ever = set().union(*(marked_pairs(f) for f in audits))
    listed = cases.list_cases(d, kind="pair")
    assert sorted(subject_of(c.members) for c in listed) == sorted(ever)  # one case a pair, never two
    (case,) = [c for c in listed if c.members == COLLUDERS]
    f = cases.show_case(d, case.case_id)
    assert [h.look_id for h in f.history] == [1, 2, 3, 4]
    assert [h.label for h in f.history] == ["day-1", "day-2", "day-3", "day-4"]
    assert all(h.verdict == "flagged" for h in f.history)
    hands = [h.hands for h in f.history]
    assert hands == sorted(hands) and hands[0] < hands[-1]  # the pair's hands together grow day by day
    assert [h.score for h in f.history] == pytest.approx([colluders_score(x) for x in audits])
    assert all(h.main_signal and isinstance(h.signal, dict) for h in f.history)  # the signal that fired, its numbers
    assert all(h.report_index is not None and h.audit_dir for h in f.history)
    assert [e.action for e in f.events] == ["opened"]
    assert case.status == "open" and case.looks == 4 and case.opened_look == 1
    # every case has a row at every look since it was opened
    for c in cases.list_cases(d):
        assert c.looks == 4 - c.opened_look + 1
    # the same audit recorded again is the same look: nothing written
    again = record_day(d, audits[3], 4)
    assert again.already and again.look_id == 4
    assert len(cases.looks(d)) == 4


def lead_lines(text: str) -> list[str]:
    """The summary's lead: its ``cases:`` line and the cases listed under it."""
    lines = text.splitlines()
    assert lines[0].startswith("cases: look "), text
    return [lines[0], *(x for x in lines[1:] if x.startswith(("  NEW", "  REOPENED", "  CHANGED", "  nothing")))]


def test_each_daily_audit_leads_with_what_its_look_changed(audits: list[Path]) -> None:
    """The audits ran with --cases: each summary and page leads with the cases its look opened and changed, as the
    database recorded them, and the lead changes from look to look."""
    folder = audits[0].parent
    leads = [lead_lines(summary_of(folder, k)) for k in range(1, len(audits) + 1)]
    with open_cases(folder / CASES_FILE) as db, db.reading() as c:
        looked = [cases.look_changes(c, k) for k in range(1, len(audits) + 1)]
    assert "the first look in this database" in leads[0][0]
    (first,) = [x for x in leads[0][1:] if " + ".join(COLLUDERS) in x]
    assert first.startswith("  NEW ") and "flagged, score" in first and "main signal" in first
    for k, (lead, changes) in enumerate(zip(leads, looked), 1):
        counts = ", ".join(f"{changes.count(w)} {w}" for w in cases.CHANGE_KINDS)
        assert lead[0].startswith(f"cases: look {k}, {counts} (")
        if k > 1:
            assert f"since look {k - 1}, audit-day{k - 1}, " in lead[0]
        listed = [x for x in lead[1:] if not x.startswith("  nothing")]
        assert [int(x.split("#")[1].split()[0]) for x in listed] == [ch.case_id for ch in changes.changes]
        page = (audits[k - 1] / "report.html").read_text(encoding="utf-8")
        assert page.index('data-role="look-changes"') < page.index('id="overview"')  # the page leads with it
        assert page.count('data-role="change"') == 2 * len(changes.changes)  # a row a case, in each language
        assert f"<strong data-role=\"change-counts\">{changes.count('new')} new" in page
    # the colluders' case at every later look: its score grows by more than 1 a day, so it is changed, with its
    # score at the look before and now
    for k in range(2, len(audits) + 1):
        (row,) = [x for x in leads[k - 1] if " + ".join(COLLUDERS) in x]
        before, now = colluders_score(audits[k - 2]), colluders_score(audits[k - 1])
        assert row.startswith("  CHANGED ") and f"score {before:.3g} -> {now:.3g}" in row
    assert len({tuple(lead) for lead in leads}) == len(leads)  # no two looks lead alike


def test_a_dismissed_case_stays_dismissed_until_its_evidence_grows_then_reopens(d: Cases, audits: list[Path]) -> None:
    """Dismissed after day 2 with a margin that day 3's score does not pass and day 4's does: it stays dismissed at
    day 3 and reopens by itself at day 4, with the event saying what passed."""
    s2, s3, s4 = (colluders_score(audits[i]) for i in (1, 2, 3))
    assert s2 < s3 < s4
    margin = (s3 + s4) / 2 - s2
    record_day(d, audits[0], 1)
    record_day(d, audits[1], 2)
    event = cases.decide(d, ",".join(COLLUDERS), "dismiss", "ana", "brothers who learnt the game together",
                         margin=margin)
    assert event.level == pytest.approx(s2)
    r3 = record_day(d, audits[2], 3)
    f = cases.show_case(d, event.case_id)
    assert f.summary.status == "dismissed" and event.case_id not in r3.reopened
    assert f.summary.reopen_above == pytest.approx((s3 + s4) / 2)
    r4 = record_day(d, audits[3], 4)
    assert r4.reopened == (event.case_id,)
    f = cases.show_case(d, event.case_id)
    assert f.summary.status == "open" and f.summary.reopen_above is None
    assert [e.action for e in f.events] == ["opened", "dismiss", "auto-reopen"]
    auto = f.events[-1]
    assert auto.who == "analyzer" and auto.look_id == 4 and auto.level == pytest.approx(s4)
    assert "passed" in (auto.text or "")
    assert event.case_id in {c.case_id for c in cases.list_cases(d, changed=True)}


def test_the_reopen_rule_on_hand_made_looks(d: Cases) -> None:
    """The level at dismissal plus the margin (1 on a score) must be passed, not met; a look that does not see the
    pair (absent) keeps it dismissed; a higher level then reopens it."""
    cases.record_look(d, result(pair("a", "b", score=8.0)))
    cases.decide(d, "a,b", "dismiss", "ana", "a known pair of friends")
    assert cases.show_case(d, "a,b").summary.reopen_above == 8.0 + REOPEN_MARGIN["score"]
    for score in (8.5, 9.0):  # grows, but not past 9
        assert cases.record_look(d, result(pair("a", "b", score=score), hands=int(score * 100))).reopened == ()
    cases.record_look(d, result(pair("c", "d"), hands=950))  # a, b not together
    f = cases.show_case(d, "a,b")
    assert f.summary.status == "dismissed" and f.history[-1].verdict == "absent"
    assert cases.record_look(d, result(pair("a", "b", score=9.01), hands=1000)).reopened == (1,)
    assert cases.show_case(d, 1).summary.status == "open"


def test_e_values_and_borrow_counts_set_the_level(d: Cases) -> None:
    borrow = {"players": [{"player": "x", "hands": 40, "illegal_borrows": 3}]}
    cases.record_look(d, result(pair("a", "b", score=8.0, log10_e=2.5), **{"bieqi-borrow": borrow}))
    (pair_case,) = cases.list_cases(d, kind="pair")
    assert (pair_case.level, pair_case.level_kind) == (2.5, "log10_e")
    cases.decide(d, "x", "dismiss", "ana", "the house allowed it that week")
    assert cases.show_case(d, "x").summary.reopen_above == 3.0  # any further illegal borrow reopens it
    again = {"players": [{"player": "x", "hands": 80, "illegal_borrows": 3}]}
    assert cases.record_look(d, result(pair("a", "b", score=8.0, log10_e=2.5), hands=300,
                                       **{"bieqi-borrow": again})).reopened == ()
    more = {"players": [{"player": "x", "hands": 90, "illegal_borrows": 4}]}
    assert cases.record_look(d, result(pair("a", "b"), hands=400, **{"bieqi-borrow": more})).reopened == (2,)


def test_groups_are_cases_with_their_best_pair(d: Cases) -> None:
    ring = {"players": ["a", "b", "c"], "verdict": "flagged", "hands_two_or_more": 70,
            "pairs": [{"players": ["a", "b"], "verdict": "flagged", "score": 9.0},
                      {"players": ["b", "c"], "verdict": "review", "score": 4.0}]}
    first = cases.record_look(d, result(pair("a", "b", score=9.0), pair("b", "c", verdict="review", score=4.0),
                                        pair("a", "c", verdict="clear", score=1.0), groups=[ring]))
    assert len(first.new) == 3  # two pairs and the group
    (g,) = cases.list_cases(d, kind="group")
    assert g.members == ("a", "b", "c") and g.verdict == "flagged" and g.score == 9.0 and g.hands == 70
    f = cases.show_case(d, g.case_id)
    assert f.history[0].signal["best_pair"] == ["a", "b"]
    assert {r.members for r in f.related} == {("a", "b"), ("b", "c")}
    # a later look that names no group: the group's verdict is its members' strongest pair's
    cases.record_look(d, result(pair("a", "b", verdict="review", score=5.0), pair("b", "c", verdict="clear",
                                                                             score=1.0), hands=300))
    h = cases.show_case(d, g.case_id).history[-1]
    assert (h.verdict, h.score) == ("review", 5.0)


def test_new_and_changed_at_the_last_look(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b", score=8.0), pair("c", "d", score=8.0)))
    r = cases.record_look(d, result(pair("a", "b", score=8.5), pair("c", "d", score=12.0), pair("e", "f"),
                                    hands=300))
    assert [c.members for c in cases.list_cases(d, new=True)] == [("e", "f")]
    changed = {c.members for c in cases.list_cases(d, changed=True)}
    assert changed == {("c", "d"), ("e", "f")}  # a, b moved by less than 1
    assert len(r.new) == 1 and len(r.changed) == 2


@pytest.mark.parametrize("action, who, text, message", [
    ("dismiss", "ana", None, "needs its reason"),
    ("dismiss", "ana", "   ", "needs its reason"),
    ("note", "ana", None, "needs its text"),
    ("confirm", "", None, "reviewer's name"),
    ("confirm", "analyzer", None, "sign with your own"),
    ("shrug", "ana", None, "unknown decision"),
])
def test_decisions_that_cannot_be_made(d: Cases, action: str, who: str, text: str | None, message: str) -> None:
    cases.record_look(d, result(pair("a", "b")))
    with pytest.raises(CasesError, match=message):
        cases.decide(d, 1, action, who, text)
    f = cases.show_case(d, 1)
    assert f.summary.status == "open" and [e.action for e in f.events] == ["opened"]


def test_decisions_name_cases_by_number_or_members_and_keep_who_and_when(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b")))
    cases.decide(d, "b,a", "confirm", "  ana  ", "seen in the hands", at="2026-12-05T10:00:00+08:00")
    e = cases.show_case(d, '["a", "b"]').events[-1]
    assert (e.action, e.who, e.at, e.text) == ("confirm", "ana", "2026-12-05T02:00:00Z", "seen in the hands")
    with pytest.raises(CasesError, match="confirmed already"):
        cases.decide(d, 1, "confirm", "bo")
    with pytest.raises(CasesError, match="no case 7"):
        cases.decide(d, 7, "note", "bo", "x")
    with pytest.raises(CasesError, match="no case of a, z"):
        cases.show_case(d, "a,z")
    with pytest.raises(CasesError, match="changed since the page was opened"):
        cases.decide(d, 1, "reopen", "bo", expect_version=0)
    cases.decide(d, 1, "reopen", "bo", expect_version=1)
    assert cases.show_case(d, 1).summary.status == "open"


def test_a_result_that_is_not_an_audits_changes_nothing(d: Cases) -> None:
    cases.record_look(d, result(pair("a", "b")))
    bad = result(pair("a", "b"))
    bad["pairs"][0]["verdict"] = "guilty"
    with pytest.raises(CasesError, match="at pairs/0/verdict"):
        cases.record_look(d, bad, source="night.json")
    assert len(cases.looks(d)) == 1
