"""The audit's pair signals as a reduction on Dask (``audit.on_dask``): chunks built and kept on the workers, every
pass run there as tasks, and the same pairs, scores, verdicts and players as the single-process run."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from conftest import QUIET_PORT, run_cli

from analyzer.analysis.execute import Execution, dask_connection
from analyzer.analysis.store import open_store
from analyzer.audit.core import run_audit
from analyzer.audit.stream import hand_chunks, pair_signals
from analyzer.logs import write_records

distributed = pytest.importorskip("distributed")

KW = {"samples": 2, "dd_samples": 1, "seed": 3}
PASSES = ("chunk", "recode", "means", "spread", "top", "habits", "pairs", "edges")


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, list[str]]]:
    """A LocalCluster of two single-threaded worker processes: its address and its workers."""
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_kwargs=QUIET_PORT,
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
    from analyzer.audit.on_dask import FANIN, LOCAL_PARTS, DaskSignals

    df = synthetic_room(players=30, hands=100, colluders=(("p00", "p01"),), friends=(("p02", "p03"),),
                        habits={"p05": 1.5}, decisions=6, favour=2.0, share=0.4, seed=11)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    seen = [len(np.unique(c[["p0", "p1", "p2", "p3"]].to_numpy().astype(str))) for c in hand_chunks(df, 48)]
    assert min(seen) < 30  # a chunk's own player codes are not the room's: the recoding matters
    want = pair_signals(df, seating, chunk_hands=48)
    execution = dask_connection(Execution(dask=cluster[0]))
    assert execution.connection is not None
    try:
        with DaskSignals(execution.connection, chunk_hands=48) as acc:
            for part in hand_chunks(df, 101):  # fed in pieces of another size: regrouped into chunks of 48
                acc.feed(part)
            got = acc.result(seating)
            assert len(acc.chunks) == 15
            names = Counter(n for n, _ in acc.tasks)
            # 15 -> 2 on the workers (a group of 8 and one of 7), -> 1 here (at most LOCAL_PARTS results are merged on
            # the client, in the tree's groups), each of the two fits
            assert LOCAL_PARTS < 15 <= FANIN * LOCAL_PARTS
            assert names["chunk"] == 15 and names["means-merge"] == 2 * 2
            assert names["means"] == 2 * 15  # fitted twice
    finally:
        execution.connection.close()
    a = want.sort_values(["a", "b"], ignore_index=True)
    b = got.sort_values(["a", "b"], ignore_index=True)
    assert list(a.columns) == list(b.columns) and a[["a", "b"]].equals(b[["a", "b"]])
    for c in a.columns[2:]:
        if c.endswith("_extreme"):  # burst's hands (JSON text), named by their ids on the workers as here
            assert a[c].tolist() == b[c].tolist(), c
            continue
        x, y = a[c].to_numpy(np.float64), b[c].to_numpy(np.float64)
        assert np.allclose(x, y, rtol=1e-7, atol=1e-9, equal_nan=True), c
    assert a["marginal_ab_z"].max() > 4


def test_passes_over_chunk_files_run_a_task_a_group_of_chunks(cluster: tuple[str, list[str]], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks written into a folder the workers share (handles here, as in a slim audit on a LocalCluster): each pass
    is one task a group of FANIN adjacent chunks, with no task a chunk and no first level of merges, and the chunks are
    recoded here (no task); the pair table is the one of a task a chunk to the last bit (the same groups, merged in the
    same order)."""
    from analyzer.audit.on_dask import FANIN, LOCAL_PARTS, DaskSignals
    from analyzer.audit.stream import ChunkFile

    df = synthetic_room(players=30, hands=100, colluders=(("p00", "p01"),), friends=(("p02", "p03"),),
                        habits={"p05": 1.5}, decisions=6, favour=2.0, share=0.4, seed=11)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]

    def table(grouped: bool) -> tuple[pd.DataFrame, Counter[str]]:
        execution = dask_connection(Execution(dask=cluster[0]))
        assert execution.connection is not None
        try:
            with DaskSignals(execution.connection, chunk_hands=48) as acc:
                folder = tmp_path / f"spill-{grouped}"
                folder.mkdir()
                acc._spill = (str(folder), ())  # as write_spill sets it when every worker sees the folder
                if not grouped:
                    monkeypatch.setattr(acc, "_grouped", lambda: False)
                for part in hand_chunks(df, 101):
                    acc.feed(part)
                got = acc.result(seating)
                assert len(acc.chunks) == 15 and all(isinstance(c, ChunkFile) for c in acc.chunks)
                return got, Counter(n for n, _ in acc.tasks)
        finally:
            execution.connection.close()

    got, names = table(True)
    want, per_chunk = table(False)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["marginal_ab_z"].max() > 4  # the strong pair: the baselines fitted twice
    groups = -(-15 // FANIN)
    assert LOCAL_PARTS < 15 and groups <= LOCAL_PARTS
    for name in ("means", "spread", "top", "habits"):
        assert names[name] == 2 * groups and names[f"{name}-merge"] == 0, name
        assert per_chunk[name] == 2 * 15 and per_chunk[f"{name}-merge"] == 2 * groups, name
    assert names["pairs-of"] == names["regrets"] == groups and per_chunk["pairs-of"] == 15
    assert names["recode"] == per_chunk["recode"] == 0 and names["chunk"] == 15
    # pass E of the last fit: a task a group too, each group's burst pieces kept on its worker (a task picks them out)
    assert names["burst-piece"] == names["pairs-sums"] == groups and per_chunk["burst-piece"] == 15
    assert names["pairs"] == 2 * groups and per_chunk["pairs"] == 2 * 15


def test_the_burst_statistic_reads_the_pieces_on_the_workers_as_the_room_here(cluster: tuple[str, list[str]]) -> None:
    """Pass E's per-hand burst pieces stay on the workers; the burst statistic is read there in parts of whole actors,
    its habit spread merged from the parts' terms: the frame ``burst._burst`` gives of the room's links gathered here,
    bit for bit, in the room's order (a strong pair, so that actors stand out and are read again)."""
    from analyzer.audit.on_dask import DaskSignals
    from analyzer.audit.stream import StreamedSignals

    df = synthetic_room(players=24, hands=120, colluders=(("p00", "p01"),), habits={"p05": 1.5}, decisions=6,
                        favour=2.0, share=0.4, seed=5)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    compared: list[pd.DataFrame] = []

    class Both(DaskSignals):
        def _start_burst(self, st: Any) -> Any:
            assert st.burst == [] and self._pieces is not None  # the pieces did not come here
            here = StreamedSignals._start_burst(self, dataclasses.replace(st, burst=list(self.client.gather(self._pieces))))
            there = super()._start_burst(st)

            def read() -> pd.DataFrame:
                want, got = here(), there()
                pd.testing.assert_frame_equal(got, want, check_exact=True)
                compared.append(got)
                return got
            return read

    execution = dask_connection(Execution(dask=cluster[0]))
    assert execution.connection is not None
    try:
        with Both(execution.connection, chunk_hands=48) as acc:
            for part in hand_chunks(df, 100):
                acc.feed(part)
            acc.result(seating)
            names = Counter(n for n, _ in acc.tasks)
    finally:
        execution.connection.close()
    assert len(compared) == 1 and len(compared[0]) > 100
    assert compared[0]["logp"].min() < -5  # the strong pair stands out: actors were read a second time
    parts = names["burst-links"]
    assert parts > 1 and names["burst-look"] == parts and names["burst"] == parts and names["burst-habits"] == 1
    assert names["burst-piece"] == names["chunk"] > 8  # one piece a chunk (made by pass E with the per-hand numbers)
    assert names["pairs-merge"] >= 2 * 2  # chunks merged on the workers, then here, each fit


def test_the_client_does_not_keep_the_hands_it_sent(room: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the command's own LocalCluster (its scheduler in this process), the batches of hands sent to the workers are
    not kept once analysed: distributed's logs of recent messages are short (they held every batch's lines, on the
    client's stream and the scheduler's), and the chunks' handles and the merged think sums come back as values, so
    the scheduler forgets each batch's analysis task. Counted as the pair table is calibrated (every chunk's handle
    waited for by then, whatever the load): only a think-sum group's batches at most are held, whatever the number
    of batches; the audit is the single process's."""
    import gc

    from analyzer.analysis.execute import HandBatch
    from analyzer.audit import core
    from analyzer.audit.on_dask import FANIN

    alive: list[int] = []
    calibrate = core.calibrate
    # batches alive before this run are not its own: another test's in this process (e.g. in the log of recent
    # messages of the module's LocalCluster, whose scheduler runs here with distributed's default length) are held
    # here, so they are not counted (and cannot give their address to one of this run's)
    before: list[HandBatch] = []

    def counted(*a: Any, **k: Any) -> Any:
        gc.collect()
        old = {id(o) for o in before}
        alive.append(sum(isinstance(o, HandBatch) and id(o) not in old for o in gc.get_objects()))
        return calibrate(*a, **k)

    monkeypatch.setattr(core, "calibrate", counted)
    single = run_audit([str(room)], **KW).result
    alive.clear()
    gc.collect()
    before.extend(o for o in gc.get_objects() if isinstance(o, HandBatch))
    with run_audit([str(room)], execution=Execution(jobs=2, dask="local", batch_hands=2), slim=True, **KW) as got:
        _same(got.result, single)
    batches = 40 // 2
    # none were held in the runs tried, idle or with the cores busy; all 20 before the fix
    assert batches > 2 * FANIN and len(alive) == 1 and alive[0] <= FANIN < batches, alive


