"""`analyzer players` given decision stores, their parts and decision files as PATHs: each read once, one set of
settings, never a hand from two inputs, stray or odd files named with their column."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from click.testing import Result
from conftest import SAMPLES, analyzer_process, clean_exit, legal_lines, legal_log, run_cli

FAST = ["--samples", "1", "--dd-samples", "0"]



def test_players_on_a_parquet_of_other_columns_is_a_usage_error(tmp_path: Path) -> None:
    other = tmp_path / "other.parquet"
    pd.DataFrame({"x": [1, 2]}).to_parquet(other)
    r = run_cli("players", str(other))
    clean_exit(r, 2)
    assert "lacks the column" in r.output
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    clean_exit(run_cli("players", str(junk)), 2)


def test_players_mixing_a_parquet_and_a_log_uses_both(tmp_path: Path) -> None:
    a = legal_log(tmp_path / "a", n=2)
    b = legal_log(tmp_path / "b", n=2, first=10)
    rows = tmp_path / "a.parquet"
    clean_exit(run_cli("decisions", str(a), "-o", str(rows), *FAST), 0)
    both = run_cli("players", str(rows), str(b), "--format", "json", *FAST)
    one = run_cli("players", str(rows), "--format", "json")
    assert both.exit_code == 0 and one.exit_code == 0, both.output
    def decisions(r: Any) -> int:
        return sum(p["decisions"] for p in orjson.loads(r.stdout))

    assert decisions(both) > decisions(one)


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


@pytest.fixture(scope="module")
def legal_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("legal") / "store"
    clean_exit(run_cli("decisions", str(SAMPLES / "legal.jsonl"), "-o", str(store), *FAST), 0)
    return store


def _renamed_part(part: Path, to: Path, old: str, new: str) -> Path:
    """The part with player ``old`` renamed ``new`` in every id column (the metadata kept: the hands are the same)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(part)
    meta = table.schema.metadata
    for name in ("player", "p0", "p1", "p2", "p3"):
        i = table.column_names.index(name)
        table = table.set_column(i, name, pc.replace_substring(table.column(i), old, new))
    pq.write_table(table.replace_schema_metadata(meta), to)
    return to


@pytest.mark.parametrize("how", ["store", "--decisions", "file"])
def test_decision_rows_with_an_id_past_the_bound_are_refused(legal_store: Path, tmp_path: Path, how: str) -> None:
    """A store's part or a decision file made elsewhere with a 200 KB player id: refused, naming the file and column
    (`players STORE` wrote the id into its table; the logs' gate does not see rows read without logs)."""
    import shutil

    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    _renamed_part(part, part, "alice", "Z" * 200_000)
    if how == "file":
        loose = tmp_path / "loose"
        loose.mkdir()
        shutil.move(str(part), loose / "day.parquet")
        args = [str(loose / "day.parquet")]
    else:
        args = [str(store)] if how == "store" else ["--decisions", str(store)]
    out = tmp_path / "players.csv"
    r = run_cli("players", *args, "-o", str(out))
    clean_exit(r, 2)
    assert "'player'" in r.output and "an id of 200,000 characters" in r.output and "at most 256" in r.output
    assert not out.exists()


def test_a_decision_file_in_a_plain_folder_takes_outputs_beside_it(legal_store: Path, tmp_path: Path) -> None:
    """A decision file among other files (the current folder) is no store: `players day.parquet -o players.csv`
    beside it was refused ("refusing to write inside ., an input"); a part inside its store still is."""
    import shutil

    (part,) = legal_store.glob("part-*.parquet")
    shutil.copy(part, tmp_path / "day.parquet")
    r = run_cli("players", str(tmp_path / "day.parquet"), "-o", str(tmp_path / "players.csv"))
    clean_exit(r, 0)
    assert (tmp_path / "players.csv").read_text().startswith("player,skill,")
    r = run_cli("players", str(part), "-o", str(legal_store / "players.csv"))
    clean_exit(r, 2)
    assert "refusing to write inside" in r.output and not (legal_store / "players.csv").exists()


ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]



def test_players_of_a_stores_metadata_file_names_the_store(tmp_path: Path) -> None:
    """`players STORE/_common_metadata` (the file a tab completion offers first) read the store's schema as a decision
    file of no rows: "no decisions to analyse", an empty table, exit 0, for a store full of rows."""
    log = tmp_path / "room.jsonl"
    log.write_bytes(legal_lines(2))
    store = tmp_path / "store"
    r = analyzer_process("decisions", str(log), "-o", str(store), *ONE_SAMPLE)
    assert r.returncode == 0, r.stderr
    r = analyzer_process("players", str(store / "_common_metadata"), "--format", "json")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "is a decision store's metadata file and holds no rows: name the store's folder" in r.stderr
    assert str(store) in r.stderr and r.stdout == ""
    r = analyzer_process("players", str(store), "--format", "json")  # the folder itself: its rows
    assert r.returncode == 0 and len(orjson.loads(r.stdout)) == 4, r.stdout + r.stderr


