"""Decision rows of a simulated room recover the simulator's skill ordering."""

import json

from analyzer.analysis.decisions import analyse
from analyzer.logs import write_records
from analyzer.simulate.room import simulate
from analyzer.validate import generate_valid


def test_stronger_players_show_lower_regret_and_match_the_sensible_choice_more(tmp_path):
    sim = simulate(hands=400, players=8, seed=11, colluders=0, friends=0, skill_mix="novice:0.5,strong:0.5")
    path = tmp_path / "room.jsonl"
    write_records(path, sim.records)
    df = analyse(generate_valid([str(path)]), samples=16, seed=3)
    level = {p: v["level"] for p, v in sim.truth["players"].items()}
    assert set(level.values()) == {"novice", "strong"}, json.dumps(sim.truth["players"])
    df["level"] = df["player"].map(level)
    df["match"] = df["rank"] == 0
    by = df.groupby("level").agg(regret=("regret", "mean"), match=("match", "mean"), n=("regret", "size"))
    assert by.loc["novice", "n"] > 1000 and by.loc["strong", "n"] > 1000
    assert by.loc["novice", "regret"] > by.loc["strong", "regret"]
    assert by.loc["strong", "match"] > by.loc["novice", "match"]
