"""The options column parsed at once (``analysis.options``) gives what the row-by-row reading gave: the pair
signals' seat effects, on analysed hands and on odd rows."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pandas as pd
import pytest

from analyzer.analysis.decisions import analyse
from analyzer.analysis.options import OptionArrays, option_arrays
from analyzer.audit.signals import SEATS, SeatEffects, seat_effects
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck


def _seat_effects_by_row(df: pd.DataFrame) -> SeatEffects:
    """The row-by-row reading ``seat_effects`` did before (the reference)."""
    own = df[[f"delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    dd = df[[f"dd_delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    imm = np.nan_to_num(df[[f"imm{s}" for s in range(SEATS)]].to_numpy(np.float64))
    dd, own_avg, dd_avg = dd.copy(), own.copy(), dd.copy()
    for i, (text, chosen, best) in enumerate(zip(df["options"], df["chosen"], df["best"])):
        if not text:
            continue
        opts = orjson.loads(text)
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
    """Rows as other sources may hold them: no options, an empty list, a chosen card not among them, a null loss,
    a row without losses (the seat effects read none)."""
    df = rows.head(40).copy().reset_index(drop=True)
    df.loc[3, "options"] = ""
    df.loc[5, "options"] = "[]"
    df.loc[7, "chosen"] = "XX"
    opts = orjson.loads(df.loc[9, "options"])
    opts[0]["loss"] = None
    df.loc[9, "options"] = orjson.dumps(opts).decode()
    opts = orjson.loads(df.loc[11, "options"])
    df.loc[11, "options"] = orjson.dumps([{k: v for k, v in o.items() if not k.startswith("loss")}
                                          for o in opts]).decode()
    return df


def _same_effects(a: SeatEffects, b: SeatEffects) -> None:
    for name in ("own", "dd", "own_avg", "dd_avg", "imm"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_seat_effects_equal_the_row_by_row_reading(rows: pd.DataFrame) -> None:
    assert len(rows) > 100
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


def test_option_arrays_index_rows_and_cards() -> None:
    texts = ['[{"card":"S7","ev":[1,2,3,4],"ev_dd":[0,0,0,0],"loss":0.5}]', "",
             '[{"card":"H7","ev":[0,0,0,0],"ev_dd":[1,1,1,1],"loss":2},{"card":"S8","ev":[5,6,7,8],"ev_dd":[2,2,2,2],'
             '"loss":null}]']
    oa = option_arrays(texts, ("loss",))
    assert oa.count.tolist() == [1, 0, 2] and oa.start.tolist() == [0, 1, 1]
    assert oa.row.tolist() == [0, 2, 2]
    assert oa.index_of(["S7", "S7", "S8"]).tolist() == [0, -1, 1]
    assert oa.values["loss"].tolist() == [0.5, 2.0, 0.0]
    assert oa.ev[2].tolist() == [5, 6, 7, 8]


def test_an_option_without_an_asked_key_is_refused_naming_the_row() -> None:
    """Rows whose options lack a loss (another version's) are an error naming the key and the row, by either
    reader; the key not asked for is not needed."""
    from analyzer.analysis.options import OptionsError

    plain = '[{"card":"7S","kind":"play","ev":[1,2,3,4],"ev_dd":[1,2,3,4],"loss":0.5,"loss_dd":1,"loss_ref":0}]'
    lacking = '[{"card":"8S","kind":"play","ev":[1,2,3,4],"ev_dd":[1,2,3,4],"loss":0.5,"loss_dd":1}]'
    assert option_arrays([plain, lacking], ("loss", "loss_dd")).values["loss_dd"].tolist() == [1.0, 1.0]
    for odd in (lacking, lacking.replace("0.5", "1e-5")):  # the compiled reader's shape, and orjson's
        with pytest.raises(OptionsError, match="row 2 of those read") as e:
            option_arrays([plain, odd], ("loss", "loss_ref"))
        assert "an option without 'loss_ref'" in str(e.value) and e.value.text == odd


def _orjson_texts(cover: np.ndarray, nopt: np.ndarray, cards: np.ndarray, ev: np.ndarray, ev_dd: np.ndarray,
                  losses: list[np.ndarray]) -> list[str]:
    """The options texts as the rows were written before the compiled writer: Python objects through orjson."""
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


def test_compiled_options_text_is_orjsons_on_odd_values() -> None:
    from analyzer.analysis.decisions import _CODES
    from analyzer.kernels.optionsjson import LIMIT, options_json

    rng = np.random.default_rng(5)
    nopt = rng.integers(1, 14, 400)
    n = int(nopt.sum())
    special = np.array([0.0, -0.0, -0.004, 0.004, 0.005, 0.015, 0.025, -0.005, 1e-9, -1e-9, 0.00005, 0.00015,
                        -0.00005, 123.455, 99.995, 1e6 + 0.125, 3e10, -3e10, np.nan, np.inf, -np.inf, 1.0, 100.0, 7.1])

    def values(shape: tuple[int, ...]) -> np.ndarray:
        scale = 10.0 ** rng.integers(-6, 9, shape)
        v = rng.normal(size=shape) * scale
        pick = rng.random(shape) < 0.3
        v[pick] = rng.choice(special, int(pick.sum()))
        return v

    cards, cover = rng.integers(0, 52, n), rng.random(len(nopt)) < 0.4
    ev, ev_dd = values((n, 4)), values((n, 4))
    losses = [values((n,)) for _ in range(3)]
    got = options_json(_CODES, cover, nopt, cards, ev, ev_dd, *losses)
    assert got == _orjson_texts(cover, nopt, cards, ev, ev_dd, losses)
    assert "-0.0" in "".join(got) and "null" in "".join(got)
    # a value beyond the writer's range: left to orjson
    ev[3, 1] = LIMIT * 2
    assert options_json(_CODES, cover, nopt, cards, ev, ev_dd, *losses) is None


def test_analysed_rows_options_text_is_orjsons(monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.analysis import decisions

    recs = list(simulate(hands=12, players=6, seed=11, colluders=1, friends=0, style="share").records)
    items = [Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(recs)]
    compiled = analyse(items, reasons=False, samples=2, max_samples=4, seed=2)
    monkeypatch.setattr(decisions, "options_json", lambda *a: None)  # the orjson path
    by_orjson = analyse(items, reasons=False, samples=2, max_samples=4, seed=2)
    assert len(compiled) > 100 and compiled["options"].tolist() == by_orjson["options"].tolist()


def _same_arrays(a: OptionArrays, b: OptionArrays) -> None:
    assert np.array_equal(a.count, b.count) and np.array_equal(a.start, b.start)
    assert a.card.tolist() == b.card.tolist()
    assert np.array_equal(a.ev, b.ev) and np.array_equal(a.ev_dd, b.ev_dd)
    assert a.values.keys() == b.values.keys()
    for k in a.values:
        assert np.array_equal(a.values[k], b.values[k]), k


def test_compiled_reader_equals_orjson(rows: pd.DataFrame) -> None:
    from analyzer.analysis.options import _by_orjson, _compiled

    texts = rows["options"].tolist()
    # the analysis' own texts, and the same content spaced and ordered otherwise, with nulls, integers, -0.0
    other = []
    for t in texts[:200]:
        opts = orjson.loads(t)
        for o in opts[::2]:
            o["loss_ref"] = None
        other.append(json.dumps([dict(reversed(list(o.items()))) for o in opts], indent=None, separators=(" , ", " : ")))
    other += ['[{"card":"7S","kind":"play","ev":[1,-0.0,2.5,-3],"ev_dd":[0,0,0,0],"loss":0,"loss_dd":12.25,'
              '"loss_ref":-0.0}]', "[]", "", ' [ ] ',
              '[{"card":"KC","kind":"cover","ev":[123456789012345,0.1,0.2,0.3],"ev_dd":[1,2,3,4],"loss_ref":1,'
              '"loss":7,"loss_dd":null}]']
    for keys in ((), ("loss",), ("loss", "loss_ref", "loss_dd")):
        for some in (texts, other):
            fast = _compiled(some, keys)
            assert fast is not None and len(fast.card) > 0
            _same_arrays(fast, _by_orjson(some, keys))
    # texts the compiled reader leaves to orjson: an exponent, 16 digits, an escape, another key, a newline inside
    base = '[{"card":"7S","kind":"play","ev":[1,2,3,4],"ev_dd":[1,2,3,4],"loss":%s}]'
    for odd in (base % "1e-5", base % "0.1234567890123456", base.replace('"7S"', '"7\\u0053"') % "1",
                base.replace('"kind"', '"other"') % "1", base.replace(",", ",\n") % "1", base % "01"):
        assert _compiled([texts[0], odd], ("loss",)) is None, odd
    assert option_arrays([texts[0], base % "1e-5"], ("loss",)).values["loss"].tolist()[-1] == 1e-5


def test_loss_matrices_equal_the_row_by_row_reading(rows: pd.DataFrame) -> None:
    from analyzer.analysis.skill import MAX_OPTIONS, loss_matrices

    frame = rows.head(300).copy()
    texts = frame["options"].tolist()
    for i in range(3, 300, 11):
        texts[i] = "[]"
    for i in range(5, 300, 13):
        texts[i] = orjson.dumps([{**o, "loss_ref": None} for o in orjson.loads(texts[i])]).decode()
    frame["options"] = texts
    frame.loc[frame.index[::17], "chosen"] = "ZZ"
    keys = ("loss", "loss_ref", "loss_dd")
    want = {k: np.full((len(frame), MAX_OPTIONS), np.inf) for k in keys}
    want_chosen = np.zeros(len(frame), np.int64)
    for i, (text, card) in enumerate(zip(texts, frame["chosen"])):  # row by row
        opts = orjson.loads(text)
        if not opts:
            for m in want.values():
                m[i, 0] = 0.0
            continue
        for key, m in want.items():
            vals = [o[key] if o[key] is not None else 0.0 for o in opts]
            m[i, :len(vals)] = vals
        want_chosen[i] = next((j for j, o in enumerate(opts) if o["card"] == card), 0)
    got, chosen = loss_matrices(frame, keys)
    assert np.array_equal(chosen, want_chosen)
    for k in keys:
        assert np.array_equal(got[k], want[k]), k
