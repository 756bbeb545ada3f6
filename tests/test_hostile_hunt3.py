"""Hostile inputs of a third hunt over the commands (ids that look alike across hands, ids of hundreds of KB, empty
decision stores, odd standard inputs): each a clear problem or error naming the file, never a traceback, never an
output many times its input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT, SAMPLES, clean_exit, legal_obj, run_cli

from analyzer.problems import CODES
from analyzer.validate import cut_id, validate
from analyzer.variants.record import MAX_ID_LENGTH

FAST = ["--samples", "1", "--dd-samples", "0"]


def _hand(seed: int, hand_id: str | None = None, players: list[str] | None = None, **fields: Any) -> bytes:
    obj = legal_obj(seed, hand_id)
    if players is not None:
        obj["players"] = players
    obj.update(fields)
    return orjson.dumps(obj) + b"\n"


def _log(path: Path, hands: list[bytes]) -> Path:
    path.write_bytes(b"".join(hands))
    return path


# --------------------------------------------------------------------------- ids that look alike across hands

def test_a_lookalike_player_id_in_a_later_hand_is_said_once_naming_both_spellings(tmp_path: Path) -> None:
    """`A1`, then full-width `Ａ1` (NFKC), `a1` (case) and `A\\u200d1` (a zero-width joiner) at other tables: each new
    spelling is one `lookalike-ids` problem at the first hand that uses it, with file, line, hand, seat and player,
    naming both spellings and where the first was; the hands stay valid (they replay)."""
    spellings = ["A1", "Ａ1", "A1", "a1", "Ａ1", "A\u200d1"]
    log = _log(tmp_path / "room.jsonl", [_hand(s, f"h{s}", [x, "p2", "p3", "p4"]) for s, x in enumerate(spellings)])
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (6, 6)
    said = [(p.code, p.line, p.hand_id, p.seat, p.player) for p in s.problems]
    assert said == [("lookalike-ids", 2, "h1", 0, "Ａ1"), ("lookalike-ids", 4, "h3", 0, "a1"),
                    ("lookalike-ids", 6, "h5", 0, "A\u200d1")]
    assert all(p.file == str(log) and f"'A1' of the hand at {log}:1" in p.message for p in s.problems)
    assert "'A\\u200d1'" in s.problems[2].message  # the invisible joiner shown, so the two spellings read apart
    assert "lookalike-ids" in CODES


def test_composed_and_decomposed_accents_across_hands_are_told_apart_in_the_message(tmp_path: Path) -> None:
    log = _log(tmp_path / "room.jsonl", [_hand(1, "h1", ["cafe\u0301", "p2", "p3", "p4"]),
                                         _hand(2, "h2", ["p2", "caf\u00e9", "p3", "p4"])])
    (p,) = validate([str(log)]).problems
    assert (p.code, p.line, p.seat, p.player) == ("lookalike-ids", 2, 1, "caf\u00e9")
    assert "'caf\\xe9'" in p.message and "'cafe\\u0301'" in p.message  # drawn alike, so shown as code points


def test_lookalike_hand_ids_are_said_and_copies_are_not_said_twice(tmp_path: Path) -> None:
    """Hand ids `h1` and full-width `Ｈ1` are two hands nobody can tell apart in a report: said. A copy of a hand
    under a lookalike id is a `duplicate-deal` already, and an id used again a `duplicate-hand-id`: not said again."""
    log = _log(tmp_path / "room.jsonl", [_hand(1, "h1"), _hand(2, "Ｈ1"), _hand(1, "H1"), _hand(3, "h1")])
    s = validate([str(log)])
    assert [(p.code, p.line) for p in s.problems] == [("lookalike-ids", 2), ("duplicate-deal", 3),
                                                      ("duplicate-hand-id", 4)]
    assert "hand id 'Ｈ1' looks like hand id 'h1'" in s.problems[0].message and s.problems[0].seat is None


def test_distinct_ids_and_one_spelling_throughout_say_nothing(tmp_path: Path) -> None:
    log = _log(tmp_path / "room.jsonl", [_hand(s, f"h{s}", ["Alice", "bob", "ｃｈｅｎ", "dong"]) for s in range(4)]
               + [_hand(9, "h9", ["Alicia", "bob2", "chen2", "dong2"])])
    s = validate([str(log)])
    assert (s.valid_hands, s.n_problems) == (5, 0)


def test_audit_warns_of_lookalike_ids_and_keeps_the_hands(tmp_path: Path) -> None:
    """The audit says the ids that look like an earlier hand's (warnings on stderr, audit.json's ``lookalike_ids``:
    counted, the first shown as validate's problems), and keeps the hands: they are valid, analysed with their ids
    as written, and no hand is counted invalid; a log without lookalikes has a count of 0."""
    spellings = ["A1", "Ａ1", "A1", "a1"]
    log = _log(tmp_path / "room.jsonl", [_hand(s, f"h{s}", [x, "p2", "p3", "p4"]) for s, x in enumerate(spellings)])
    r = run_cli("audit", str(log), "-o", str(tmp_path / "a"), *FAST)
    clean_exit(r, 0)
    assert f"warning: {log}:2: player id 'Ａ1' looks like player id 'A1'" in r.output
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert (audit["valid_hands"], audit["invalid_hands"], audit["problems"]) == (4, 0, [])
    looks = audit["lookalike_ids"]
    assert looks["count"] == 2 and [(p["line"], p["player"], p["code"]) for p in looks["shown"]] == [
        (2, "Ａ1", "lookalike-ids"), (4, "a1", "lookalike-ids")]
    assert {"A1", "Ａ1", "a1"} <= {p["player"] for p in audit["players"]}  # three players, as written
    plain = _log(tmp_path / "plain.jsonl", [_hand(s, f"h{s}") for s in range(3)])
    clean_exit(run_cli("audit", str(plain), "-o", str(tmp_path / "b"), *FAST), 0)
    assert json.loads((tmp_path / "b" / "audit.json").read_text())["lookalike_ids"] == {"count": 0, "shown": []}


def test_validate_says_lookalikes_in_text_and_json_and_exits_1(tmp_path: Path) -> None:
    log = _log(tmp_path / "room.jsonl", [_hand(1, "h1", ["A1", "p2", "p3", "p4"]),
                                         _hand(2, "h2", ["Ａ1", "p2", "p3", "p4"])])
    r = run_cli("validate", str(log))
    clean_exit(r, 1)
    assert f"{log}:2: hand h2, seat 0 (Ａ1): [lookalike-ids] player id 'Ａ1' looks like player id 'A1'" in r.output
    assert "2 hands, 2 valid, 1 problems" in r.output
    r = run_cli("validate", str(log), "--format", "json")
    clean_exit(r, 1)
    doc = json.loads(r.output)
    assert doc["valid_hands"] == 2 and doc["problem_counts"] == {"lookalike-ids": 1}
    assert (doc["problems"][0]["line"], doc["problems"][0]["player"], doc["problems"][0]["move"]) == (2, "Ａ1", None)


# --------------------------------------------------------------------------- ids of hundreds of KB

@pytest.mark.parametrize("field", ["hand_id", "table_id", "player"])
def test_an_id_past_the_bound_refuses_its_line_naming_the_field(tmp_path: Path, field: str) -> None:
    long = "x" * (MAX_ID_LENGTH + 1)
    hand = (_hand(1, long) if field == "hand_id" else _hand(1, "h1", table_id=long) if field == "table_id"
            else _hand(1, "h1", ["p1", "p2", long, "p4"]))
    log = _log(tmp_path / "log.jsonl", [hand, _hand(2, "ok")])
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (2, 1)
    (p,) = s.problems
    where = {"hand_id": "$.hand_id", "table_id": "$.table_id", "player": "$.players[2]"}[field]
    assert (p.code, p.line) == ("id-too-long", 1)
    assert p.message.startswith(f"{where} is an id of 257 characters; an id may hold at most 256")
    assert p.hand_id == (cut_id(long) if field == "hand_id" else "h1")


def test_an_id_at_the_bound_is_valid(tmp_path: Path) -> None:
    at = "y" * MAX_ID_LENGTH
    log = _log(tmp_path / "log.jsonl", [_hand(1, at, ["p1", at, "p3", "p4"], table_id=at)])
    assert validate([str(log)]).valid_hands == 1


def test_every_id_a_record_may_hold_is_shown_whole_in_text() -> None:
    from analyzer.problems import Problem

    at = "z" * MAX_ID_LENGTH
    line = Problem("not-live", "m", file="f", line=3, hand_id=at, action=0, seat=1, player=at).format()
    assert line == f"f:3: hand {at}, move 1, seat 1 ({at}): [not-live] m"


def test_the_cut_form_of_a_long_id_is_short_and_keeps_two_ids_apart() -> None:
    a, b = "H" * 200_000 + "a", "H" * 200_000 + "b"
    assert cut_id(a) != cut_id(b) and len(cut_id(a)) < 120
    assert cut_id(a).startswith("H" * 64 + "... (200,001 characters) sha256:")
    assert cut_id("short") == "short"


def test_the_published_schemas_bound_the_ids() -> None:
    schema = json.loads((ROOT / "schemas" / "log-v1-bieqi.schema.json").read_text(encoding="utf-8"))
    props = schema["$defs"]["Record"]["properties"]
    assert props["hand_id"]["maxLength"] == props["players"]["items"]["maxLength"] == MAX_ID_LENGTH
    assert props["table_id"]["anyOf"][0]["maxLength"] == MAX_ID_LENGTH


@pytest.fixture(scope="module")
def huge_ids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 hands whose player ids (and every third hand id) are 200 KB: a 4.4 MB log that made a 49 MB audit.json
    and a 60 MB page."""
    big = "P" * 200_000
    hands = [_hand(s, "H" * 200_000 + str(s) if s % 3 == 0 else f"h{s}",
                   [big + "x", "p2", "p3", big + "y" if s % 2 == 0 else "p4"]) for s in range(12)]
    return _log(tmp_path_factory.mktemp("huge") / "big.jsonl", hands)


