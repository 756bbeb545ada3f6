"""Load time of the 10,000-hand audit page in headless chromium (navigation start to load event).

    python -m benchmarks.bench_report [--runs 5]      # writes results/report.json

Prints each run and the median; needs playwright and /usr/bin/chromium. A figure, not a test:
the machine's load decides it (note ``uptime`` next to it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from report_fixtures import audit_run, big_room, room  # noqa: E402  (the tests' fixtures: 780 pairs, 10,000 hands)

from analyzer.report.audit import write_audit_report  # noqa: E402
from benchmarks.results import Results, command_line  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    res = Results("report", "The audit page's load time", "report", command_line("benchmarks.bench_report", argv),
                  parameters={"runs": args.runs},
                  about="The audit page of a 10,000-hand room with 780 pairs (the tests' big-room fixture) opened in "
                        "headless chromium: navigation start to the load event.")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        decisions, audit = big_room(audit_run(Path(tmp)))  # entries copied from a real audit of a small room
        write_audit_report(tmp, audit, decisions=decisions, records=room(30))
        size = (Path(tmp) / "report.html").stat().st_size
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        times = []
        for _ in range(args.runs):
            page = browser.new_page()
            page.goto((Path(tmp) / "report.html").as_uri())
            times.append(page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; }"))
            page.close()
        browser.close()
    res.figure("page_mb", size / 1e6, "MB", "the page's size")
    res.figure("load_ms", statistics.median(times), "ms", f"load time, median of {len(times)}")
    res.note(f"each run: {', '.join(f'{t:.0f}' for t in times)} ms")
    res.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
