"""Write the evaluation pages from benchmarks/results/*.json: every figure with the command, commit and machine behind it.

    python -m benchmarks.evaluation_page            # writes docs/evaluation.md and docs/evaluation-detection.md
    python -m benchmarks.evaluation_page --check    # exit 1 when a page is not what the results make

The evaluation is one document in two pages (speed and correctness; detection), each under the docs' size limit.
The pages are nothing but the results files rendered (tests/benchmarks/test_evaluation_page.py holds the committed
pages to what this makes of the committed results), so no figure on them is typed by hand. Each section has a fixed
heading (the docs link to its anchor); a section whose benchmark has not written its file yet says so and names
the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.results import RESULTS, ROOT, read_all

DOCS = ROOT / "docs"

#: The sections in order: anchor, heading, and the command that fills it (shown while its file is missing).
SECTIONS: list[tuple[str, str, str]] = [
    ("demo", "Demo", "python -m benchmarks.bench_demo"),
    ("validation", "Validation", "python -m benchmarks.bench_validate --small-runs 5 --runs 7"),
    ("validation-memory", "Validation memory", "python -m benchmarks.bench_validate_memory"),
    ("hostile", "Hostile", "python -m benchmarks.bench_hostile"),
    ("simulation", "Simulation", "python -m benchmarks.bench_simulate"),
    ("decisions", "Decisions", "python -m benchmarks.bench_decisions --hands 600 --accuracy-hands 10"),
    ("options-column", "Options column", "python -m benchmarks.bench_options"),
    ("value-model", "Value model", "python -m benchmarks.train_value"),
    ("scale", "Scale", "python -m benchmarks.bench_audit_scale --sizes 4000 16000"),
    ("audit-memory", "Audit memory", "python -m benchmarks.bench_audit_memory --sizes 4000 16000 64000"),
    ("dask", "Dask", "python -m benchmarks.bench_dask_workers"),
    ("platform-scale", "Platform scale", "python -m benchmarks.scale_room"),
    ("report", "Report", "python -m benchmarks.bench_report"),
    ("detection", "Detection", "python -m benchmarks.run_all --only detection"),
    ("private-table", "Private table", "python -m benchmarks.eval_private_table"),
    ("burst-null", "Burst null", "python -m benchmarks.burst_null --sets extra,honest"),
    ("calibration", "Calibration", "python -m benchmarks.eval_simulators"),
    ("held-out-simulators", "Held-out simulators", "python -m benchmarks.eval_heldout TABLES"),
    ("nightly-looks", "Nightly looks", "python -m benchmarks.nightly_looks"),
    ("skill", "Skill", "python -m benchmarks.eval_players"),
    ("gate", "Gate", "python -m benchmarks.gate_mutations"),
]

#: The detection sections' page; every other section is on docs/evaluation.md.
DETECTION = {"detection", "private-table", "burst-null", "calibration", "held-out-simulators", "nightly-looks",
             "skill"}
#: Each page's file name (under docs/) and title.
PAGES: dict[str, str] = {"evaluation.md": "Evaluation", "evaluation-detection.md": "Evaluation: detection"}


def page_of(anchor: str) -> str:
    """The page (a file name under docs/) that holds a section."""
    return "evaluation-detection.md" if anchor in DETECTION else "evaluation.md"

INTRO = """\
Every figure on this page comes from a results file in `benchmarks/results/`, written by the command shown with it
(run from the repository's root), on the machine and at the load named beside it; `python -m
benchmarks.evaluation_page` writes the page from those files, and a test holds the page to them. To measure again,
run the command (benchmarks/README.md lists them all; `python -m benchmarks.run_all` runs every one) and then the
page's command. A run made in a smaller mode than the benchmark's default says so in its parameters.

The evaluation has two pages: [speed, memory and correctness](evaluation.md) and [detection](evaluation-detection.md)
(collusion found and missed, calibration, the nightly looks, skill).
"""


def _cell(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if x != x:
            return "–"
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 10000 else str(x)
    return str(x).replace("|", "\\|").replace("\n", " ")


def _params(p: dict[str, Any]) -> str:
    return ", ".join(f"{k} `{json.dumps(v, ensure_ascii=False)}`" for k, v in p.items()) or "the defaults"


def _where(r: dict[str, Any]) -> str:
    m = r["machine"]
    commit = (r.get("commit") or "?")[:10] + (" with uncommitted changes" if r.get("dirty") else "")
    return (f"Commit {commit}; {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['memory_gb']} GB, "
            f"Python {m['python']}; load {r['load']['start']} at the start, {r['load']['end']} at the end.")


def _table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in rows]
    return out


def _figures(figs: list[dict[str, Any]]) -> list[str]:
    goals = any("goal" in f for f in figs)
    cols = ["Figure", "Value", *(["Goal"] if goals else [])]
    rows = [[f["about"] or f["key"], f"{_cell(f['value'])}{' ' + f['unit'] if f['unit'] else ''}",
             *([f.get("goal", "")] if goals else [])] for f in figs]
    return _table(cols, rows)


def _block(r: dict[str, Any], tables: list[dict[str, Any]], figures: bool) -> list[str]:
    out = [f"### {r['title']}", ""]
    if r.get("about"):
        out += [r["about"], ""]
    out += [f"`{r['command']}`", "", f"{_where(r)} Parameters: {_params(r['parameters'])}.", ""]
    if figures and r["figures"]:
        out += [*_figures(r["figures"]), ""]
    for t in tables:
        out += [f"{t['title']}:" + (f" {t['about']}" if t.get("about") else ""), "", *_table(t["columns"], t["rows"]), ""]
    out += [f"*{n}*" for n in r.get("notes", [])] + ([""] if r.get("notes") else [])
    return out


def render(results: list[dict[str, Any]]) -> dict[str, str]:
    """Each page's text (keyed by its file name under docs/) that the results make (results in any order; files and
    tables go to the section each names)."""
    known = {a for a, _, _ in SECTIONS}
    results = sorted(results, key=lambda r: r["name"])
    for r in results:
        if r["section"] not in known:
            raise ValueError(f"results/{r['name']}.json names section {r['section']!r}, not one of the page's")
    pages = {name: [f"# {title}", "", INTRO] for name, title in PAGES.items()}
    for anchor, heading, command in SECTIONS:
        lines = pages[page_of(anchor)]
        lines += [f"## {heading}", ""]
        blocks = 0
        for r in results:
            own = [t for t in r["tables"] if t.get("section", r["section"]) == anchor]
            if r["section"] == anchor or own:
                lines += _block(r, own, figures=r["section"] == anchor)
                blocks += 1
        if not blocks:
            lines += [f"Not measured yet: `{command}` writes this section's results file.", ""]
    return {name: "\n".join(lines).rstrip("\n") + "\n" for name, lines in pages.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only compare the pages with what the results make")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--out", type=Path, default=DOCS, help="the folder the pages go to (default: docs/)")
    a = ap.parse_args(argv)
    pages = render(read_all(a.results))
    if a.check:
        stale = [name for name, text in pages.items()
                 if not (a.out / name).exists() or (a.out / name).read_text(encoding="utf-8") != text]
        for name in pages:
            print(f"{a.out / name}: " + ("not what the results make: run python -m benchmarks.evaluation_page"
                                         if name in stale else "current"))
        return 1 if stale else 0
    for name, text in pages.items():
        path = a.out / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        print(f"wrote {path} ({len(text.encode('utf-8')):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
