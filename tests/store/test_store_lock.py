"""One writer of a decision store at a time: a second `decisions` into a store another run is writing (appending to
it or creating it) is refused at once, exit 2, naming the store, and adds nothing; no commit ever renames over a part
or a store that exists; readers keep working during an append; SIGTERM while a new store is written leaves no hidden
folder (docs/scale.md, "The decision store")."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import clean_exit, feed_room_days, run_cli

import analyzer.analysis.store as store_module
from analyzer.analysis.execute import Execution, Settings
from analyzer.analysis.store import StoreError, StoreWriter, collect_rows, fingerprint, open_store
from analyzer.validate import generate_valid

OPTS = ["--samples", "2", "--dd-samples", "0", "--jobs", "1"]
SETTINGS = Settings.of(2, 0, 0)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A room of 9 hands: the store's first 6, and 3 of a later day."""
    room, more = feed_room_days(tmp_path_factory.mktemp("lock-logs"), [6, 3], seed=3)
    return room, more


@pytest.fixture(scope="module")
def base(logs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("lock-base") / "store"
    r = run_cli("decisions", str(logs[0]), "-o", str(store), *OPTS)
    clean_exit(r, 0)
    return store


@pytest.fixture
def store(base: Path, tmp_path: Path) -> Path:
    """A copy of the 6-hand store, for one test to append to."""
    copy = tmp_path / "store"
    shutil.copytree(base, copy)
    return copy


@pytest.fixture(scope="module")
def more_hands(logs: tuple[Path, Path]) -> list[tuple[pd.DataFrame, list[str], list[str]]]:
    """The later day's hands, each as a part's arguments: its rows, its id, its fingerprint."""
    items = list(generate_valid([str(logs[1])]))
    rows = collect_rows(items, SETTINGS, Execution())
    out = []
    for item in items:
        hid = str(item.record.hand_id)
        out.append((rows[rows["hand_id"] == hid].reset_index(drop=True), [hid], [fingerprint(item.record)]))
    return out


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_a_second_writer_of_a_store_is_refused_before_it_reads_its_parts(store: Path, more_hands: Any) -> None:
    """The finding: two appends both read the part list (next part: part-000001), both renamed their part-000001
    into place, the second over the first, and both said "N decisions from M new hands"."""
    with StoreWriter(store, SETTINGS) as first:
        with pytest.raises(StoreError, match=f"^{store} is being written by another run"):
            StoreWriter(store, SETTINGS)
        first.add(*more_hands[0])
        first.commit()
        with pytest.raises(StoreError, match="is being written by another run"):  # until the first run's end
            StoreWriter(store, SETTINGS)
    with StoreWriter(store, SETTINGS) as second:  # the first has ended: the lock is gone with it
        second.add(*more_hands[1])
        second.commit()
    assert _listing(store) == ["_common_metadata", "part-000000.parquet", "part-000001.parquet", "part-000002.parquet"]
    assert len(open_store(store).hands) == 8


def test_decisions_into_a_store_being_written_is_exit_2_and_readers_keep_reading(
        store: Path, logs: tuple[Path, Path], more_hands: Any) -> None:
    room, more = logs
    before = _listing(store)
    rows_before = len(pd.read_parquet(store))
    with StoreWriter(store, SETTINGS) as first:
        first.add(*more_hands[0])  # a hidden part, not committed yet
        r = run_cli("decisions", str(room), str(more), "-o", str(store), *OPTS)
        clean_exit(r, 2)
        lines = [line for line in r.output.splitlines() if line.strip()]
        assert lines == [f"analyzer: error: {store} is being written by another run (`analyzer decisions`); nothing "
                         f"written: run again once it has ended"], r.output
        assert "new hands" not in r.output  # never a success message for rows that are not there
        # readers take no lock: the store as it was, without the hidden part
        assert len(pd.read_parquet(store)) == rows_before
        assert len(open_store(store).hands) == 6
        r = run_cli("players", "--decisions", str(store), "--format", "json")
        clean_exit(r, 0)
        first.commit()
        assert len(open_store(store).hands) == 7  # the committed part is read at once, the lock still held
    assert set(_listing(store)) == {*before, "part-000001.parquet"}
    r = run_cli("decisions", str(room), str(more), "-o", str(store), *OPTS)  # the first has ended: this one runs
    clean_exit(r, 0)
    assert "from 2 new hands" in r.output and "(7 hands already there)" in r.output, r.output
    assert len(open_store(store).hands) == 9


def test_the_lock_is_flock_on_the_store_folder(store: Path, logs: tuple[Path, Path]) -> None:
    """Any process holding ``flock`` on the store's folder (another analyzer, or a script that wants the store still)
    keeps `decisions` out; nothing is written, no hidden part is left."""
    before = _listing(store)
    fd = os.open(store, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        r = run_cli("decisions", str(logs[0]), str(logs[1]), "-o", str(store), *OPTS)
    finally:
        os.close(fd)
    clean_exit(r, 2)
    assert "is being written by another run" in r.output
    assert _listing(store) == before


def test_a_second_creation_is_refused_and_the_new_store_stays_locked_until_its_run_ends(tmp_path: Path,
                                                                                        more_hands: Any) -> None:
    target = tmp_path / "new"
    (tmp_path / ".new.0123abcd").mkdir()  # what a run killed outright (SIGKILL) leaves: not locked, not a live run
    with StoreWriter(target, SETTINGS) as first:
        with pytest.raises(StoreError, match=f"^{target} is being written by another run"):
            StoreWriter(target, SETTINGS)
        first.add(*more_hands[0])
        first.commit()
        assert target.is_dir()
        with pytest.raises(StoreError, match="is being written by another run"):  # the lock moved with the folder
            StoreWriter(target, SETTINGS)
    assert _listing(tmp_path) == [".new.0123abcd", "new"]  # nothing else left beside it
    with StoreWriter(target, SETTINGS) as second:
        assert second.known == {more_hands[0][1][0]: more_hands[0][2][0]}


def test_no_commit_renames_over_a_part_or_a_store_that_exists(store: Path, tmp_path: Path, more_hands: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the lock (a file system without locks), two appends that read the same part list name their parts
    alike: the second commit is refused, its renames undone, and the first's part kept; so for two creations."""
    monkeypatch.setattr(store_module, "_lock", lambda *a, **k: None, raising=False)
    monkeypatch.setattr(store_module, "_being_created", lambda *a, **k: False, raising=False)
    before = _listing(store)
    with StoreWriter(store, SETTINGS) as a, StoreWriter(store, SETTINGS) as b:
        a.add(*more_hands[0])
        b.add(*more_hands[1])
        b.add(*more_hands[2])
        a.commit()
        first = (store / "part-000001.parquet").read_bytes()
        with pytest.raises(StoreError, match="part-000001.parquet was added by another run during this one; nothing "
                                             "written"):
            b.commit()
    assert _listing(store) == [*before, "part-000001.parquet"]  # b's hidden parts gone, a's part as a wrote it
    assert (store / "part-000001.parquet").read_bytes() == first
    assert set(open_store(store).hands) == {*open_store(store).part_hands[0], more_hands[0][1][0]}

    target = tmp_path / "new"
    with StoreWriter(target, SETTINGS) as a, StoreWriter(target, SETTINGS) as b:
        a.add(*more_hands[0])
        b.add(*more_hands[1])
        a.commit()
        with pytest.raises(StoreError, match="created by someone else during this run; nothing written"):
            b.commit()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith((".new", "new"))] == ["new"]
    assert list(open_store(target).hands) == more_hands[0][1]


#: Runs `analyzer decisions` (argv[1:]) in a process that sends itself SIGTERM once the new store's first part is
#: written: the real handler (cli.Terminated) then unwinds the run.
_SELF_TERM = """
import os, signal, sys
import analyzer.analysis.store as store
real = store._write_part
def write_part(*args, **kw):
    real(*args, **kw)
    os.kill(os.getpid(), signal.SIGTERM)
store._write_part = write_part
from analyzer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_while_a_new_store_is_written_leaves_no_hidden_folder(logs: tuple[Path, Path], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A real SIGTERM once a part is written (exit 143); and one landing as the hidden folder is made, before the
    writer's block is entered (cli.Terminated, a KeyboardInterrupt, raised there): the folder is known to the
    clean-up before it exists."""
    from analyzer.running.stops import Terminated

    target = tmp_path / "out" / "new"
    r = subprocess.run([sys.executable, "-c", _SELF_TERM, "decisions", str(logs[0]), "-o", str(target), *OPTS,
                        "--batch-hands", "2"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 128 + signal.SIGTERM, (r.returncode, r.stderr)
    assert _listing(tmp_path / "out") == [], r.stderr

    real = os.mkdir

    def mkdir(path: Any, mode: int = 0o777, **kw: Any) -> None:
        real(path, mode, **kw)
        if Path(path).name.startswith(f".{target.name}."):
            raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(os, "mkdir", mkdir)
    r = run_cli("decisions", str(logs[0]), "-o", str(target), *OPTS)
    clean_exit(r, 128 + signal.SIGTERM)
    assert _listing(tmp_path / "out") == []
