"""`players -o FILE`: the format follows the output's name when --format is not given (.csv: CSV, through
logs.csv_text like every CSV; .json: JSON; any other name: the table); a --format that contradicts a .csv or .json
name is refused, exit 2, nothing written (docs/analysis.md, "players")."""

from __future__ import annotations

import csv
from pathlib import Path

import orjson
import pytest
from conftest import clean_exit, legal_obj, run_cli

from analyzer.analysis.players import MEANING

#: Player ids a spreadsheet would run as formulas, and a plain one.
IDS = ["=1+1", "+2", "@SUM(1)", "plain"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decision store of 4 hands of those players (players then reads rows, analyses nothing)."""
    root = tmp_path_factory.mktemp("players-out")
    objs = [legal_obj(s, f"h{s}") for s in range(4)]
    for o in objs:
        o["players"] = IDS
    log = root / "room.jsonl"
    log.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    r = run_cli("decisions", str(log), "-o", str(root / "store"), "--samples", "2", "--dd-samples", "0", "--jobs", "1")
    clean_exit(r, 0)
    return root / "store"


def _players(store: Path, out: Path, *fmt: str) -> None:
    clean_exit(run_cli("players", "--decisions", str(store), "-o", str(out), *fmt), 0)


@pytest.fixture(scope="module")
def written(store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Each format as --format writes it into a file whose name says nothing."""
    root = tmp_path_factory.mktemp("players-ref")
    out = {}
    for fmt in ("table", "csv", "json"):
        _players(store, root / f"ref-{fmt}.txt", "--format", fmt)
        out[fmt] = (root / f"ref-{fmt}.txt").read_bytes()
    return out


#: Output names and the format a file of that name gets without --format.
BY_NAME = {"players.csv": "csv", "PLAYERS.CSV": "csv", "p.json": "json", "players.txt": "table", "players": "table",
           "p.csv.txt": "table"}


def test_the_format_follows_the_outputs_name_unless_a_format_is_given(store: Path, written: dict[str, bytes],
                                                                      tmp_path: Path) -> None:
    for name, fmt in BY_NAME.items():
        _players(store, tmp_path / name)
        assert (tmp_path / name).read_bytes() == written[fmt], name
    for fmt in ("csv", "json", "table"):  # a --format into a name that says nothing: as asked
        _players(store, tmp_path / f"out-{fmt}.dat", "--format", fmt)
        assert (tmp_path / f"out-{fmt}.dat").read_bytes() == written[fmt]
    _players(store, tmp_path / "agree.csv", "--format", "csv")  # a --format that agrees with the name
    assert (tmp_path / "agree.csv").read_bytes() == written["csv"]


def test_a_csv_output_is_csv_with_its_formulas_defused(store: Path, tmp_path: Path) -> None:
    """What a spreadsheet or pandas.read_csv opens: a header of the table's columns, a row a player, every id that
    starts like a formula with an apostrophe in front (logs.csv_text), no prose line before it."""
    _players(store, tmp_path / "players.csv")
    text = (tmp_path / "players.csv").read_text(encoding="utf-8")
    assert not text.startswith(MEANING.splitlines()[0])
    with open(tmp_path / "players.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted(row["player"] for row in rows) == sorted(["'=1+1", "'+2", "'@SUM(1)", "plain"])
    assert {"skill", "skill_lo", "skill_hi", "hands", "decisions"} <= set(rows[0])
    assert all(float(row["decisions"]) > 0 for row in rows)


def test_a_json_output_is_json_with_the_ids_exact(store: Path, tmp_path: Path) -> None:
    _players(store, tmp_path / "players.json")
    assert sorted(p["player"] for p in orjson.loads((tmp_path / "players.json").read_bytes())) == sorted(IDS)


@pytest.mark.parametrize(("name", "fmt"), [("players.csv", "table"), ("players.csv", "json"), ("p.json", "csv"),
                                           ("p.JSON", "table")])
def test_a_format_that_contradicts_the_name_is_refused(store: Path, tmp_path: Path, name: str, fmt: str) -> None:
    r = run_cli("players", "--decisions", str(store), "--format", fmt, "-o", str(tmp_path / name))
    clean_exit(r, 2)
    assert f"--format {fmt}" in r.output and name in r.output, r.output
    assert not (tmp_path / name).exists()


def test_the_help_says_how_the_format_is_chosen() -> None:
    r = run_cli("players", "--help")
    clean_exit(r, 0)
    text = " ".join(r.output.split())
    assert "Default: the -o FILE's name says (.csv: csv, .json: json), else table" in text
    assert "is refused (exit 2)" in text
