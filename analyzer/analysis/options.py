"""The decision rows' ``options`` column: a typed Arrow column (a list of structs a row), made from the analysis'
arrays and read back as flat numpy arrays, with no text between.

Each row holds its options as ``OPTIONS_TYPE``: per option its card code, kind (``play`` / ``cover``), every seat's
expected score on own information and on the true deal (``ev``, ``ev_dd``, 2 decimals) and three normalised losses
(``loss``, ``loss_dd``, ``loss_ref``, 4 decimals); a value that is not finite is NaN. In a frame it is a pandas
``ArrowDtype`` column, in the decision store a nested Parquet column. The pair signals, the player table and
burst's choice model read it with :func:`option_arrays` (the column's buffers, a few Arrow calls per batch);
a row of a frame gives its options as Python lists of dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SEATS = 4
#: Per option, the losses it carries (what :func:`option_arrays` reads on request).
LOSS_KEYS = ("loss", "loss_dd", "loss_ref")
OPTION_TYPE = pa.struct([("card", pa.string()), ("kind", pa.string()), ("ev", pa.list_(pa.float64(), SEATS)),
                         ("ev_dd", pa.list_(pa.float64(), SEATS)), *((k, pa.float64()) for k in LOSS_KEYS)])
OPTIONS_TYPE = pa.list_(OPTION_TYPE)
OPTIONS_DTYPE = pd.ArrowDtype(OPTIONS_TYPE)


def _codes() -> list[str]:
    from analyzer.cards import format_card

    return [format_card(c) for c in range(52)]


_CODE_TEXTS = np.array(_codes(), dtype=object)
_CODES = pa.array(_CODE_TEXTS.tolist(), pa.string())
_KINDS = pa.array(["play", "cover"], pa.string())


def _rounded(x: np.ndarray, decimals: int) -> np.ndarray:
    """``np.round`` (the values the rows show), NaN where not finite."""
    x = np.asarray(x, np.float64)
    return np.where(np.isfinite(x), np.round(x, decimals), np.nan)


def options_column(cover: np.ndarray, nopt: np.ndarray, cards: np.ndarray, ev: np.ndarray, ev_dd: np.ndarray,
                   loss: np.ndarray, loss_dd: np.ndarray, loss_ref: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Every row's options as one column: ``nopt`` (rows,) options a row, ``cover`` (rows,) whether the row's
    options are covers; per option, flat in row order, ``cards`` (0-51), ``ev`` and ``ev_dd`` (options, 4) and the
    three losses (options,), unrounded."""
    nopt = np.asarray(nopt, np.int64)
    offsets = np.zeros(len(nopt) + 1, np.int32)
    np.cumsum(nopt, out=offsets[1:])
    kind = np.repeat(np.asarray(cover, np.int8), nopt)
    fields = [_CODES.take(pa.array(np.asarray(cards, np.int8))), _KINDS.take(pa.array(kind)),
              pa.FixedSizeListArray.from_arrays(pa.array(_rounded(ev, 2).ravel()), SEATS),
              pa.FixedSizeListArray.from_arrays(pa.array(_rounded(ev_dd, 2).ravel()), SEATS),
              *(pa.array(_rounded(x, 4)) for x in (loss, loss_dd, loss_ref))]
    values = pa.StructArray.from_arrays(fields, fields=list(OPTION_TYPE))
    return pd.arrays.ArrowExtensionArray(pa.ListArray.from_arrays(pa.array(offsets), values, type=OPTIONS_TYPE))


def empty_options(rows: int = 0) -> pd.api.extensions.ExtensionArray:
    """``rows`` rows without options."""
    return pd.arrays.ArrowExtensionArray(
        pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, np.int32)), pa.array([], OPTION_TYPE), type=OPTIONS_TYPE))


class OptionsError(ValueError):
    """An ``options`` column that is not the analysis' options (rows from outside this analyzer, e.g. texts of
    another version's rows). ``text``: the first such value when it is a text; ``row``: the position in the column
    read of the first row found wrong, when known (a caller names its hand and move)."""

    def __init__(self, message: str, text: str | None = None, row: int | None = None) -> None:
        super().__init__(message)
        self.text = text
        self.row = row


