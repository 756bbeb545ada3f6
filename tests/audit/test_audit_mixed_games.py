"""A room of several games: every problem names its hand's game, so the 信阳黑七 line of the summary and its box on
the page list that game's own problems beside standard hands; a 信阳黑七 room whose every hand is invalid reports its
problems (files written) and exits 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import orjson
from conftest import hand_line, run_cli

from analyzer.logs import format_record
from analyzer.simulate.heiqi import simulate as simulate_heiqi


def _page_games(out: Path) -> list[dict]:
    page = (out / "report.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'id="report-data">(.*?)</script>', page).group(1))["audit"]["games"]


def _heiqi_lines(hands: int = 16, seed: int = 3) -> list[bytes]:
    """信阳黑七 tables that redeal to the next seat, logged without saying so: the default house rule finds
    ``bad-first-bidder`` problems in some of their hands."""
    recs = list(simulate_heiqi(hands=hands, players=4, seed=seed, policy="random", run_length=8,
                               rules={"redeal_first_bidder": "next"}).records)
    return [format_record(msgspec.structs.replace(r, rules=None)) + b"\n" for r in recs]


def test_the_heiqi_line_and_box_list_its_own_problems_beside_standard_hands(tmp_path: Path) -> None:
    standard = [hand_line(s, f"s{s}") for s in range(6)]
    standard.append(hand_line(99, "s-bad", players=["p1", "p1", "p2", "p3"]))  # a standard hand's own problem
    log = tmp_path / "mixed.jsonl"
    log.write_bytes(b"".join(standard + _heiqi_lines()))
    out = tmp_path / "out"
    r = run_cli("audit", str(log), "--out", str(out), "--samples", "1", "--dd-samples", "0", "--min-hands", "1")
    assert r.exit_code in (0, 1), r.output
    problems = json.loads((out / "audit.json").read_text())["problems"]
    games = {(p.get("game"), p["code"]) for p in problems}
    assert ("bieqi", "bad-players") in games and ("xinyang-heiqi", "bad-first-bidder") in games
    heiqi = [p for p in problems if p.get("game") == "xinyang-heiqi"]
    assert {p["code"] for p in heiqi} == {"bad-first-bidder"}
    (line,) = [x for x in r.stdout.splitlines() if "xinyang-heiqi" in x]
    assert line.startswith("  not in the pair audit")
    assert (f"{len(heiqi)} left out for their problems ({len(heiqi)} problem(s) found: bad-first-bidder "
            f"{len(heiqi)})") in line and "bad-players" not in line
    (box,) = _page_games(out)
    assert box["kind"] == "validated" and box["problems"] == [["bad-first-bidder", len(heiqi)]]
    assert box["invalid_hands"] == len(heiqi)


def test_a_heiqi_room_of_invalid_hands_only_reports_them_and_exits_2(tmp_path: Path) -> None:
    lines = []
    for rec in simulate_heiqi(hands=12, players=4, seed=4).records:
        obj = orjson.loads(format_record(rec))
        obj["result"]["defender_points"] += 5  # every hand's recorded result differs from its replay
        lines.append(orjson.dumps(obj) + b"\n")
    log = tmp_path / "bad.jsonl"
    log.write_bytes(b"".join(lines))
    out = tmp_path / "out"
    r = run_cli("audit", str(log), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert all((out / n).is_file() for n in ("audit.json", "pairs.csv", "players.csv", "report.html"))
    audit = json.loads((out / "audit.json").read_text())
    assert audit["valid_hands"] == 0 and audit["invalid_hands"] == 12
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("xinyang-heiqi:")]
    assert "0 valid hand(s)" in line and "12 left out for their problems" in line
    assert re.search(r"\d+ problem\(s\) found: result-mismatch \d+", line)
    assert "no valid hands to analyse (every hand of xinyang-heiqi has a problem" in r.stderr
    (box,) = _page_games(out)
    assert box["hands"] == 0 and box["invalid_hands"] == 12 and box["problems"][0][0] == "result-mismatch"


def test_a_standard_room_of_invalid_hands_still_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_bytes(hand_line(1, "x", players=["p1", "p1", "p2", "p3"]))
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"))
    assert r.exit_code == 2 and "no valid hands to analyse" in r.output
    assert not (tmp_path / "out").exists()
