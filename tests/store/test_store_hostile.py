"""A decision store changed by hand or by accident: each change refused with a StoreError naming the file (and the
part, column or row), exit 2 in the commands, never a traceback, never a row counted twice; Ctrl-C while writing
adds nothing; an output under a file says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import SAMPLES, analyzer_process, clean_exit, feed_room_days, legal_log, run_cli

from analyzer.analysis.decisions import analyse
from analyzer.analysis.execute import Execution, Settings
from analyzer.analysis.store import (
    COMMON,
    META_KEY,
    StoreError,
    StoreWriter,
    collect_rows,
    iter_rows,
    open_store,
    read_rows,
)
from analyzer.validate import generate_valid

OPTS = ["--samples", "1", "--max-samples", "1", "--dd-samples", "1"]
SETTINGS = Settings.of(1, 1, 0, max_samples=1)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A room of 15 hands: the first 12 (the store's) and the 3 others (a later day's)."""
    room, more = feed_room_days(tmp_path_factory.mktemp("log"), [12, 3], seed=11)
    return room, more


@pytest.fixture(scope="module")
def log(logs: tuple[Path, Path]) -> Path:
    return logs[0]


@pytest.fixture(scope="module")
def base(log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the 12 hands in 3 parts of 4."""
    store = tmp_path_factory.mktemp("s") / "store"
    r = run_cli("decisions", str(log), "--out", str(store), *OPTS, "--batch-hands", "4")
    code, out = r.exit_code, r.output
    assert code == 0, out
    assert len(list(store.glob("part-*.parquet"))) == 3
    return store


@pytest.fixture()
def store(base: Path, tmp_path: Path) -> Path:
    """A copy of ``base`` to change."""
    out = tmp_path / "store"
    shutil.copytree(base, out)
    return out


PART = "part-000000.parquet"


def _edit_meta(path: Path, fn: Callable[[bytes], bytes]) -> None:
    """Rewrite the bieqi.store metadata of ``_common_metadata`` or a part."""
    if path.name == COMMON:
        schema = pq.read_schema(path)
        pq.write_metadata(schema.with_metadata({**schema.metadata, META_KEY: fn(schema.metadata[META_KEY])}), path)
    else:
        table = pq.read_table(path)
        md = table.schema.metadata
        pq.write_table(table.replace_schema_metadata({**md, META_KEY: fn(md[META_KEY])}), path)


def _doc(fn: Callable[[dict[str, Any]], Any]) -> Callable[[bytes], bytes]:
    return lambda raw: json.dumps(fn(json.loads(raw))).encode()


def _edit_rows(path: Path, fn: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    """Rewrite a part's rows with pandas, keeping its bieqi.store metadata (as a hand edit would)."""
    table = pq.read_table(path)
    meta = table.schema.metadata[META_KEY]
    out = pa.Table.from_pandas(fn(table.to_pandas()), preserve_index=False)
    pq.write_table(out.replace_schema_metadata({**(out.schema.metadata or {}), META_KEY: meta}), path)


def _settings_with(**kw: Any) -> Callable[[bytes], bytes]:
    return _doc(lambda d: {**d, "settings": {**d["settings"], **kw}})


# --- F1: metadata -------------------------------------------------------------------------------------------------

COMMON_CASES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "bad_json": (lambda raw: b'{"format": ', "is not JSON"),
    "not_utf8": (lambda raw: b"\xff\xfe" + raw, "is not JSON"),
    "list": (lambda raw: b"[1, 2]", "is a list, not an object"),
    "string": (lambda raw: b'"x"', "is the string 'x', not an object"),
    "no_settings": (_doc(lambda d: {k: v for k, v in d.items() if k != "settings"}), "has no 'settings'"),
    "settings_null": (_doc(lambda d: {**d, "settings": None}), "settings: expected an object, not null"),
    "settings_text": (_doc(lambda d: {**d, "settings": "abc"}), "expected an object, not the string 'abc'"),
    "missing_key": (_doc(lambda d: {**d, "settings": {k: v for k, v in d["settings"].items() if k != "samples"}}),
                    "missing 'samples'"),
    "samples_text": (_settings_with(samples="many"), "'samples' must be an integer"),
    "samples_negative": (_settings_with(samples=-5), "'samples' must be an integer from 1"),
    "samples_huge": (_settings_with(samples=10**15), "'samples' must be an integer from 1 to 1000000"),
    "samples_bool": (_settings_with(samples=True), "'samples' must be an integer"),
    "max_samples_float": (_settings_with(max_samples=1.5), "'max_samples' must be an integer"),
    "noise_negative": (_settings_with(noise=-1), "'noise' must be a finite number >= 0"),
    "noise_text": (_settings_with(noise="0"), "'noise' must be a finite number >= 0"),
    "policy_unknown": (_settings_with(policy="oracle"), "'policy' must be one of"),
}


