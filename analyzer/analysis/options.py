"""The decision rows' ``options`` column (one JSON list per row) parsed at once into flat arrays.

The pair signals read every option's values per seat for every decision of a room (``signals.seat_effects``).
Row by row, with a few small numpy calls per row, that cost ~1 ms of CPU a hand; here one ``orjson`` call
parses a batch of rows and the per-row work is array indexing, about a third less (most of what is left is
orjson building the numbers; ``tests/test_options.py`` checks the result against the row-by-row reading).
(The player table's ``skill.loss_matrices`` reads the options row by row still: this way was no faster there.)
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from itertools import chain
from dataclasses import dataclass

import numpy as np
import orjson

SEATS = 4
_MISSING = object()


@dataclass(frozen=True, slots=True)
class OptionArrays:
    """Every row's options, flat: row r's options are ``start[r]:start[r] + count[r]`` of the per-option arrays."""

    count: np.ndarray  # (rows,) options of the row (0: none recorded)
    start: np.ndarray  # (rows,)
    card: np.ndarray  # (options,) the option's card code (object: str)
    ev: np.ndarray  # (options, 4) every seat's expected score, own information
    ev_dd: np.ndarray  # (options, 4) the same on the true deal
    values: dict[str, np.ndarray]  # per asked key (options,): the value, 0.0 where it is null or missing
    has: dict[str, np.ndarray]  # per asked key (options,): whether the option carries the key at all

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


def option_arrays(texts: Sequence[str | None], keys: tuple[str, ...] = ()) -> OptionArrays:
    """Parse the ``options`` texts of many rows (empty or None: no options) with one ``orjson`` call.

    ``ev`` and ``ev_dd`` are read always; ``keys`` (e.g. ``loss``, ``loss_dd``, ``loss_ref``) on request."""
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
        has: dict[str, np.ndarray] = {}
        for key in keys:
            try:  # every option carries the key (rows of today's analysis): JSON null reads as NaN, then 0
                vals = np.array([o[key] for o in flat], np.float64)
                has[key] = np.ones(len(flat), np.bool_)
                values[key] = np.where(np.isnan(vals), 0.0, vals)
            except KeyError:  # older rows among them: option by option
                raw = [o.get(key, _MISSING) for o in flat]
                has[key] = np.fromiter((v is not _MISSING for v in raw), np.bool_, len(raw))
                values[key] = np.fromiter((0.0 if v is None or v is _MISSING else v for v in raw), np.float64,
                                          len(raw))
    finally:
        if was:
            gc.enable()
    return OptionArrays(count, start, card, ev, ev_dd, values, has)
