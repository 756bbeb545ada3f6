"""`analyzer audit` on rooms of the games its pair audit does not read: the summary and the page show each game's
findings (借牌's illegal borrows and lending table; for 信阳黑七 what was checked), never an empty pair audit."""

import json
import re
from pathlib import Path

import msgspec
from conftest import ROOT, run_cli

from analyzer.logs import format_record, write_records
from analyzer.report.common import LABELS
from analyzer.simulate.borrow import simulate as simulate_borrow
from analyzer.simulate.heiqi import simulate as simulate_heiqi


def _page_data(out: Path) -> dict:
    page = (out / "report.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'id="report-data">(.*?)</script>', page).group(1))


def test_a_borrow_room_shows_its_illegal_borrows_and_lending(tmp_path):
    out = tmp_path / "out"
    r = run_cli("audit", str(ROOT / "samples" / "borrow-cheat.jsonl"), "--out", str(out), catch_exceptions=False)
    assert r.exit_code == 1, r.output
    section = json.loads((out / "audit.json").read_text())["bieqi-borrow"]
    lines = r.stdout.splitlines()
    assert lines[0] == "pair audit: no hand of standard 憋七, no pair analysed, 2 invalid hands left out"
    assert not any(line.startswith("0 hands, 0 pairs") for line in lines)
    cheats = sorted((p for p in section["players"] if p["illegal_borrows"]), key=lambda p: (-p["illegal_borrows"],
                                                                                        p["player"]))
    named = ", ".join(f"{p['player']} {p['illegal_borrows']}" for p in cheats)
    assert (f"bieqi-borrow (借牌): 2 hands, {section['illegal_borrows']} illegal borrows by {len(cheats)} players "
            f"(borrowing while holding a live card): {named}; lending: {len(section['pairs'])} pairs compared, "
            f"none flagged or for review (lowest: ") in r.stdout
    audit = _page_data(out)["audit"]
    [game] = audit["games"]
    # the page holds the section's two tables whole, as audit.json has them
    assert game["kind"] == "borrow" and game["illegal_borrows"] == section["illegal_borrows"] == 4
    assert game["players"] == section["players"] and game["pairs"] == section["pairs"]
    assert LABELS["en"]["borrow_found"].format(4, 2).startswith("4 illegal borrows")


def test_a_lending_pair_is_named_in_the_summary(tmp_path):
    sim = simulate_borrow(hands=200, players=8, seed=5, colluders=1, style="both")
    log = tmp_path / "borrow.jsonl"
    write_records(log, sim.records)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"), catch_exceptions=False)
    assert r.exit_code == 1, r.output
    top = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]["pairs"][0]
    assert sorted([top["a"], top["b"]]) == sorted(sim.truth["pairs"][0])
    line = next(x for x in r.stdout.splitlines() if x.startswith("bieqi-borrow"))
    assert top["verdict"] == "flagged" and top["q_value"] <= 0.05
    assert f"1 flagged, 0 for review: FLAGGED {top['a']} & {top['b']} p {top['p_value']:.3g}, q " in line
    assert f"favour {top['favour']:+.2f}" in line


def test_a_heiqi_room_says_the_pair_audit_does_not_cover_it(tmp_path):
    out = tmp_path / "out"
    r = run_cli("audit", str(ROOT / "samples" / "heiqi-sample.jsonl"), "--out", str(out), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[:2] == [
        "pair audit: no hand of standard 憋七, no pair analysed",
        "xinyang-heiqi: 4 valid hand(s) checked by validation (the deal, bids, plays and settlement replayed by the "
        "rules), no problem found; the pair audit does not cover this game (its collusion signals read standard 憋七 "
        "hands only): no pair analysed, no verdict"]
    assert "borrow" not in r.stdout and "借牌" not in r.stdout
    audit = _page_data(out)["audit"]
    assert audit["games"] == [{"game": "xinyang-heiqi", "kind": "validated", "hands": 4, "invalid_hands": 0,
                               "problems": []}]
    # the words the page shows for it speak of that game, never of borrows
    for lang in ("en", "zh"):
        for key in ("game_validated", "validated_help", "validated_problems", "validated_clean", "pair_audit_empty",
                    "skipped_hands"):
            text = LABELS[lang][key]
            assert "borrow" not in text and "借" not in text, (lang, key)


def test_a_heiqi_room_lists_the_problems_validation_found(tmp_path):
    """Tables that redeal to the next seat, logged without saying so: the default house rule finds bad-first-bidder
    problems, and the summary and page count them by code."""
    recs = list(simulate_heiqi(hands=16, players=4, seed=3, policy="random", run_length=8,
                               rules={"redeal_first_bidder": "next"}).records)
    assert any(r.dealer is None for r in recs[:-1])
    log = tmp_path / "next.jsonl"
    log.write_bytes(b"".join(format_record(msgspec.structs.replace(r, rules=None)) + b"\n" for r in recs))
    out = tmp_path / "out"
    r = run_cli("audit", str(log), "--out", str(out), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    problems = json.loads((out / "audit.json").read_text())["problems"]
    assert problems and {p["code"] for p in problems} == {"bad-first-bidder"}
    assert f"{len(problems)} problem(s) found: bad-first-bidder {len(problems)}; the pair audit does not cover" \
        in r.stdout
    [game] = _page_data(out)["audit"]["games"]
    assert game["kind"] == "validated" and game["problems"] == [["bad-first-bidder", len(problems)]]


def test_beside_standard_hands_the_other_games_follow_the_pair_audit_line(tmp_path):
    out = tmp_path / "out"
    r = run_cli("audit", str(ROOT / "samples" / "legal.jsonl"), str(ROOT / "samples" / "heiqi-sample.jsonl"),
                "--out", str(out), "--samples", "1", "--dd-samples", "0")
    assert r.exit_code in (0, 1), r.output
    audit = json.loads((out / "audit.json").read_text())
    lines = r.stdout.splitlines()
    assert audit["hands"] > 0 and lines[0].startswith(f"{audit['hands']} hands, {len(audit['pairs'])} pairs, ")
    assert lines[1] == ("  not in the pair audit (its signals read standard 憋七 hands only): 4 valid hand(s) of "
                        "xinyang-heiqi (no problem found)")
    page = _page_data(out)["audit"]
    # problems name their game: beside standard hands, the 信阳黑七 box counts its own (none here)
    assert page["hands"] == audit["hands"] and page["games"] == [
        {"game": "xinyang-heiqi", "kind": "validated", "hands": 4, "invalid_hands": 0, "problems": []}]
