"""The simulators' registry (benchmarks.simulators): every simulator lists its styles, writes the same bytes for the
same arguments and seed, and returns a truth whose players are the log's; the harness tabulates a truth it joins."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import harness as h
from benchmarks.simulators import COLLUSION, HONEST, LONE, SIMULATORS, Colluding, Truth, pair, rooms


def _lines(log: Path) -> bytes:
    return gzip.decompress(log.read_bytes()) if log.name.endswith(".gz") else log.read_bytes()


def _players(log: Path) -> set[str]:
    return {p for line in _lines(log).splitlines() for p in json.loads(line)["players"]}


def test_every_simulator_lists_styles_of_known_kinds():
    assert {"analyzer", "heuristic_lookahead", "quirky_rules", "planner_sampler", "thumb_epsilon",
            "boltzmann_families", "fixed_policy", "analyzer_noise"} <= set(SIMULATORS)
    for sim in SIMULATORS.values():
        assert sim.styles, sim.name
        assert {s.kind for s in sim.styles} <= {HONEST, COLLUSION, LONE}
        assert len({s.name for s in sim.styles}) == len(sim.styles)
    assert len(list(rooms())) == sum(len(s.styles) for s in SIMULATORS.values())
    assert all(style.kind == HONEST for _, style in rooms(kinds=(HONEST,)))


def _first(sim_name: str, kind: str) -> str:
    return next(s.name for s in SIMULATORS[sim_name].styles if s.kind == kind)


CASES = [(name, _first(name, COLLUSION if any(s.kind == COLLUSION for s in sim.styles) else HONEST))
         for name, sim in SIMULATORS.items()]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "style"), CASES, ids=[c[0] for c in CASES])
def test_a_room_is_its_arguments_and_seed(tmp_path: Path, name: str, style: str):
    sim = SIMULATORS[name]
    hands = 80  # enough for every player of the smaller rooms to sit at least once
    a = sim.generate(style, hands, 3, tmp_path / f"a{sim.suffix}")
    b = sim.generate(style, hands, 3, tmp_path / f"b{sim.suffix}")
    sim.generate(style, hands, 4, tmp_path / f"c{sim.suffix}")
    assert _lines(tmp_path / f"a{sim.suffix}") == _lines(tmp_path / f"b{sim.suffix}")
    assert _lines(tmp_path / f"a{sim.suffix}") != _lines(tmp_path / f"c{sim.suffix}")
    assert a == b and Truth.from_json(json.loads(json.dumps(a.to_json()))) == a
    seated = _players(tmp_path / f"a{sim.suffix}")
    named = {p for c in a.pairs for p in c.players} | {p for f in a.friends for p in f} | set(a.lone)
    assert named <= seated | set(a.roles), f"{name}: truth names players the log does not seat"
    if sim.style(style).kind == COLLUSION:
        assert a.pairs or a.groups


def test_generate_refuses_an_unknown_style_a_wrong_suffix_and_players_it_sets_itself(tmp_path: Path):
    sim = SIMULATORS["planner_sampler"]
    with pytest.raises(KeyError, match="no style"):
        sim.generate("no-such-style", 10, 1, tmp_path / "x.jsonl.gz")
    with pytest.raises(ValueError, match=r"\*\.jsonl\.gz"):
        sim.generate(sim.styles[0].name, 10, 1, tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="sets its rooms' players"):
        sim.generate(sim.styles[0].name, 10, 1, tmp_path / "x.jsonl.gz", players=8)


def test_tabulate_reads_colluding_honest_and_friend_pairs_against_the_truth():
    truth = Truth("s", "st", 1, 100, pairs=(Colluding(("a", "b"), "share"),), friends=(pair("d", "c"),),
                  roles={"a": "colluder", "b": "colluder", "c": "friend", "d": "friend", "e": "honest"})
    pairs = pd.DataFrame({"a": ["a", "c", "a", "d"], "b": ["b", "d", "e", "e"], "hands_together": [50, 60, 40, 30],
                          "score": [6.0, 2.0, 1.0, 0.5], "verdict": ["flagged", "review", "clear", "clear"],
                          "p_value": [1e-6, 0.004, 0.3, 0.8], "q_value": [1e-5, 0.01, 0.5, 0.9],
                          "main_signal": ["burst", "think", "", ""]})
    players = pd.DataFrame({"player": list("abcde"), "flag": [True, False, False, False, True], "skill": [0.0] * 5})
    a = h.Audited(h.Room("s", "st", 100, 1), truth, {}, pairs, players, 1.0)
    rows = h.pair_rows(a)
    assert rows["kind"].tolist() == ["colluding", "honest", "with-cheater", "honest"]
    assert rows["friend"].tolist() == [False, True, False, False]
    t = h.tabulate(rows, h.player_rows(a)).iloc[0]
    assert (t["colluding"], t["flagged"], t["marked"], t["honest"], t["honest_review"]) == (1, 1, 1, 2, 1)
    assert t["auc"] == 1.0 and t["review_fdr"] == 1.0 and t["friends_marked"] == 1
    assert t["p_le_0.01"] == 0.5 and t["p_le_0.5"] == 0.5
    assert (t["players_flagged"], t["honest_players"]) == (1, 3)