@pytest.mark.parametrize("case", sorted(COMMON_CASES))
def test_bad_common_metadata_is_a_store_error_naming_the_file(store: Path, case: str) -> None:
    fn, words = COMMON_CASES[case]
    _edit_meta(store / COMMON, fn)
    with pytest.raises(StoreError) as e:
        open_store(store)
    assert str(store / COMMON) in str(e.value) and words in str(e.value)


def _json_options_store(store: Path) -> None:
    """The store as the previous layout wrote it: version 1 in every metadata, the options as JSON texts."""
    import orjson

    for path in [store / COMMON, *sorted(store.glob("part-*.parquet"))]:
        _edit_meta(path, _doc(lambda d: {**d, "version": 1}))
    for path in sorted(store.glob("part-*.parquet")):
        _edit_rows(path, lambda df: df.assign(options=[
            orjson.dumps(list(o), option=orjson.OPT_SERIALIZE_NUMPY).decode() for o in df["options"]]))


def test_a_store_of_another_version_is_refused_naming_both_versions(store: Path, log: Path, tmp_path: Path) -> None:
    """A store of the options as JSON texts (version 1) is refused before a row is read: by the library and by
    every command that takes a store, exit 2, naming the file and both versions; nothing written."""
    from analyzer.analysis.store import VERSION

    assert VERSION == 2
    _json_options_store(store)
    with pytest.raises(StoreError) as e:
        open_store(store)
    assert f"{store / COMMON}: a decision store of format 'bieqi-decision-store' version 1; this analyzer reads " \
           f"'bieqi-decision-store' version 2" in str(e.value)
    for args in (["players", str(store)], ["audit", str(log), "--decisions", str(store), "--out", str(tmp_path / "a")],
                 ["decisions", str(log), "--out", str(store)]):
        r = run_cli(*args)
        assert r.exit_code == 2 and "version 1; this analyzer reads" in r.output, (args, r.output)
        assert "Traceback" not in r.output
    assert not (tmp_path / "a").exists()


PART_CASES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "bad_json": (lambda raw: b"{{{", "is not JSON"),
    "settings_text": (_doc(lambda d: {**d, "settings": "abc"}), "expected an object"),
    "hands_null": (_doc(lambda d: {**d, "hands": None}), "'hands': two lists (the hands' ids and fingerprints) "
                                                         "expected, not null"),
    "hands_missing": (_doc(lambda d: {k: v for k, v in d.items() if k != "hands"}), "has no 'hands'"),
    "hands_one": (_doc(lambda d: {**d, "hands": [d["hands"][0]]}), "not a list of 1 item(s)"),
    "hands_text": (_doc(lambda d: {**d, "hands": "abc"}), "not the string 'abc'"),
    "hands_two_texts": (_doc(lambda d: {**d, "hands": ["a", "b"]}), "that are not both lists"),
    "hands_uneven": (_doc(lambda d: {**d, "hands": [d["hands"][0], d["hands"][1][:-1]]}),
                     "4 ids but 3 fingerprints"),
    "hand_id_number": (_doc(lambda d: {**d, "hands": [[1, *d["hands"][0][1:]], d["hands"][1]]}),
                       "the number 1 where a text is expected"),
    "hand_twice": (_doc(lambda d: {**d, "hands": [[d["hands"][0][0]] * 4, d["hands"][1]]}), "listed twice"),
}


