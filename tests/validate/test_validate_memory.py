"""Validation streams: the memory it holds grows by a few hundred bytes a hand at most (README's promise).

What stays for the whole run is only what the cross-hand checks need (a hash of each hand id with
where it was, each table's last outcome): not the records, not a string per hand. Measured with
tracemalloc at batch boundaries over the second half of a borrow log (tables, so the cross-hand state
is exercised), as the slope of a least-squares line.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import legal_obj, run_cli

import analyzer.validate as validate_mod
from analyzer.logs import format_record
from analyzer.simulate.borrow import simulate
from analyzer.validate import MAX_KEPT_PROBLEMS, generate_checked, validate

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


def _bad_gz(tmp_path: Path, n: int) -> Path:
    p = tmp_path / "bad.jsonl.gz"
    p.write_bytes(gzip.compress(b"x\n" * n))
    return p


def test_problems_stream_out_and_the_summary_stays_bounded(tmp_path: Path) -> None:
    n = MAX_KEPT_PROBLEMS + 2500
    gz = _bad_gz(tmp_path, n)
    seen: list[int] = []
    summary = validate([str(gz)], on_problem=lambda p: seen.append(p.line or 0))
    assert summary.n_problems == n and len(seen) == n and seen[:3] == [1, 2, 3]
    assert len(summary.problems) == MAX_KEPT_PROBLEMS and summary.truncated == 2500
    assert summary.by_code == {"not-json": n}


def test_json_output_is_one_document_written_as_it_goes(tmp_path: Path) -> None:
    gz = _bad_gz(tmp_path, MAX_KEPT_PROBLEMS + 10)
    r = run_cli("validate", str(gz), "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["hands"] == MAX_KEPT_PROBLEMS + 10 and len(doc["problems"]) == MAX_KEPT_PROBLEMS + 10
    assert doc["problem_counts"] == {"not-json": MAX_KEPT_PROBLEMS + 10}
    ok = run_cli("validate", str(_log_of(tmp_path)), "--format", "json")
    assert ok.exit_code == 0 and json.loads(ok.output)["problems"] == []


def test_memory_stays_flat_however_many_bad_lines(tmp_path: Path) -> None:
    """Peak traced memory for 60,000 bad lines is no more than for 12,000 plus a small margin."""
    def peak(n: int) -> int:
        gz = _bad_gz(tmp_path, n)
        tracemalloc.start()
        validate([str(gz)], on_problem=lambda p: None)
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out

    peak(1000)  # imports and caches first
    small, big = peak(12_000), peak(60_000)
    assert big < small + (1 << 20), (small, big)


def _log_of(tmp_path: Path, objs: list[dict] | None = None, name: str = "log.jsonl") -> Path:
    p = tmp_path / name
    objs = objs if objs is not None else [legal_obj(s, f"h{s}") for s in range(3)]
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


def test_a_tables_last_hand_is_kept_as_its_outcome_and_old_tables_are_forgotten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.logs import format_record
    from analyzer.simulate.borrow import simulate

    recs = list(simulate(hands=6, players=4, seed=2).records)
    log = tmp_path / "borrow.jsonl"
    log.write_bytes(b"".join(format_record(r) + b"\n" for r in recs))
    items = list(generate_checked([str(log)], keep_records=False))
    assert all(it.record is None for it in items)  # nothing of a hand outlives its check
    assert all(it.ok for it in items)
    # with room for one table only, a table's chain is still checked hand after hand
    monkeypatch.setattr(validate_mod, "MAX_OPEN_TABLES", 1)
    assert [it.ok for it in generate_checked([str(log)], keep_records=False)] == [True] * 6
