"""Hostile inputs found by a hunt over the commands (encodings, gzip streams, paths, outputs): each one a clear
error or problem naming the file, never a traceback, never a partial output."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from conftest import clean_exit, legal_obj, run_cli

from analyzer.progress import count_lines
from analyzer.validate import validate

FAST = ["--samples", "1", "--dd-samples", "0"]


def _lines(n: int, first: int = 0) -> bytes:
    return b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n))


def _broken_gzip(path: Path) -> Path:
    """A gzip header then deflate data that does not decode (zlib's "invalid code lengths set"), after a good
    start: not a stream cut short (EOFError) nor a bad header (BadGzipFile) but ``zlib.error``, no OSError."""
    good = gzip.compress(_lines(3), mtime=0)
    path.write_bytes(good[:10] + b"garbagegarbage" * 50)
    return path


def test_a_gzip_of_broken_compressed_data_is_an_io_error_problem(tmp_path: Path) -> None:
    bad = _broken_gzip(tmp_path / "bad.jsonl.gz")
    good = tmp_path / "good.jsonl"
    good.write_bytes(_lines(2, 10))
    s = validate([str(bad), str(good)])
    assert s.valid_hands == 2
    assert [(p.code, p.file) for p in s.problems] == [("io-error", str(bad))]
    assert "broken compressed data" in s.problems[0].message
    assert count_lines([str(bad)]) is None  # the progress bar's pre-count gives up, the command reports it


@pytest.mark.parametrize("command", [["validate"], ["players", *FAST], ["decisions", *FAST, "-o", "{o}"],
                                     ["report", "--hand", "h0", "-o", "{o}"]])
def test_every_command_names_a_gzip_of_broken_data(tmp_path: Path, command: list[str]) -> None:
    bad = _broken_gzip(tmp_path / "bad.jsonl.gz")
    out = tmp_path / "out"
    r = run_cli(command[0], str(bad), *(a.replace("{o}", str(out)) for a in command[1:]))
    clean_exit(r, 2)
    assert f"{bad}" in r.output and "broken compressed data" in r.output
    assert not out.exists()


def test_players_of_a_store_without_parts_is_its_empty_table(tmp_path: Path) -> None:
    """A store fed a day of no standard hand holds no part (decisions exits 0 for it): players of that store, as
    PATH or as --decisions alone, writes the empty table and exits 0, as for logs of no valid hand (was exit 3,
    an IndexError on no frames)."""
    from conftest import SAMPLES

    store = tmp_path / "store"
    clean_exit(run_cli("decisions", str(SAMPLES / "heiqi-sample.jsonl"), "-o", str(store), *FAST), 0)
    assert not list(store.glob("part-*"))
    for args in ([str(store)], ["--decisions", str(store)]):
        out = tmp_path / "players.csv"
        r = run_cli("players", *args, "-o", str(out))
        clean_exit(r, 0)
        assert out.read_text().startswith("player,skill,") and len(out.read_text().splitlines()) == 1


def test_players_of_a_folder_named_parquet_without_decision_files_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "day.parquet"
    (folder / "sub").mkdir(parents=True)
    r = run_cli("players", str(folder))
    clean_exit(r, 2)
    assert "no *.parquet files" in r.output and str(folder) in r.output
