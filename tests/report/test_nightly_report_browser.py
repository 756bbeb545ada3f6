"""The nightly look's report.html in a real browser: the pairs with their verdicts and e-values, the ledger's days."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from audit_synth import as_decision_rows, synthetic_room
from conftest import CHROMIUM, run_cli, watched_page

from analyzer.analysis.execute import Settings
from analyzer.analysis.store import StoreWriter

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]

PAIR = ("p00", "p01")
DAYS = 3


@pytest.fixture(scope="module")
def nightly_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A store of three days of a synthetic room with one colluding pair, looked at by `analyzer audit --decisions
    STORE --out DIR` alone: the folder and its audit.json."""
    df = as_decision_rows(synthetic_room(players=16, hands=160, colluders=(PAIR,), favour=2.0, seed=3))
    ids = list(dict.fromkeys(df["hand_id"]))
    root = tmp_path_factory.mktemp("nightly-report")
    store = root / "store"
    for cut in np.array_split(np.arange(len(ids)), DAYS):
        day = [ids[i] for i in cut]
        with StoreWriter(store, Settings.of(8, 1, 0)) as w:
            w.add(df[df["hand_id"].isin(day)], day, [f"fp-{h}" for h in day])
            w.commit()
    out = root / "out"
    r = run_cli("audit", "--decisions", str(store), "--out", str(out))
    assert r.exit_code == 1, r.output
    assert "report.html" in r.output
    return out, orjson.loads((out / "audit.json").read_bytes())


def test_nightly_look_writes_the_audit_page(browser: Any, nightly_out: tuple[Path, dict[str, Any]]) -> None:
    out, audit = nightly_out
    with watched_page(browser, {"width": 1300, "height": 1000}) as pg:
        pg.goto((out / "report.html").as_uri())
        days = pg.locator("[data-role=nightly-day]")
        expect(days).to_have_count(DAYS)
        assert [r.locator("td").first.inner_text() for r in days.all()] == [str(d) for d in range(1, DAYS + 1)]
        hands = [int(r.locator("td").nth(2).inner_text()) for r in days.all()]
        assert hands == [d["hands"] for d in audit["nightly"]["days"]]
        assert "1-3" in pg.locator("[data-role=nightly-window]").inner_text()
        assert "100000" in pg.locator("[data-role=nightly-help]").inner_text()  # 1/alpha at the default alpha
        rows = pg.locator("[data-role=pair-row]")
        expect(rows).to_have_count(min(100, len(audit["pairs"])))
        first = rows.first
        # flagged first: the colluding pair, its e-values now and at most, and the day it was first flagged
        lead = audit["pairs"][0]
        assert lead["verdict"] == "flagged" and sorted(lead["players"]) == list(PAIR)
        cells = first.locator("td").all_inner_texts()
        assert "p00" in cells[1] and "p01" in cells[1]
        assert f"{lead['log10_e']:.2f}" in cells and f"{lead['max_log10_e']:.2f}" in cells
        assert str(lead["flagged_day"]) in cells
        expect(first.locator("[data-role=verdict]")).to_have_count(1)
        assert pg.locator("[data-role=flagged-count] b").inner_text() == str(audit["flagged"])
        # a clear pair shows no day flagged
        clear = next(i for i, p in enumerate(audit["pairs"]) if p["verdict"] == "clear")
        if clear < 100:
            assert "–" in rows.nth(clear).locator("td").all_inner_texts()
        # the plot: each pair's largest log10 e-value against its hands together, the alarm's line at log10(1/alpha)
        expect(pg.locator("[data-role=plot-audit] .main-svg").first).to_be_attached(timeout=20_000)
        plotted = pg.evaluate("""() => { const gd = document.querySelector('[data-role=plot-audit]');
            return { log: !!gd.layout.yaxis.ticktext, ys: gd.data.map((d) => d.y) }; }""")
        # the axis turns logarithmic (log10(1 + v)) when one pair dwarfs the room, as the planted pair does here
        def y(v: float) -> float:
            return float(np.log10(1 + max(0.0, v))) if plotted["log"] else v

        *points, line = plotted["ys"]
        assert len(line) == 2 and line[0] == pytest.approx(y(5.0), abs=1e-9)
        assert sorted(v for ys in points for v in ys) == pytest.approx(
            sorted(y(p["max_log10_e"]) for p in audit["pairs"]), abs=1e-3)
        assert "No alarm" not in pg.locator("body").inner_text()
        # the pair's section opens from the table (its audit entry; no replay: no logs were named)
        first.locator("a", has_text="details").click()
        expect(pg.locator("[data-role=detail-pair]")).to_be_visible()
