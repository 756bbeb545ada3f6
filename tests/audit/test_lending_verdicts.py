"""借牌's lending pairs get verdicts on the pair audit's terms: flagged at p <= alpha, review at a Benjamini-Hochberg q
<= fdr; they become cases of the desk, and a flagged one makes the audit exit 1."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from analyzer.audit.borrow import lending_verdicts
from analyzer.logs import write_records
from analyzer.simulate.borrow import simulate


def _table(ps: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"a": [f"a{i}" for i in range(len(ps))], "b": [f"b{i}" for i in range(len(ps))],
                         "p_value": ps})


def test_the_tiers_and_their_q_values() -> None:
    out = lending_verdicts(_table([1e-7, 0.001, 0.02, 0.5, math.nan]), alpha=1e-5, fdr=0.05)
    # BH over the four pairs with a p: 1e-7 * 4, 0.001 * 2, 0.02 * 4 / 3, 0.5
    assert out["q_value"].tolist()[:4] == pytest.approx([4e-7, 0.002, 0.02 * 4 / 3, 0.5])
    assert math.isnan(out["q_value"].iloc[4]) and math.isnan(out["score"].iloc[4])
    assert out["verdict"].tolist() == ["flagged", "review", "review", "clear", "clear"]
    assert out["score"].iloc[0] == pytest.approx(7.0)
    # the audit's alarm sets them: a laxer alpha flags more, a stricter fdr reviews fewer
    assert lending_verdicts(_table([1e-7, 0.001, 0.02, 0.5]), alpha=0.01, fdr=0.05)["verdict"].tolist() == [
        "flagged", "flagged", "review", "clear"]
    assert lending_verdicts(_table([1e-7, 0.001, 0.02, 0.5]), alpha=1e-5, fdr=0.01)["verdict"].tolist() == [
        "flagged", "review", "clear", "clear"]


def _room(tmp_path: Path, colluders: int, seed: int, hands: int) -> Path:
    sim = simulate(hands=hands, players=8, seed=seed, colluders=colluders, style="lend")
    log = tmp_path / "room.jsonl"
    write_records(log, sim.records)
    return log


def test_a_lending_ring_is_flagged_and_becomes_a_case(tmp_path: Path) -> None:
    log, db = _room(tmp_path, 1, 5, 300), tmp_path / "cases.sqlite"
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"), "--cases", str(db))
    assert r.exit_code == 1, r.output  # no illegal borrow: the flagged lending pair alone
    section = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]
    assert section["illegal_borrows"] == 0 and section["lending_flagged"] == 1
    (flagged,) = [p for p in section["pairs"] if p["verdict"] == "flagged"]
    assert (flagged["a"], flagged["b"]) == ("p05", "p06") and flagged["p_value"] <= 1e-5
    assert "  NEW      case #1 lending p05 + p06: flagged, score" in r.stdout
    listed = run_cli("cases", "list", "--kind", "lending", "--db", str(db))
    assert listed.exit_code == 0 and "lending  open    flagged" in listed.output and "p05 + p06" in listed.output


def test_an_honest_lending_room_flags_nothing(tmp_path: Path) -> None:
    log = _room(tmp_path, 0, 6, 200)
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    section = json.loads((tmp_path / "out" / "audit.json").read_text())["bieqi-borrow"]
    assert section["lending_flagged"] == section["lending_review"] == 0
    assert {p["verdict"] for p in section["pairs"]} == {"clear"}
    assert "none flagged or for review" in r.stdout
