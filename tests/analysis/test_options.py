"""The typed options column (``analysis.options``): made from the analysis' arrays it holds the values the rows show,
round-trips through Parquet, is refused when it is not options, and read at once it gives what a row-by-row reading
of its Python values gives (the pair signals' seat effects, the loss matrices), on analysed hands and on odd rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest

from analyzer.analysis.decisions import analyse
from analyzer.analysis.options import (OPTION_TYPE, OPTIONS_DTYPE, OptionArrays, OptionsError, option_arrays,
                                       options_column)
from analyzer.audit.signals import SEATS, SeatEffects, seat_effects
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck


def _lists(col: pd.Series) -> list[list[dict]]:
    """The rows' options as Python lists of dicts (the reference reading)."""
    return [list(x) for x in col.array.__arrow_array__().to_pylist()]


def _column(rows: list[list[dict]]) -> pd.Series:
    return pd.Series(pd.array(rows, dtype=OPTIONS_DTYPE))


def _seat_effects_by_row(df: pd.DataFrame) -> SeatEffects:
    """The options read row by row from Python objects (the reference)."""
    own = df[[f"delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    dd = df[[f"dd_delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    imm = np.nan_to_num(df[[f"imm{s}" for s in range(SEATS)]].to_numpy(np.float64))
    dd, own_avg, dd_avg = dd.copy(), own.copy(), dd.copy()
    for i, (opts, chosen, best) in enumerate(zip(_lists(df["options"]), df["chosen"], df["best"])):
        if not opts:
            continue
        cards = [o["card"] for o in opts]
        if chosen not in cards or best not in cards:
            continue
        both = np.array([o["ev"] + o["ev_dd"] for o in opts], np.float64)
        mean = np.add.reduce(both, axis=0) / len(opts)
        c, b = cards.index(chosen), cards.index(best)
        dd[i] = both[c, SEATS:] - both[b, SEATS:]
        own_avg[i] = both[c, :SEATS] - mean[:SEATS]
        dd_avg[i] = both[c, SEATS:] - mean[SEATS:]
    return SeatEffects(own, dd, own_avg, dd_avg, imm)


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    sim = simulate(hands=30, players=6, seed=7, colluders=1, friends=0, style="share")
    return analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(sim.records)),
                   samples=2, max_samples=2, dd_samples=1, seed=1, policy="fast", reasons=False)


