"""The case file's data: the lead sentence of the signal that fired, and the evidence behind it (burst's extreme
hands, the card edge of the exact favour signals), each row's sign the claim's."""

from __future__ import annotations

import orjson
import numpy as np
import pandas as pd
import pytest

from analyzer.audit.burst import _burst_one
from analyzer.audit.case import case_details, evidence_of, lead
from analyzer.audit.evidence import pair_evidence
from analyzer.audit.signals import finish_pairs


def _scores(rng: np.random.Generator, far: float, share: float, hands: int = 400) -> pd.DataFrame:
    """A and B each with 4 honest others (and each other); A's hands towards B pushed ``far`` out in ``share`` of
    them (a few hands far out: burst's count)."""
    rows = []
    for actor, partner in (("A", "B"), ("B", "A")):
        for o in [partner, *[f"{actor}{k}" for k in range(4)]]:
            x = rng.standard_normal(hands)
            if (actor, o) == ("A", "B"):
                x = x + np.where(rng.random(hands) < share, far, 0.0)
            rows.append(pd.DataFrame({"actor": actor, "other": o, "hand_id": [f"h{h}" for h in range(hands)], "x": x,
                                      "offset": rng.integers(1, 4, hands)}))
    return pd.concat(rows, ignore_index=True)


def _pair_row(scores: pd.DataFrame, main: str = "burst") -> pd.Series:
    out = pd.DataFrame({"hands_together": [int((scores["actor"].eq("A") & scores["other"].eq("B")).sum())]},
                       index=pd.MultiIndex.from_tuples([("A", "B")], names=["a", "b"]))
    finish_pairs(out, _burst_one(scores), pd.DataFrame(columns=["both_deviated", "observed", "expected", "z"]))
    row = out.reset_index().iloc[0].copy()
    row["main_signal"] = main
    return row


def test_burst_lead_counts_the_extreme_hands_against_a_typical_pair() -> None:
    scores = _scores(np.random.default_rng(5), far=6.0, share=0.08)
    row = _pair_row(scores)
    sentence = lead(row)
    assert sentence["key"] == "lead_burst" and (sentence["actor"], sentence["partner"]) == ("A", "B")
    above, hands, pct, expected, sd = sentence["args"][2:]
    assert int(hands) == 400 and int(above) == row["burst_ab_above"] and float(pct) == 100 * (1 - row["burst_ab_level"])
    # a typical pair's count: about n t, with a beta-binomial spread a little above the binomial's
    t = row["burst_ab_level"]
    assert float(expected) == pytest.approx(400 * t, rel=0.1)
    assert float(sd) >= 0.95 * np.sqrt(400 * t * (1 - t)) and int(above) > float(expected) + 3 * float(sd)
    # the hands it counts are the pair's hands above the actor's level, largest first: burst's own list
    (way,) = case_details(row, ["A"])["burst_directions"]
    assert way["above"] == way["listed"] == int(above) and way["level"] == t and way["actor"] == "A"
    listed = [{"hand_id": h, "favour": x} for h, x in way["extreme"]]
    favour = [h["favour"] for h in listed]
    assert len(listed) == int(above) and favour == sorted(favour, reverse=True)
    mine = scores[(scores["actor"] == "A") & (scores["other"] == "B")].set_index("hand_id")["x"]
    pool = np.sort(scores[(scores["actor"] == "A") & (scores["other"] != "B")]["x"].to_numpy())
    level = pool[len(pool) - 1 - int(np.floor(t * len(pool)))]
    assert {h["hand_id"] for h in listed} == set(mine.index[mine.to_numpy() > level])
    assert evidence_of(row, ["A"])["extreme"]["A"][0][0] == listed[0]["hand_id"]


