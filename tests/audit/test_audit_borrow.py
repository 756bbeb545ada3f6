"""`analyzer audit` on the borrowing variant: illegal borrows per player, lending favour per pair."""

import json

from conftest import run_cli

from analyzer.logs import write_records
from analyzer.simulate.borrow import simulate


def test_audit_names_the_cheats_and_the_lending_pair(tmp_path):
    sim = simulate(hands=200, players=8, seed=5, colluders=1, style="both")
    log = tmp_path / "borrow.jsonl"
    write_records(log, sim.records)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"), catch_exceptions=False)
    assert r.exit_code == 1, r.output
    section = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]
    assert section["hands"] == 200
    cheats = set(sim.truth["cheats"])
    by_player = {p["player"]: p["illegal_borrows"] for p in section["players"]}
    assert all(by_player[c] > 0 for c in cheats)
    assert all(n == 0 for p, n in by_player.items() if p not in cheats)
    top = section["pairs"][0]
    assert sorted([top["a"], top["b"]]) == sorted(sim.truth["pairs"][0]) and top["p_value"] < 1e-6


def test_an_honest_borrow_room_flags_nothing(tmp_path):
    sim = simulate(hands=120, players=8, seed=6, colluders=0)
    log = tmp_path / "honest.jsonl"
    write_records(log, sim.records)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"), catch_exceptions=False)
    section = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]
    assert r.exit_code == 0, r.output
    assert section["illegal_borrows"] == 0 and section["hands"] == 120


def test_a_log_of_only_illegal_borrows_is_still_audited(tmp_path):
    """Every hand invalid because of an illegal borrow: the proven cheating is the audit's finding (exit 1, audit.json
    written), not "no valid hands" (exit 2, nothing written)."""
    from analyzer.validate import generate_checked

    sim = simulate(hands=60, players=4, seed=7, colluders=2, style="borrow")
    full = tmp_path / "all.jsonl"
    write_records(full, sim.records)
    bad = [it.record for it in generate_checked([str(full)]) if not it.ok]
    assert bad and all(any(p.code == "borrow-with-live" for p in it.check.problems)
                       for it in generate_checked([str(full)]) if not it.ok)
    log = tmp_path / "cheats.jsonl"
    write_records(log, bad)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"))
    assert r.exit_code == 1, r.output
    section = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]
    assert section["illegal_borrows"] > 0