def _odd(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows as other sources may hold them: no options (twice), a chosen card not among them, a NaN loss."""
    df = rows.head(40).copy().reset_index(drop=True)
    opts = _lists(df["options"])
    opts[3] = []
    opts[5] = []
    opts[9][0]["loss"] = None
    df["options"] = _column(opts)
    df.loc[7, "chosen"] = "XX"
    return df


def _same_effects(a: SeatEffects, b: SeatEffects) -> None:
    for name in ("own", "dd", "own_avg", "dd_avg", "imm"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_seat_effects_equal_the_row_by_row_reading(rows: pd.DataFrame) -> None:
    assert len(rows) > 100 and rows["options"].dtype == OPTIONS_DTYPE
    got = seat_effects(rows)
    _same_effects(got, _seat_effects_by_row(rows))
    assert np.abs(got.own_avg - got.own).max() > 0  # the options were read, not the delta columns


def test_seat_effects_in_blocks_of_rows(rows: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.audit.signals as signals

    df = _odd(rows)
    monkeypatch.setattr(signals, "OPTION_BLOCK", 7)  # blocks end inside and beside the odd rows
    _same_effects(seat_effects(df), _seat_effects_by_row(df))


def test_seat_effects_of_odd_rows(rows: pd.DataFrame) -> None:
    df = _odd(rows)
    got = seat_effects(df)
    _same_effects(got, _seat_effects_by_row(df))
    # a row without options, or whose chosen card is not among them, keeps its delta columns
    for i in (3, 5, 7):
        np.testing.assert_array_equal(got.own_avg[i], df.loc[i, [f"delta{s}" for s in range(SEATS)]].to_numpy(float))


def _option(card: str, ev: list[float], ev_dd: list[float], loss: float | None, kind: str = "play") -> dict:
    return {"card": card, "kind": kind, "ev": ev, "ev_dd": ev_dd, "loss": loss, "loss_dd": 1.0, "loss_ref": 0.0}


def test_option_arrays_index_rows_and_cards() -> None:
    col = _column([[_option("7S", [1, 2, 3, 4], [0, 0, 0, 0], 0.5)], [],
                   [_option("7H", [0, 0, 0, 0], [1, 1, 1, 1], 2, "cover"), _option("8S", [5, 6, 7, 8], [2, 2, 2, 2], None,
                                                                                  "cover")]])
    for column in (col, col.iloc[1:], col.array.__arrow_array__(), _lists(col)):  # a column, a slice, Arrow, lists
        oa = option_arrays(column, ("loss",))
        skip = 3 - len(column)
        assert oa.count.tolist() == [1, 0, 2][skip:] and oa.start.tolist() == [0, 1, 1][skip:] if not skip else [0, 0]
        assert oa.index_of(["7S", "7S", "8S"][skip:]).tolist() == [0, -1, 1][skip:]
        assert oa.values["loss"].tolist() == [0.5, 2.0, 0.0][skip:]  # NaN read as 0
        assert oa.ev[-1].tolist() == [5, 6, 7, 8]
        assert oa.any_cover().tolist() == [False, False, True][skip:]


def test_what_is_not_this_analyzers_options_is_refused() -> None:
    """Texts (another version's JSON), lists of another type and an unknown card are each an OptionsError."""
    text = '[{"card":"7S","kind":"play","ev":[1,2,3,4],"ev_dd":[1,2,3,4],"loss":0.5,"loss_dd":1,"loss_ref":0}]'
    with pytest.raises(OptionsError, match="not this analyzer's options") as e:
        option_arrays(pd.Series([text, text]))
    assert e.value.text == text
    with pytest.raises(OptionsError, match="of type list<item: int64>"):
        option_arrays(pd.Series(pd.array([[7, 8]], dtype=pd.ArrowDtype(pa.list_(pa.int64())))))
    lacking = pa.list_(pa.struct([f for f in OPTION_TYPE if f.name != "loss_ref"]))
    with pytest.raises(OptionsError, match="lack 'loss_ref'"):  # not read as 0.0
        option_arrays(pd.Series(pd.array([[{"card": "7S", "kind": "play", "ev": [1, 2, 3, 4], "ev_dd": [1, 2, 3, 4],
                                            "loss": 0.5, "loss_dd": 1.0}]], dtype=pd.ArrowDtype(lacking))))
    with pytest.raises(OptionsError, match="not a card code: 'ZZ'"):
        option_arrays(_column([[_option("ZZ", [1, 2, 3, 4], [1, 2, 3, 4], 0.5)]]))
    with pytest.raises(ValueError, match="not an option's loss"):
        option_arrays(_column([]), ("regret",))


def _orjson_texts(cover: np.ndarray, nopt: np.ndarray, cards: np.ndarray, ev: np.ndarray, ev_dd: np.ndarray,
                  losses: list[np.ndarray]) -> list[str]:
    """The options as JSON texts of Python objects through orjson (the values rounded as the rows show them)."""
    from analyzer.cards import format_card

    out, o = [], 0
    for r, k in enumerate(nopt.tolist()):
        kind = "cover" if cover[r] else "play"
        out.append(orjson.dumps([{"card": format_card(int(cards[i])), "kind": kind, "ev": np.round(ev[i], 2).tolist(),
                                  "ev_dd": np.round(ev_dd[i], 2).tolist(),
                                  "loss": float(np.round(losses[0][i], 4)), "loss_dd": float(np.round(losses[1][i], 4)),
                                  "loss_ref": float(np.round(losses[2][i], 4))} for i in range(o, o + k)]).decode())
        o += k
    return out


def _odd_values(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    nopt = rng.integers(0, 14, 400)
    n = int(nopt.sum())
    special = np.array([0.0, -0.0, -0.004, 0.004, 0.005, 0.015, 0.025, -0.005, 1e-9, -1e-9, 0.00005, 0.00015,
                        -0.00005, 123.455, 99.995, 1e6 + 0.125, 3e10, -3e10, 3e13, np.nan, np.inf, -np.inf, 1.0, 7.1])

    def values(shape: tuple[int, ...]) -> np.ndarray:
        v = rng.normal(size=shape) * 10.0 ** rng.integers(-6, 9, shape)
        pick = rng.random(shape) < 0.3
        v[pick] = rng.choice(special, int(pick.sum()))
        return v

    return (rng.random(len(nopt)) < 0.4, nopt, rng.integers(0, 52, n), values((n, 4)), values((n, 4)),
            values((n,)), values((n,)), values((n,)))


def test_the_column_holds_the_values_the_json_text_shows() -> None:
    """Each row of the column, as JSON, is the text of the rows' values rounded as shown (-0.0 kept, NaN and
    infinities null): the numbers are the ones a reader of the text got."""
    cover, nopt, cards, ev, ev_dd, *losses = _odd_values(5)
    col = pd.Series(options_column(cover, nopt, cards, ev, ev_dd, *losses))
    got = [orjson.dumps(row).decode() for row in _lists(col)]
    assert got == _orjson_texts(cover, nopt, cards, ev, ev_dd, losses)
    assert "-0.0" in "".join(got) and "null" in "".join(got) and "[]" in got
    oa = option_arrays(col, ("loss", "loss_dd", "loss_ref"))
    assert oa.count.tolist() == nopt.tolist() and oa.any_cover().tolist() == (cover & (nopt > 0)).tolist()
    want = np.round(ev, 2)
    assert np.array_equal(oa.ev, np.where(np.isfinite(want), want, np.nan), equal_nan=True)
    assert np.array_equal(oa.values["loss"], np.where(np.isfinite(losses[0]), np.round(losses[0], 4), 0.0))


def test_the_column_round_trips_through_parquet(tmp_path: Path, rows: pd.DataFrame) -> None:
    """Written as a store part writes it and read back, the column is the same column and reads the same arrays;
    pandas reads the file too (as lists of dicts)."""
    import pyarrow.parquet as pq

    from analyzer.analysis.options import frame_table, table_frame

    cover, nopt, cards, ev, ev_dd, *losses = _odd_values(6)
    frame = pd.DataFrame({"n": np.arange(len(nopt)), "options": options_column(cover, nopt, cards, ev, ev_dd, *losses)})
    for df in (frame, rows):
        pq.write_table(frame_table(df), tmp_path / "rows.parquet")
        back = table_frame(pq.read_table(tmp_path / "rows.parquet"))
        assert back["options"].dtype == OPTIONS_DTYPE and list(back.columns) == list(df.columns)
        assert orjson.dumps(_lists(back["options"])) == orjson.dumps(_lists(df["options"]))  # (NaN as null)
        a, b = option_arrays(df["options"], ("loss", "loss_ref")), option_arrays(back["options"], ("loss", "loss_ref"))
        _same_arrays(a, b)
        plain = pd.read_parquet(tmp_path / "rows.parquet")
        assert len(plain) == len(df) and plain["options"].iloc[-1][0]["card"] == _lists(df["options"])[-1][0]["card"]


def test_options_at_takes_rows_and_leaves_none_elsewhere(rows: pd.DataFrame) -> None:
    from analyzer.analysis.options import concat_options, options_at

    col = rows["options"]
    want = _lists(col)
    got = _lists(pd.Series(options_at(col, np.array([4, -1, 0, 4, -1]))))
    assert got == [want[4], [], want[0], want[4], []] and want[4]
    joined = _lists(pd.Series(concat_options([col.iloc[:3], col.iloc[10:12]])))
    assert joined == want[:3] + want[10:12]


def _same_arrays(a: OptionArrays, b: OptionArrays) -> None:
    assert np.array_equal(a.count, b.count) and np.array_equal(a.start, b.start)
    assert a.card.tolist() == b.card.tolist() and np.array_equal(a.cover, b.cover)
    assert np.array_equal(a.ev, b.ev, equal_nan=True) and np.array_equal(a.ev_dd, b.ev_dd, equal_nan=True)
    assert a.values.keys() == b.values.keys()
    for k in a.values:
        assert np.array_equal(a.values[k], b.values[k]), k


def test_loss_matrices_equal_the_row_by_row_reading(rows: pd.DataFrame) -> None:
    from analyzer.analysis.skill import MAX_OPTIONS, loss_matrices

    frame = rows.head(300).copy()
    opts = _lists(frame["options"])
    for i in range(3, 300, 11):
        opts[i] = []
    for i in range(5, 300, 13):
        opts[i] = [{**o, "loss_ref": None} for o in opts[i]]
    frame["options"] = _column(opts).array
    frame.loc[frame.index[::17], "chosen"] = "ZZ"
    keys = ("loss", "loss_ref", "loss_dd")
    want = {k: np.full((len(frame), MAX_OPTIONS), np.inf) for k in keys}
    want_chosen = np.zeros(len(frame), np.int64)
    for i, (row, card) in enumerate(zip(opts, frame["chosen"])):  # row by row
        if not row:
            for m in want.values():
                m[i, 0] = 0.0
            continue
        for key, m in want.items():
            vals = [o[key] if o[key] is not None else 0.0 for o in row]
            m[i, :len(vals)] = vals
        want_chosen[i] = next((j for j, o in enumerate(row) if o["card"] == card), 0)
    got, chosen = loss_matrices(frame, keys)
    assert np.array_equal(chosen, want_chosen)
    for k in keys:
        assert np.array_equal(got[k], want[k]), k


def test_options_whose_fields_are_in_another_order_read_by_name(rows: pd.DataFrame) -> None:
    """A column of options with its structs' fields in alphabetical order and ``ev`` as lists of any length (as a part
    written back through pandas holds them) reads as the same typed column; one lacking a field does not read."""
    from analyzer.analysis.options import OPTIONS_TYPE, cast_options

    want = pa.chunked_array([pa.array(rows["options"].array)]).cast(OPTIONS_TYPE)
    items = sorted(OPTIONS_TYPE.value_type, key=lambda f: f.name)
    loose = pa.list_(pa.struct([pa.field(f.name, pa.list_(pa.float64())) if pa.types.is_fixed_size_list(f.type)
                                else f for f in items]))
    assert [f.name for f in loose.value_type] != [f.name for f in OPTIONS_TYPE.value_type]
    shuffled = pa.chunked_array([pa.array(chunk.to_pylist(), loose) for chunk in want.chunks])
    got = cast_options(shuffled)
    assert got is not None and got.type == OPTIONS_TYPE and got.equals(want)
    assert cast_options(pa.chunked_array([pa.array(shuffled.to_pylist(), loose)]).slice(3, 5)).equals(want.slice(3, 5))
    short = pa.list_(pa.struct([f for f in loose.value_type if f.name != "kind"]))
    assert cast_options(pa.chunked_array([pa.array([[{"card": "2C"}]], short)])) is None
    assert cast_options(pa.chunked_array([pa.array(["not options"])])) is None
