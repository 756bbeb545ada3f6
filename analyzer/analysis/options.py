"""The decision rows' ``options`` column (one JSON list per row) parsed at once into flat arrays.

The pair signals read every option's values per seat for every decision of a room (``signals.seat_effects``),
the player table and burst's choice model every option's losses (``skill.loss_matrices``). Row by row, with a few
small numpy calls per row, that cost ~1 ms of CPU a hand; here a batch of rows is parsed at once, by the compiled
reader (``kernels.optionsjson.read_rows``) when every text has the analysis' plain shape, else by one ``orjson``
call, and the per-row work is array indexing (``tests/test_options.py`` checks both readers against each other and
the results against the row-by-row reading).
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from itertools import chain
from dataclasses import dataclass

import numpy as np
import orjson

SEATS = 4


@dataclass(frozen=True, slots=True)
class OptionArrays:
    """Every row's options, flat: row r's options are ``start[r]:start[r] + count[r]`` of the per-option arrays."""

    count: np.ndarray  # (rows,) options of the row (0: none recorded)
    start: np.ndarray  # (rows,)
    card: np.ndarray  # (options,) the option's card code (object: str)
    ev: np.ndarray  # (options, 4) every seat's expected score, own information
    ev_dd: np.ndarray  # (options, 4) the same on the true deal
    values: dict[str, np.ndarray]  # per asked key (options,): the value, 0.0 where it is null

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


class OptionsError(ValueError):
    """``options`` texts that are not the analysis' options (a list of objects with a card and four values each):
    rows from outside this analyzer, e.g. a decision store changed after it was written. ``text``: the first such
    text (a caller with the rows names its hand and move)."""

    def __init__(self, message: str, text: str | None = None) -> None:
        super().__init__(message)
        self.text = text


def option_arrays(texts: Sequence[str | None], keys: tuple[str, ...] = ()) -> OptionArrays:
    """Parse the ``options`` texts of many rows (empty or None: no options): by the compiled reader when every
    text has the analysis' plain shape, else with one ``orjson`` call (the same arrays either way).

    ``ev`` and ``ev_dd`` are read always; ``keys`` (e.g. ``loss``, ``loss_dd``, ``loss_ref``) on request, and every
    option must carry them. Raises :class:`OptionsError` for texts that are not options of this analyzer."""
    fast = _compiled(texts, keys)
    if fast is not None:
        return fast
    try:
        return _by_orjson(texts, keys)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        row, why = _first_bad(texts, keys)
        text = texts[row] if row is not None else None
        shown = f"; row {row + 1} of those read has options beginning {str(text)[:60]!r}" if row is not None else ""
        raise OptionsError(f"the decision rows' options do not read as this analyzer writes them "
                           f"({why or f'{type(e).__name__}: {str(e)[:200]}'}){shown}", text) from e


def _first_bad(texts: Sequence[str | None], keys: tuple[str, ...]) -> tuple[int | None, str]:
    """The first text that does not read as options on its own, and why (None when each reads alone)."""
    for i, t in enumerate(texts):
        try:
            _by_orjson([t], keys)
        except KeyError as e:
            return i, f"an option without {str(e)[:200]}: rows of another version of the analyzer"
        except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError) as e:
            return i, f"{type(e).__name__}: {str(e)[:200]}"
    return None, ""


def _codes() -> list[str]:
    from analyzer.cards import format_card

    return [format_card(c) for c in range(52)]


_CODE_TEXTS = np.array(_codes(), dtype=object)
_CODE_OF: np.ndarray | None = None  # kernels.optionsjson.code_table of the codes (built at the first use)


def _compiled(texts: Sequence[str | None], keys: tuple[str, ...]) -> OptionArrays | None:
    """The compiled reader (``kernels.optionsjson.read_rows``, ~10x cheaper than building Python objects); None when
    a text is not of the plain shape it reads, a key is asked it does not read or an option lacks one asked."""
    from analyzer.kernels.optionsjson import LOSS_KEYS, WORDS, code_table, read_rows

    global _CODE_OF
    if _CODE_OF is None:
        _CODE_OF = code_table(list(_CODE_TEXTS))

    if any(k not in LOSS_KEYS for k in keys):
        return None
    try:
        blob = "\n".join(t if t else "[]" for t in texts).encode()
    except (TypeError, UnicodeEncodeError):
        return None
    rows = len(texts)
    room = blob.count(b"{")  # at most one option an object
    count = np.zeros(rows, np.int64)
    card = np.zeros(room, np.int64)
    ev, ev_dd = np.zeros((room, SEATS)), np.zeros((room, SEATS))
    vals, has = np.zeros((room, len(LOSS_KEYS))), np.zeros((room, len(LOSS_KEYS)), np.bool_)
    n = read_rows(np.frombuffer(blob, np.uint8), rows, WORDS, _CODE_OF, count, card, ev, ev_dd, vals, has)
    if n < 0 or not has[:n, [LOSS_KEYS.index(k) for k in keys]].all():
        return None
    start = np.zeros(rows, np.int64)
    if rows > 1:
        np.cumsum(count[:-1], out=start[1:])
    values = {k: np.nan_to_num(vals[:n, LOSS_KEYS.index(k)], nan=0.0) for k in keys}
    return OptionArrays(count, start, _CODE_TEXTS[card[:n]], ev[:n], ev_dd[:n], values)


def _by_orjson(texts: Sequence[str | None], keys: tuple[str, ...]) -> OptionArrays:
    """:func:`option_arrays` by ``orjson`` (any JSON)."""
    body = ",".join(t if t else "[]" for t in texts)
    # the cyclic collector would walk the growing list of parsed options again and again (they are all alive
    # until the arrays are built, and none can form a cycle): off meanwhile, which makes the parse ~2x cheaper
    was = gc.isenabled()
    gc.disable()
    try:
        parsed = orjson.loads(f"[{body}]")
        count = np.fromiter((len(p) for p in parsed), np.int64, len(parsed))
        start = np.zeros(len(parsed), np.int64)
        if len(parsed) > 1:
            np.cumsum(count[:-1], out=start[1:])
        flat = [o for p in parsed for o in p]
        card = np.array([o["card"] for o in flat], dtype=object)
        # one flat iterator of numbers is cheaper than numpy reading a list of lists
        ev = np.fromiter(chain.from_iterable([o["ev"] for o in flat]), np.float64, SEATS * len(flat)
                         ).reshape(len(flat), SEATS)
        ev_dd = np.fromiter(chain.from_iterable([o["ev_dd"] for o in flat]), np.float64, SEATS * len(flat)
                            ).reshape(len(flat), SEATS)
        values: dict[str, np.ndarray] = {}
        for key in keys:  # every option carries the key (a KeyError otherwise): JSON null reads as NaN, then 0
            vals = np.array([o[key] for o in flat], np.float64)
            values[key] = np.where(np.isnan(vals), 0.0, vals)
    finally:
        if was:
            gc.enable()
    return OptionArrays(count, start, card, ev, ev_dd, values)
