"""Compiled writer of the decision rows' ``options`` JSON: the text ``orjson.dumps`` gives, without Python objects.

Every decision row carries its options as a JSON list of objects (card, kind, every seat's values, three losses,
rounded as ``np.round`` rounds). Building a dict and a Python float per value for ``orjson`` cost ~0.7 ms of CPU a
hand; here one pass writes every row's bytes. A value rounded to ``d`` decimals is ``rint(x * 10**d) / 10**d``
(numpy's rounding), and its shortest text, which ``orjson`` writes, is the integer ``rint(x * 10**d)`` with the
decimal point put in and trailing zeros dropped (one digit left after the point), as long as the double's spacing
is far below 10**-d (below ~1e12 here; larger values are left to the caller, :func:`options_json` says so); NaN
and infinities are ``null``, -0.0 is ``-0.0``. ``tests/test_options.py`` compares the text with ``orjson``'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Values beyond this magnitude are not written here (their double spacing nears 10**-4): the caller falls back.
LIMIT = 1e11
_P10 = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])


@njit(cache=True, nogil=True)
def _put(buf, at, text):  # pragma: no cover - compiled
    """Write the bytes of ``text`` up to its first 0 (rows of a padded table)."""
    for i in range(text.shape[0]):
        if text[i] == 0:
            break
        buf[at] = text[i]
        at += 1
    return at


@njit(cache=True, nogil=True)
def _number(buf, at, x, dec, digits):  # pragma: no cover - compiled
    """Write ``x`` rounded to ``dec`` decimals as orjson writes the rounded double; returns the new end."""
    if not np.isfinite(x):
        buf[at] = 110  # null
        buf[at + 1] = 117
        buf[at + 2] = 108
        buf[at + 3] = 108
        return at + 4
    r = np.rint(x * _P10[dec])
    if r < 0 or (r == 0 and np.signbit(r)):
        buf[at] = 45  # '-'
        at += 1
        r = -r
    k = np.int64(r)
    n = 0
    while k > 0 or n <= dec:  # the digits, lowest first, at least dec + 1 of them (a leading 0)
        digits[n] = k % 10
        k //= 10
        n += 1
    last = 0  # the lowest fraction digit kept: trailing zeros dropped, one digit kept
    while last < dec - 1 and digits[last] == 0:
        last += 1
    for i in range(n - 1, dec - 1, -1):
        buf[at] = 48 + digits[i]
        at += 1
    buf[at] = 46  # '.'
    at += 1
    if dec == 0:
        buf[at] = 48
        return at + 1
    for i in range(dec - 1, last - 1, -1):
        buf[at] = 48 + digits[i]
        at += 1
    return at


@njit(cache=True, nogil=True)
def write_rows(nopt, cards, kinds, ev, ev_dd, loss, loss_dd, loss_ref, codes, kind_texts, keys, buf,
               ends):  # pragma: no cover - compiled
    """Every row's options JSON into ``buf`` (row r's bytes end at ``ends[r]``); returns the bytes written.

    ``nopt`` (rows,); per option, flat in row order: ``cards`` (the code's index into ``codes``, (52, 2) bytes),
    ``ev``, ``ev_dd`` (options, 4; 2 decimals), ``loss``, ``loss_dd``, ``loss_ref`` (4 decimals); ``kinds`` (rows,)
    index into ``kind_texts``; ``keys``: the texts between the values (both rows of bytes, padded with 0)."""
    digits = np.zeros(24, np.int64)
    at = 0
    o = 0
    for r in range(nopt.shape[0]):
        buf[at] = 91  # '['
        at += 1
        for j in range(nopt[r]):
            if j:
                buf[at] = 44
                at += 1
            at = _put(buf, at, keys[0])  # {"card":"
            buf[at] = codes[cards[o], 0]
            buf[at + 1] = codes[cards[o], 1]
            at += 2
            at = _put(buf, at, keys[1])  # ","kind":"
            at = _put(buf, at, kind_texts[kinds[r]])
            at = _put(buf, at, keys[2])  # ","ev":[
            for s in range(4):
                if s:
                    buf[at] = 44
                    at += 1
                at = _number(buf, at, ev[o, s], 2, digits)
            at = _put(buf, at, keys[3])  # ],"ev_dd":[
            for s in range(4):
                if s:
                    buf[at] = 44
                    at += 1
                at = _number(buf, at, ev_dd[o, s], 2, digits)
            at = _put(buf, at, keys[4])  # ],"loss":
            at = _number(buf, at, loss[o], 4, digits)
            at = _put(buf, at, keys[5])  # ,"loss_dd":
            at = _number(buf, at, loss_dd[o], 4, digits)
            at = _put(buf, at, keys[6])  # ,"loss_ref":
            at = _number(buf, at, loss_ref[o], 4, digits)
            buf[at] = 125  # '}'
            at += 1
            o += 1
        buf[at] = 93  # ']'
        at += 1
        ends[r] = at
    return at




def _table(texts: tuple[str, ...]) -> np.ndarray:
    """ASCII texts as rows of bytes padded with 0."""
    out = np.zeros((len(texts), 16), np.uint8)
    for i, t in enumerate(texts):
        out[i, :len(t)] = np.frombuffer(t.encode("ascii"), np.uint8)
    return out


_KEYS = _table(('{"card":"', '","kind":"', '","ev":[', '],"ev_dd":[', '],"loss":', ',"loss_dd":', ',"loss_ref":'))
_KIND_TEXTS = _table(("play", "cover"))


def options_json(codes: list[str], cover: np.ndarray, nopt: np.ndarray, cards: np.ndarray, ev: np.ndarray,
                 ev_dd: np.ndarray, loss: np.ndarray, loss_dd: np.ndarray, loss_ref: np.ndarray) -> list[str] | None:
    """Every row's options JSON (``cover`` (rows,) whether the row's kind is ``cover``, else ``play``; the rest as
    :func:`write_rows` takes them, unrounded); None when a value is too large to be written here (then the caller
    builds the text with ``orjson``)."""
    for a in (ev, ev_dd, loss, loss_dd, loss_ref):
        if a.size and np.nanmax(np.where(np.isfinite(a), np.abs(a), 0.0), initial=0.0) >= LIMIT:
            return None
    rows = len(nopt)
    code_bytes = np.array([list(c.encode("ascii")) for c in codes], np.uint8)
    buf = np.empty(320 * len(cards) + 2 * rows + 16, np.uint8)
    ends = np.empty(rows, np.int64)
    n = write_rows(nopt.astype(np.int64), cards.astype(np.int64), cover.astype(np.int64), ev, ev_dd, loss, loss_dd,
                   loss_ref, code_bytes, _KIND_TEXTS, _KEYS, buf, ends)
    text = buf[:n].tobytes().decode("ascii")
    starts = np.concatenate([[0], ends[:-1]]).tolist()
    return [text[a:b] for a, b in zip(starts, ends.tolist())]
