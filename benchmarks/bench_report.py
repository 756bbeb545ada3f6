"""Load time of the 10,000-hand audit page in headless chromium (navigation start to load event).

    python benchmarks/bench_report.py [--runs 5]

Prints each run and the median; needs playwright and /usr/bin/chromium. A figure, not a test:
the machine's load decides it (note ``uptime`` next to it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from report_fixtures import audit_run, big_room, room  # noqa: E402  (the tests' fixtures: 780 pairs, 10,000 hands)

from analyzer.report.audit import write_audit_report  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
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
    print(f"audit page of 10,000 hands ({size / 1e6:.1f} MB): load {', '.join(f'{t:.0f}' for t in times)} ms; "
          f"median {statistics.median(times):.0f} ms (load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
