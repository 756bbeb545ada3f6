"""Compiled scan of JSON lines for keys repeated inside one object (a fast parser lets the last one win).

Every decoded line goes through it, so it must cost little: one pass over the bytes, a hash per
key. It only answers "certainly none" or "maybe"; a "maybe" (a repeat, a hash collision, an escaped
key, deep or wide objects) is settled exactly by the standard library in :mod:`analyzer.validate`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MAX_DEPTH = 16
_MAX_KEYS = 64


@njit(cache=True, nogil=True)
def read_string(blob, i, end, hashed):  # pragma: no cover - compiled
    """The JSON string opening at ``blob[i]`` (a '"'): the index of its closing quote, a 64-bit hash of its
    bytes (when ``hashed``; else the start value) and whether it holds an escape (a backslash: the same
    text may then be spelt two ways, so a hash cannot tell two keys apart)."""
    j = i + 1
    h = np.int64(1469598103)
    esc = False
    while j < end and blob[j] != 34:
        if blob[j] == 92:
            esc = True
            j += 2
            continue
        if hashed:
            h = h * 1099511628211 + blob[j]
        j += 1
    return j, h, esc


@njit(cache=True, nogil=True)
def maybe_duplicate_keys(blob, offsets):  # pragma: no cover - compiled
    """For each line ``blob[offsets[i]:offsets[i + 1]]`` (valid JSON): 1 when a key may repeat in one object."""
    n = offsets.shape[0] - 1
    out = np.zeros(n, np.uint8)
    keys = np.zeros((_MAX_DEPTH, _MAX_KEYS), np.int64)
    nkeys = np.zeros(_MAX_DEPTH, np.int64)
    is_obj = np.zeros(_MAX_DEPTH, np.bool_)
    want_key = np.zeros(_MAX_DEPTH, np.bool_)
    for line in range(n):
        i = offsets[line]
        end = offsets[line + 1]
        depth = -1
        flag = 0
        while i < end and flag == 0:
            c = blob[i]
            if c == 34:  # '"'
                j, h, esc = read_string(blob, i, end, True)
                if depth >= 0 and is_obj[depth] and want_key[depth]:
                    if esc or nkeys[depth] >= _MAX_KEYS:
                        flag = 1
                    else:
                        for k in range(nkeys[depth]):
                            if keys[depth, k] == h:
                                flag = 1
                        keys[depth, nkeys[depth]] = h
                        nkeys[depth] += 1
                        want_key[depth] = False
                i = j + 1
                continue
            if c == 123 or c == 91:  # '{' '['
                depth += 1
                if depth >= _MAX_DEPTH:
                    flag = 1
                    break
                is_obj[depth] = c == 123
                want_key[depth] = c == 123
                nkeys[depth] = 0
            elif c == 125 or c == 93:  # '}' ']'
                depth -= 1
            elif c == 44 and depth >= 0 and is_obj[depth]:  # ',' in an object: a key comes next
                want_key[depth] = True
            i += 1
        out[line] = flag
    return out
