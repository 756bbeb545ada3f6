"""The audit's pair signals as a reduction on Dask (``audit.on_dask``): chunks built and kept on the workers, every
pass run there as tasks, and the same pairs, scores, verdicts and players as the single-process run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from click.testing import CliRunner

from analyzer.analysis.execute import Execution, dask_session
from analyzer.analysis.store import open_store
from analyzer.audit.core import run_audit
from analyzer.audit.stream import hand_chunks, streamed_pair_signals
from analyzer.cli import cli
from analyzer.logs import write_records

distributed = pytest.importorskip("distributed")

KW = {"samples": 2, "dd_samples": 1, "seed": 3}
PASSES = ("chunk", "recode", "means", "spread", "top", "habits", "pairs", "edges")


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, list[str]]]:
    """A LocalCluster of two single-threaded worker processes: its address and its workers."""
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cl:
        yield cl.scheduler_address, list(cl.scheduler_info["workers"])


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from analyzer.simulate.room import simulate

    path = tmp_path_factory.mktemp("room") / "room.jsonl"
    write_records(path, simulate(hands=40, players=6, seed=8, colluders=1, style="share").records)
    return path


def _tasks(address: str, run: object) -> list[dict]:
    """The scheduler's record (key, worker) of every task that ran while ``run()`` ran."""
    with distributed.Client(address) as client, distributed.get_task_stream(client) as ts:
        run()  # type: ignore[operator]
    return list(ts.data)


def _passes(ran: list[dict]) -> Counter[str]:
    """How many tasks of each of ``audit.on_dask``'s kinds ran (its keys: ``bieqi-signals-<kind>-<run>-<n>``)."""
    from analyzer.audit.on_dask import KEY_PREFIX

    return Counter(str(r["key"])[len(KEY_PREFIX) + 1:].rsplit("-", 2)[0] for r in ran
                   if str(r["key"]).startswith(KEY_PREFIX + "-"))


def _same(a: dict, b: dict) -> None:
    assert a["pairs"] == b["pairs"]
    assert a["verdicts"] == b["verdicts"]
    assert a["players"] == b["players"]
    assert a["decisions"] == b["decisions"]


