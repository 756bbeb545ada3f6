"""Compiled writer and reader of the decision rows' ``options`` JSON (the text ``orjson`` gives and reads), without
Python objects.

Every decision row carries its options as a JSON list of objects (card, kind, every seat's values, three losses,
rounded as ``np.round`` rounds). Building a dict and a Python float per value for ``orjson`` cost ~0.7 ms of CPU a
hand; here one pass writes every row's bytes. A value rounded to ``d`` decimals is ``rint(x * 10**d) / 10**d``
(numpy's rounding), and its shortest text, which ``orjson`` writes, is the integer ``rint(x * 10**d)`` with the
decimal point put in and trailing zeros dropped (one digit left after the point), as long as the double's spacing
is far below 10**-d (below ~1e12 here; larger values are left to the caller, :func:`options_json` says so); NaN
and infinities are ``null``, -0.0 is ``-0.0``. ``tests/test_options.py`` compares the text with ``orjson``'s.

The reader (:func:`read_rows`) parses texts of that shape (any spacing and key order) into the flat arrays of
:mod:`analyzer.analysis.options`, ~3x cheaper than ``orjson`` building Python objects; a plain decimal of at most
15 digits is the exact quotient of two doubles, so it reads as the correctly rounded value ``orjson`` gives;
anything else (exponents, escapes, other keys) is left to ``orjson``.
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


# --------------------------------------------------------------------------- reading

#: Per option, the keys :func:`read_rows` reads (their index in its ``has`` / ``vals`` outputs): the losses.
LOSS_KEYS = ("loss", "loss_dd", "loss_ref")


@njit(cache=True, nogil=True)
def _ws(blob, i, end):  # pragma: no cover - compiled
    while i < end and (blob[i] == 32 or blob[i] == 9 or blob[i] == 13):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _read_number(blob, i, end):  # pragma: no cover - compiled
    """A plain decimal (-?digits(.digits)?, at most 15 digits: the integer of its digits and the power of ten are
    exact doubles, so their quotient is the correctly rounded value any JSON reader gives), or ``null`` (NaN):
    (the index after it, the value); the index is -1 for anything else (exponents, long numbers)."""
    if i + 4 <= end and blob[i] == 110 and blob[i + 1] == 117 and blob[i + 2] == 108 and blob[i + 3] == 108:
        return i + 4, np.nan
    neg = False
    if i < end and blob[i] == 45:
        neg = True
        i += 1
    if i + 1 < end and blob[i] == 48 and 48 <= blob[i + 1] <= 57:  # a leading zero: not JSON
        return -1, 0.0
    k = np.int64(0)
    nd = 0
    frac = -1  # digits after the point; -1: no point
    while i < end:
        b = blob[i]
        if 48 <= b <= 57:
            k = k * 10 + (b - 48)
            nd += 1
            if frac >= 0:
                frac += 1
            i += 1
        elif b == 46 and frac < 0 and nd > 0:
            frac = 0
            i += 1
        else:
            break
    if nd == 0 or nd > 15 or frac == 0 or (i < end and (blob[i] == 101 or blob[i] == 69)):
        return -1, 0.0
    v = float(k) / _P10X[max(frac, 0)]
    return i, (-v if neg else v)


_P10X = np.array([10.0 ** k for k in range(16)])


@njit(cache=True, nogil=True)
def _string_end(blob, a, end):  # pragma: no cover - compiled
    """The closing quote of the string whose text starts at ``a``; -1 when the line ends first or the string
    holds an escape (a backslash: not the plain shape)."""
    b = a
    while b < end and blob[b] != 34 and blob[b] != 92:
        b += 1
    return b if b < end and blob[b] == 34 else -1


@njit(cache=True, nogil=True)
def _quoted(blob, i, end):  # pragma: no cover - compiled
    """The string whose opening quote is at ``i``: (its text's first byte, its closing quote), or (-1, -1) when
    ``i`` holds no quote or the string is not of the plain shape (:func:`_string_end`)."""
    if i >= end or blob[i] != 34:
        return -1, -1
    b = _string_end(blob, i + 1, end)
    return (i + 1, b) if b >= 0 else (-1, -1)


@njit(cache=True, nogil=True)
def _key_is(blob, a, words, w, n):  # pragma: no cover - compiled
    for i in range(n):
        if blob[a + i] != words[w, i]:
            return False
    return True


@njit(cache=True, nogil=True)
def read_rows(blob, rows, words, code_of, count, card, ev, ev_dd, vals, has):  # pragma: no cover - compiled
    """Parse ``rows`` options JSON texts, one a line of ``blob`` (bytes, rows separated by a newline), written as
    :func:`write_rows` writes them or with other spacing and key order: per row ``count``; per option ``card`` (its
    code's index, ``code_of`` (256, 256) giving it by the code's two bytes, -1 for none), ``ev``, ``ev_dd``
    (options, 4), ``vals`` / ``has`` (options, 3: LOSS_KEYS, NaN for null). Returns the options read, or -1 when
    any text is not of that plain shape (another key, a string escape, an exponent, an unknown card code, a
    missing field...): the caller then parses them all with a full JSON reader. ``words``: the keys card, kind,
    ev, ev_dd, loss, loss_dd, loss_ref (padded bytes)."""
    i = 0
    n = blob.shape[0]
    o = 0
    lens = np.zeros(words.shape[0], np.int64)  # the keys' lengths
    for w in range(words.shape[0]):
        while lens[w] < words.shape[1] and words[w, lens[w]] != 0:
            lens[w] += 1
    for r in range(rows):
        end = i
        while end < n and blob[end] != 10:
            end += 1
        i = _ws(blob, i, end)
        if i >= end or blob[i] != 91:  # '['
            return -1
        i = _ws(blob, i + 1, end)
        c = 0
        if i < end and blob[i] == 93:  # ']': no options
            i += 1
        else:
            while True:
                if i >= end or blob[i] != 123 or o >= card.shape[0]:  # '{'
                    return -1
                i += 1
                got_card = False
                got_ev = False
                got_dd = False
                for k in range(3):
                    has[o, k] = False
                    vals[o, k] = 0.0
                while True:
                    a, b = _quoted(blob, _ws(blob, i, end), end)
                    if b < 0:
                        return -1
                    i = _ws(blob, b + 1, end)
                    if i >= end or blob[i] != 58:  # ':'
                        return -1
                    i = _ws(blob, i + 1, end)
                    word = -1
                    for w in range(words.shape[0]):
                        if lens[w] == b - a and _key_is(blob, a, words, w, lens[w]):
                            word = w
                            break
                    if word < 0:
                        return -1
                    if word <= 1:  # card, kind: a string
                        a, b = _quoted(blob, i, end)
                        if b < 0:
                            return -1
                        if word == 0:  # the code's index, by its two bytes
                            found = code_of[blob[a], blob[a + 1]] if b - a == 2 else -1
                            if found < 0:
                                return -1
                            card[o] = found
                            got_card = True
                        i = b + 1
                    elif word <= 3:  # ev, ev_dd: four numbers
                        out = ev if word == 2 else ev_dd
                        if i >= end or blob[i] != 91:
                            return -1
                        i += 1
                        for s in range(4):
                            i = _ws(blob, i, end)
                            if s:
                                if i >= end or blob[i] != 44:
                                    return -1
                                i = _ws(blob, i + 1, end)
                            i, v = _read_number(blob, i, end)
                            if i < 0 or np.isnan(v):
                                return -1
                            out[o, s] = v
                        i = _ws(blob, i, end)
                        if i >= end or blob[i] != 93:
                            return -1
                        i += 1
                        if word == 2:
                            got_ev = True
                        else:
                            got_dd = True
                    else:  # a loss: a number or null
                        i, v = _read_number(blob, i, end)
                        if i < 0:
                            return -1
                        vals[o, word - 4] = v
                        has[o, word - 4] = True
                    i = _ws(blob, i, end)
                    if i < end and blob[i] == 44:
                        i += 1
                        continue
                    if i < end and blob[i] == 125:  # '}'
                        i += 1
                        break
                    return -1
                if not (got_card and got_ev and got_dd):
                    return -1
                o += 1
                c += 1
                i = _ws(blob, i, end)
                if i < end and blob[i] == 44:
                    i = _ws(blob, i + 1, end)
                    continue
                if i < end and blob[i] == 93:
                    i += 1
                    break
                return -1
        if _ws(blob, i, end) != end:
            return -1
        count[r] = c
        i = end + 1
    if i < n:  # more lines than rows: a newline inside a text
        return -1
    return o


#: The keys :func:`read_rows` knows, in its order (padded bytes).
WORDS = _table(("card", "kind", "ev", "ev_dd") + LOSS_KEYS)


def code_table(codes: list[str]) -> np.ndarray:
    """(256, 256) the index of each two-byte code of ``codes``, -1 elsewhere (:func:`read_rows`' ``code_of``)."""
    out = np.full((256, 256), -1, np.int64)
    for i, c in enumerate(codes):
        b = c.encode("ascii")
        out[b[0], b[1]] = i
    return out
