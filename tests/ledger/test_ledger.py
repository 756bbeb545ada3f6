"""The evidence ledger: days added one look at a time equal the days of one look at all of them; a write stopped
half way leaves the ledger as it was; a ledger that no longer matches its store is refused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
from audit_synth import as_decision_rows, synthetic_room
from conftest import run_cli

from analyzer.analysis.execute import Settings
from analyzer.analysis.store import StoreWriter, open_store
from analyzer.audit import ledger
from analyzer.audit.ledger import LedgerError, look, open_ledger, replay, update

DAYS = 4
PAIR = ("p00", "p01")


def _rows() -> pd.DataFrame:
    """A synthetic room in the decision rows' schema: 16 players, one colluding pair."""
    df = synthetic_room(players=16, hands=160, colluders=(PAIR,), favour=2.0, seed=3)
    return as_decision_rows(df)


def _add_day(store: Path, day: pd.DataFrame) -> None:
    """One addition, as one `analyzer decisions` run makes it (its rows in two parts)."""
    ids = list(dict.fromkeys(day["hand_id"]))
    with StoreWriter(store, Settings.of(8, 1, 0)) as w:
        for half in (ids[: len(ids) // 2], ids[len(ids) // 2:]):
            w.add(day[day["hand_id"].isin(half)], half, [f"fp-{h}" for h in half])
        w.commit()


@pytest.fixture(scope="module")
def days() -> list[pd.DataFrame]:
    df = _rows()
    ids = list(dict.fromkeys(df["hand_id"]))
    cut = np.array_split(np.arange(len(ids)), DAYS)
    return [df[df["hand_id"].isin([ids[i] for i in c])] for c in cut]


@pytest.fixture(scope="module")
def nightly(days: list[pd.DataFrame], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[pd.DataFrame]]:
    """A store fed day by day with a look after each day: the store and each look's verdicts."""
    store = tmp_path_factory.mktemp("nightly") / "store"
    seen = []
    for day in days:
        _add_day(store, day)
        seen.append(look(open_store(store), alpha=1e-5).pairs)
    return store, seen


@pytest.fixture(scope="module")
def at_once(days: list[pd.DataFrame], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same days added first, the ledger then built in one look."""
    store = tmp_path_factory.mktemp("once") / "store"
    for day in days:
        _add_day(store, day)
    update(open_store(store))
    return store


def test_incremental_ledger_equals_one_built_from_scratch(nightly: tuple[Path, list[pd.DataFrame]],
                                                          at_once: Path) -> None:
    store, _ = nightly
    a, b = open_ledger(open_store(store)), open_ledger(open_store(at_once))
    assert len(a.days) == len(b.days) == DAYS
    assert [d.hands for d in a.days] == [d.hands for d in b.days]
    for da, db in zip(a.contributions(a.days), b.contributions(b.days)):
        pd.testing.assert_frame_equal(da, db)
    pd.testing.assert_frame_equal(a.state.pairs, b.state.pairs)
    pd.testing.assert_frame_equal(a.state.players, b.state.players)
    va = look(open_store(store)).pairs
    vb = look(open_store(at_once)).pairs
    pd.testing.assert_frame_equal(va, vb)
    # the state after the last day is the replay of every day's contribution
    r = replay(a.contributions(a.days), a.state.scores)
    pd.testing.assert_frame_equal(r[["hands_together", "log_e", "max_log_e", "alarm_day"]].sort_index(),
                                  a.state.pairs[["hands_together", "log_e", "max_log_e", "alarm_day"]].sort_index(),
                                  check_exact=False, rtol=1e-12)


def test_a_day_is_read_from_its_own_rows_only(nightly: tuple[Path, list[pd.DataFrame]],
                                              days: list[pd.DataFrame]) -> None:
    store, _ = nightly
    led = open_ledger(open_store(store))
    for d, rows in zip(led.days, days):
        assert d.hands == rows["hand_id"].nunique()
        assert len(d.parts) == 2  # one addition of two parts is one day
    # a day's statistics are those of its rows as a room of their own
    pairs, _ = ledger.day_statistics(days[1])
    got = led.contributions(led.days[1:2])[0].set_index(["actor", "other"])
    want = pairs.set_index(["actor", "other"])
    assert (got["hands"] == want["hands"].reindex(got.index)).all()


def test_flagged_pair_stays_flagged_and_honest_pairs_are_not(nightly: tuple[Path, list[pd.DataFrame]]) -> None:
    _, seen = nightly
    first = None
    for night, pairs in enumerate(seen, 1):
        row = pairs[(pairs["a"] == PAIR[0]) & (pairs["b"] == PAIR[1])].iloc[0]
        if first is None and row["verdict"] == "flagged":
            first = night
            assert row["flagged_day"] == night
        if first is not None:
            assert row["verdict"] == "flagged" and row["flagged_day"] == first
            assert row["max_log10_e"] >= 5
        others = pairs[~((pairs["a"] == PAIR[0]) & (pairs["b"] == PAIR[1]))]
        assert (others["verdict"] != "flagged").all()
    assert first is not None
    last = seen[-1]
    # the running maximum never falls, whatever the e-value does now
    assert (last["max_log10_e"] >= last["log10_e"] - 1e-12).all()


def test_window_of_days_starts_the_e_process_afresh(nightly: tuple[Path, list[pd.DataFrame]]) -> None:
    store, _ = nightly
    st = open_store(store)
    whole = look(st).pairs.set_index(["a", "b"])
    part = look(st, since="3")
    assert [d.number for d in part.window] == [3, 4]
    led = part.ledger
    want = pd.concat(led.contributions(led.days[2:])).groupby(["actor", "other"])["hands_together"].sum()
    got = part.pairs.set_index(["a", "b"])["hands_together"]
    assert len(got) and (got.to_numpy() == want.reindex(got.index).to_numpy()).all()
    assert (got <= whole["hands_together"].reindex(got.index)).all()
    assert look(st, since="2999-01-01").window == []


def test_a_write_stopped_half_way_leaves_the_ledger_as_it_was(days: list[pd.DataFrame], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    _add_day(store, days[0])
    update(open_store(store))
    before = sorted(os.listdir(store / ledger.LEDGER))
    state = (store / ledger.LEDGER / "day-000001" / "state-pairs.parquet").read_bytes()
    _add_day(store, days[1])

    def stopped(*a: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ledger.os, "rename", stopped)
    with pytest.raises(KeyboardInterrupt):
        update(open_store(store))
    monkeypatch.undo()
    assert sorted(os.listdir(store / ledger.LEDGER)) == before
    assert (store / ledger.LEDGER / "day-000001" / "state-pairs.parquet").read_bytes() == state
    # a run killed outright leaves its hidden folder: the next look removes it and writes the day
    (store / ledger.LEDGER / ".day-000002.dead.tmp").mkdir()
    led = update(open_store(store))
    assert [d.number for d in led.days] == [1, 2]
    assert sorted(os.listdir(store / ledger.LEDGER)) == ["day-000001", "day-000002"]


def test_a_ledger_that_no_longer_matches_its_store_is_refused(days: list[pd.DataFrame], tmp_path: Path) -> None:
    store = tmp_path / "store"
    _add_day(store, days[0])
    update(open_store(store))
    state = store / ledger.LEDGER / "day-000001" / "state-pairs.parquet"
    kept = state.read_bytes()
    pd.read_parquet(state).drop(columns=[f"{ledger.SCORES[0]}_BV"]).to_parquet(state, index=False)
    with pytest.raises(LedgerError, match="written by another version of the ledger"):
        open_ledger(open_store(store))
    state.write_bytes(kept)
    doc_path = store / ledger.LEDGER / "day-000001" / "day.json"
    doc = orjson.loads(doc_path.read_bytes())
    doc["parts"]["part-000009.parquet"] = "0" * 32
    doc_path.write_bytes(orjson.dumps(doc))
    with pytest.raises(LedgerError, match="part-000009.parquet is no longer in the store"):
        open_ledger(open_store(store))
    (doc_path).write_bytes(b"{not json")
    with pytest.raises(LedgerError, match="day-000001: not a day of the evidence ledger"):
        open_ledger(open_store(store))


def test_nightly_command_audits_the_store_alone(nightly: tuple[Path, list[pd.DataFrame]], tmp_path: Path) -> None:
    store, _ = nightly
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    r = run_cli("audit", "--decisions", str(copy), "--out", str(tmp_path / "out"))
    assert r.exit_code == 1, r.output
    assert "FLAGGED p00 + p01" in r.output and "(0 new)" in r.output
    doc = orjson.loads((tmp_path / "out" / "audit.json").read_bytes())
    assert doc["format"] == "bieqi-audit" and [d["day"] for d in doc["nightly"]["days"]] == [1, 2, 3, 4]
    flagged = [p["players"] for p in doc["pairs"] if p["verdict"] == "flagged"]
    assert flagged == [list(PAIR)]
    csv = pd.read_csv(tmp_path / "out" / "pairs.csv")
    assert {"log10_e", "max_log10_e", "p_fixed", "verdict", "flagged_day"} <= set(csv.columns)
    r = run_cli("audit", "--decisions", str(copy), "--out", str(tmp_path / "w"), "--since", "4")
    assert r.exit_code in (0, 1) and "days 4-4 of 4" in r.output
    r = run_cli("audit", "--decisions", str(copy), "--out", str(tmp_path / "bad"), "--since", "yesterday")
    assert r.exit_code == 2 and "--since yesterday" in r.output
    r = run_cli("audit", "--out", str(tmp_path / "none"))
    assert r.exit_code == 2 and "Missing argument" in r.output


def test_the_score_is_pluggable_and_kept_by_the_ledger(days: list[pd.DataFrame], tmp_path: Path) -> None:
    store = tmp_path / "store"
    _add_day(store, days[0])
    two = ("imm_marginal_habit_free", "dd_marginal_habit_free")
    led = update(open_store(store), scores=two)
    assert led.state.scores == two and {"dd_marginal_habit_free_S", "imm_marginal_habit_free_S"} <= set(
        led.state.pairs.columns)
    _add_day(store, days[1])
    again = look(open_store(store))  # the default asked for, the ledger's own kept
    assert again.ledger.state.scores == two and len(again.ledger.days) == 2
    assert {"dd_marginal_habit_free_z_ab", "imm_marginal_habit_free_z_ba"} <= set(again.pairs.columns)


def test_an_honest_room_looked_at_every_day_keeps_the_alarm_rate(tmp_path: Path) -> None:
    """A synthetic honest room cut into 16 days, the ledger read after each: the share of pairs whose e-value ever
    reached 1/alpha stays within alpha's sampling error; the fixed-sample p read at the same looks is printed."""
    alpha = 0.01
    df = synthetic_room(players=32, hands=96, run=8, decisions=6, seed=5)
    df = as_decision_rows(df)
    ids = list(dict.fromkeys(df["hand_id"]))
    store = tmp_path / "store"
    for cut in np.array_split(np.arange(len(ids)), 16):
        _add_day(store, df[df["hand_id"].isin([ids[i] for i in cut])])
    led = update(open_store(store))
    ever_e: set[tuple[str, str]] = set()
    ever_fixed: set[tuple[str, str]] = set()
    for d in led.days:
        st = pd.read_parquet(d.path / "state-pairs.parquet").set_index(["actor", "other"])
        v = ledger.verdicts(st, led.state.scores, alpha=alpha, min_hands=1)
        ever_e |= {(a, b) for a, b, m in zip(v["a"], v["b"], v["max_log10_e"]) if m >= np.log10(1 / alpha)}
        ever_fixed |= {(a, b) for a, b, p in zip(v["a"], v["b"], v["p_fixed"]) if p <= alpha}
    pairs = len(v)
    print(f"{pairs} honest pairs, 16 looks: ever alarmed {len(ever_e) / pairs:.4f} (e-process), "
          f"{len(ever_fixed) / pairs:.4f} (fixed-sample p <= {alpha})")
    assert pairs > 300
    assert len(ever_e) / pairs <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / pairs)


def test_both_directions_are_read_together(nightly: tuple[Path, list[pd.DataFrame]], days: list[pd.DataFrame]) -> None:
    """The two directions' cross products are one number a pair (the same on both rows); the room's correlation of
    the directions is small in a room of honest noise; the colluding pair's sum carries more evidence than either
    direction."""
    store, _ = nightly
    pairs, _ = ledger.day_statistics(days[0])
    c = ledger.SCORES[0]
    t = pairs.set_index(["actor", "other"])
    back = t.reindex(pd.MultiIndex.from_arrays([t.index.get_level_values(1), t.index.get_level_values(0)]))
    assert np.allclose(t[f"{c}_cross"].to_numpy(), back[f"{c}_cross"].to_numpy())
    assert (t["both_hands"].to_numpy() <= np.minimum(t["hands"], back["hands"].to_numpy())).all()
    assert (t["both_hands"] > 0).any() and (t[f"{c}_cross"] != 0).any()
    led = open_ledger(open_store(store))
    assert 0 <= led.state.rho(c) < 0.2
    v = look(open_store(store)).pairs.set_index(["a", "b"]).loc[PAIR]
    assert v[f"{c}_z_both"] > max(v[f"{c}_z_ab"], v[f"{c}_z_ba"])
