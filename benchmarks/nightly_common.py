"""What the nightly benchmarks share: running the commands of this checkout, cutting a room into days, timing a
child process, and the results file (machine, load, command, commit, parameters, figures) they write."""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def analyzer(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """``analyzer ARGS`` in a process of its own: the result, its wall seconds and its CPU seconds (user + system of
    the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", *args], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in ok:
        raise RuntimeError(f"analyzer {' '.join(args)}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r, wall, cpu


def cut_days(log: Path, folder: Path, per_day: int, days: int) -> list[Path]:
    """The room's first ``days`` x ``per_day`` hands, in the log's order, as one file a day."""
    folder.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if log.suffix == ".gz" else open
    with opener(log, "rt", encoding="utf-8") as f:
        lines = f.readlines()
    out = []
    for d in range(days):
        chunk = lines[d * per_day:(d + 1) * per_day]
        if not chunk:
            break
        path = folder / f"day{d + 1:03d}.jsonl"
        path.write_text("".join(chunk), encoding="utf-8")
        out.append(path)
    return out


#: Titles of the nightly benchmarks' results on the evaluation page.
TITLES = {"nightly_look_cost": "A nightly look's cost, night 1 and night 20, interleaved",
          "nightly_null": "Honest pairs looked at every night: the share ever alarmed",
          "nightly_looks": "Twenty nights of one room: the look's cost and when pairs are flagged",
          "nightly_price": "The price of every look, a priori: hands to the nightly alarm over the fixed test's"}


class Results(results.Results):
    """The toolkit's results file in the nightly section, with figures given as (key, value, unit, what) and tables
    as rows of dicts."""

    def __init__(self, name: str, parameters: dict[str, Any]) -> None:
        super().__init__(name, TITLES.get(name, TITLES["nightly_looks"]), "nightly-looks",
                         results.command_line(f"benchmarks.{Path(sys.argv[0]).stem}"), parameters)

    def figure(self, key: str, value: Any, unit: str = "", about: str = "", goal: str | None = None) -> Any:
        return super().figure(key, value if isinstance(value, (int, float, str)) or value is None else str(value),
                              unit, about, goal)

    def table(self, key: str, rows: list[dict[str, Any]], title: str = "", columns: list[str] | None = None,
              about: str = "", page: bool = True) -> None:  # type: ignore[override]
        """``page``: False for a table kept in the file only (a night-by-night log), not drawn on the page."""
        cols = columns or (list(rows[0]) if rows else [])
        super().table(key, title or key, cols, [[_cell(r.get(c)) for c in cols] for r in rows], about, page)


def _cell(x: Any) -> Any:
    """A table's cell: a number or a short text (lists and dicts as JSON)."""
    return x if isinstance(x, (int, float, str)) or x is None else json.dumps(x)