def _store_of_first_hands(room: Path, tmp_path: Path) -> tuple[Path, Any, Any]:
    """A decision store of the room's first 17 hands, it opened, and the single process's audit of the whole room."""
    lines = room.read_text().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(lines[:17]))
    store = tmp_path / "store"
    res = run_cli("decisions", str(first), "--out", str(store), "--samples", "2", "--dd-samples", "1",
                                   "--seed", "3", "--batch-hands", "5")
    assert res.exit_code == 0, res.output
    st = open_store(store)
    single = run_audit([str(room)], settings=st.settings).result
    return store, st, single


def test_a_store_and_new_hands_on_the_cluster_give_the_single_process_audit(room: Path, tmp_path: Path,
                                                                          cluster: tuple[str, list[str]]) -> None:
    """The store's rows are chunked on a worker, the new hands' next to their analysis: the same audit."""
    store, st, single = _store_of_first_hands(room, tmp_path)
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
    from analyzer.running.dask import FOLLOWER

    got = list(Execution(jobs=1).map(lambda n: pd.DataFrame({"x": [n]}), range(2)))
    assert all(FOLLOWER not in f.attrs for f in got)


def _slim(paths: list[str], address: str, **kw: object) -> tuple[dict, list[dict], set[str]]:
    """A slim audit (the command's: the workers write the players' spill) on the cluster: its result, the tasks that
    ran, and the names of the spill's files (while it is open)."""
    out: dict = {}
    files: set[str] = set()
    from analyzer.audit.on_dask import DaskSignals

    close = DaskSignals.close

    def closing(self: DaskSignals) -> None:  # the chunks' files as the pair table is done, and none left after
        folder = Path(self._spill[0]) if self._spill is not None else None
        if folder is not None:
            files.update(str(f) for f in folder.iterdir())
        close(self)
        if folder is not None:
            files.update(f"left after close: {f}" for f in folder.glob("chunk-*"))

    def run() -> None:
        with run_audit(paths, execution=Execution(jobs=2, dask=address, batch_hands=7), slim=True,
                       **kw) as a:  # type: ignore[arg-type]
            assert a._spill is not None and a._spill.connection is not None  # the workers share the spill
            files.update(str(e[0]) for es in a._spill.players.files.values() for e in es)
            out.update(a.result)

    DaskSignals.close = closing  # type: ignore[method-assign]
    try:
        ran = _tasks(address, run)
    finally:
        DaskSignals.close = close  # type: ignore[method-assign]
    return out, ran, files


