"""What the nightly benchmarks share: running the commands of this checkout, cutting a room into days, timing a
child process, and the results file (machine, load, command, commit, parameters, figures) they write."""

from __future__ import annotations

import gzip
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def _commit() -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    changed = [x for x in git("status", "--porcelain", "--untracked-files=no").splitlines()
               if "benchmarks/results/" not in x]
    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(changed)}


def _machine() -> dict[str, Any]:
    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


class Results:
    """A benchmark's results: made when it starts (load, command, commit read then), figures added, written whole to
    ``benchmarks/results/<name>.json``."""

    def __init__(self, name: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.doc: dict[str, Any] = {"name": name, "machine": _machine(), "load_start": round(os.getloadavg()[0], 2),
                                    "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]),
                                    **_commit(), "parameters": parameters, "figures": {}, "tables": {}}

    def figure(self, key: str, value: Any, unit: str, what: str) -> None:
        self.doc["figures"][key] = {"value": value, "unit": unit, "what": what}
        print(f"{what}: {value} {unit}".rstrip())

    def table(self, key: str, rows: list[dict[str, Any]]) -> None:
        self.doc["tables"][key] = rows

    def write(self, path: Path | None = None) -> Path:
        self.doc["load_end"] = round(os.getloadavg()[0], 2)
        target = path or RESULTS / f"{self.name}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=float) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        print(f"wrote {target}")
        return target
