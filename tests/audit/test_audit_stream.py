"""The audit's pair signals (chunk by chunk, sums per pair) equal the reference written plainly over every link
at once (``signals_reference``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from signals_reference import reference_pair_signals

from analyzer.analysis.decisions import analyse
from analyzer.audit.signals import _upper_quantile
from analyzer.audit.stream import StreamedSignals, hand_chunks, pair_signals
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck


def _assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Same pairs, same columns, every number equal to float rounding."""
    a = a.sort_values(["a", "b"], ignore_index=True)
    b = b.sort_values(["a", "b"], ignore_index=True)
    assert list(a.columns) == list(b.columns)
    assert a[["a", "b"]].equals(b[["a", "b"]])
    for c in a.columns[2:]:
        if c.endswith("_extreme"):  # burst's hands (JSON text): the same hands in the same order
            assert a[c].tolist() == b[c].tolist(), c
            continue
        x, y = a[c].to_numpy(np.float64), b[c].to_numpy(np.float64)
        assert np.allclose(x, y, rtol=1e-7, atol=1e-9, equal_nan=True), c


@pytest.mark.parametrize("chunk", [29, 10_000])
def test_streamed_equals_in_memory_with_a_strong_pair(chunk: int) -> None:
    # a strong pair makes the room's baselines be fitted a second time without its decisions
    df = synthetic_room(players=16, hands=240, colluders=(("p00", "p01"),), friends=(("p02", "p03"),),
                        weak=("p02", "p03"), decisions=6, favour=2.0, share=0.4, seed=11)
    want = reference_pair_signals(df).pairs
    assert want["marginal_ab_z"].max() > 4  # the second fit really runs
    _assert_same(want, pair_signals(df, chunk_hands=chunk))


def test_streamed_equals_in_memory_with_seat_habits_and_one_way_help() -> None:
    df = synthetic_room(players=12, hands=200, colluders=(("p04", "p05"),), one_way=True, decisions=5,
                        habits={"p00": 1.5, "p01": -1.0}, seed=3)
    _assert_same(reference_pair_signals(df).pairs, pair_signals(df, chunk_hands=23))


@pytest.mark.filterwarnings("ignore:All-NaN slice")  # the in-memory path's quantile of a signal all missing
def test_streamed_equals_in_memory_with_missing_values_and_shuffled_rows() -> None:
    df = synthetic_room(players=12, hands=150, decisions=5, seed=4)
    rng = np.random.default_rng(0)
    df.loc[rng.random(len(df)) < 0.02, "dd_delta2"] = np.nan  # a true-deal value missing here and there
    df = df.sample(frac=1.0, random_state=1).reset_index(drop=True)  # a hand's rows need not be adjacent
    chunks = list(hand_chunks(df, 20))
    assert sum(len(c) for c in chunks) == len(df)
    assert all(not set(x["hand_id"]) & set(y["hand_id"]) for x, y in zip(chunks, chunks[1:]))
    _assert_same(reference_pair_signals(df).pairs, pair_signals(df, chunk_hands=20))


@pytest.mark.parametrize("weights", [False, True])
def test_streamed_equals_in_memory_on_analysed_hands(weights: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # burst's choice weights (burst.CHOICE_WEIGHTS, on by default): both ways the two paths agree
    monkeypatch.setattr("analyzer.audit.burst.CHOICE_WEIGHTS", weights)
    sim = simulate(hands=90, players=8, seed=5, colluders=1, friends=1, style="feed", seek=1.0)
    df = analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(sim.records)),
                 samples=2, max_samples=2, dd_samples=1, seed=1, policy="fast")
    assert (df["options"].list.len() > 0).any()  # the per-option values are read, not the deltas alone
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    _assert_same(reference_pair_signals(df, seating=seating).pairs, pair_signals(df, seating, chunk_hands=16))