def test_validate_of_huge_ids_writes_a_small_report(huge_ids: Path, tmp_path: Path) -> None:
    r = run_cli("validate", str(huge_ids), "--format", "json", "-o", str(tmp_path / "page.html"))
    clean_exit(r, 1)
    doc = json.loads(r.output)
    assert doc["valid_hands"] == 0 and set(doc["problem_counts"]) == {"id-too-long"}
    size = huge_ids.stat().st_size
    assert len(r.output) < size // 100 and (tmp_path / "page.html").stat().st_size < size // 4


@pytest.mark.parametrize("command", [["audit", "-o", "{o}"], ["decisions", "-o", "{o}"], ["players", "-o", "{o}.csv"]])
def test_the_analysing_commands_never_write_huge_ids(huge_ids: Path, tmp_path: Path, command: list[str]) -> None:
    out = tmp_path / "out"
    args = [a.replace("{o}", str(out)) for a in command]
    r = run_cli(args[0], str(huge_ids), *args[1:], *FAST)
    clean_exit(r, 2 if command[0] == "audit" else 0)  # no valid hand: audit has nothing to audit
    written = sum(f.stat().st_size for f in tmp_path.rglob("*") if f.is_file())
    assert written < 100_000 and len(r.output) < 100_000
    assert "PPPPPPPPPP" * 100 not in r.output


