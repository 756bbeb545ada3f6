"""The audit report's one read of each player's rows (``report/room_pass.py``): the pieces join to the rows the page
read before, its faster tables give the figures of the plain pandas code, and on a Dask cluster whose workers share
the spill the pieces are made there (a task a player) and the page is byte for byte the in-process one."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import QUIET_PORT
from report_fixtures import EVIL_PLAYER, PLAYERS, AuditRun

from analyzer.analysis.execute import Execution
from analyzer.audit.core import run_audit
from analyzer.audit.rows import FrameRows
from analyzer.report.audit import write_audit_report
from analyzer.report.common import clean
from analyzer.report.hand import decision_entry, decisions_by_hand
from analyzer.report.pair import collusion_table, hands_with, measure
from analyzer.report.player import MIN_ROOM_DECISIONS, Room, _think_sample, largest
from analyzer.report.room_pass import KEY_PREFIX, Plan, codes_in, joined, read_players

KW = {"samples": 2, "dd_samples": 1, "seed": 3}


@pytest.fixture(scope="module")
def decisions(audit_run: AuditRun) -> pd.DataFrame:
    return audit_run.decisions


def _links_table(rows: pd.DataFrame, a: str, b: str, hands: int) -> list[list[dict | None]]:
    """The collusion table as a frame of links grouped by (actor, recipient, hand) (the page's code before)."""
    def roles(names: pd.Series) -> np.ndarray:
        return np.where(names == a, 0, np.where(names == b, 1, 2))

    parts = []
    actor = roles(rows["player"])
    col = measure(rows)
    for s in range(4):
        keep = rows["seat"].to_numpy() != s
        parts.append(pd.DataFrame({"hand": rows["hand_id"].to_numpy()[keep], "actor": actor[keep],
                                   "to": roles(rows[f"p{s}"])[keep],
                                   "delta": np.nan_to_num(rows[f"{col}{s}"].to_numpy(float))[keep]}))
    effects = pd.concat(parts, ignore_index=True)
    per_hand = effects.groupby(["actor", "to", "hand"])["delta"].sum()
    combos = {(0, 1): 1, (1, 0): 1, (0, 2): 2, (1, 2): 2, (2, 0): 2, (2, 1): 2, (2, 2): 2}
    cells: list[list[dict | None]] = [[None] * 3 for _ in range(3)]
    for (i, j), k in combos.items():
        d = effects.loc[(effects["actor"] == i) & (effects["to"] == j), "delta"].to_numpy(float)
        if not len(d):
            continue
        got = per_hand.loc[(i, j)].to_numpy(float) / k
        sums = np.zeros(max(hands, len(got)))
        sums[: len(got)] = got
        cells[i][j] = {"sum": float(d.sum()), "n": len(d), "mean": float(d.mean()),
                       "se": clean(float(d.std(ddof=1) / math.sqrt(len(d)))) if len(d) > 1 else None,
                       "per_hand": float(sums.mean()),
                       "se_per_hand": clean(float(sums.std(ddof=1) / math.sqrt(len(sums)))) if len(sums) > 1 else None}
    return cells


def test_the_collusion_table_is_the_links_frames(decisions: pd.DataFrame) -> None:
    names = sorted(decisions["player"].unique())
    for a, b in [(EVIL_PLAYER, "北风"), *zip(names, names[1:])]:
        rows = hands_with(decisions, a, b)
        hands = int(rows["hand_id"].nunique())
        # exactly: the same links added in the same order (the page's bytes must not move)
        assert collusion_table(rows, a, b, hands) == _links_table(rows, a, b, hands)
        # and with the names as categories (the audit page's top pairs' rows)
        coded = rows.astype({c: "category" for c in ("hand_id", "player", "p0", "p1", "p2", "p3")})
        assert collusion_table(hands_with(coded, a, b), a, b, hands) == _links_table(rows, a, b, hands)
    assert collusion_table(decisions.iloc[:0], "x", "y", 0) == [[None] * 3 for _ in range(3)]


def test_decisions_by_hand_reads_each_row_as_its_dict(decisions: pd.DataFrame) -> None:
    ids = list(decisions["hand_id"].unique()[:5])
    got = decisions_by_hand(decisions, ids)
    want: dict = {}
    for row in decisions[decisions["hand_id"].isin(ids)].to_dict("records"):
        want.setdefault(str(row["hand_id"]), {})[str(int(row["action"]))] = decision_entry(row)
    assert got == want and len(got) == 5
    broken = decisions.head(3).assign(chosen=["ZZ", "7S", "7S"])
    assert len(decisions_by_hand(broken)[str(broken["hand_id"].iloc[0])]) == 2  # the unreadable row left out


def test_the_percentile_is_the_share_of_peers_below(decisions: pd.DataFrame) -> None:
    room = Room(decisions)
    for player in [*PLAYERS, "nobody"]:
        for x in (0.0, 0.5, 1.0, float(room.by_player["mean"].median())):
            peers = room.by_player[(room.by_player["size"] >= MIN_ROOM_DECISIONS) & (room.by_player.index != player)]
            want = clean(float((peers["mean"] < x).mean())) if len(peers) else None
            assert room.percentile(player, x) == want


def test_largest_picks_the_rows_nlargest_picks() -> None:
    """The largest values first, ties in their order (-0.0 equal to 0.0), NaN rows last when fewer than n values are
    numbers; the values those of pandas' nlargest (whose order among ties is its own: pandas 3 changed it)."""
    rng = np.random.default_rng(5)
    for _ in range(2000):
        values = rng.choice([0.0, -0.0, 1.0, 2.5, 3.0, -1.0, np.nan], size=int(rng.integers(0, 30)))
        numbers = [i for i in range(len(values)) if not np.isnan(values[i])]
        want = sorted(numbers, key=lambda i: (-values[i], i)) + [i for i in range(len(values)) if np.isnan(values[i])]
        got = largest(values, 10)
        assert got.tolist() == want[:10], values
        k = min(10, len(numbers))
        assert np.array_equal(values[got[:k]], pd.DataFrame({"regret": values}).nlargest(k, "regret")["regret"]), values


def test_the_think_time_sample_is_pandas_sample() -> None:
    rng = np.random.default_rng(6)
    think = rng.integers(100, 9000, 500).astype(float)
    think[rng.random(500) < 0.1] = np.nan
    mine = pd.DataFrame({"think_ms": think, "difficulty": rng.random(500)})
    for points, seed in ((50, 0), (50, 3), (1000, 0)):
        pts = mine[["think_ms", "difficulty"]].dropna()
        if len(pts) > points:
            pts = pts.sample(points, random_state=seed)
        assert _think_sample(mine, points, seed) == {"difficulty": [float(x) for x in pts["difficulty"]],
                                                     "think_s": [float(x) for x in pts["think_ms"] / 1000]}
    assert _think_sample(mine.drop(columns="think_ms"), 50, 0) is None


def test_codes_in_finds_each_rows_value_whatever_the_columns_type() -> None:
    values = pd.Index(["b", "北风", "<img>"], dtype=object)
    rows = ["b", "x", "北风", "b", "<img>", "", "北风"]
    want = np.array([0, -1, 1, 0, 2, -1, 1])
    for column in (pd.Series(rows), pd.Series(np.array(rows, dtype=object), dtype=object),
                   pd.Series(rows, dtype="category")):
        assert np.array_equal(codes_in(column, values), want), column.dtype
    assert np.array_equal(codes_in(pd.Series([1, 2, 3]), pd.Index([2], dtype=object)), [-1, 0, -1])
    assert np.array_equal(codes_in(pd.Series(["b", None, "x"]), values), [0, -1, -1])


def test_the_pieces_join_to_the_rows_the_page_shows(decisions: pd.DataFrame) -> None:
    names = sorted(decisions["player"].unique())
    pairs = ((names[0], names[1]), (names[2], EVIL_PLAYER))
    hands = frozenset(decisions["hand_id"].unique()[::7])
    plan = Plan(players=frozenset(names[:3]), pairs=pairs, hands=hands, max_points=50)
    pieces = list(read_players(FrameRows(decisions), plan))
    assert [p.player for p in pieces] == list(decisions["player"].unique())
    assert sum(p.facts is not None for p in pieces) == 3
    # the rows of the hands where a pair sat together, and of the shown hands, in the rows' order
    together = joined([p.together for p in pieces])
    mask = np.zeros(len(decisions), bool)
    for a, b in pairs:
        mask |= decisions.index.isin(hands_with(decisions, a, b).index)
    assert 0 < mask.sum() < len(decisions)
    want = decisions[mask]
    assert list(together.index) == list(want.index)
    pd.testing.assert_frame_equal(together, want[together.columns])
    shown = joined([p.shown for p in pieces])
    assert list(shown.index) == list(np.flatnonzero(decisions["hand_id"].isin(hands)))
    # every row's regret once, at its place
    at = np.concatenate([p.at for p in pieces])
    assert sorted(at) == list(range(len(decisions)))
    assert np.array_equal(np.concatenate([p.regret for p in pieces])[np.argsort(at)], decisions["regret"].to_numpy())


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_kwargs=QUIET_PORT,
                                  silence_logs=logging.ERROR) as cl:
        yield cl.scheduler_address


