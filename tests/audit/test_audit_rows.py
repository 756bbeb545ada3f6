"""The audit's one pass over the rows (``audit.rows``: pair signals fed batch by batch, a per-player spill, the
report's rows without texts) gives the audit of the whole frame in memory, and does not keep the rows' texts."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from report_fixtures import AUDIT_DD_SAMPLES, AUDIT_SAMPLES, AuditRun

from analyzer.analysis.execute import shared_strings
from analyzer.analysis.options import options_column
from analyzer.analysis.players import COLUMNS, player_table, player_table_by_player
from analyzer.analysis.reasons import shown_rows
from analyzer.audit.calibrate import Alarm, calibrate, rank_pairs
from analyzer.audit.core import audit_rows, keep_shown_texts, run_audit
from analyzer.audit.evidence import pair_evidence
from analyzer.audit.outcomes import SEATING_COLUMNS, outcome_row
from analyzer.audit.rows import UNREAD_COLUMNS, AuditRows, FrameRows, SpilledRows
from analyzer.audit.signals import qcut_edges
from analyzer.audit.stream import StreamedSignals, hand_chunks, pair_signals
from analyzer.report.audit import write_audit_report
from analyzer.report.player import Room, player_data
from analyzer.validate import generate_checked


def _seating(audit_run: AuditRun) -> pd.DataFrame:
    rows = [outcome_row(item) for item in generate_checked([str(audit_run.log)]) if item.ok]
    return pd.DataFrame(rows, columns=list(SEATING_COLUMNS))


@pytest.fixture(scope="module")
def slim_run(audit_run: AuditRun):  # type: ignore[no-untyped-def]
    return run_audit([str(audit_run.log)], samples=AUDIT_SAMPLES, dd_samples=AUDIT_DD_SAMPLES, seed=0, slim=True)


def _evidence_of(case: dict) -> dict:
    """What a case's evidence is behind (the signal, and burst's extreme hands), as ``pair_evidence`` takes it."""
    extreme = {w["actor"]: [(h, x) for h, x in w["extreme"]] for w in case.get("burst_directions", [])}
    return {"signal": case["evidence_signal"], **({"extreme": extreme} if "burst_directions" in case else {})}


def test_the_audit_equals_the_in_memory_path(audit_run: AuditRun, slim_run) -> None:  # type: ignore[no-untyped-def]
    df, seating = audit_run.decisions, _seating(audit_run)
    # the pair table: the streamed signals of the whole frame at once
    want_pairs = rank_pairs(calibrate(pair_signals(df, seating), Alarm()))
    # the audit's table leaves out burst's extreme hands (they are in the cases)
    want_pairs = want_pairs.drop(columns=[c for c in want_pairs.columns if c.endswith("_extreme")])
    pd.testing.assert_frame_equal(slim_run.pairs, want_pairs)
    # the player table: the shared table of every row at once
    want = player_table(df, seating).sort_values("player", ignore_index=True)
    got = slim_run.players[list(COLUMNS)].sort_values("player", ignore_index=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # the evidence: ranked on the whole frame (reasons are filled afterwards, from the hands read again)
    cases = [p for p in slim_run.result["pairs"] if "case" in p]
    assert cases and any(p["evidence"] for p in cases)
    for p in cases:
        a, b = p["players"]
        full = pair_evidence(df, a, b, actors=p["case"]["evidence_actors"], **_evidence_of(p["case"]))
        assert [{**e, "reasons": ""} for e in full] == [{**e, "reasons": ""} for e in p["evidence"]]


def test_slim_and_whole_rows_give_the_same_audit(audit_run: AuditRun, slim_run) -> None:  # type: ignore[no-untyped-def]
    assert slim_run.result == audit_run.audit
    whole = audit_run.decisions.copy()
    shown = shown_rows(whole, audit_run.audit)
    assert 0 < len(shown) < len(whole)
    assert set(UNREAD_COLUMNS) <= set(whole.columns) and not set(UNREAD_COLUMNS) & set(slim_run.decisions.columns)
    whole = whole.drop(columns=list(UNREAD_COLUMNS))
    # the slim audit holds the rows shown only (texts and reasons included), indexed by their places
    pd.testing.assert_frame_equal(slim_run.decisions, whole.iloc[shown], check_dtype=False)
    # and reads every row from the spill: the whole rows with the texts of the rows not shown emptied
    keep_shown_texts(whole, shown)
    assert slim_run.rows is not None
    spilled = slim_run.rows.where(lambda f: np.ones(len(f), bool))
    assert (spilled["options"].list.len() == 0).any() and (spilled["options"].list.len() > 0).any()
    pd.testing.assert_frame_equal(spilled, whole, check_dtype=False)


def test_the_report_from_the_spill_is_the_whole_frames(audit_run: AuditRun, slim_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "whole").mkdir()
    (tmp_path / "spill").mkdir()
    before = write_audit_report(tmp_path / "whole", audit_run.audit, decisions=audit_run.decisions,
                                records=audit_run.records)
    after = write_audit_report(tmp_path / "spill", slim_run.result, decisions=slim_run.report_rows,
                               records=audit_run.records, players=slim_run.players)
    assert after.read_bytes() == before.read_bytes()
    # the room's figures and each player's section, one by one
    spill, frame = slim_run.report_rows, FrameRows(audit_run.decisions)
    a, b = Room.of_rows(spill, slim_run.players), Room.of_rows(frame, slim_run.players)
    assert (a.mean_regret, a.top, a.shares, a.think) == (b.mean_regret, b.top, b.shares, b.think)
    pd.testing.assert_frame_equal(a.by_player, b.by_player, check_dtype=False)
    mine = {str(p["player"].iloc[0]): player_data(p, str(p["player"].iloc[0]), room=a) for p in spill.parts()}
    for part in frame.parts():
        pid = str(part["player"].iloc[0])
        assert mine.pop(pid) == player_data(part, pid, room=b)
    assert not mine


def test_the_evidence_from_the_spill_is_the_whole_frames(audit_run: AuditRun) -> None:
    df, seating = audit_run.decisions, _seating(audit_run)
    with AuditRows(texts=False) as acc:
        for part in hand_chunks(df, 9):
            acc.add(part)
        result, _, _, shown = audit_rows(acc, seating)
    cases = [p for p in result["pairs"] if "case" in p]
    assert cases and any(p["evidence"] for p in cases)
    for p in cases:
        a, b = p["players"]
        assert pair_evidence(df, a, b, actors=p["case"]["evidence_actors"], **_evidence_of(p["case"])) == p["evidence"]
    pd.testing.assert_index_equal(shown.index, pd.Index(shown_rows(df, result)), exact=False)


def test_fed_in_batches_of_any_size_the_signals_are_the_same() -> None:
    df = synthetic_room(players=12, hands=300, colluders=(("p00", "p01"),), decisions=5, favour=2.0, seed=2)
    want = pair_signals(df, chunk_hands=64)  # once for every way of feeding (one test: ~12 s less)
    hands = list(hand_chunks(df, 1))
    for sizes in ([7], [1, 40, 3, 500, 2], [1000]):
        with StreamedSignals(chunk_hands=64) as acc:
            k = 0
            while k < len(hands):
                n = sizes[k % len(sizes)]
                acc.feed(pd.concat(hands[k:k + n]))
                k += n
            got = acc.result(df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]])
        pd.testing.assert_frame_equal(got, want)  # the same chunks, so the same floats


def test_player_table_by_player_equals_the_whole_table(audit_run: AuditRun) -> None:
    df, seating = audit_run.decisions, _seating(audit_run)
    parts = [g for _, g in df.groupby("player", sort=False)]
    pd.testing.assert_frame_equal(player_table_by_player(parts, seating), player_table(df, seating))


def test_qcut_edges_are_pandas_edges() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        n, bins = int(rng.integers(5, 2000)), int(rng.integers(2, 12))
        values = np.repeat(np.round(rng.exponential(3.0, n), int(rng.integers(0, 3))) + 1e-9, 3)
        _, edges = pd.qcut(values, bins, labels=False, retbins=True, duplicates="drop")
        assert np.array_equal(qcut_edges(values, bins), np.asarray(edges, np.float64))


def _retained_per_decision(copies: int, base: pd.DataFrame) -> float:
    """Bytes still allocated after ``copies`` copies of ``base`` (new hand ids) went through AuditRows
    without texts, over the decisions added."""
    import pyarrow as pa

    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0] + pa.total_allocated_bytes()  # Python's heap and Arrow's (the options)
    acc = AuditRows(texts=False)
    for k in range(copies):
        part = base.copy()
        part["hand_id"] = (part["hand_id"] + f"-{k}").astype(object)
        acc.add(shared_strings(part))  # names and ids one object each, as the analysis and the store give them
        del part
    held = tracemalloc.get_traced_memory()[0] + pa.total_allocated_bytes() - start
    tracemalloc.stop()
    acc.close()
    return held / (copies * len(base))


def test_the_rows_texts_are_not_held() -> None:
    df = synthetic_room(players=16, hands=100, decisions=6, seed=5)
    df = df.astype({c: object for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])})  # as analyse gives
    # options of a typical decision's (four), and reasons of ~600 bytes a row
    n, k = len(df), 4
    rng = np.random.default_rng(1)
    df["options"] = options_column(np.zeros(n, bool), np.full(n, k), rng.integers(0, 52, n * k),
                                   rng.normal(size=(n * k, 4)), rng.normal(size=(n * k, 4)), *rng.random((3, n * k)))
    df["reasons"] = [" " * (600 + i % 7) for i in range(n)]
    assert df["options"].array.nbytes > 300 * n  # ~4 x 88 bytes a row
    small, large = _retained_per_decision(1, df), _retained_per_decision(4, df)
    # the options and reasons (~1 KB a row) go to the spill on disk; what stays is the rows' numbers and name
    # pointers (~0.3 KB a decision: the report's frame), the same per decision at 4x the hands
    assert large < 350
    assert large < 1.1 * small + 20


def test_without_texts_the_unread_columns_are_not_held() -> None:
    df = synthetic_room(players=8, hands=40, decisions=3, seed=4)
    for k, c in enumerate(UNREAD_COLUMNS):
        df[c] = np.arange(len(df)) + k  # values to lose (or keep) in the frame
    kept: dict[bool, pd.DataFrame] = {}
    for texts in (True, False):
        with AuditRows(texts=texts) as acc:
            for part in hand_chunks(df, 7):
                acc.add(part)
            kept[texts] = acc.decisions()
    pd.testing.assert_frame_equal(kept[True], df.reset_index(drop=True), check_dtype=False)
    assert not set(UNREAD_COLUMNS) & set(kept[False].columns)
    same = [c for c in kept[False].columns if c not in ("options", "reasons")]
    pd.testing.assert_frame_equal(kept[False][same], df[same].reset_index(drop=True), check_dtype=False)


def _report_peak(base: pd.DataFrame, copies: int, out: Path, trace: bool = True) -> tuple[int, int, int]:
    """Peak bytes allocated (tracemalloc) from the end of the rows' pass to the written report, for ``copies``
    copies of ``base`` (new hand ids) through the slim audit; the decisions; and the bytes of the shown rows' texts
    held as Python strings (pandas before 3 holds them so, and tracemalloc counts them; pandas 3 holds them as Arrow
    strings, which it does not)."""
    acc = AuditRows(texts=False)
    seating = []
    for k in range(copies):
        part = base.copy()
        part["hand_id"] = (part["hand_id"] + f"-{k}").astype(object)
        seating.append(part.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]])
        acc.add(shared_strings(part))
        del part
    seats = pd.concat(seating, ignore_index=True)
    if trace:
        tracemalloc.start()
    try:
        result, _, players, shown = audit_rows(acc, seats)
        texts = sum(sys.getsizeof(v) for c in ("options", "reasons") if c in shown and shown[c].dtype == object
                    for v in shown[c] if isinstance(v, str))
        write_audit_report(out, result, decisions=SpilledRows(acc.players, shown), players=players)
        return (tracemalloc.get_traced_memory()[1] if trace else 0), acc.rows, texts
    finally:
        if trace:
            tracemalloc.stop()
        acc.close()


@pytest.mark.slow
def test_the_audits_memory_does_not_grow_with_the_rows(audit_run: AuditRun, tmp_path: Path) -> None:
    base = audit_run.decisions
    _report_peak(base, 1, tmp_path, trace=False)  # the imports and caches of a first run, not measured
    small, n1, texts1 = _report_peak(base, 1, tmp_path)
    large, n4, texts4 = _report_peak(base, 4, tmp_path)
    # from the pair signals to the written page, what grows per decision is the room's three figure columns
    # (8 bytes a decision each, and their copies while its figures are made) and the signals' per-hand numbers:
    # ~90 bytes a decision here; a frame of every decision's numbers (the code before: ~0.26 KB a decision)
    # measured ~330 bytes a decision here (600 from 1 to 16 copies). The shown rows (every decision of the pairs'
    # evidence hands, each player's largest deviations) grow with the pairs' evidence, not with the decisions: the
    # copies here add evidence hands (40 to 78) only because this room's 11 pairs have not yet filled their 12
    # evidence rows each, so their texts are left out of the measure
    assert (large - texts4 - (small - texts1)) / (n4 - n1) < 150


def test_the_librarys_audit_defaults_are_the_commands() -> None:
    """``run_audit`` called without settings analyses at the commands' defaults (the rows every detection figure
    was measured on), not a set of its own."""
    import inspect

    from analyzer.audit.core import run_audit
    from analyzer.commands.common import DD_SAMPLES, SAMPLES

    defaults = inspect.signature(run_audit).parameters
    assert (defaults["samples"].default, defaults["dd_samples"].default, defaults["seed"].default) == (
        SAMPLES, DD_SAMPLES, 0)