# --------------------------------------------------------------------------- report --decisions of an empty store

@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decision store of logs without a hand of standard 憋七: what `decisions` writes for such a day (no part)."""
    store = tmp_path_factory.mktemp("stores") / "empty"
    clean_exit(run_cli("decisions", str(SAMPLES / "heiqi-sample.jsonl"), "-o", str(store), *FAST), 0)
    assert not list(store.glob("part-*"))
    return store


@pytest.mark.parametrize("page", [["--player", "alice"], ["--pair", "alice,bob"], ["--hand", "sample-tong"]])
def test_report_with_an_empty_store_says_it_is_empty(empty_store: Path, tmp_path: Path, page: list[str]) -> None:
    out = tmp_path / "page.html"
    r = run_cli("report", str(SAMPLES / "legal.jsonl"), "--decisions", str(empty_store), *page, "-o", str(out))
    clean_exit(r, 2)
    assert f"{empty_store} is an empty decision store: it holds no hand" in r.output
    assert "leave out --decisions" in r.output and "other logs" not in r.output
    assert not out.exists()


@pytest.mark.parametrize("store", ["empty", "full"])
def test_a_hand_page_of_a_game_without_decisions_ignores_the_store(empty_store: Path, tmp_path: Path,
                                                                   store: str) -> None:
    """A 信阳黑七 or 借牌 hand has no decision rows in any store: its page is written as without --decisions (was
    exit 2: "holds none of the hands of this page: it was written from other logs")."""
    path = empty_store
    if store == "full":
        path = tmp_path / "full"
        clean_exit(run_cli("decisions", str(SAMPLES / "legal.jsonl"), "-o", str(path), *FAST), 0)
    for log in ("heiqi-sample.jsonl", "borrow-sample.jsonl"):
        hand = json.loads((SAMPLES / log).read_text(encoding="utf-8").splitlines()[0])["hand_id"]
        out = tmp_path / f"{log}.html"
        r = run_cli("report", str(SAMPLES / log), "--decisions", str(path), "--hand", hand, "-o", str(out))
        clean_exit(r, 0)
        assert out.stat().st_size > 10_000


# --------------------------------------------------------------------------- odd standard inputs

def _analyzer(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "analyzer.cli", *args], capture_output=True, text=True, timeout=120,
                          **kw)


def test_a_folder_given_as_a_descriptor_is_read_as_a_folder(tmp_path: Path) -> None:
    """`analyzer validate /dev/fd/3 3< somedir`: the folder is read as a folder named directly (its logs), never a
    traceback. (`- < somedir` cannot be helped: CPython stops before any code runs, docs/design.md.)"""
    import os

    folder = tmp_path / "logs"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        r = _analyzer("validate", f"/dev/fd/{fd}", pass_fds=(fd,))
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert f"no *.jsonl or *.jsonl.gz files under: /dev/fd/{fd}" in r.stderr
        _log(folder / "a.jsonl", [_hand(1, "h1")])
        r = _analyzer("validate", f"/dev/fd/{fd}", pass_fds=(fd,))
        assert r.returncode == 0 and "1 hands, 1 valid, 0 problems" in r.stdout
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- logs in another text encoding

@pytest.mark.parametrize(("encoding", "said"), [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
                                                ("gb18030", "GB18030")])
def test_a_log_in_another_text_encoding_is_named_with_how_to_convert_it(tmp_path: Path, encoding: str,
                                                                        said: str) -> None:
    """A server that writes UTF-16 (Windows), UTF-32 or GBK: every line a problem as before, each now saying what
    the text looks like and how to convert it (was "invalid start byte" on the first line and "unexpected
    character" on the others, which did not say why)."""
    text = "".join(_hand(s, f"h{s}", ["张三", "p2", "p3", "p4"]).decode() for s in range(3))
    log = tmp_path / "log.jsonl"
    log.write_bytes(text.encode(encoding))
    s = validate([str(log)])
    assert s.valid_hands == 0 and s.n_problems == s.hands >= 3  # little-endian: the last line ending's NULs too
    assert all("iconv -f " in p.message and said in p.message for p in s.problems), [p.message for p in s.problems]
    assert f"iconv -f {said} -t UTF-8" in s.problems[0].message


def test_a_latin1_line_gets_no_encoding_guess(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(_hand(1, "h1", ["alic\u00e9", "p2", "p3", "p4"]).decode().encode("latin-1"))
    (p,) = validate([str(log)]).problems
    assert p.code == "not-utf8" and "iconv" not in p.message


# --------------------------------------------------------------------------- simulate --truth -

def test_simulate_truth_dash_is_standard_output_not_a_file_named_dash(tmp_path: Path) -> None:
    """`--truth -` wrote a file named "-" in the current folder (while `-o -` is standard output everywhere)."""
    log = tmp_path / "room.jsonl"
    r = _analyzer("simulate", "--hands", "2", "--players", "4", "-o", str(log), "--truth", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) >= {"colluding_pairs", "players", "seed"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["room.jsonl"]


@pytest.mark.parametrize(("out", "truth"), [("-", "-"), ("/dev/stdout", "/dev/fd/1")])
def test_simulate_refuses_the_log_and_its_truth_in_one_stream(tmp_path: Path, out: str, truth: str) -> None:
    r = _analyzer("simulate", "--hands", "2", "--players", "4", "-o", out, "--truth", truth, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert "the same descriptor as --out" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_simulate_truth_ending_in_a_slash_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("simulate", "--hands", "2", "--players", "4", "-o", str(tmp_path / "r.jsonl"), "--truth",
                str(tmp_path / "t") + "/")
    clean_exit(r, 2)
    assert "a folder (it ends in '/')" in r.output and list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- decision rows with huge ids; loose files

@pytest.fixture(scope="module")
def legal_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("legal") / "store"
    clean_exit(run_cli("decisions", str(SAMPLES / "legal.jsonl"), "-o", str(store), *FAST), 0)
    return store


def _renamed_part(part: Path, to: Path, old: str, new: str) -> Path:
    """The part with player ``old`` renamed ``new`` in every id column (the metadata kept: the hands are the same)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(part)
    meta = table.schema.metadata
    for name in ("player", "p0", "p1", "p2", "p3"):
        i = table.column_names.index(name)
        table = table.set_column(i, name, pc.replace_substring(table.column(i), old, new))
    pq.write_table(table.replace_schema_metadata(meta), to)
    return to


@pytest.mark.parametrize("how", ["store", "--decisions", "file"])
def test_decision_rows_with_an_id_past_the_bound_are_refused(legal_store: Path, tmp_path: Path, how: str) -> None:
    """A store's part or a decision file made elsewhere with a 200 KB player id: refused, naming the file and column
    (`players STORE` wrote the id into its table; the logs' gate does not see rows read without logs)."""
    import shutil

    store = tmp_path / "store"
    shutil.copytree(legal_store, store)
    (part,) = store.glob("part-*.parquet")
    _renamed_part(part, part, "alice", "Z" * 200_000)
    if how == "file":
        loose = tmp_path / "loose"
        loose.mkdir()
        shutil.move(str(part), loose / "day.parquet")
        args = [str(loose / "day.parquet")]
    else:
        args = [str(store)] if how == "store" else ["--decisions", str(store)]
    out = tmp_path / "players.csv"
    r = run_cli("players", *args, "-o", str(out))
    clean_exit(r, 2)
    assert "'player'" in r.output and "an id of 200,000 characters" in r.output and "at most 256" in r.output
    assert not out.exists()


def test_a_decision_file_in_a_plain_folder_takes_outputs_beside_it(legal_store: Path, tmp_path: Path) -> None:
    """A decision file among other files (the current folder) is no store: `players day.parquet -o players.csv`
    beside it was refused ("refusing to write inside ., an input"); a part inside its store still is."""
    import shutil

    (part,) = legal_store.glob("part-*.parquet")
    shutil.copy(part, tmp_path / "day.parquet")
    r = run_cli("players", str(tmp_path / "day.parquet"), "-o", str(tmp_path / "players.csv"))
    clean_exit(r, 0)
    assert (tmp_path / "players.csv").read_text().startswith("player,skill,")
    r = run_cli("players", str(part), "-o", str(legal_store / "players.csv"))
    clean_exit(r, 2)
    assert "refusing to write inside" in r.output and not (legal_store / "players.csv").exists()


def test_binary_lines_get_no_encoding_guess(tmp_path: Path) -> None:
    """Random bytes that happen to decode as GB18030 are not called GBK text: only a line that starts as a record."""
    import random

    rng = random.Random(5)
    lines = [bytes(rng.randrange(0x81, 0xff) for _ in range(2 * rng.randrange(1, 40))) for _ in range(200)]
    assert sum(1 for x in lines if _decodes(x, "gb18030")) > 50  # many would have been guessed
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    s = validate([str(log)])
    assert s.n_problems == 200 and not [p for p in s.problems if "GB18030" in p.message]


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


# --------------------------------------------------------------------------- a path whose name is too long

def test_validate_reports_a_name_too_long_among_the_others(tmp_path: Path) -> None:
    """A path the system refuses to look up (ENAMETOOLONG) stopped the whole run with exit 2 before any path was read,
    where a missing one is an io-error among the others (README): now the same, the name said once."""
    long = str(tmp_path / ("x" * 300 + ".jsonl"))
    missing = str(tmp_path / "missing.jsonl")
    r = run_cli("validate", str(SAMPLES / "legal.jsonl"), long, missing)
    clean_exit(r, 1)
    assert f"{long}: [io-error] cannot read {long}: File name too long\n" in r.output
    assert f"{missing}: [io-error] cannot read {missing}: No such file or directory\n" in r.output
    assert "7 hands, 7 valid, 2 problems" in r.output


def test_other_commands_name_a_path_too_long_as_a_usage_error(tmp_path: Path) -> None:
    long = str(tmp_path / ("x" * 300 + ".jsonl"))
    r = run_cli("players", str(SAMPLES / "legal.jsonl"), long)
    clean_exit(r, 2)
    assert f"{long}: File name too long" in r.output


@pytest.fixture(scope="module")
def ranged_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """9 MB of hands (worker processes check it in ranges with --jobs 2), the last but 99 a lookalike of the sixth:
    hand id `Ｈ5` after `h5`, player `P5A` after `p5a`."""
    base = [legal_obj(s) for s in range(50)]
    path = tmp_path_factory.mktemp("ranged") / "room.jsonl"
    with path.open("wb") as f:
        for k in range(3000):
            obj = {**base[k % 50], "hand_id": f"h{k}", "players": [f"p{k}a", f"p{k}b", f"p{k}c", f"p{k}d"]}
            if k == 2900:
                obj.update(hand_id="Ｈ5", players=["P5A", "x", "y", "z"])
            f.write(orjson.dumps(obj) + b"\n")
    return path


def test_lookalike_hand_ids_are_found_however_the_work_is_spread(ranged_log: Path) -> None:
    for jobs in (1, 2):
        said = [(p.line, p.seat) for p in validate([str(ranged_log)], jobs=jobs).problems if p.seat is None]
        assert said == [(2901, None)], jobs
    players = [(p.line, p.seat, p.player) for p in validate([str(ranged_log)], jobs=1).problems if p.seat is not None]
    assert players == [(2901, 0, "P5A")]


def test_lookalike_player_ids_are_found_however_the_work_is_spread(ranged_log: Path) -> None:
    said = [(p.line, p.seat, p.player) for p in validate([str(ranged_log)], jobs=2).problems if p.seat is not None]
    assert said == [(2901, 0, "P5A")]


# --------------------------------------------------------------------------- report --audit of a device

def test_report_audit_reads_a_device_no_further_than_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--audit /dev/zero`: the size check looked at the file's size (0 for a device) and then read it whole: 23 GB
    before the kernel killed the command. Now it reads at most the cap, then refuses."""
    import analyzer.commands.report as report

    monkeypatch.setattr(report, "MAX_AUDIT_BYTES", 1 << 20)
    out = tmp_path / "pair.html"
    r = run_cli("report", str(SAMPLES / "legal.jsonl"), "--pair", "alice,bob", "--audit", "/dev/zero", "-o", str(out))
    clean_exit(r, 2)
    assert "/dev/zero is larger than 1 MB" in r.output and not out.exists()


# --------------------------------------------------------------------------- audit --alpha at its bound

def test_audit_summary_does_not_claim_the_default_false_alarm_rate_for_another_alpha(tmp_path: Path) -> None:
    """`--alpha 1` flags every pair, and the summary still said "a false alarm well under once in 10,000 honest
    pairs"; it now says the chance the threshold allows."""
    r = run_cli("audit", str(SAMPLES / "legal.jsonl"), "-o", str(tmp_path / "a"), "--alpha", "1", "--fdr", "1",
                "--min-hands", "1", *FAST)
    clean_exit(r, 1)
    assert "FLAGGED" in r.output and "well under once in 10,000" not in r.output
    assert "flagged: p <= 1, each honest pair flagged with a chance of up to ~1, above the default's 1e-05" in r.output
    # the flagged pairs' case lines in audit.json say the run's alarm, not the default's rate
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    lines = [p["case"]["verdict"] for p in audit["pairs"] if p["verdict"] == "flagged" and p.get("case")]
    assert lines and all(v["key"] == "verdict_flagged_alpha" and v["args"][3] == "1" for v in lines)


def test_the_flagged_case_line_names_a_laxer_alarm_and_the_default_keeps_its_rate() -> None:
    """The pair's verdict line: the default alarm keeps its measured rate; a laxer one is said as the chance it allows,
    in both languages (the page draws both from the same labels)."""
    import pandas as pd

    from analyzer.audit.calibrate import DEFAULT_ALPHA
    from analyzer.audit.case import verdict_line
    from analyzer.commands.audit import DEFAULT_ALPHA as COMMAND_DEFAULT
    from analyzer.report.case_labels import CASE_LABELS as LABELS

    assert COMMAND_DEFAULT == DEFAULT_ALPHA
    row = pd.Series({"verdict": "flagged", "score": 9.0, "q_value": 1e-6, "hands_to_alarm": None})
    assert verdict_line(row)["key"] == verdict_line(row, DEFAULT_ALPHA)["key"] == "verdict_flagged"
    lax = verdict_line(row, 0.01)
    assert lax["key"] == "verdict_flagged_alpha" and lax["args"][3] == "0.01"
    for lang in ("en", "zh"):
        assert "{3}" in LABELS[lang]["verdict_flagged_alpha"] and "{0}" in LABELS[lang]["tiers_help_alpha"]
    review = pd.Series({"verdict": "review", "score": 3.0, "q_value": 0.01, "hands_to_alarm": 40})
    assert verdict_line(review, 0.01)["key"] == "verdict_review"


def test_lookalikes_across_many_files_name_the_first_file() -> None:
    """The first spelling's place is kept by file number (a dict of the files: a folder of 100,000 files costs no search
    a file)."""
    from analyzer.problems import IdSpellings

    watch = IdSpellings()
    for k in range(20_000):
        assert watch.check(f"day-{k}.jsonl", 1, f"h{k}", [f"p{k}", "q", "r", "s"]) == []
    (p,) = watch.check("late.jsonl", 7, "h-new", ["P123", "q", "r", "s"])
    assert (p.file, p.line, p.seat) == ("late.jsonl", 7, 0)
    assert "player id 'P123' looks like player id 'p123' of the hand at day-123.jsonl:1" in p.message


# --------------------------------------------------------------------------- a line that never ends

def test_a_line_that_never_ends_gives_the_file_up_with_an_io_error(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`validate /dev/zero` read for ever (one line with no end, skipped as too long while looking for its end). A
    too-long line is now skipped for at most ``SKIP_CAP`` bytes (4x the line limit at least); past it the rest of the
    file is given up with an io-error, the hands before it checked and the other files read."""
    from analyzer import logs

    monkeypatch.setattr(logs, "SKIP_CAP", 1 << 16)
    log = tmp_path / "junk.jsonl"
    log.write_bytes(_hand(1, "h1") + _hand(2, "h2") + b"x" * (1 << 19))  # 512 KB after the hands, no line end
    ok = _log(tmp_path / "ok.jsonl", [_hand(3, "h3")])
    s = validate([str(log), str(ok)], max_line_bytes=1 << 12)
    assert (s.hands, s.valid_hands) == (3, 3)
    (p,) = s.problems
    assert p.code == "io-error" and p.file == str(log) and "line 3 runs on past 65,536 bytes" in p.message
    zero = validate(["/dev/zero", str(ok)], max_line_bytes=1 << 12)  # ends (it read for ever)
    assert [p.code for p in zero.problems] == ["io-error"] and zero.valid_hands == 1
    assert "/dev/zero" in zero.problems[0].message
    # a long line that does end is still one `line-too-long` hand, the lines after it read
    log.write_bytes(_hand(1, "h1") + b"x" * 9000 + b"\n" + _hand(2, "h2"))
    s = validate([str(log)], max_line_bytes=1 << 12)
    assert (s.hands, s.valid_hands) == (3, 2) and [p.code for p in s.problems] != ["io-error"]