def test_the_audit_on_a_cluster_runs_every_pass_on_the_workers(room: Path, cluster: tuple[str, list[str]]) -> None:
    address, workers = cluster
    single = run_audit([str(room)], **KW).result
    out: dict = {}
    ran = _tasks(address, lambda: out.update(run_audit([str(room)], execution=Execution(jobs=2, dask=address,
                                                                                          batch_hands=7), **KW).result))
    _same(out, single)
    assert single["pairs"] and single["decisions"] > 1000 and sum(p["flagged"] for p in single["pairs"])
    keys = _passes(ran)
    chunks = -(-40 // 7)
    assert keys["chunk"] == chunks and keys["recode"] == chunks
    for name in PASSES:
        assert keys[name] >= 1, name
    # each pass ran once per chunk per fit: the strong pair makes the baselines be fitted twice here
    assert keys["means"] in (chunks, 2 * chunks) and keys["pairs"] == keys["means"]
    assert {r["worker"] for r in ran} <= set(workers)
    assert sum(str(r["key"]).startswith("analyse_batch") for r in ran) == chunks


def test_the_pair_table_on_the_workers_equals_the_streamed_one(cluster: tuple[str, list[str]]) -> None:
    """Rows the workers have not seen (a store's) are chunked on a worker: the pair table over 15 chunks (a tree of
    two levels) that each see some of the 30 players, a strong pair (the second fit), seat habits: the
    single-process table to float rounding."""
    from analyzer.audit.on_dask import DaskSignals

    df = synthetic_room(players=30, hands=100, colluders=(("p00", "p01"),), friends=(("p02", "p03"),),
                        habits={"p05": 1.5}, decisions=6, favour=2.0, share=0.4, seed=11)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    seen = [len(np.unique(c[["p0", "p1", "p2", "p3"]].to_numpy().astype(str))) for c in hand_chunks(df, 48)]
    assert min(seen) < 30  # a chunk's own player codes are not the room's: the recoding matters
    want = streamed_pair_signals(df, seating, chunk_hands=48)
    execution = dask_session(Execution(dask=cluster[0]))
    assert execution.session is not None
    try:
        with DaskSignals(execution.session, chunk_hands=48) as acc:
            for part in hand_chunks(df, 101):  # fed in pieces of another size: regrouped into chunks of 48
                acc.feed(part)
            got = acc.result(seating)
            assert len(acc.chunks) == 15
            names = Counter(n for n, _ in acc.tasks)
            assert names["chunk"] == 15 and names["means-merge"] >= 2 * 3  # 15 -> 2 -> 1, per fit
            assert names["means"] == 2 * 15  # fitted twice
    finally:
        execution.session.close()
    a = want.sort_values(["a", "b"], ignore_index=True)
    b = got.sort_values(["a", "b"], ignore_index=True)
    assert list(a.columns) == list(b.columns) and a[["a", "b"]].equals(b[["a", "b"]])
    for c in a.columns[2:]:
        x, y = a[c].to_numpy(np.float64), b[c].to_numpy(np.float64)
        assert np.allclose(x, y, rtol=1e-7, atol=1e-9, equal_nan=True), c
    assert a["marginal_ab_z"].max() > 4


def test_a_store_and_new_hands_on_the_cluster_give_the_single_process_audit(room: Path, tmp_path: Path,
                                                                          cluster: tuple[str, list[str]]) -> None:
    """The store's rows are chunked on a worker, the new hands' next to their analysis: the same audit."""
    lines = room.read_text().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(lines[:17]))
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["decisions", str(first), "--out", str(store), "--samples", "2", "--dd-samples", "1",
                                   "--seed", "3", "--batch-hands", "5"])
    assert res.exit_code == 0, res.output
    st = open_store(store)
    single = run_audit([str(room)], settings=st.settings).result
    ran = []
    out: dict = {}

    def run() -> None:
        out.update(run_audit([str(room)], settings=st.settings, store=open_store(store),
                             execution=Execution(jobs=2, dask=cluster[0], batch_hands=7)).result)

    ran = _tasks(cluster[0], run)
    _same(out, single)
    keys = _passes(ran)
    analysed = sum(str(r["key"]).startswith("analyse_batch") for r in ran)
    assert analysed == -(-(40 - 17) // 7)  # only the hands the store lacks
    assert keys["chunk"] == analysed + 1  # + the store's 17 hands, one chunk built from the rows sent


def test_frames_carry_no_follower_without_a_session() -> None:
    """The process pool and the single process do not mark their results (nothing to take)."""
    from analyzer.analysis.execute import FOLLOWER

    got = list(Execution(jobs=1).map(lambda n: pd.DataFrame({"x": [n]}), range(2)))
    assert all(FOLLOWER not in f.attrs for f in got)


def test_the_audit_with_burst_choice_weights_on_a_cluster_equals_the_single_process(room: Path,
                                                                                   cluster: tuple[str, list[str]],
                                                                                   monkeypatch: pytest.MonkeyPatch
                                                                                   ) -> None:
    """burst's choice weights on (the default: the workers import it so): the per-player choice model fitted from
    the chunks' summed grid log-likelihoods on the workers gives the single process's pairs, verdicts and players;
    and the weights are in it (the burst figures differ with them off)."""
    from analyzer.audit import burst

    assert burst.CHOICE_WEIGHTS
    single = run_audit([str(room)], **KW).result
    got = run_audit([str(room)], execution=Execution(jobs=2, dask=cluster[0], batch_hands=9), **KW).result
    _same(got, single)
    monkeypatch.setattr(burst, "CHOICE_WEIGHTS", False)
    plain = run_audit([str(room)], **KW).result

    def burst_z(res: dict) -> list[float]:
        return [float(p["signals"]["burst"][d]["z"]) for p in res["pairs"] for d in ("ab", "ba")
                if "burst" in p.get("signals", {}) and d in p["signals"]["burst"]]

    assert burst_z(single) and burst_z(single) != burst_z(plain)