def test_the_slim_audit_writes_the_spill_and_the_player_table_on_the_workers(room: Path,
                                                                              cluster: tuple[str, list[str]],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's audit on a cluster: each batch's rows written to the spill by its worker (they never come
    back), its think-time sums made there, the player table (a group of players a worker here: groups of several
    players), the evidence and the shown rows read there; the same
    audit as the single process."""
    address, workers = cluster
    single = run_audit([str(room)], **KW).result
    monkeypatch.setattr("analyzer.running.dask.GROUPS_PER_WORKER", 1)
    monkeypatch.setattr("analyzer.audit.core.PLAYER_GROUPS_PER_WORKER", 1)
    out, ran, files = _slim([str(room)], address, **KW)
    _same(out, single)
    assert out["problems"] == single["problems"] == []
    assert [e["evidence"] for e in out["pairs"]] == [e["evidence"] for e in single["pairs"]]
    batches = -(-40 // 7)
    keys = _passes(ran)
    # the batches' think-time sums: at most FANIN of them are merged here, in one round trip; the chunks' names come
    # back with their files' handles (no task)
    assert keys["spill"] == batches and keys["think"] == batches and keys["think-merge"] == 0 and keys["names"] == 0
    # one rows file a batch, written by the workers
    assert len({f for f in files if "/batch-" in f and f.endswith(".rows")}) == batches
    # and its chunk of the pair signals, in a file beside them, not in the workers' memory
    assert len({f for f in files if f.endswith(".chunk")}) == batches
    assert not [f for f in files if f.startswith("left after close")]  # deleted once the pair table is made
    names = [str(r["key"]) for r in ran]
    # a task a group of players, one group a worker here (each player in one group: the table is the same)
    assert 1 < len(workers) < len(single["players"])
    assert sum(n.startswith("bieqi-players-") for n in names) == len(workers)
    assert sum(n.startswith("_evidence_task") for n in names) == sum(bool(p.get("case")) for p in single["pairs"])
    assert {r["worker"] for r in ran} <= set(workers)


def test_the_player_table_runs_while_the_pair_table_is_made(room: Path, cluster: tuple[str, list[str]]) -> None:
    """The player tasks are submitted once the rows are spilled, below the passes' priority: the workers start them
    before the pair signals' passes are over (they do not need the pair table), and the audit is the same."""
    single = run_audit([str(room)], **KW).result
    out, ran, _ = _slim([str(room)], cluster[0], **KW)
    _same(out, single)

    def computed(r: dict) -> tuple[float, float]:
        spans = [(s["start"], s["stop"]) for s in r["startstops"] if s["action"] == "compute"]
        return min(a for a, _ in spans), max(b for _, b in spans)

    players = [computed(r) for r in ran if str(r["key"]).startswith("bieqi-players-")]
    passes = [computed(r) for r in ran if str(r["key"]).startswith("bieqi-signals-pairs-")]
    assert players and passes
    assert min(a for a, _ in players) < max(b for _, b in passes)  # overlapped, not one after the other


def test_a_corrupted_line_is_reported_as_by_the_single_process(room: Path, tmp_path: Path,
                                                               cluster: tuple[str, list[str]]) -> None:
    """A broken hand in the middle of one batch: the same problem (file, line, hand, action) and the same audit of
    the other hands."""
    import json

    lines = room.read_text().splitlines(keepends=True)
    bad = tmp_path / "room.jsonl"
    rec = json.loads(lines[9])
    rec["actions"][5] = {**rec["actions"][5], "kind": "play", "card": rec["actions"][0]["card"]}  # played already
    lines[9] = json.dumps(rec, separators=(",", ":")) + "\n"
    bad.write_text("".join(lines))
    single = run_audit([str(bad)], **KW).result
    out, _, _ = _slim([str(bad)], cluster[0], **KW)
    assert single["invalid_hands"] == out["invalid_hands"] == 1 and single["valid_hands"] == 39
    assert out["problems"] == single["problems"] and single["problems"][0]["line"] == 10
    assert single["problems"][0]["file"] == str(bad) and single["problems"][0]["hand_id"]
    assert single["problems"][0]["action"] is not None
    _same(out, single)


def test_a_store_and_new_hands_on_the_shared_spill(room: Path, tmp_path: Path, cluster: tuple[str, list[str]]) -> None:
    """The store's rows spilled here, the new hands' by the workers: the same slim audit as the single process."""
    store, st, single = _store_of_first_hands(room, tmp_path)
    out, ran, files = _slim([str(room)], cluster[0], settings=st.settings, store=open_store(store))
    _same(out, single)
    assert _passes(ran)["spill"] == -(-(40 - 17) // 7)
    assert any("/player-" in f for f in files) and any("/batch-" in f for f in files)


def test_think_sums_merged_in_a_tree_equal_one_accumulator() -> None:
    """Per-batch think-time sums merged (in a tree, co-players appearing in any batch) equal the sums of one
    accumulator fed every row: per actor, the same co-players in the same order, and the same normal equations."""
    import functools

    from analyzer.audit.think import ThinkStats

    df = synthetic_room(players=12, hands=120, decisions=5, seed=4)
    rng = np.random.default_rng(0)
    df["think_ms"] = rng.lognormal(7, 0.5, len(df)).round()
    df.loc[rng.random(len(df)) < 0.05, "think_ms"] = np.nan
    one = ThinkStats()
    one.add_decisions(df)
    parts = []
    for chunk in hand_chunks(df, 7):
        t = ThinkStats()
        t.add_decisions(chunk)
        parts.append(t)
    while len(parts) > 1:
        parts = [functools.reduce(ThinkStats.merge, parts[i:i + 3]) for i in range(0, len(parts), 3)]
    got = parts[0]
    assert list(got.others) == list(one.others) and len(one.others) == 12
    for actor, idx in one.others.items():
        assert got.others[actor] == idx
        keep = [*range(len(idx)), len(one.xtx[actor]) - 1]
        assert np.allclose(got.xtx[actor], one.xtx[actor][np.ix_(keep, keep)])
        assert np.allclose(got.xta[actor], one.xta[actor][keep]) and np.allclose(got.xtb[actor], one.xtb[actor][keep])
        assert np.allclose(got.sums[actor], one.sums[actor]) and np.allclose(got.pace[actor], one.pace[actor])
    a, b = one.result(), got.result()
    assert a[["actor", "other"]].equals(b[["actor", "other"]])
    assert np.allclose(a[["z", "hands_with", "slower_ms_ratio"]], b[["z", "hands_with", "slower_ms_ratio"]], equal_nan=True)


def test_workers_that_do_not_see_the_spill_send_the_rows_back(room: Path, cluster: tuple[str, list[str]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers on machines without the client's folder (here: they look for the client's probe file in vain):
    the rows come back and the client spills them, the player table made here; the same audit."""
    from analyzer.audit import on_dask

    single = run_audit([str(room)], **KW).result
    monkeypatch.setattr(on_dask, "PROBE", ".elsewhere")  # the client writes this; the workers look for ".shared"
    ran: list[dict] = []
    out: dict = {}

    def run() -> None:
        with run_audit([str(room)], execution=Execution(jobs=2, dask=cluster[0], batch_hands=7), slim=True,
                       **KW) as a:
            assert a._spill is not None and a._spill.connection is None and a._spill.players.connection is None
            assert not any("/batch-" in str(e[0]) for es in a._spill.players.files.values() for e in es)
            out.update(a.result)

    ran = _tasks(cluster[0], run)
    _same(out, single)
    keys = _passes(ran)
    assert keys["spill"] == 0 and keys["think"] == -(-40 // 7)  # the think sums are still made on the workers
    assert not any(str(r["key"]).startswith("bieqi-players-") for r in ran)
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


class _Now:
    """A stand-in for a DaskSignals whose tasks run at once: a 'future' is its value."""

    def __init__(self) -> None:
        self.submitted: list[str] = []
        self.client = self

    def _submit(self, name: str, fn: Any, *args: Any) -> Any:
        self.submitted.append(name)
        return fn(*args)

    def gather(self, parts: list[Any]) -> list[Any]:
        return list(parts)


def _whole_tree(parts: list[str], fanin: int) -> str:
    """The grouping of ``DaskSignals._tree`` made of every leaf at once (the shape the sums' rounding follows)."""
    while len(parts) > 1:
        groups = [parts[i:i + fanin] for i in range(0, len(parts), fanin)]
        parts = ["(" + " ".join(g) + ")" if len(g) > 1 else g[0] for g in groups]
    return parts[0]


@pytest.mark.parametrize("leaves", [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 72, 100, 512, 513, 600])
def test_a_tree_grown_leaf_by_leaf_groups_as_the_whole_tree(leaves: int) -> None:
    """The think-time sums' tree, grown as the batches come and finished before the passes (its last level merged
    on the client): the same groups in the same order as the tree of every leaf at once, so the same floats."""
    from analyzer.audit.on_dask import FANIN, _Tree

    owner = _Now()
    tree = _Tree(owner, "t", lambda *xs: "(" + " ".join(xs) + ")")  # type: ignore[arg-type]
    names = [f"x{i}" for i in range(leaves)]
    for n in names[:-1]:
        tree.add(n)
    grown = len(owner.submitted)  # merged on the workers as the leaves came
    tree.add(names[-1])
    assert tree.finish() == _whole_tree(names, FANIN)
    # every full group (of leaves, of merged groups, ...) was merged on the workers before the last leaf came
    assert grown == sum((leaves - 1) // FANIN ** k for k in range(1, 6))
    assert _Tree(owner, "t", max).finish() is None  # type: ignore[arg-type]


def test_the_last_levels_of_a_tree_are_merged_on_the_client() -> None:
    """``DaskSignals._tree`` over LOCAL_PARTS or fewer results merges them here (no task, the same groups), over more
    one level a task until they are that few."""
    from analyzer.audit.on_dask import FANIN, LOCAL_PARTS, DaskSignals

    owner = _Now()
    mapped: list[int] = []

    def level(name: str, fn: Any, merges: list[Any], groups: list[Any]) -> list[Any]:
        mapped.append(len(groups))
        return [fn(m, g) for m, g in zip(merges, groups)]

    owner._map = level  # type: ignore[attr-defined]
    join = lambda *xs: "(" + " ".join(xs) + ")"  # noqa: E731
    for n in (1, 3, FANIN, FANIN + 1, 3 * FANIN, LOCAL_PARTS, LOCAL_PARTS + 1, FANIN * LOCAL_PARTS + 5):
        mapped.clear()
        names = [f"x{i}" for i in range(n)]
        assert DaskSignals._tree(owner, "t", names, join) == _whole_tree(names, FANIN)  # type: ignore[arg-type]
        assert bool(mapped) == (n > LOCAL_PARTS)