@pytest.mark.parametrize("case", sorted(PART_CASES))
def test_bad_part_metadata_is_a_store_error_naming_the_part(store: Path, case: str) -> None:
    fn, words = PART_CASES[case]
    _edit_meta(store / PART, fn)
    with pytest.raises(StoreError) as e:
        open_store(store)
    assert str(store / PART) in str(e.value) and words in str(e.value)


def test_settings_from_dict_round_trips_and_refuses_what_the_options_refuse() -> None:
    s = Settings.of(3, 2, -7, noise=0.5, policy="fast", max_samples=None)
    assert Settings.from_dict(s.to_dict()) == s
    assert Settings.from_dict({**s.to_dict(), "extra": 1}) == s  # a key of a later version is ignored
    assert Settings.from_dict({**s.to_dict(), "noise": 1}).noise == 1.0
    for bad in ({**s.to_dict(), "dd_samples": -1}, {**s.to_dict(), "seed": 2**63}, {**s.to_dict(), "noise": None},
                {**s.to_dict(), "max_samples": 0}, {**s.to_dict(), "policy": 1}, [1, 2], None):
        with pytest.raises(ValueError, match="settings"):
            Settings.from_dict(bad)


@pytest.mark.parametrize("command", ["players", "audit", "report", "decisions"])
def test_the_commands_say_what_is_wrong_with_the_metadata_and_exit_2(store: Path, log: Path, tmp_path: Path,
                                                                     command: str) -> None:
    _edit_meta(store / COMMON, lambda raw: b"\xff\xfe" + raw)
    args = {"players": ["players", str(log), "--decisions", str(store)],
            "audit": ["audit", str(log), "--decisions", str(store), "--out", str(tmp_path / "a")],
            "report": ["report", str(log), "--decisions", str(store), "--player", "p01", "-o",
                       str(tmp_path / "p.html")],
            "decisions": ["decisions", str(log), "--out", str(store), *OPTS]}[command]
    r = run_cli(*args)
    code, out = r.exit_code, r.output
    assert code == 2 and f"{store / COMMON}: its bieqi.store metadata is not JSON" in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "a").exists() and not (tmp_path / "p.html").exists()


# --- F2: a hand in two parts, rows of hands a part does not list ------------------------------------------------------

@pytest.mark.parametrize("copy", ["part-000003.parquet", "part-extra.parquet"])
def test_a_part_copied_in_is_refused_naming_both_parts(store: Path, log: Path, tmp_path: Path, copy: str) -> None:
    shutil.copy(store / PART, store / copy)
    with pytest.raises(StoreError) as e:
        open_store(store)
    msg = str(e.value)
    assert PART in msg and copy in msg and "4 hand(s) in common" in msg
    r = run_cli("players", str(log), "--decisions", str(store))
    code, out = r.exit_code, r.output
    assert code == 2 and copy in out and "count twice" in out
    r = run_cli("audit", str(log), "--decisions", str(store), "--out", str(tmp_path / "a"))
    code, out = r.exit_code, r.output
    assert code == 2 and copy in out and not (tmp_path / "a").exists()


def test_two_stores_merged_are_refused(store: Path, base: Path) -> None:
    # another store of the same hands (other part numbers): the folders merged by hand
    for p in sorted(base.glob("part-*.parquet")):
        shutil.copy(p, store / p.name.replace("part-00000", "part-00010"))
    with pytest.raises(StoreError, match=r"the parts part-000000.parquet and part-000100.parquet both hold"):
        open_store(store)


def test_rows_of_hands_the_part_does_not_list_are_refused(store: Path, log: Path, tmp_path: Path) -> None:
    # the part's metadata lists 2 of its 4 hands: the 2 others would be analysed again and their rows counted twice
    _edit_meta(store / PART, _doc(lambda d: {**d, "hands": [d["hands"][0][:2], d["hands"][1][:2]]}))
    st = open_store(store)
    assert len(st.hands) == 10
    with pytest.raises(StoreError) as e:
        read_rows(st)
    assert str(store / PART) in str(e.value) and "2 hand(s) its metadata does not list" in str(e.value)
    r = run_cli("audit", str(log), "--decisions", str(store), "--out", str(tmp_path / "a"))
    code, out = r.exit_code, r.output
    assert code == 2 and "does not list" in out and "Traceback" not in out