LEGAL = SAMPLES / "legal.jsonl"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store of samples/legal.jsonl in parts of 3 hands, the same logs at other settings, and a store of other
    hands (legal.jsonl's hands renamed)."""
    root = tmp_path_factory.mktemp("stores")
    other_log = root / "other.jsonl"
    other_log.write_bytes(b"".join(line.replace(b'"hand_id":"', b'"hand_id":"o-') + b"\n"
                                   for line in LEGAL.read_bytes().splitlines()))
    out = {"base": root / "base", "s2": root / "s2", "other": root / "other", "other_log": other_log}
    for name, log, extra in (("base", LEGAL, ONE_SAMPLE), ("s2", LEGAL, ["--samples", "2", "--max-samples", "2",
                                                                     "--dd-samples", "0"]),
                             ("other", other_log, ONE_SAMPLE)):
        r = run_cli("decisions", str(log), "-o", str(out[name]), "--batch-hands", "3", *extra)
        assert r.exit_code == 0, r.output
    return out


def _decisions(r: Result) -> int:
    assert r.exit_code == 0, r.output
    return sum(p["decisions"] for p in orjson.loads(r.stdout))


def test_players_reads_a_store_or_part_given_twice_once(stores: dict[str, Path]) -> None:
    base = str(stores["base"])
    part = str(sorted(stores["base"].glob("part-*.parquet"))[0])
    once = _decisions(run_cli("players", base, "--format", "json"))
    assert once > 0
    assert _decisions(run_cli("players", base, base, "--format", "json")) == once
    assert _decisions(run_cli("players", base, part, "--format", "json")) == once
    assert _decisions(run_cli("players", part, base, "--format", "json")) == once
    assert _decisions(run_cli("players", "--decisions", base, base, "--format", "json")) == once
    both = _decisions(run_cli("players", base, str(stores["other"]), "--format", "json"))
    assert both == 2 * once  # other hands (the same games renamed): added


def test_players_refuses_a_hand_from_two_inputs(stores: dict[str, Path], tmp_path: Path) -> None:
    r = run_cli("players", str(stores["base"]), str(LEGAL), "--format", "json")
    clean_exit(r, 2)
    assert "hand 'sample-plain' is in both" in r.output and str(stores["base"]) in r.output and str(LEGAL) in r.output
    copy = tmp_path / "copy.parquet"  # a part copied out of its store: the same hands from another file
    part = sorted(stores["base"].glob("part-*.parquet"))[0]
    copy.write_bytes(part.read_bytes())
    r = run_cli("players", str(stores["base"]), str(copy), "--format", "json")
    clean_exit(r, 2)
    assert "is in both" in r.output and str(copy) in r.output


def test_players_refuses_stores_of_other_settings(stores: dict[str, Path]) -> None:
    r = run_cli("players", str(stores["base"]), str(stores["s2"]), "--format", "json")
    clean_exit(r, 2)
    assert "--samples 2" in r.output and "--samples 1" in r.output and "different settings" in r.output
    part = str(sorted(stores["s2"].glob("part-*.parquet"))[0])
    clean_exit(run_cli("players", str(stores["other"]), part, "--format", "json"), 2)
    # logs with a store: analysed at the store's settings unless options say otherwise (then refused)
    r = run_cli("players", str(stores["base"]), str(stores["other_log"]), "--format", "json", "--samples", "2")
    clean_exit(r, 2)
    assert "the logs" in r.output and "different settings" in r.output


def test_players_names_the_file_and_column_of_stray_rows(stores: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "rows"
    folder.mkdir()
    part = sorted(stores["base"].glob("part-*.parquet"))[0]
    (folder / "a.parquet").write_bytes(part.read_bytes())
    pd.DataFrame({"a": [1, 2, 3]}).to_parquet(folder / "zzz.parquet")
    r = run_cli("players", str(folder))
    clean_exit(r, 2)
    assert str(folder / "zzz.parquet") in r.output and "hand_id" in r.output
    rows = pd.read_parquet(part)
    rows["regret"] = rows["regret"].astype(str)
    (folder / "zzz.parquet").unlink()
    rows.to_parquet(folder / "b.parquet")
    r = run_cli("players", str(folder))
    clean_exit(r, 2)
    assert str(folder / "b.parquet") in r.output and "'regret'" in r.output


def test_players_on_a_fifo_says_why(tmp_path: Path) -> None:
    fifo = tmp_path / "x.parquet"
    os.mkfifo(fifo)
    r = run_cli("players", str(fifo))
    clean_exit(r, 2)
    assert "not a regular file" in r.output
