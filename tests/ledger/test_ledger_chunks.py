"""A day of the evidence ledger read in pieces: the same ledger, to the last bit, as the day in one piece; the
store's parts read one at a time; the cross products summed as they come as pandas sums them all at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_synth import as_decision_rows, synthetic_room

from analyzer.analysis import store as store_module
from analyzer.analysis.execute import Settings
from analyzer.analysis.store import StoreWriter, open_store
from analyzer.audit import ledger
from analyzer.audit.ledger import open_ledger, update

PAIR = ("p00", "p01")
FILES = ("contrib.parquet", "state-pairs.parquet", "state-players.parquet")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    """A room of 20 players over 700 hands (chunks of 256 hands: three of them), one colluding pair."""
    return as_decision_rows(synthetic_room(players=20, hands=700, colluders=(PAIR,), favour=2.0, seed=11))


def _hands(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["hand_id"]))


def _add_day(store: Path, day: pd.DataFrame, part_hands: int) -> None:
    """One addition whose parts hold ``part_hands`` hands each."""
    ids = _hands(day)
    with StoreWriter(store, Settings.of(8, 1, 0)) as w:
        for i in range(0, len(ids), part_hands):
            some = ids[i:i + part_hands]
            w.add(day[day["hand_id"].isin(some)], some, [f"fp-{h}" for h in some])
        w.commit()


def test_a_day_in_small_pieces_gives_the_statistics_of_the_day_in_one(rows: pd.DataFrame) -> None:
    whole_pairs, whole_players = ledger.day_statistics(rows)
    ids = _hands(rows)
    for size in (7, 100, 256, 1000):  # pieces smaller than a chunk, across chunks' edges, a chunk, all
        pieces = (rows[rows["hand_id"].isin(ids[i:i + size])] for i in range(0, len(ids), size))
        pairs, players = ledger.day_statistics(pieces)
        pd.testing.assert_frame_equal(pairs, whole_pairs, check_exact=True)
        pd.testing.assert_frame_equal(players, whole_players, check_exact=True)
    c = ledger.SCORES[0]
    assert (whole_pairs["both_hands"] > 0).any() and (whole_pairs[f"{c}_cross"] != 0).any()
    empty_pairs, empty_players = ledger.day_statistics(iter([rows.iloc[:0]]))
    assert empty_pairs.empty and empty_players.empty and "both_hands" in empty_pairs.columns


def test_a_day_stored_in_many_parts_gives_the_ledger_of_one_part_bit_for_bit(
        rows: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _hands(rows)
    days = [rows[rows["hand_id"].isin(ids[:400])], rows[rows["hand_id"].isin(ids[400:])]]
    one, many = tmp_path / "one", tmp_path / "many"
    for day in days:
        _add_day(one, day, 10_000)
        _add_day(many, day, 9)
    update(open_store(one))
    reads: list[int] = []
    read_rows = store_module.read_rows

    def counted(st: store_module.Store, *a: object, **k: object) -> pd.DataFrame:
        got = read_rows(st, *a, **k)  # type: ignore[arg-type]
        reads.append(len(got))
        return got

    monkeypatch.setattr(store_module, "read_rows", counted)
    update(open_store(many))
    monkeypatch.undo()
    st = open_store(many)
    assert len(reads) == len(st.parts)  # each part read on its own: never a day's rows at once
    biggest = max(len(pd.read_parquet(p, columns=["hand_id"])) for p in st.parts)
    assert max(reads) == biggest < len(days[0])
    for a, b in zip(open_ledger(open_store(one)).days, open_ledger(st).days):
        assert a.hands == b.hands and len(a.parts) == 1 and len(b.parts) > 1
        for name in FILES:
            assert (a.path / name).read_bytes() == (b.path / name).read_bytes(), name


def test_cross_products_summed_as_they_come_equal_pandas_sum_of_them_all() -> None:
    """The compensated sums chunk by chunk give pandas' grouped sum over the concatenated values, bit for bit, for
    values of every size (where the order and the compensation matter)."""
    rng = np.random.default_rng(5)
    n, groups = 5000, 40
    index = rng.integers(0, groups, n)
    values = rng.normal(size=n) * 10.0 ** rng.integers(-8, 12, n)
    want = pd.DataFrame({"g": index, "v": values}).groupby("g")["v"].sum().reindex(range(groups), fill_value=0.0)
    naive = np.bincount(index, values, groups)
    assert not np.array_equal(naive, want.to_numpy())  # the order and the compensation do matter here
    cuts = np.sort(rng.choice(np.arange(1, n), 30, replace=False))
    sums = ledger._CrossSums(groups, ("v",))
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, n]):
        sums = sums.merge(ledger._CrossSums(groups, ("v",), [(index[a:b], {"v": values[a:b]})]))
    assert sums.both is not None and np.array_equal(sums.both, np.bincount(index, minlength=groups))
    assert sums.cross["v"][:, 0].tobytes() == want.to_numpy(np.float64).tobytes()