def test_no_row_is_read_twice_from_a_valid_store(base: Path, log: Path) -> None:
    rows = read_rows(open_store(base))
    assert not rows.duplicated(["hand_id", "action"]).any()
    fresh = analyse(generate_valid([str(log)]), samples=1, dd_samples=1, seed=0, max_samples=1)
    pd.testing.assert_frame_equal(rows, fresh)


# --- F3: a part's columns and values ----------------------------------------------------------------------------

def _set(column: str, value: Any) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda df: df.assign(**{column: value})


ROW_CASES: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "drop_regret": (lambda df: df.drop(columns=["regret"]), "column 'regret' is missing"),
    "drop_two": (lambda df: df.drop(columns=["regret", "options"]), "column 'regret' is missing (and 1 more)"),
    "rename_player": (lambda df: df.rename(columns={"player": "who"}), "column 'player' is missing"),
    "regret_text": (_set("regret", "abc"), "which does not read as double (Failed to parse string: 'abc'"),
    "hand_seq_text": (_set("hand_seq", "x"), "column 'hand_seq' is of type"),
    "seat_fraction": (lambda df: df.assign(seat=df["seat"] + 0.5), "column 'seat' is of type double"),
    "regret_nan": (_set("regret", np.nan), "column 'regret' has no value (null, NaN) on row 0"),
    "regret_inf": (_set("regret", np.inf), "column 'regret' holds inf on row 0 (must be finite and >= 0)"),
    "regret_negative": (_set("regret", -1e300), "column 'regret' holds -1e+300 on row 0"),
    "loss_negative": (_set("loss", -1.0), "column 'loss' holds -1.0"),
    "delta_inf": (_set("delta0", -np.inf), "column 'delta0' holds -inf on row 0 (must be finite)"),
    "difficulty_nan": (_set("difficulty", np.nan), "column 'difficulty' has no value"),
    "think_inf": (_set("think_ms", np.inf), "column 'think_ms' holds inf on row 0 (must be a number >= 0 or missing)"),
    "think_negative": (_set("think_ms", -5.0), "column 'think_ms' holds -5.0"),
    "scale_zero": (_set("scale", 0.0), "column 'scale' holds 0.0 on row 0 (must be > 0)"),
    "seat_9": (_set("seat", 9), "column 'seat' holds 9 on row 0 (must be from 0 to 3)"),
    "seat_negative": (_set("seat", -1), "column 'seat' holds -1"),
    "action_negative": (_set("action", -7), "column 'action' holds -7 on row 0 (must be from 0 to 51)"),
    "n_options_0": (_set("n_options", 0), "column 'n_options' holds 0"),
    "action_past_the_deck": (_set("action", 10**15), "column 'action' holds 1000000000000000 on row 0 (must be from 0 "
                                                      "to 51)"),
    "kind_borrow": (_set("kind", "borrow"), "column 'kind' holds 'borrow' on row 0 (must be one of play, cover)"),
    "kind_null": (_set("kind", None), "column 'kind' has no value (null) on row 0"),
    "rank_huge": (_set("rank", 2**62), "column 'rank' holds 4611686018427387904 on row 0, not below its n_options"),
    "player_null": (_set("player", None), "column 'player' has no value (null) on row 0"),
    "player_other": (lambda df: df.assign(player=df["player"] + "X"), "column 'player' names"),
    "p2_changed_on_one_row": (lambda df: df.assign(p2=[*df["p2"][:-1], "zed"]), "column 'p2' names 'zed'"),
    "hand_id_other": (_set("hand_id", "zzz"), "rows of 1 hand(s) its metadata does not list (e.g. 'zzz')"),
    "rows_empty": (lambda df: df.iloc[:0], "its metadata lists 4 hand(s) but it holds no row"),
    "rows_twice": (lambda df: pd.concat([df, df]), "twice"),
    "rows_twice_sorted": (lambda df: pd.concat([df, df.iloc[:1]]).sort_values(["hand_seq", "action"]), "twice"),
}