def test_burst_lead_says_the_mean_when_the_count_is_not_above_a_typical_pair() -> None:
    row = _pair_row(_scores(np.random.default_rng(6), far=0.0, share=0.0))
    row["burst_ab_z_mean"], row["burst_ab_above"], row["burst_ba_above"] = 5.0, 0, 0
    sentence = lead(row)
    assert sentence["key"] == "lead_burst_mean" and sentence["args"][3] == "400"


def test_leads_of_the_other_signals_name_their_figures() -> None:
    row = pd.Series({"a": "A", "b": "B", "hands_together": 132, "main_signal": "imm_marginal",
                     "imm_marginal_ab_z_adj": 1.0, "imm_marginal_ba_z_adj": 4.0,
                     "imm_marginal_ab_per_hand": 0.1, "imm_marginal_ba_per_hand": 0.42,
                     "imm_marginal_ab_se_per_hand": 0.1, "imm_marginal_ba_se_per_hand": 0.11})
    s = lead(row)
    assert s["key"] == "lead_imm_marginal" and s["args"] == ["B", "A", "+0.42", "0.11", "132"]  # the stronger way
    s = lead(pd.Series({**row.to_dict(), "main_signal": "favour", "favour_ab_z": 0.5, "favour_ba_z": 3.0}))
    assert s["key"] == "lead_favour" and s["args"][:3] == ["B", "A", "+0.42"]
    s = lead(pd.Series({**row.to_dict(), "main_signal": "codev", "codev_observed": 9, "codev_expected": 2.04}))
    assert s["key"] == "lead_codev" and s["args"] == ["A", "B", "9", "132", "2.0"]


def _decisions() -> pd.DataFrame:
    """A (seat 0) and B (seat 1) with two others, four hands; A's moves with card and point edges of either sign."""
    rows = []
    # (hand, action, imm to B, imm to each other, dd to B)
    plan = [("h0", 0, 2.0, 0.0, -30.0), ("h0", 4, -1.0, 0.0, 50.0), ("h0", 8, 0.5, 0.0, 1.0),
            ("h1", 0, 3.0, 1.0, 5.0), ("h1", 4, 0.0, 0.0, 0.0), ("h2", 0, -2.0, 0.0, 80.0),
            ("h3", 0, 1.0, 0.0, -5.0), ("h3", 4, 1.5, 0.0, 2.0), ("h3", 8, 4.0, 0.0, 3.0), ("h3", 12, 0.2, 0.0, 0.0)]
    for hand, action, imm_b, imm_o, dd_b in plan:
        rows.append({"hand_id": hand, "action": action, "player": "A", "seat": 0, "p0": "A", "p1": "B", "p2": "C",
                     "p3": "D", "kind": "play", "chosen": "7S", "best": "8S", "regret": 0.5, "think_ms": 900.0,
                     **{f"delta{s}": 0.0 for s in range(4)},
                     **{f"dd_delta{s}": v for s, v in enumerate((0.0, dd_b, 0.0, 0.0))},
                     **{f"imm{s}": v for s, v in enumerate((0.0, imm_b, imm_o, imm_o))}})
    return pd.DataFrame(rows)


def test_exact_favour_evidence_is_ranked_by_the_card_edge_and_never_contradicts_it() -> None:
    ev = pair_evidence(_decisions(), "A", "B", actors=["A"], signal="imm_marginal")
    edges = [x["edge_immediate"] for x in ev]
    assert edges == sorted(edges, reverse=True) and min(edges) > 0  # no row with a negative card edge
    assert edges[0] == 4.0 and ("h1", 0) in {(x["hand_id"], x["action"]) for x in ev}  # 3 - mean(1, 1) = 2
    assert all(x["rank_by"] == "edge_immediate" for x in ev)
    assert ("h2", 0) not in {(x["hand_id"], x["action"]) for x in ev}  # points to B, cards stranded: not this claim


def test_point_evidence_is_ranked_by_the_points_edge() -> None:
    ev = pair_evidence(_decisions(), "A", "B", actors=["A"], signal="dd_marginal")
    assert [x["edge"] for x in ev][:2] == [80.0, 50.0] and min(x["edge"] for x in ev) > 0
    assert all(x["rank_by"] == "edge" for x in ev)