def test_the_clip_cap_is_numpys_quantile_from_the_largest_values() -> None:
    rng = np.random.default_rng(2)
    for n in (1, 2, 7, 200, 5001):
        x = rng.exponential(size=n)
        keep = n - int(np.floor(0.995 * (n - 1)))
        top = np.sort(x)[n - keep:]
        assert _upper_quantile(top, n, 0.995) == pytest.approx(float(np.quantile(x, 0.995)), rel=1e-12)


def test_the_accumulator_keeps_chunks_on_disk_and_cleans_up() -> None:
    df = synthetic_room(players=8, hands=60, decisions=4, seed=6)
    with StreamedSignals() as acc:
        for part in hand_chunks(df, 16):
            acc.add(part)
        paths = list(acc.chunks)
        hands = df["hand_id"].nunique()
        assert len(paths) == -(-hands // 16) and all(p.exists() for p in paths)
        assert acc.rows == len(df) and acc.hands == hands
        acc.result(df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]])
    assert not any(p.exists() for p in paths)


def test_a_chunk_in_a_file_reads_back_as_the_chunk_in_memory(tmp_path) -> None:
    """``write_chunk`` (a Dask worker's chunk kept in the spill's folder) reads back as ``build_chunk`` made it, and
    recoded (the handle carries the room's codes; the file stays as written) as ``recode`` makes it."""
    from analyzer.audit.signals import build_chunk, positive_regrets, recode
    from analyzer.audit.stream import ChunkFile, chunk_names, load_chunk, on_chunk, recode_chunk, write_chunk

    df = synthetic_room(players=8, hands=20, decisions=4, seed=6)
    want = build_chunk(df)
    ref = write_chunk(df, str(tmp_path), "c1")
    assert isinstance(ref, ChunkFile) and (tmp_path / "c1.chunk").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["c1.chunk"]  # no temporary file left
    names, kinds = chunk_names(ref)
    assert list(names) == list(want["names"]) and list(kinds) == list(want["kinds"])

    def same(a: dict, b: dict) -> None:
        assert sorted(a) == sorted(b)
        for k in a:
            assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k

    same(load_chunk(ref), want)
    players = np.arange(len(names))[::-1] + 3  # the room's codes are not the chunk's own
    recoded = recode_chunk(ref, players, np.array([5, 1][:len(kinds)]), 40)
    assert isinstance(recoded, ChunkFile) and recoded.path == ref.path
    same(load_chunk(recoded), recode(want, players, np.array([5, 1][:len(kinds)]), 40))
    assert load_chunk(recoded)["actor"].max() >= 3
    assert np.array_equal(on_chunk(positive_regrets, recoded), positive_regrets(want))
    same(load_chunk(ref), want)  # the original handle still reads the chunk's own codes


def test_a_chunk_parses_its_options_once_for_both_readers() -> None:
    """build_chunk hands one parse of the options to the seat effects and to burst's choice inputs: each reads
    the same as from its own parse (the seat effects' own is block by block: rows across OPTION_BLOCK too)."""
    from analyzer.analysis.options import option_arrays
    from analyzer.audit.burst import CHOICE_KEYS, choice_inputs
    from analyzer.audit.signals import OPTION_BLOCK, seat_effects

    sim = simulate(hands=30, players=6, seed=8)
    df = analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(sim.records)),
                 samples=2, max_samples=2, dd_samples=1, seed=1, policy="fast")
    assert len(df) > OPTION_BLOCK and (df["options"].list.len() > 0).any()
    parsed = option_arrays(df["options"], CHOICE_KEYS)
    own, shared = seat_effects(df), seat_effects(df, parsed)
    for field in ("own", "dd", "own_avg", "dd_avg", "imm"):
        assert np.array_equal(getattr(own, field), getattr(shared, field))
    assert not np.array_equal(own.own_avg, own.own)  # the options were read, not the delta columns alone
    a, b = choice_inputs(df), choice_inputs(df, parsed)
    assert a is not None and b is not None
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