def as_options(values: Any) -> pa.ChunkedArray:
    """A column of options (a pandas column of ``OPTIONS_DTYPE``, an Arrow array, or one list of option dicts a
    row) as an Arrow chunked array of ``OPTIONS_TYPE``; anything else is an :class:`OptionsError`."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.arrays.ArrowExtensionArray):
        values = values.__arrow_array__()
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        arr = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
        if arr.type == OPTIONS_TYPE:
            return arr
        item = arr.type.value_type if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) else None
        if item is not None and pa.types.is_struct(item):  # a cast would fill a missing field with nulls: refused
            lacking = [f.name for f in OPTION_TYPE if item.get_field_index(f.name) < 0]
            if lacking:
                raise OptionsError(f"the decision rows' options lack {', '.join(map(repr, lacking))} (rows of "
                                   f"another version of the analyzer?)")
        try:
            return arr.cast(OPTIONS_TYPE)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            some = arr.drop_null()
            first = some[0].as_py() if len(some) else None
            shown = f"; one reads {str(first)[:60]!r}" if first is not None else ""
            raise OptionsError(f"the decision rows' options are of type {arr.type}, not this analyzer's "
                               f"options (rows of another version of the analyzer?){shown}",
                               first if isinstance(first, str) else None) from e
    rows = list(values)
    try:
        return pa.chunked_array([pa.array(rows, OPTIONS_TYPE, from_pandas=True)])
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, KeyError) as e:
        bad = next((v for v in rows if not isinstance(v, (list, tuple, np.ndarray)) and v is not None), None)
        shown = f"; one reads {str(bad)[:60]!r}" if bad is not None else ""
        raise OptionsError(f"the decision rows' options are not this analyzer's options (a list of "
                           f"{{card, kind, ev, ev_dd, {', '.join(LOSS_KEYS)}}} a row: rows of another version of the "
                           f"analyzer?){shown}", bad if isinstance(bad, str) else None) from e


@dataclass(frozen=True, slots=True)
class OptionArrays:
    """Every row's options, flat: row r's options are ``start[r]:start[r] + count[r]`` of the per-option arrays."""

    count: np.ndarray  # (rows,) options of the row (0: none recorded)
    start: np.ndarray  # (rows,)
    card: np.ndarray  # (options,) the option's card code (object: str)
    ev: np.ndarray  # (options, 4) every seat's expected score, own information
    ev_dd: np.ndarray  # (options, 4) the same on the true deal
    values: dict[str, np.ndarray]  # per asked key (options,): the value, 0.0 where it is NaN
    cover: np.ndarray  # (options,) whether the option is a cover

    @property
    def row(self) -> np.ndarray:
        """(options,) the row of each option."""
        return np.repeat(np.arange(len(self.count)), self.count)

    def index_of(self, cards: Sequence[str]) -> np.ndarray:
        """(rows,) the position within its row of the first option whose card is ``cards[r]``; -1 when none."""
        out = np.full(len(self.count), -1, np.int64)
        if len(self.card) == 0:
            return out
        want = np.repeat(np.asarray(cards, dtype=object), self.count)
        hit = np.flatnonzero(self.card == want)
        rows = self.row[hit]
        first_rows, first = np.unique(rows, return_index=True)  # hits are in order: the first per row
        out[first_rows] = hit[first] - self.start[first_rows]
        return out

    def any_cover(self) -> np.ndarray:
        """(rows,) whether a row has a cover among its options."""
        return np.bincount(self.row[self.cover], minlength=len(self.count)) > 0


def _floats(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False), np.float64)


def _chunks(col: pa.ChunkedArray) -> Iterator[pa.ListArray]:
    yield from (c for c in col.chunks if len(c))


def option_arrays(column: Any, keys: tuple[str, ...] = ()) -> OptionArrays:
    """The options of many rows (a pandas column, an Arrow array: :func:`as_options`) as flat arrays: ``ev`` and
    ``ev_dd`` always, the losses ``keys`` on request (NaN read as 0.0). A row without options (empty or null)
    counts 0. Raises :class:`OptionsError` for a column that is not options of this analyzer."""
    unknown = [k for k in keys if k not in LOSS_KEYS]
    if unknown:
        raise ValueError(f"not an option's loss: {unknown}")
    col = as_options(column)
    counts, cards, evs, dds, covers = [], [], [], [], []
    vals: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    before = 0  # rows of the chunks before
    for chunk in _chunks(col):
        counts.append(np.asarray(chunk.value_lengths().fill_null(0).to_numpy(zero_copy_only=False), np.int64))
        flat = chunk.flatten()  # the options of the chunk's rows, in order (its slicing and nulls accounted for)
        code = pc.index_in(pc.struct_field(flat, "card"), value_set=_CODES)
        if code.null_count:
            at = pc.index(pc.is_null(code), True).as_py()
            row = before + int(np.searchsorted(np.cumsum(counts[-1]), at, side="right"))
            raise OptionsError(f"the decision rows' options hold a card that is not a card code: "
                               f"{pc.struct_field(flat, 'card')[at].as_py()!r}", row=row)
        before += len(chunk)
        cards.append(_CODE_TEXTS[code.to_numpy(zero_copy_only=False)])
        covers.append(np.asarray(pc.fill_null(pc.equal(pc.struct_field(flat, "kind"), "cover"), False)
                                 .to_numpy(zero_copy_only=False), bool))
        evs.append(_floats(pc.list_flatten(pc.struct_field(flat, "ev"))).reshape(-1, SEATS))
        dds.append(_floats(pc.list_flatten(pc.struct_field(flat, "ev_dd"))).reshape(-1, SEATS))
        for k in keys:
            vals[k].append(_floats(pc.struct_field(flat, k)))
    if not counts:
        return OptionArrays(np.zeros(len(col), np.int64), np.zeros(len(col), np.int64), np.zeros(0, object),
                            np.zeros((0, SEATS)), np.zeros((0, SEATS)), {k: np.zeros(0) for k in keys},
                            np.zeros(0, bool))
    count = np.concatenate(counts)  # (empty chunks hold no rows)
    start = np.zeros(len(count), np.int64)
    if len(count) > 1:
        np.cumsum(count[:-1], out=start[1:])
    ev, ev_dd = np.concatenate(evs), np.concatenate(dds)
    if len(ev) != count.sum():  # an ev of other than four seats (fixed by the type: not expected)
        raise OptionsError("the decision rows' options hold values of other than four seats")
    values = {k: np.where(np.isnan(x), 0.0, x) for k, x in ((k, np.concatenate(v)) for k, v in vals.items())}
    return OptionArrays(count, start, np.concatenate(cards), ev, ev_dd, values, np.concatenate(covers))


def frame_table(frame: pd.DataFrame) -> pa.Table:
    """Decision rows as an Arrow table for Parquet, the options column as ``OPTIONS_TYPE``. pandas' own metadata
    leaves the options out: it names a nested Arrow type by a text pandas cannot read back, and without it
    ``pd.read_parquet`` reads them as lists of dicts (:func:`table_frame` as this column)."""
    has = "options" in frame.columns
    table = pa.Table.from_pandas(frame.drop(columns="options") if has else frame, preserve_index=False)
    if not has:
        return table
    col = as_options(frame["options"])
    if table.num_columns == 0:  # the options alone
        return pa.Table.from_arrays([col], schema=pa.schema([pa.field("options", OPTIONS_TYPE)]))
    return table.add_column(list(frame.columns).index("options"), pa.field("options", OPTIONS_TYPE), col)


def _types(t: pa.DataType) -> pd.api.extensions.ExtensionDtype | None:
    return OPTIONS_DTYPE if t == OPTIONS_TYPE else None


def table_frame(table: pa.Table) -> pd.DataFrame:
    """An Arrow table of decision rows as a frame, the options as ``OPTIONS_DTYPE`` (not Python objects) when they
    are of that type or cast to it without loss (e.g. lists of any length written by pandas); else as they are."""
    at = table.schema.get_field_index("options")
    if at >= 0:
        col = cast_options(table.column(at))
        if col is not None:  # else not options: the caller names the column
            table = table.set_column(at, pa.field("options", OPTIONS_TYPE), col)
    return table.to_pandas(types_mapper=_types)


def cast_options(col: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """A column as ``OPTIONS_TYPE`` when it casts without loss, its structs' fields taken by name (a part written
    through pandas orders them alphabetically, and older pyarrow casts structs by position); None when it does not."""
    errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)
    t = col.type
    names = sorted(f.name for f in OPTIONS_TYPE.value_type)
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)) or not pa.types.is_struct(t.value_type) or \
            sorted(f.name for f in t.value_type) != names:  # newer pyarrow would fill a missing field with nulls
        return None
    try:
        return col.cast(OPTIONS_TYPE)
    except errors:
        pass
    fields = list(OPTIONS_TYPE.value_type)
    chunks = []
    try:
        for arr in col.chunks:
            values = arr.values
            items = pa.StructArray.from_arrays([values.field(f.name).cast(f.type) for f in fields], fields=fields,
                                               mask=values.is_null() if values.null_count else None)
            chunks.append(pa.ListArray.from_arrays(arr.offsets, items, type=OPTIONS_TYPE,
                                                   mask=arr.is_null() if arr.null_count else None))
    except (*errors, KeyError, AttributeError):  # not lists of structs, or a field missing
        return None
    return pa.chunked_array(chunks, type=OPTIONS_TYPE)


def options_at(values: Any, index: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Row ``index[r]`` of ``values`` (a column of options) for each r, no options where ``index[r]`` is -1."""
    arr = as_options(values).combine_chunks() if len(values) else pa.array([], OPTIONS_TYPE)
    index = np.asarray(index, np.int64)
    taken = arr.take(pa.array(np.maximum(index, 0), mask=index < 0)) if len(arr) else pa.nulls(len(index),
                                                                                                  OPTIONS_TYPE)
    offsets = np.zeros(len(index) + 1, np.int32)
    np.cumsum(np.asarray(taken.value_lengths().fill_null(0).to_numpy(zero_copy_only=False), np.int64), out=offsets[1:])
    return pd.arrays.ArrowExtensionArray(pa.ListArray.from_arrays(pa.array(offsets), taken.flatten(),
                                                                  type=OPTIONS_TYPE))


def concat_options(parts: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Columns of options one after another, as one column."""
    chunks = [c for p in parts for c in as_options(p).chunks]
    return pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, OPTIONS_TYPE))
