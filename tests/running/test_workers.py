"""Worker processes: never more than the cores or the batches."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import legal_obj

from analyzer.validate import generate_checked


def test_jobs_never_start_more_processes_than_cores(tmp_path: Path) -> None:
    from analyzer.commands.common import execution_for
    from analyzer.running.jobs import usable_cores

    assert execution_for([], 10_000, None).jobs == usable_cores()
    assert execution_for([], 10_000, "local").jobs == usable_cores()
    assert execution_for([], 64, "tcp://10.0.0.1:8786").jobs == 64  # a remote cluster's workers are not this machine's


def _log_of(tmp_path: Path, objs: list[dict] | None = None, name: str = "log.jsonl") -> Path:
    p = tmp_path / name
    objs = objs if objs is not None else [legal_obj(s, f"h{s}") for s in range(3)]
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


def test_workers_are_capped_by_cores_and_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import concurrent.futures

    started: list[int] = []

    class Recording(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers: int, **kw: object) -> None:
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    log = _log_of(tmp_path, [legal_obj(s, f"h{s}") for s in range(25)])
    items = list(generate_checked([str(log)], jobs=1000, batch_size=10, keep_records=False))
    assert len(items) == 25 and all(it.ok for it in items)
    assert all(n <= 3 for n in started)  # 3 batches: never 1000 workers