@pytest.mark.parametrize("case", sorted(ROW_CASES))
def test_a_changed_part_is_a_store_error_naming_the_part_and_column(store: Path, case: str) -> None:
    fn, words = ROW_CASES[case]
    _edit_rows(store / PART, fn)
    st = open_store(store)
    with pytest.raises(StoreError) as e:
        read_rows(st)
    assert str(store / PART) in str(e.value) and words in str(e.value), str(e.value)
    with pytest.raises(StoreError) as e:  # the audit's path too
        for _ in iter_rows([], SETTINGS, store=st):
            pass
    assert words in str(e.value)


@pytest.mark.parametrize("case", ["player_other", "rows_empty", "regret_nan", "drop_regret", "regret_text"])
@pytest.mark.parametrize("command", ["players", "audit"])
def test_the_commands_refuse_a_changed_part_with_exit_2(store: Path, log: Path, tmp_path: Path, case: str,
                                                        command: str) -> None:
    """The probe's tracebacks (audit/signals.py reshape, players' HuberRegressor on NaN) are exit 2 naming the part."""
    _edit_rows(store / PART, ROW_CASES[case][0])
    out_dir = tmp_path / "a"
    args = ["players", str(log), "--decisions", str(store)] if command == "players" else [
        "audit", str(log), "--decisions", str(store), "--out", str(out_dir)]
    r = run_cli(*args)
    code, out = r.exit_code, r.output
    assert code == 2 and str(store / PART) in out and "Traceback" not in out, out
    assert not out_dir.exists()


@pytest.mark.parametrize("command", ["players", "audit"])
def test_options_that_are_not_options_are_exit_2_naming_the_store(store: Path, log: Path, tmp_path: Path,
                                                                  command: str) -> None:
    """Texts in a part's options column (rows of another version, or an edit) are refused where the part is read,
    naming the part and the column, not a crash (exit 3)."""
    _edit_rows(store / PART, lambda df: df.assign(options="[{x"))
    out_dir = tmp_path / "a"
    args = ["players", str(log), "--decisions", str(store)] if command == "players" else [
        "audit", str(log), "--decisions", str(store), "--out", str(out_dir)]
    r = run_cli(*args)
    code, out = r.exit_code, r.output
    assert code == 2 and f"{store / PART}: column 'options' is of type" in out and "Traceback" not in out, out
    assert not out_dir.exists()


def test_one_row_of_bad_options_is_named_by_its_hand(store: Path, tmp_path: Path) -> None:
    """Among good rows, the one whose options hold a card that is not a card code is named: its hand and move."""
    def spoil(df: pd.DataFrame) -> pd.DataFrame:
        df = df.copy()
        opts = [list(o) for o in df["options"]]
        opts[3] = [{**opts[3][0], "card": "ZZ"}, *opts[3][1:]]
        df["options"] = opts
        return df

    _edit_rows(store / PART, spoil)
    bad = pd.read_parquet(store / PART).iloc[3]
    r = run_cli("players", str(store), "-o", str(tmp_path / "p.csv"))
    code, out = r.exit_code, r.output
    assert code == 2 and f"hand {bad['hand_id']}, move {int(bad['action']) + 1}:" in out, out
    assert "not a card code: 'ZZ'" in out and not (tmp_path / "p.csv").exists()


def _rename_players(df: pd.DataFrame) -> pd.DataFrame:
    """Every player id of the rows changed the same way: the rows agree with one another, not with the logs."""
    return df.assign(**{c: df[c] + "X" for c in ("player", "p0", "p1", "p2", "p3")})


def test_rows_of_other_players_than_the_logs_are_refused(store: Path, log: Path, tmp_path: Path) -> None:
    _edit_rows(store / PART, _rename_players)
    st = open_store(store)
    read_rows(st)  # alone, the rows cannot be told from a store's of other players
    with pytest.raises(StoreError) as e:  # players/report with logs: collect_rows
        collect_rows(generate_valid([str(log)]), SETTINGS, Execution(), store=st)
    assert "name other players than the log's" in str(e.value) and str(store / PART) in str(e.value)
    with pytest.raises(StoreError, match=f"{log}:1: .*name other players"):  # the audit: iter_rows
        for _ in iter_rows(generate_valid([str(log)]), SETTINGS, store=st):
            pass
    for args in (["players", str(log), "--decisions", str(store)],
                 ["audit", str(log), "--decisions", str(store), "--out", str(tmp_path / "a")]):
        r = run_cli(*args)
        code, out = r.exit_code, r.output
        assert code == 2 and "other players" in out and "Traceback" not in out, out


