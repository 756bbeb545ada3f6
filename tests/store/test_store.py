"""The decision store: round trip, refusal of other logs or settings, appends, incremental audit = full audit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from conftest import feed_room_days, run_cli

from analyzer.analysis.decisions import analyse
from analyzer.analysis.execute import Execution, Settings
from analyzer.analysis.store import StoreError, StoreWriter, collect_rows, open_store, read_rows
from analyzer.logs import format_record
from analyzer.validate import generate_valid

OPTS = ["--samples", "2", "--dd-samples", "1"]
SETTINGS = Settings.of(2, 1, 0)


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A small room cut into three days of 12 hands."""
    return feed_room_days(tmp_path_factory.mktemp("days"), [12, 12, 12], seed=5)


@pytest.fixture(scope="module")
def store12(days: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("s") / "store"
    r = run_cli("decisions", str(days[0]), str(days[1]), "--out", str(store), *OPTS, "--batch-hands", "5")
    code, out = r.exit_code, r.output
    assert code == 0, out
    return store


def test_store_round_trips_the_rows_and_knows_its_hands(days: list[Path], store12: Path) -> None:
    st = open_store(store12)
    assert st.settings == SETTINGS
    assert len(st.parts) == 5  # 24 hands in parts of 5
    ids = [it.record.hand_id for it in generate_valid([str(days[0]), str(days[1])])]
    assert sorted(st.hands) == sorted(ids)
    fresh = analyse(generate_valid([str(days[0]), str(days[1])]), samples=2, dd_samples=1, seed=0)
    rows = read_rows(st)
    pd.testing.assert_frame_equal(rows, fresh)
    assert pd.read_parquet(store12).shape == fresh.shape  # pandas reads the folder as one table


def test_appending_a_day_analyses_only_its_hands(days: list[Path], store12: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    code = run_cli("decisions", str(days[0]), str(days[1]), "--out", str(store), *OPTS, "--batch-hands", "5").exit_code
    assert code == 0
    before = set(p.name for p in store.iterdir())
    r = run_cli("decisions", str(days[0]), str(days[1]), str(days[2]), "--out", str(store), *OPTS)
    code, out = r.exit_code, r.output
    assert code == 0 and "from 12 new hands" in out and "24 hands already there" in out
    added = set(p.name for p in store.iterdir()) - before
    assert len(added) == 1 and len(open_store(store).hands) == 36
    r = run_cli("decisions", str(days[2]), "--out", str(store), *OPTS)
    code, out = r.exit_code, r.output
    assert code == 0 and "from 0 new hands" in out and set(p.name for p in store.iterdir()) - before == added


def test_incremental_audit_equals_the_full_audit(days: list[Path], store12: Path, tmp_path: Path) -> None:
    logs = [str(d) for d in days]
    # the store was written at `decisions`' defaults (the learned model); an audit reading it takes its settings
    code_full = run_cli("audit", *logs, "--out", str(tmp_path / "full"), *OPTS, "--policy", "model").exit_code
    r = run_cli("audit", *logs, "--decisions", str(store12), "--out", str(tmp_path / "inc"))
    code_inc, out = r.exit_code, r.output
    assert code_inc == code_full and code_full in (0, 1), out
    full = json.loads((tmp_path / "full" / "audit.json").read_text())
    inc = json.loads((tmp_path / "inc" / "audit.json").read_text())
    assert inc == full
    assert any(e["reasons"] for p in full["pairs"] for e in p["evidence"])  # shown rows get their reasons


def test_collect_rows_reuses_the_store_and_analyses_the_rest(days: list[Path], store12: Path) -> None:
    logs = [str(d) for d in days]
    both = collect_rows(generate_valid(logs), SETTINGS, Execution(), store=open_store(store12), reasons=True)
    fresh = analyse(generate_valid(logs), samples=2, dd_samples=1, seed=0)
    pd.testing.assert_frame_equal(both, fresh)


def test_a_store_from_other_logs_or_settings_is_refused(days: list[Path], store12: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    # other settings, asked for explicitly
    r = run_cli("audit", str(days[0]), str(days[1]), "--decisions", str(store12), "--samples", "3", "--out", out)
    code, msg = r.exit_code, r.output
    assert code == 2 and "--samples 2" in msg and "--samples 3" in msg
    # the store holds hands these logs do not have
    r = run_cli("audit", str(days[0]), "--decisions", str(store12), "--out", out)
    code, msg = r.exit_code, r.output
    assert code == 2 and "other logs" in msg
    # a hand of the same id whose content differs (one think time changed)
    lines = days[1].read_text().splitlines()
    rec = json.loads(lines[3])
    rec["actions"][5]["ms"] += 1
    changed = tmp_path / "day2.jsonl"
    changed.write_text("\n".join(lines[:3] + [json.dumps(rec)] + lines[4:]) + "\n")
    r = run_cli("players", str(days[0]), str(changed), "--decisions", str(store12))
    code, msg = r.exit_code, r.output
    assert code == 2 and f"{changed}:4" in msg and "differs" in msg
    # appending with other settings
    r = run_cli("decisions", str(days[2]), "--out", str(store12), "--samples", "5")
    code, msg = r.exit_code, r.output
    assert code == 2 and "settings" in msg
    assert not any(p.name.startswith(".") for p in store12.iterdir())
    assert not out.endswith("x") and not Path(out).exists()


def test_a_store_where_logs_are_expected_is_a_clear_usage_error(store12: Path, days: list[Path], tmp_path: Path
                                                                ) -> None:
    r = run_cli("audit", str(store12), "--out", str(tmp_path / "o"))
    code, msg = r.exit_code, r.output
    assert code == 2 and "decision store" in msg and "--decisions" in msg and "not-json" not in msg
    part = next(store12.glob("part-*.parquet"))
    r = run_cli("report", str(part), "--player", "p01")
    code, msg = r.exit_code, r.output
    assert code == 2 and "decision store or Parquet" in msg
    r = run_cli("audit", str(days[0]), "--decisions", str(days[1]), "--out", str(tmp_path / "o"))
    code, msg = r.exit_code, r.output
    assert code == 2 and "not a decision store" in msg


def test_players_and_report_read_the_store(days: list[Path], store12: Path, tmp_path: Path) -> None:
    logs = [str(days[0]), str(days[1])]
    r = run_cli("players", *logs, "--format", "csv", *OPTS)
    code, from_logs = r.exit_code, r.output
    assert code == 0
    r = run_cli("players", *logs, "--decisions", str(store12), "--format", "csv")
    code, from_store = r.exit_code, r.output
    assert code == 0 and from_store == from_logs
    r = run_cli("players", "--decisions", str(store12), "--format", "csv")
    code, alone = r.exit_code, r.output
    assert code == 0 and alone == from_logs
    hand = next(generate_valid([str(days[0])])).record.hand_id
    r = run_cli("report", *logs, "--decisions", str(store12), "--hand", hand, "-o", str(tmp_path / "h.html"))
    code, msg = r.exit_code, r.output
    assert code == 0, msg
    page = (tmp_path / "h.html").read_text()
    assert "regret" in page


def test_writing_is_whole_or_nothing_and_respects_the_umask(days: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "store"
    frame = analyse(generate_valid([str(days[0])]), samples=2, dd_samples=1, seed=0)
    with pytest.raises(RuntimeError), StoreWriter(target, SETTINGS) as w:
        w.add(frame, list(frame["hand_id"].unique()), ["0"] * frame["hand_id"].nunique())
        raise RuntimeError("interrupted")
    assert not target.exists() and list(tmp_path.iterdir()) == []  # no half store, no temporary folder
    old = os.umask(0o027)
    try:
        with StoreWriter(target, SETTINGS) as w:
            w.add(frame, list(frame["hand_id"].unique()), ["0"] * frame["hand_id"].nunique())
            w.commit()
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o750
    assert {p.stat().st_mode & 0o777 for p in target.iterdir()} == {0o640}
    with pytest.raises(StoreError, match="not a decision store"):
        open_store(days[0])


def test_fingerprints_ignore_how_a_hand_was_serialised(days: list[Path], store12: Path, tmp_path: Path) -> None:
    """The same hands written with other spacing and key order are the same hands."""
    respaced = []
    for path in days[:2]:
        for line in path.read_text().splitlines():
            obj = json.loads(line)
            respaced.append(json.dumps(dict(reversed(list(obj.items()))), indent=None, separators=(", ", ": ")))
    log = tmp_path / "respaced.jsonl"
    log.write_text("\n".join(respaced) + "\n")
    assert format_record(next(generate_valid([str(log)])).record) == format_record(
        next(generate_valid([str(days[0])])).record)
    r = run_cli("players", str(log), "--decisions", str(store12), "--format", "csv")
    code, msg = r.exit_code, r.output
    assert code == 0, msg


def test_decisions_says_which_hands_of_other_games_it_left_out(tmp_path: Path) -> None:
    """A log of another game added nothing and said nothing; now it names the hands it left out and why."""

    from conftest import SAMPLES

    r = run_cli("decisions", str(SAMPLES / "heiqi-sample.jsonl"), "-o", str(tmp_path / "st"),
                                 "--samples", "2", "--dd-samples", "0")
    assert r.exit_code == 0
    assert "4 hand(s) of xinyang-heiqi left out: only hands of standard 憋七 have decision rows" in r.output


def test_players_says_which_hands_of_other_games_it_left_out(tmp_path: Path) -> None:
    """`players` on a log mixing games rated the 憋七 players and said nothing of the other game's hands."""

    from conftest import SAMPLES

    mixed = tmp_path / "mixed.jsonl"
    heiqi = (SAMPLES / "heiqi-sample.jsonl").read_bytes()
    mixed.write_bytes(heiqi + (SAMPLES / "legal.jsonl").read_bytes())
    r = run_cli("players", str(mixed), "--samples", "2", "--dd-samples", "0")
    assert r.exit_code == 0, r.output
    n = sum(1 for line in heiqi.splitlines() if line.strip())
    assert f"{n} hand(s) of xinyang-heiqi left out: only hands of standard 憋七 have decision rows" in r.output