@pytest.mark.slow
def test_the_report_on_a_cluster_is_the_in_process_one(sharing_room: Path, cluster: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's slim audit on a LocalCluster whose workers share the spill: the report's pieces are made on the
    workers, one task a group of players (one group a worker here: several players a task), and the page is byte for byte the one made from the same spill in this process."""
    import distributed

    monkeypatch.setattr("analyzer.running.dask.GROUPS_PER_WORKER", 1)
    with distributed.Client(cluster) as client, run_audit([str(sharing_room)], slim=True, **KW,  # type: ignore[arg-type]
                                                           execution=Execution(jobs=2, dask=cluster, batch_hands=7)) as a:
        assert a.rows is not None and a.places is not None
        spill = a.rows.spill
        assert spill.connection is not None  # the workers share the spill: its reads run there
        wanted = {str(e["hand_id"]) for p in a.result["pairs"] for e in p.get("evidence", [])}
        records = list(a.places.records(wanted))
        assert wanted and records
        (tmp_path / "dask").mkdir()
        (tmp_path / "here").mkdir()
        with distributed.get_task_stream(client) as ts:
            on_dask = write_audit_report(tmp_path / "dask", a.result, decisions=a.report_rows, records=records,
                                         players=a.players)
        ran = [str(r["key"]) for r in ts.data]
        connection, spill.connection = spill.connection, None  # the same spill read here, a player after another
        try:
            here = write_audit_report(tmp_path / "here", a.result, decisions=a.report_rows, records=records,
                                      players=a.players)
        finally:
            spill.connection = connection
        players = len(spill.files)
        workers = len(client.scheduler_info()["workers"])
    # a task a group of players (one group a worker here), every player's piece read once
    assert players > workers > 1 and sum(k.startswith(KEY_PREFIX + "-") for k in ran) == workers
    assert on_dask.read_bytes() == here.read_bytes()
    page = here.read_bytes()
    assert f"s-player-{players - 1}".encode() in page and b"s-hand-0" in page  # the sections, the evidence hands


def test_the_audit_hands_over_its_final_entries_before_it_reads_the_rows_shown(sharing_room: Path) -> None:
    """``run_audit(on_entries=...)`` is called once, with the pairs' entries (their evidence read) and the names of the
    players audit.json ends with, in its order, and the players' spill; read here (no Dask session), nothing is read
    ahead."""
    from analyzer.report.audit import _plan, read_ahead

    calls: list[tuple[dict, object]] = []
    got: list[object] = []

    def on_entries(entries: dict, spill: object) -> None:
        calls.append((entries, spill))
        got.append(read_ahead(entries, spill))  # type: ignore[arg-type]

    with run_audit([str(sharing_room)], slim=True, on_entries=on_entries, **KW) as a:  # type: ignore[arg-type]
        assert len(calls) == 1
        entries, spill = calls[0]
        assert entries["pairs"] == a.result["pairs"]
        assert entries["players"] == [{"player": p["player"]} for p in a.result["players"]]
        assert any(p.get("evidence") for p in entries["pairs"])  # the evidence is in
        assert a.rows is not None and spill is a.rows.spill
        assert got == [None]  # no workers: the page reads the spill itself
        assert _plan(entries) == _plan(a.result) and _plan(a.result).hands


@pytest.mark.slow
def test_the_pieces_read_ahead_are_the_pages(sharing_room: Path, cluster: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """On a cluster whose workers share the spill, the pieces started when the audit's entries are made are the ones
    the page gathers (no task submitted again) and the page is byte for byte the in-process one; a read ahead of
    another plan is cancelled and the pieces read anew."""
    import dataclasses

    import distributed

    from analyzer.report import room_pass
    from analyzer.report.audit import read_ahead

    ahead: list[room_pass.Reading | None] = []
    with distributed.Client(cluster), run_audit(
            [str(sharing_room)], slim=True, **KW,  # type: ignore[arg-type]
            on_entries=lambda entries, spill: ahead.append(read_ahead(entries, spill)),
            execution=Execution(jobs=2, dask=cluster, batch_hands=7)) as a:
        assert a.rows is not None and a.places is not None and a.rows.spill.connection is not None
        assert len(ahead) == 1 and ahead[0] is not None
        reading = ahead[0]
        assert len(reading.futures) == len(a.rows.spill.files) > 1
        wanted = {str(e["hand_id"]) for p in a.result["pairs"] for e in p.get("evidence", [])}
        records = list(a.places.records(wanted))
        submitted: list[int] = []
        real = room_pass._pieces_on
        monkeypatch.setattr(room_pass, "_pieces_on", lambda *args, **kw: submitted.append(1) or real(*args, **kw))
        pages = {}
        for name, given in (("ahead", reading), ("other", dataclasses.replace(
                reading, plan=dataclasses.replace(reading.plan, max_points=7), futures=list(reading.futures)))):
            (tmp_path / name).mkdir()
            pages[name] = write_audit_report(tmp_path / name, a.result, decisions=a.report_rows, records=records,
                                             players=a.players, ahead=given).read_bytes()
            assert len(submitted) == (name == "other")  # the other plan's pieces are not the page's: read anew
        spill = a.rows.spill
        connection, spill.connection = spill.connection, None
        try:
            (tmp_path / "here").mkdir()
            here = write_audit_report(tmp_path / "here", a.result, decisions=a.report_rows, records=records,
                                      players=a.players).read_bytes()
        finally:
            spill.connection = connection
    assert pages["ahead"] == here == pages["other"]
