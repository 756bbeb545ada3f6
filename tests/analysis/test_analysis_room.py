"""Decision rows of simulated rooms recover the simulator's skill ordering, room after room."""

import json

import pytest

from analyzer.analysis.decisions import analyse
from analyzer.logs import write_records
from analyzer.simulate.room import simulate
from analyzer.validate import generate_valid


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stronger_players_show_lower_regret_and_match_the_sensible_choice_more(tmp_path, seed):
    """Median regret, not the mean: a regret's tail is the deal's luck (one stranded king costs a novice
    and a strong player alike), and the mean ordering flipped in rooms 0 and 2 while the median held."""
    sim = simulate(hands=400, players=8, seed=seed, colluders=0, friends=0, skill_mix="novice:0.5,strong:0.5")
    path = tmp_path / "room.jsonl"
    write_records(path, sim.records)
    df = analyse(generate_valid([str(path)]), samples=16, seed=3)
    level = {p: v["level"] for p, v in sim.truth["players"].items()}
    assert set(level.values()) == {"novice", "strong"}, json.dumps(sim.truth["players"])
    df["level"] = df["player"].map(level)
    df["match"] = df["rank"] == 0
    by = df.groupby("level").agg(regret=("regret", "median"), match=("match", "mean"), n=("regret", "size"))
    assert by.loc["novice", "n"] > 1000 and by.loc["strong", "n"] > 1000
    assert by.loc["novice", "regret"] > by.loc["strong", "regret"]
    assert by.loc["strong", "match"] > by.loc["novice", "match"]
