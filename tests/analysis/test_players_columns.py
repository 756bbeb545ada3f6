"""`analyzer players`' short table: the columns a person reads by default (skill with its interval, hands, flag, the
flagged partner), each explained in --help; `--columns all` for the rest; csv and json keep every column; no figure
printed in exponent form but tiny q-values."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import clean_exit, run_cli

from analyzer.analysis.players import COLUMNS, FLAG_Q
from analyzer.commands.players import SHORT_COLUMNS, short_table


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sharing_room: Path) -> Path:
    out = tmp_path_factory.mktemp("players-columns") / "store"
    clean_exit(run_cli("decisions", str(sharing_room), "-o", str(out), "--samples", "2", "--dd-samples", "1",
                       "--jobs", "1"), 0)
    return out


def header(text: str) -> str:
    return text.splitlines()[1]  # below the skill line


def test_the_default_table_is_short_and_all_shows_every_column(store: Path) -> None:
    r = run_cli("players", "--decisions", str(store))
    clean_exit(r, 0)
    head = header(r.stdout)
    for name in SHORT_COLUMNS:
        assert name in head
    for internal in ("dd_excess", "level_z", "partner_z", "mean_think_ms", "skill_lo"):
        assert internal not in head
    assert "e+" not in r.stdout
    rows = [line.split()[0] for line in r.stdout.splitlines()[2:]]
    r = run_cli("players", "--decisions", str(store), "--columns", "all")
    clean_exit(r, 0)
    assert header(r.stdout).split() == list(COLUMNS)
    assert [line.split()[0] for line in r.stdout.splitlines()[2:]] == rows  # the same players in the same order
    assert len(rows) >= 4
    assert "e+0" not in r.stdout  # think times of over a second read whole (1470, not 1.47e+03)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_keep_every_column(store: Path, fmt: str) -> None:
    r = run_cli("players", "--decisions", str(store), "--format", fmt)
    clean_exit(r, 0)
    frame = pd.read_csv(io.StringIO(r.stdout)) if fmt == "csv" else pd.read_json(io.StringIO(r.stdout))
    assert list(frame.columns) == list(COLUMNS)


def test_help_explains_every_short_column() -> None:
    r = run_cli("players", "--help")
    clean_exit(r, 0)
    text = " ".join(r.output.split())
    for name, meaning in SHORT_COLUMNS.items():
        assert f"{name}: {' '.join(meaning.split())}" in text
    assert "--columns all" in text and "docs/reference/player-table.md" in text
    assert f"q <= {FLAG_Q:g}" in SHORT_COLUMNS["flag"]  # the threshold the table flags at


def test_the_flagged_partner_is_shown_for_flagged_players_only() -> None:
    table = pd.DataFrame({
        "player": ["p07", "p08", "p01"], "skill": [1.5, 0.9, math.nan], "skill_lo": [1.3, 0.7, math.nan],
        "skill_hi": [1.7, 1.1, math.nan], "hands": [300, 290, 3], "flag": [True, False, False],
        "signal_q": [2.5e-6, 0.4, 1.0], "partner": ["p08", "p07", ""], "partner_z": [5.25, 1.1, math.nan],
        "partner_hands": [226, 226, 0]})
    short = short_table(table)
    assert list(short.columns) == list(SHORT_COLUMNS)
    rows = short.to_dict("records")
    assert rows[0] == {"player": "p07", "skill": "1.5", "95% interval": "1.3..1.7", "hands": "300", "flag": "yes",
                       "signal q": "2.5e-06", "flagged partner": "p08", "z": "5.25", "together": "226"}
    assert (rows[1]["flag"], rows[1]["flagged partner"], rows[1]["z"], rows[1]["together"]) == ("no", "-", "-", "-")
    assert (rows[2]["skill"], rows[2]["95% interval"], rows[2]["signal q"]) == ("-", "-", "1")
