"""Validation streams: the memory it holds grows by a few hundred bytes a hand at most (README's promise).

What stays for the whole run is only what the cross-hand checks need (a hash of each hand id with
where it was, each table's last outcome): not the records, not a string per hand. Measured with
tracemalloc at batch boundaries over the second half of a borrow log (tables, so the cross-hand state
is exercised), as the slope of a least-squares line.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import orjson
import pytest

from analyzer.logs import format_record
from analyzer.simulate.borrow import simulate
from analyzer.validate import generate_checked

BATCH = 64
#: Bytes a hand may add to what validation holds: a dict entry and a table's outcome now and then
#: (measured ~240); keeping each table's last record and a "file:line" string cost ~1,600.
MAX_BYTES_PER_HAND = 600


def _log(path: Path, n: int) -> None:
    base = [orjson.loads(format_record(r)) for r in simulate(hands=64, players=8, seed=1).records]
    with path.open("wb") as f:
        for k in range(n):
            obj = dict(base[k % len(base)])
            obj["hand_id"] = f"h{k}"
            obj["table_id"] = f"r{k // len(base)}-{obj['table_id']}"  # every copy a table of its own
            obj["players"] = [f"{p}r{k // len(base)}" for p in obj["players"]]  # and its own people: no duplicate-deal
            f.write(orjson.dumps(obj) + b"\n")


@pytest.mark.slow
def test_memory_held_while_validating_grows_little_per_hand(tmp_path: Path) -> None:
    n = 1024
    path = tmp_path / "borrow.jsonl"
    _log(path, n)
    xs: list[int] = []
    ys: list[int] = []
    tracemalloc.start()
    try:
        for i, item in enumerate(generate_checked([str(path)], batch_size=BATCH, keep_records=False)):
            assert item.ok, item.check.problems
            if (i + 1) % BATCH == 0 and i + 1 >= n // 2:
                xs.append(i + 1)
                ys.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    slope = float(np.polyfit(xs, ys, 1)[0])
    assert slope < MAX_BYTES_PER_HAND, f"validation holds {slope:.0f} more bytes for every hand read"