def test_burst_evidence_is_its_extreme_hands_in_their_order_with_the_moves_that_carried_them() -> None:
    extreme = {"A": [("h3", 2.5), ("h0", 1.9), ("h2", 1.1)]}
    ev = pair_evidence(_decisions(), "A", "B", actors=["A"], signal="burst", extreme=extreme)
    assert [x["hand_id"] for x in ev] == ["h3", "h3", "h3", "h0", "h0"]  # h1 is no extreme hand; h2 freed nothing
    assert [x["hand_favour"] for x in ev] == [2.5, 2.5, 2.5, 1.9, 1.9] and [x["hand_rank"] for x in ev] == [1, 1, 1, 2, 2]
    assert [x["edge_immediate"] for x in ev] == [4.0, 1.5, 1.0, 2.0, 0.5]  # at most three a hand, largest first
    assert all(x["edge_immediate"] > 0 for x in ev)


def test_the_pair_table_keeps_burst_hands_as_json_text() -> None:
    row = _pair_row(_scores(np.random.default_rng(7), far=6.0, share=0.05))
    hands = orjson.loads(row["burst_ab_extreme"])
    assert len(hands) == row["burst_ab_above"] and all(isinstance(h, str) for h, _ in hands)


def test_burst_evidence_gives_moves_to_top_hands_in_all_split_between_the_directions() -> None:
    rows = _decisions()
    b_rows = rows.assign(player="B", seat=1, **{f"imm{s}": v for s, v in enumerate((2.0, 0.0, 0.0, 0.0))})
    both = pd.concat([rows, b_rows.assign(action=rows["action"] + 1)], ignore_index=True)
    extreme = {"A": [("h3", 2.5), ("h0", 1.9), ("h1", 1.5)], "B": [("h1", 3.0), ("h2", 2.0), ("h3", 1.0)]}
    ev = pair_evidence(both, "A", "B", signal="burst", extreme=extreme, top=4)
    assert [(x["actor"], x["hand_id"]) for x in ev] == [("A", "h3")] * 3 + [("A", "h0")] * 2 + [("B", "h1")] * 2 + [("B", "h2")]
    assert {x["hand_rank"] for x in ev} == {1, 2}


def test_tong_is_read_from_the_covers_when_the_logged_result_lacks_it() -> None:
    import types

    import msgspec
    from conftest import legal_record

    from analyzer.audit.outcomes import SEATING_COLUMNS, outcome_row

    rec = legal_record(3)
    covered = {a.seat for a in rec.actions if a.kind == "cover"}
    bare = msgspec.structs.replace(rec, result=msgspec.structs.replace(rec.result, tong=None))
    row = dict(zip(SEATING_COLUMNS, outcome_row(types.SimpleNamespace(record=bare, check=None))))
    assert [row[f"tong{s}"] for s in range(4)] == [float(s not in covered) for s in range(4)]
    if rec.result.tong is not None:  # the logged 通 where there is one: the same seats
        assert [row[f"tong{s}"] for s in range(4)] == [float(s in set(rec.result.tong)) for s in range(4)]


def test_think_time_that_cannot_be_read_gives_no_signal_row() -> None:
    """A direction whose think times cannot be read (z 0, no ratio) has no row: "x1.00, z 0.00" would read as a
    measured, typical pace."""
    from analyzer.audit.case import signal_rows

    row = pd.Series({"a": "p01", "b": "p02", "think_ab_z_adj": 0.0, "think_ab_ratio": np.nan,
                     "think_ba_z_adj": 1.5, "think_ba_ratio": 1.3, "think_p": 0.2})
    rows = [r for r in signal_rows(row) if r["signal"] == "think"]
    assert [(r["actor"], r["partner"], r["per_hand"]) for r in rows] == [("p02", "p01", 1.3)]
