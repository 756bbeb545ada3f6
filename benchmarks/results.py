"""Results files: what a benchmark measured, with the machine, its load, the command, the commit and the parameters.

A benchmark builds a :class:`Results` when it starts (the load, the command line and the commit are read then),
adds its figures (one number each, with a unit and a sentence saying what it is) and its tables, prints them, and
writes ``benchmarks/results/<name>.json`` whole (a temporary file renamed over the old one). The evaluation pages
(docs/evaluation*.md) are built from these files by ``python -m benchmarks.evaluation_page``; nothing on them is typed
by hand.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def load() -> float:
    """The machine's 1-minute load average (what else shares the cores)."""
    return round(os.getloadavg()[0], 2)


def machine() -> dict[str, Any]:
    """The machine a figure was measured on: CPU model, cores (all and usable here), memory, Python, system."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        mem_gb = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable, "memory_gb": mem_gb,
            "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}"}


def commit() -> dict[str, Any]:
    """The checkout's commit and whether its tracked files differ from it (results files aside)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "HEAD")
    changed = [line for line in git("status", "--porcelain", "--untracked-files=no").splitlines()
               if "benchmarks/results/" not in line and "docs/evaluation" not in line]
    return {"commit": head or None, "dirty": bool(changed)}


def command_line(module: str, argv: list[str] | None = None) -> str:
    """How the benchmark was run, as a person would type it again."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python", "-m", module, *map(shlex.quote, args)])


@dataclass
class Results:
    """One benchmark's results file, filled as it runs."""

    name: str  # the file's name: results/<name>.json
    title: str  # a heading for the page
    section: str  # the evaluation page's section (its anchor)
    command: str
    parameters: dict[str, Any] = field(default_factory=dict)
    about: str = ""  # what the benchmark measures, a sentence or two for the page
    figures: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load_start: float = field(default_factory=load)
    revision: dict[str, Any] = field(default_factory=lambda: commit())  # the code measured: read when it starts

    def figure(self, key: str, value: Any, unit: str = "", about: str = "", goal: str | None = None) -> Any:
        """Add one figure (printed now) and return its value. ``goal``: the target it is held to, in words."""
        if isinstance(value, float):
            value = float(f"{value:.4g}")
        self.figures.append({"key": key, "value": value, "unit": unit, "about": about, **({"goal": goal} if goal else {})})
        print(f"{about or key}: {value}{' ' + unit if unit else ''}" + (f"  (goal {goal})" if goal else ""), flush=True)
        return value

    def table(self, key: str, title: str, columns: list[str], rows: list[list[Any]], about: str = "",
              page: bool = True) -> None:
        """Add one table (printed now); cells are numbers or short strings. ``page``: False for a table the file keeps
        but the evaluation page does not draw (one row a room, a night-by-night log)."""
        def cell(x: Any) -> Any:
            if isinstance(x, float):
                return None if x != x else float(f"{x:.4g}")
            return x

        rows = [[cell(x) for x in r] for r in rows]
        self.tables.append({"key": key, "title": title, "columns": columns, "rows": rows, "about": about,
                            **({} if page else {"section": "file-only"})})
        widths = [max(len(str(c)), *(len(_shown(r[i])) for r in rows)) if rows else len(str(c))
                  for i, c in enumerate(columns)]
        print(f"\n{title}")
        print("  ".join(str(c).rjust(w) for c, w in zip(columns, widths)))
        for r in rows:
            print("  ".join(_shown(x).rjust(w) for x, w in zip(r, widths)))
        print(flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(text, flush=True)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "section": self.section, "about": self.about,
                "command": self.command, **self.revision, "machine": machine(),
                "load": {"start": self.load_start, "end": load()}, "parameters": self.parameters,
                "figures": self.figures, "tables": self.tables, "notes": self.notes}

    def write(self, folder: Path = RESULTS) -> Path:
        """Write results/<name>.json whole (or leave the old file as it was)."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.name}.json"
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{self.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", flush=True)
        return path


def _shown(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}" if abs(x) >= 10000 else str(x)
    return str(x)


def read_all(folder: Path = RESULTS) -> list[dict[str, Any]]:
    """Every results file, by name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