def test_what_a_store_may_hold_is_read_as_it_is(store: Path, base: Path) -> None:
    """Missing think times (NaN), columns reordered, an extra column, numbers retyped but castable, texts as
    large strings, the options' lists of four values as lists of any length (a pandas edit writes them so): the
    same rows as the store written."""
    want = read_rows(open_store(base))
    _edit_rows(store / PART, lambda df: df.assign(think_ms=np.nan))
    _edit_rows(store / "part-000001.parquet", lambda df: df[df.columns[::-1]].assign(evil=1))
    part2 = store / "part-000002.parquet"
    table = pq.read_table(part2)
    for name in ("hand_id", "player", "reasons"):
        table = table.set_column(table.schema.get_field_index(name), name, table[name].cast(pa.large_string()))
    table = table.set_column(table.schema.get_field_index("regret"), "regret", table["regret"].cast(pa.string()))
    table = table.set_column(table.schema.get_field_index("seat"), "seat", table["seat"].cast(pa.float64()))
    pq.write_table(table, part2)
    got = read_rows(open_store(store))
    n0 = len(pq.read_table(store / PART))
    assert got["think_ms"][:n0].isna().all()
    pd.testing.assert_frame_equal(got.drop(columns="think_ms"), want.drop(columns="think_ms"))
    pd.testing.assert_frame_equal(got[n0:], want[n0:])


# --- F7: Ctrl-C while writing -----------------------------------------------------------------------------------------

def _frame(log: Path) -> pd.DataFrame:
    return analyse(generate_valid([str(log)]), samples=1, dd_samples=1, seed=0, max_samples=1)


