"""The player table on extreme but legal inputs: rules of huge factors, difficulties that vanish."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from conftest import clean_exit, run_cli

from analyzer.validate import validate

FAST = ["--samples", "1", "--dd-samples", "0"]


def test_think_slope_of_vanishing_difficulties_is_finite_or_nan_never_a_lapack_failure() -> None:
    """Legal rules of huge factors (tong_factors up to 1024, cover_doubling's 8 thresholds) put the options' values
    millions of points apart: the difficulties are then as small as 1e-300, polyfit's scaling squared them to 0 and
    LAPACK failed ("SVD did not converge", its "** On entry to DLASCL" lines on standard output), which `players`
    reported as rows "not written by analyzer decisions", exit 2, for a valid log."""
    import math
    import warnings

    import numpy as np

    from analyzer.analysis.players import _think

    think = np.arange(40, dtype=float) * 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for diff in (np.linspace(0.0, 1e-300, 40), np.r_[np.zeros(39), 5e-324], np.r_[np.ones(39), 1 + 2e-16]):
            mean, rho, slope = _think(think, diff)
            assert mean == 1950.0 and math.isfinite(rho) and (math.isfinite(slope) or math.isnan(slope))
        assert _think(think, np.linspace(0.0, 3.0, 40))[2] == pytest.approx(1300.0)  # an ordinary fit unchanged


def test_players_of_a_valid_room_under_huge_rule_factors(tmp_path: Path) -> None:
    """The same through the command: 8 hands of the demo room under legal rules of huge factors (the result left
    out: it is optional) are valid, and `players` writes their table (was exit 2 naming them rows not of
    `analyzer decisions`)."""
    from conftest import SAMPLES

    rules = {"tong_factors": [1024, 1, 1024, 1, 1024], "dutou_factor": 256, "cover_doubling": [0, 1, 2, 3, 4, 5, 6, 7]}
    hands = []
    for line in gzip.open(SAMPLES / "demo-room.jsonl.gz").read().splitlines()[:8]:
        hand = orjson.loads(line)
        hand["rules"] = rules
        del hand["result"]
        hands.append(orjson.dumps(hand) + b"\n")
    log = tmp_path / "room.jsonl"
    log.write_bytes(b"".join(hands))
    assert validate([str(log)]).valid_hands == 8
    out = tmp_path / "players.json"
    r = run_cli("players", str(log), *FAST, "-o", str(out))
    clean_exit(r, 0)
    table = orjson.loads(out.read_bytes())
    assert len(table) == 8 and all(row["decisions"] > 0 for row in table)  # the 8 players of these hands
