"""Groups of marked pairs (analyzer.audit.groups): three or more players joined by flagged or review pairs, named
as one group in audit.json, the command's summary and the audit page; no verdict depends on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from analyzer.audit.groups import marked_groups
from analyzer.audit.schema import audit_schema


def pair(a: str, b: str, verdict: str, score: float | None, hands: int = 50) -> dict[str, Any]:
    return {"players": sorted([a, b]), "verdict": verdict, "flagged": verdict == "flagged", "score": score,
            "hands_together": hands}


def rows(**hands: list[int]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in hands.items()}


def test_a_ring_of_three_is_one_group_with_its_clear_pair_listed() -> None:
    """A + B flagged, B + C for review, A + C clear: one group of the three, flagged, two of its three pairs marked,
    the clear pair listed too (highest score first); the hands counted from the seats."""
    pairs = [pair("A", "B", "flagged", 9.0), pair("B", "C", "review", 4.0), pair("A", "C", "clear", 1.5),
             pair("A", "D", "clear", 0.2), pair("D", "E", "clear", 0.1)]
    seats = rows(A=[0, 1, 2, 3, 5], B=[0, 1, 2, 4], C=[0, 1, 3, 4, 9], D=[5, 6], E=[6])
    (g,) = marked_groups(pairs, seats)
    assert g["players"] == ["A", "B", "C"] and g["verdict"] == "flagged" and g["marked_pairs"] == 2
    assert [p["players"] for p in g["pairs"]] == [["A", "B"], ["B", "C"], ["A", "C"]]
    assert [p["verdict"] for p in g["pairs"]] == ["flagged", "review", "clear"]
    assert g["hands_all"] == 2  # hands 0 and 1
    assert g["hands_two_or_more"] == 5  # 0, 1, 2 (A, B), 3 (A, C), 4 (B, C)


def test_marked_pairs_that_share_no_player_make_no_group() -> None:
    pairs = [pair("A", "B", "flagged", 9.0), pair("C", "D", "flagged", 8.0), pair("A", "C", "clear", 0.3)]
    assert marked_groups(pairs, rows(A=[0], B=[0], C=[0], D=[0])) == []
    assert marked_groups([pair("A", "B", "clear", 1.0), pair("B", "C", "clear", 2.0)], rows()) == []


def test_a_chain_larger_than_a_table_has_no_all_at_one_table_count() -> None:
    """Five players joined by four review pairs: one group, for review, never all at one table (null)."""
    names = "ABCDE"
    pairs = [pair(names[i], names[i + 1], "review", 3.0 + i) for i in range(4)]
    seats = rows(A=[0, 1], B=[0, 2], C=[1, 2], D=[3], E=[3, 4])
    (g,) = marked_groups(pairs, seats)
    assert g["players"] == list(names) and g["verdict"] == "review" and g["marked_pairs"] == 4
    assert g["hands_all"] is None and g["hands_two_or_more"] == 4  # hands 0, 1, 2, 3
    assert g["pairs"][0]["players"] == ["D", "E"]  # the highest score first


def test_groups_are_ordered_flagged_first_and_missing_scores_last() -> None:
    pairs = [pair("A", "B", "review", 5.0), pair("B", "C", "review", None),
             pair("X", "Y", "flagged", 7.0), pair("Y", "Z", "review", 3.0)]
    got = marked_groups(pairs, rows())
    assert [g["players"] for g in got] == [["X", "Y", "Z"], ["A", "B", "C"]]
    assert got[1]["pairs"][-1]["score"] is None and got[1]["hands_all"] == 0


def test_groups_match_the_published_schema() -> None:
    pairs = [pair("A", "B", "flagged", 9.0), pair("B", "C", "review", 4.0), pair("A", "C", "clear", None)]
    schema = audit_schema()
    groups = marked_groups(pairs, rows(A=[0], B=[0], C=[0]))
    jsonschema.validate(groups, {**schema["properties"]["groups"], "$schema": schema["$schema"]})
    bad = [{**groups[0], "players": ["A", "B"]}]  # a group has three or more players
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema["properties"]["groups"])


def test_an_audit_writes_its_groups(tmp_path: Path, audit_run: Any) -> None:
    """The real audit writes the key (its one planted pair makes no group) and it validates."""
    assert audit_run.audit["groups"] == []
    jsonschema.validate(audit_run.audit, audit_schema())


def test_the_summary_names_each_group_once() -> None:
    from analyzer.commands.audit import group_lines

    pairs = [pair("A", "B", "flagged", 9.0), pair("B", "C", "review", 4.0), pair("A", "C", "clear", 1.5)]
    (line,) = group_lines(marked_groups(pairs, rows(A=[0, 1], B=[0, 1], C=[1])))
    assert line.startswith("  GROUP   A + B + C: 2 of the 3 pairs among them marked (flagged)")
    assert "all 3 at one table in 1 hands" in line and "together in 2" in line
    chain = [pair(x, y, "review", 3.0) for x, y in ("AB", "BC", "CD", "DE")]
    (line,) = group_lines(marked_groups(chain, rows()))
    assert "at one table" not in line and "(review)" in line
    assert group_lines([]) == []