def test_ctrl_c_while_a_part_is_written_leaves_no_temporary_file(store: Path, log: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    before = sorted(os.listdir(store))
    real = pq.write_table

    def interrupted(table: Any, where: Any, **kw: Any) -> None:
        real(table, where, **kw)  # the file is there, and then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", interrupted)
    frame = _frame(log)
    with pytest.raises(KeyboardInterrupt), StoreWriter(store, SETTINGS) as w:
        w.add(frame, ["new"], ["0"])
    assert sorted(os.listdir(store)) == before


def _renames_then(monkeypatch: pytest.MonkeyPatch, after: int, what: Callable[[], None], *,
                  fail: bool = False) -> list[tuple[str, str]]:
    """os.replace of the store's parts and folders doing ``what`` (a Ctrl-C) after its ``after``-th rename, or
    instead of it (``fail``: a rename that fails)."""
    real, done, calls = os.replace, [], [0]

    def replace(src: Any, dst: Any) -> None:
        if not any(Path(x).name.startswith(("part-", ".part-")) or Path(x).is_dir() for x in (src, dst)):
            real(src, dst)  # not ours (e.g. a cache's file)
            return
        calls[0] += 1
        if fail and calls[0] == after:
            what()
        real(src, dst)
        done.append((str(src), str(dst)))
        if not fail and calls[0] == after:
            what()

    monkeypatch.setattr(os, "replace", replace)
    return done


def _sigint() -> None:
    signal.raise_signal(signal.SIGINT)


@pytest.fixture
def pythons_sigint() -> Iterator[None]:
    """Ctrl-C raising KeyboardInterrupt, as Python starts, whatever an earlier test in this process left (a
    library's event loop may leave its own handler, or SIGINT ignored)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def test_ctrl_c_during_an_append_commit_adds_nothing(store: Path, log: Path, monkeypatch: pytest.MonkeyPatch,
                                                     pythons_sigint: None) -> None:
    before = sorted(os.listdir(store))
    frame = _frame(log)
    done = _renames_then(monkeypatch, 1, _sigint)
    with pytest.raises(KeyboardInterrupt), StoreWriter(store, SETTINGS) as w:
        for k in range(3):
            w.add(frame, [f"new{k}"], ["0"])
        w.commit()
    assert len(done) == 6  # the three renamed in, then back out
    assert sorted(os.listdir(store)) == before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C works again


def test_a_failed_rename_during_a_commit_adds_nothing(store: Path, log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = sorted(os.listdir(store))
    frame = _frame(log)

    def full() -> None:
        raise OSError(28, "No space left on device")

    _renames_then(monkeypatch, 2, full, fail=True)
    with pytest.raises(OSError, match="No space"), StoreWriter(store, SETTINGS) as w:
        for k in range(3):
            w.add(frame, [f"new{k}"], ["0"])
        w.commit()
    assert sorted(os.listdir(store)) == before


def test_ctrl_c_when_a_new_store_is_renamed_into_place_leaves_nothing(log: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      pythons_sigint: None) -> None:
    frame = _frame(log)
    target = tmp_path / "new"
    done = _renames_then(monkeypatch, 2, _sigint)  # the part within the hidden folder, then the folder
    with pytest.raises(KeyboardInterrupt), StoreWriter(target, SETTINGS) as w:
        w.add(frame, ["new0"], ["0"])
        w.commit()
    assert done[1][1] == str(target) and len(done) == 3
    assert list(tmp_path.iterdir()) == []


def test_a_ctrl_c_during_the_commands_commit_lets_the_append_complete(store: Path, logs: tuple[Path, Path],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``decisions`` ignores Ctrl-C from its commit on (the store's own rollback is for other callers, above): the run
    completes, every new part is in and the command says so, exit 0; so its 130 always means nothing was added. Its
    handler of SIGINT is back afterwards."""
    log, more = logs
    before = set(os.listdir(store))
    handler = signal.getsignal(signal.SIGINT)
    _renames_then(monkeypatch, 1, _sigint)
    r = run_cli("decisions", str(log), str(more), "--out", str(store), *OPTS, "--batch-hands", "1", "--jobs", "1")
    code, out = r.exit_code, r.output
    assert code == 0 and "from 3 new hands" in out, out
    assert sorted(set(os.listdir(store)) - before) == [f"part-{k:06d}.parquet" for k in range(3, 6)]
    assert signal.getsignal(signal.SIGINT) is handler


def test_a_commit_keeps_a_handler_of_sigint_other_than_pythons(store: Path, log: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        frame = _frame(log)
        _renames_then(monkeypatch, 1, _sigint)
        with StoreWriter(store, SETTINGS) as w:
            w.add(frame, ["new0"], ["0"])
            w.add(frame, ["new1"], ["0"])
            w.commit()
        assert seen == [signal.SIGINT]  # called once, after the commit, which stands
        assert (store / "part-000003.parquet").exists() and (store / "part-000004.parquet").exists()
    finally:
        signal.signal(signal.SIGINT, old)


# --- F9: an output under a file -----------------------------------------------------------------------------------

def test_a_store_under_a_regular_file_is_not_a_directory(log: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("hi\n")
    r = run_cli("decisions", str(log), "--out", str(tmp_path / "file" / "store"), *OPTS)
    code, out = r.exit_code, r.output
    assert code == 2 and f"{tmp_path / 'file' / 'store'}: Not a directory" in out, out
    assert (tmp_path / "file").read_text() == "hi\n" and sorted(os.listdir(tmp_path)) == ["file"]


def test_a_write_error_of_arrow_names_the_store_not_its_hidden_part(store: Path, log: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow's OSError has no errno and names the hidden part in its text; the error names the store as asked."""
    import analyzer.analysis.store as st

    def read_only(tmp: Path, *a: object, **k: object) -> None:
        raise OSError(f"Failed to open local file '{tmp}'. Detail: [errno 30] Read-only file system")

    monkeypatch.setattr(st, "_write_part", read_only)
    with pytest.raises(OSError) as caught, StoreWriter(store, SETTINGS) as w:
        w.add(_frame(log), ["new0"], ["0"])
    assert caught.value.filename == str(store) and caught.value.strerror == os.strerror(30)
    assert ".tmp" not in str(caught.value)


def _digest(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("case", ["players-part", "players-meta", "players-decisions", "report", "audit", "one-part"])
def test_no_output_goes_inside_a_decision_store_read_as_input(store: Path, log: Path, tmp_path: Path, case: str) -> None:
    """The store's files are its own: an output named inside it (one of its parts, its metadata, or a new file)
    is refused before any work, and the store is left as it was (it was replaced, exit 0)."""
    before = _digest(store)
    part = sorted(p.name for p in store.glob("part-*.parquet"))[0]
    args = {"players-part": ["players", str(store), "-o", str(store / part)],
            "players-meta": ["players", str(store), "-o", str(store / "_common_metadata")],
            "players-decisions": ["players", str(log), "--decisions", str(store), "-o", str(store / "t.csv")],
            "report": ["report", str(log), "--decisions", str(store), "--player", "x", "-o", str(store / "p.html")],
            "audit": ["audit", str(log), "--decisions", str(store), "--out", str(store)],
            "one-part": ["players", str(store / part), "-o", str(store / "_common_metadata")]}[case]
    r = run_cli(*args)
    code, out = r.exit_code, r.output
    assert code == 2 and "refusing to write inside" in out and "Traceback" not in out, out
    assert _digest(store) == before


FAST = ["--samples", "1", "--dd-samples", "0"]



def test_a_corrupt_store_part_is_named(tmp_path: Path) -> None:
    """A part whose pages are damaged (its footer intact): exit 2 naming the part, not Arrow's nameless "Corrupt
    snappy compressed data."."""
    log = legal_log(tmp_path / "in", n=4)
    store = tmp_path / "store"
    clean_exit(run_cli("decisions", str(log), "-o", str(store), *FAST), 0)
    part = sorted(store.glob("part-*.parquet"))[0]
    data = bytearray(part.read_bytes())
    for k in range(8, len(data) // 2):  # the first half: column pages, not the footer
        data[k] ^= 0x5A
    part.write_bytes(bytes(data))
    for command in (["players", str(log), "--decisions", str(store), *FAST],
                    ["audit", str(log), "-o", str(tmp_path / "au"), "--decisions", str(store), *FAST]):
        r = run_cli(*command)
        clean_exit(r, 2)
        assert part.name in r.output, r.output


LEGAL = SAMPLES / "legal.jsonl"


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


@pytest.fixture(scope="module")
def legal_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("legal") / "store"
    clean_exit(run_cli("decisions", str(SAMPLES / "legal.jsonl"), "-o", str(store), *FAST), 0)
    return store


@needs_fifo
def test_a_store_part_that_is_a_named_pipe_is_refused_not_waited_on(legal_store: Path, tmp_path: Path) -> None:
    """A part replaced by a named pipe: Arrow opened it and waited for a writer for ever, Ctrl-C and SIGTERM unheard
    (it retries the open in C++), in every command that opens the store. Now exit 2 naming the part."""
    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    part.unlink()
    os.mkfifo(part)
    out = tmp_path / "out"
    for args in (["players", str(store)], ["players", str(LEGAL), "--decisions", str(store)],
                 ["audit", str(LEGAL), "--decisions", str(store), "-o", str(out)],
                 ["decisions", str(LEGAL), "-o", str(store), *FAST]):
        r = analyzer_process(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert f"{part}: not a regular file (a FIFO, socket or device)" in r.stderr, r.stderr
    assert not out.exists() and sorted(p.name for p in store.iterdir()) == ["_common_metadata", part.name]


def test_a_store_part_that_is_a_folder_is_named_as_one(legal_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    part.unlink()
    part.mkdir()
    r = run_cli("players", str(store))
    clean_exit(r, 2)
    assert f"{part}: not a regular file (a folder)" in r.output


def test_an_empty_folder_named_as_the_store_says_to_name_a_new_one(tmp_path: Path) -> None:
    """`mkdir store; analyzer decisions LOG -o store` was told "not a decision store (no _common_metadata); write one
    with `analyzer decisions LOGS --out STORE`": what the user had just done. Now it says the command makes the
    folder itself; nothing is written."""
    store = tmp_path / "store"
    store.mkdir()
    r = run_cli("decisions", str(LEGAL), "-o", str(store), *FAST)
    clean_exit(r, 2)
    assert "an empty folder, not a decision store" in r.output and "name one that does not exist yet" in r.output
    assert list(store.iterdir()) == []
    r = run_cli("players", str(LEGAL), "--decisions", str(store), *FAST)
    clean_exit(r, 2)
    assert "an empty folder, not a decision store" in r.output
