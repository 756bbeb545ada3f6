"""The nightly look on Dask (``on_dask.look_on_dask``): each new day's parts read and its passes run on the
workers, the client merging and writing; the same ledger and verdicts as the one-process look."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_synth import as_decision_rows, synthetic_room
from conftest import QUIET_PORT

from analyzer.analysis.execute import Settings
from analyzer.analysis.store import StoreWriter, open_store
from analyzer.audit import ledger

distributed = pytest.importorskip("distributed")

PAIR = ("p00", "p01")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  scheduler_kwargs=QUIET_PORT, silence_logs=logging.ERROR) as cl:
        yield cl.scheduler_address


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three days of a room of 20 players (one colluding pair), each added in parts of 60 hands."""
    rows = as_decision_rows(synthetic_room(players=20, hands=600, colluders=(PAIR,), favour=2.0, seed=13))
    ids = list(dict.fromkeys(rows["hand_id"]))
    path = tmp_path_factory.mktemp("ledger") / "store"
    for day in np.array_split(np.arange(len(ids)), 3):
        day_ids = [ids[i] for i in day]
        with StoreWriter(path, Settings.of(8, 1, 0)) as w:
            for i in range(0, len(day_ids), 60):
                some = day_ids[i:i + 60]
                w.add(rows[rows["hand_id"].isin(some)], some, [f"fp-{h}" for h in some])
            w.commit()
    return path


def test_the_nightly_look_on_dask_equals_the_one_process_look(cluster: str, store: Path, tmp_path: Path) -> None:
    from analyzer.audit.on_dask import KEY_PREFIX, look_on_dask
    from analyzer.running.dask import DaskConnection

    here, there = tmp_path / "here", tmp_path / "there"
    shutil.copytree(store, here)
    shutil.copytree(store, there)
    one = ledger.look(open_store(here))
    connection = DaskConnection(cluster, 2)
    try:
        with distributed.get_task_stream(connection.client) as ts:
            on = look_on_dask(open_store(there), connection)
    finally:
        connection.close()
    kinds = Counter(str(t["key"])[len(KEY_PREFIX) + 1:].rsplit("-", 2)[0] for t in ts.data
                    if str(t["key"]).startswith(KEY_PREFIX))
    parts = len(open_store(store).parts)
    assert kinds["read"] == parts and kinds["together"] == parts  # every part read on a worker, none here
    assert kinds["pairs"] >= 2 * parts  # both pass E's, a task a chunk
    a, b = ledger.open_ledger(open_store(here)), ledger.open_ledger(open_store(there))
    assert [d.hands for d in a.days] == [d.hands for d in b.days] and len(a.days) == 3
    for da, db in zip(a.contributions(a.days), b.contributions(b.days)):
        pd.testing.assert_frame_equal(da, db, check_exact=False, rtol=1e-9, atol=1e-9)
    pd.testing.assert_frame_equal(a.state.pairs, b.state.pairs, check_exact=False, rtol=1e-9, atol=1e-9)
    pd.testing.assert_frame_equal(a.state.players, b.state.players, check_exact=False, rtol=1e-9)
    assert (one.pairs["verdict"] == on.pairs["verdict"]).all()
    assert one.pairs.loc[one.pairs["verdict"] == "flagged", ["a", "b"]].values.tolist() == [list(PAIR)]
    c = ledger.SCORES[0]
    assert (a.contributions(a.days[:1])[0][f"{c}_bq"].abs() > 0).any()


def test_the_nightly_command_with_dask_runs_the_days_on_the_workers(cluster: str, store: Path, tmp_path: Path) -> None:
    """``analyzer audit --decisions STORE --dask ADDRESS`` is the nightly look on the workers: the same verdicts and
    e-values as the command in one process (exit 1: the colluding pair is flagged), and the store's ledger written."""
    import orjson
    from conftest import run_cli

    here, there = tmp_path / "here", tmp_path / "there"
    shutil.copytree(store, here)
    shutil.copytree(store, there)
    from analyzer.audit.on_dask import KEY_PREFIX

    def reads(ts: object) -> int:  # the scheduler's task stream sees every client's tasks
        return sum(str(t["key"]).startswith(f"{KEY_PREFIX}-read") for t in ts.data)  # type: ignore[attr-defined]

    with distributed.Client(cluster) as watch:
        with distributed.get_task_stream(watch) as ts:
            one = run_cli("audit", "--decisions", str(here), "--out", str(tmp_path / "one"))
        assert reads(ts) == 0
        with distributed.get_task_stream(watch) as ts:
            on = run_cli("audit", "--decisions", str(there), "--out", str(tmp_path / "on"), "--dask", cluster)
        assert reads(ts) == len(open_store(store).parts)  # every part read on a worker
    assert one.exit_code == 1 and on.exit_code == 1, (one.output, on.output)
    a, b = (orjson.loads((tmp_path / d / "audit.json").read_bytes()) for d in ("one", "on"))
    assert [(p["players"], p["verdict"]) for p in a["pairs"]] == [(p["players"], p["verdict"]) for p in b["pairs"]]
    assert a["flagged"] == b["flagged"] == 1
    ea, eb = (pd.read_csv(tmp_path / d / "pairs.csv") for d in ("one", "on"))
    e = [c for c in ea.columns if c.startswith("log10_e")]
    assert e and np.allclose(ea[e].to_numpy(float), eb[e].to_numpy(float), rtol=1e-7, atol=1e-9)
    assert len(ledger.open_ledger(open_store(there)).days) == 3
