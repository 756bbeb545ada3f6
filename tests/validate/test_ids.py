"""Ids at the gate: player and hand ids that look alike (at a table, across hands, in other scripts), ids past the
length bound, blank ids; how ids are shown and cut, however the work is spread."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import ROOT, clean_exit, hand_line, legal_lines, legal_obj, run_cli, variant_record, write_log

from analyzer.logs import Line, format_record
from analyzer.problems import CODES
from analyzer.explain import cut_id
from analyzer.validate import check_lines, validate
from analyzer.variants.record import MAX_ID_LENGTH

FAST = ["--samples", "1", "--dd-samples", "0"]


def test_a_lookalike_player_id_in_a_later_hand_is_said_once_naming_both_spellings(tmp_path: Path) -> None:
    """`A1`, then full-width `Ａ1` (NFKC), `a1` (case) and `A\\u200d1` (a zero-width joiner) at other tables: each new
    spelling is one `lookalike-ids` problem at the first hand that uses it, with file, line, hand, seat and player,
    naming both spellings and where the first was; the hands stay valid (they replay)."""
    spellings = ["A1", "Ａ1", "A1", "a1", "Ａ1", "A\u200d1"]
    log = write_log(tmp_path / "room.jsonl", [hand_line(s, f"h{s}", [x, "p2", "p3", "p4"]) for s, x in enumerate(spellings)])
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (6, 6)
    said = [(p.code, p.line, p.hand_id, p.seat, p.player) for p in s.problems]
    assert said == [("lookalike-ids", 2, "h1", 0, "Ａ1"), ("lookalike-ids", 4, "h3", 0, "a1"),
                    ("lookalike-ids", 6, "h5", 0, "A\u200d1")]
    assert all(p.file == str(log) and f"'A1' of the hand at {log}:1" in p.message for p in s.problems)
    assert "'A\\u200d1'" in s.problems[2].message  # the invisible joiner shown, so the two spellings read apart
    assert "lookalike-ids" in CODES


def test_composed_and_decomposed_accents_across_hands_are_told_apart_in_the_message(tmp_path: Path) -> None:
    log = write_log(tmp_path / "room.jsonl", [hand_line(1, "h1", ["cafe\u0301", "p2", "p3", "p4"]),
                                         hand_line(2, "h2", ["p2", "caf\u00e9", "p3", "p4"])])
    (p,) = validate([str(log)]).problems
    assert (p.code, p.line, p.seat, p.player) == ("lookalike-ids", 2, 1, "caf\u00e9")
    assert "'caf\\xe9'" in p.message and "'cafe\\u0301'" in p.message  # drawn alike, so shown as code points


def test_lookalike_hand_ids_are_said_and_copies_are_not_said_twice(tmp_path: Path) -> None:
    """Hand ids `h1` and full-width `Ｈ1` are two hands nobody can tell apart in a report: said. A copy of a hand
    under a lookalike id is a `duplicate-deal` already, and an id used again a `duplicate-hand-id`: not said again."""
    log = write_log(tmp_path / "room.jsonl", [hand_line(1, "h1"), hand_line(2, "Ｈ1"), hand_line(1, "H1"), hand_line(3, "h1")])
    s = validate([str(log)])
    assert [(p.code, p.line) for p in s.problems] == [("lookalike-ids", 2), ("duplicate-deal", 3),
                                                      ("duplicate-hand-id", 4)]
    assert "hand id 'Ｈ1' looks like hand id 'h1'" in s.problems[0].message and s.problems[0].seat is None


def test_distinct_ids_and_one_spelling_throughout_say_nothing(tmp_path: Path) -> None:
    log = write_log(tmp_path / "room.jsonl", [hand_line(s, f"h{s}", ["Alice", "bob", "ｃｈｅｎ", "dong"]) for s in range(4)]
               + [hand_line(9, "h9", ["Alicia", "bob2", "chen2", "dong2"])])
    s = validate([str(log)])
    assert (s.valid_hands, s.n_problems) == (5, 0)


def test_validate_says_lookalikes_in_text_and_json_and_exits_1(tmp_path: Path) -> None:
    log = write_log(tmp_path / "room.jsonl", [hand_line(1, "h1", ["A1", "p2", "p3", "p4"]),
                                         hand_line(2, "h2", ["Ａ1", "p2", "p3", "p4"])])
    r = run_cli("validate", str(log))
    clean_exit(r, 1)
    assert f"{log}:2: hand h2, seat 0 (Ａ1): [lookalike-ids] player id 'Ａ1' looks like player id 'A1'" in r.output
    assert "2 hands, 2 valid, 1 problems" in r.output
    r = run_cli("validate", str(log), "--format", "json")
    clean_exit(r, 1)
    doc = json.loads(r.output)
    assert doc["valid_hands"] == 2 and doc["problem_counts"] == {"lookalike-ids": 1}
    assert (doc["problems"][0]["line"], doc["problems"][0]["player"], doc["problems"][0]["move"]) == (2, "Ａ1", None)


@pytest.mark.parametrize("field", ["hand_id", "table_id", "player"])
def test_an_id_past_the_bound_refuses_its_line_naming_the_field(tmp_path: Path, field: str) -> None:
    long = "x" * (MAX_ID_LENGTH + 1)
    hand = (hand_line(1, long) if field == "hand_id" else hand_line(1, "h1", table_id=long) if field == "table_id"
            else hand_line(1, "h1", ["p1", "p2", long, "p4"]))
    log = write_log(tmp_path / "log.jsonl", [hand, hand_line(2, "ok")])
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (2, 1)
    (p,) = s.problems
    where = {"hand_id": "$.hand_id", "table_id": "$.table_id", "player": "$.players[2]"}[field]
    assert (p.code, p.line) == ("id-too-long", 1)
    assert p.message.startswith(f"{where} is an id of 257 characters; an id may hold at most 256")
    assert p.hand_id == (cut_id(long) if field == "hand_id" else "h1")


def test_an_id_at_the_bound_is_valid(tmp_path: Path) -> None:
    at = "y" * MAX_ID_LENGTH
    log = write_log(tmp_path / "log.jsonl", [hand_line(1, at, ["p1", at, "p3", "p4"], table_id=at)])
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
    hands = [hand_line(s, "H" * 200_000 + str(s) if s % 3 == 0 else f"h{s}",
                   [big + "x", "p2", "p3", big + "y" if s % 2 == 0 else "p4"]) for s in range(12)]
    return write_log(tmp_path_factory.mktemp("huge") / "big.jsonl", hands)


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


@pytest.mark.parametrize("blank", ["   ", "\u200b", "\t", "\u3000 \u00ad"])
def test_a_hand_id_blank_once_normalised_is_bad_type(blank: str) -> None:
    """`""` was refused (bad-type) but `"   "` or a zero-width space passed: a hand no page, problem or report can
    name so a person sees it, and no `report --hand` a person can type. Refused as a blank player id is."""
    [item] = check_lines([Line("f.jsonl", 1, hand_line(3, blank))])
    (p,) = item.check.problems
    assert (p.code, p.hand_id) == ("bad-type", blank) and "$.hand_id is" in p.message and "blank" in p.message
    [item] = check_lines([Line("f.jsonl", 1, hand_line(3, blank + "h3"))])
    assert item.check.problems == []


def test_blank_hand_ids_are_refused_in_a_batch_and_not_called_lookalikes(tmp_path: Path) -> None:
    """Through the compiled check too (70 hands), each one problem: not a second `lookalike-ids` for two blanks."""
    log = tmp_path / "room.jsonl"
    ids = [f"h{s}" for s in range(70)]
    ids[40], ids[41] = " ", "\u200b"
    log.write_bytes(b"".join(hand_line(s, x) for s, x in enumerate(ids)))
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (70, 68)
    assert [(p.code, p.line) for p in s.problems] == [("bad-type", 41), ("bad-type", 42)]


@pytest.mark.parametrize("name", ["bieqi", "bieqi-borrow", "xinyang-heiqi"])
def test_every_variant_refuses_a_blank_hand_id_and_checks_the_rest(name: str) -> None:
    import msgspec
    from conftest import variant_record

    from analyzer.variants import registry

    game = registry()[name]
    good = variant_record(name, 5)
    assert game.check(good).ok
    bad = msgspec.structs.replace(good, hand_id=" \u200b", players=["ann", "bo", "Ann", "di"])
    assert [p.code for p in game.check(bad).problems] == ["bad-type", "bad-players"]


def test_a_blank_hand_id_is_left_out_of_the_analysis(tmp_path: Path) -> None:
    log = tmp_path / "room.jsonl"
    log.write_bytes(hand_line(1, "h1") + hand_line(2, "\u200b"))
    r = run_cli("decisions", str(log), "-o", str(tmp_path / "store"), *FAST)
    clean_exit(r, 0)
    assert "1 new hands" in r.output and "1 invalid hand(s) left out" in r.output




CYRILLIC_P1 = "\u04401"  # Cyrillic er, then 1: drawn as "p1"


def test_a_cyrillic_lookalike_at_one_table_is_bad_players_shown_as_code_points() -> None:
    from analyzer.logs import Line
    from analyzer.validate import check_lines

    obj = legal_obj(1, "h1")
    obj["players"] = ["p1", CYRILLIC_P1, "p3", "p4"]
    [item] = check_lines([Line("f.jsonl", 1, orjson.dumps(obj))])
    [p] = item.check.problems
    assert p.code == "bad-players" and "'\\u04401'" in p.message and "'p1'" in p.message, p.message


@pytest.mark.parametrize(("first", "second"), [
    ("p1", CYRILLIC_P1),
    ("Sergei", "\u0405ergei"),  # Cyrillic dze
    ("KAPPA", "\u039a\u0391\u03a1\u03a1\u0391"),  # Greek capitals
    ("cop", "\u0441\u043e\u0440"),  # every letter Cyrillic
])
def test_an_id_in_another_script_drawn_alike_is_said_across_hands(tmp_path: Path, first: str, second: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(legal_lines(1, 0, [first, "b", "c", "d"]) + legal_lines(1, 1, [second, "b", "c", "d"]))
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 2
    [p] = s.problems
    assert p.code == "lookalike-ids" and p.line == 2 and p.seat == 0
    assert "\\u" in p.message  # the other script's letters shown as code points: a reader sees they differ


def test_other_scripts_own_ids_are_not_lookalikes(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(legal_lines(1, 0, ["Иван", "Ivan", "Νίκος", "nikos2"]) + legal_lines(1, 1, ["Петр", "Ivan", "Νίκος", "张三"]))
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 2 and s.problems == []


def test_cyrillic_lookalikes_are_caught_on_the_compiled_path_and_by_the_other_variants(tmp_path: Path) -> None:
    """A batch of 64 or more hands goes through the compiled scan: the same bad-players there."""
    lines = legal_lines(70)
    bad = legal_obj(99, "odd")
    bad["players"] = ["p1", CYRILLIC_P1, "p3", "p4"]
    log = tmp_path / "log.jsonl"
    log.write_bytes(lines + orjson.dumps(bad) + b"\n")
    from analyzer.validate import validate

    s = validate([str(log)])
    assert s.valid_hands == 70 and [p.code for p in s.problems] == ["bad-players"]
    for name in ("bieqi-borrow", "xinyang-heiqi"):
        rec = orjson.loads(format_record(variant_record(name, 2, players=["p1", CYRILLIC_P1, "p3", "p4"])))
        other = tmp_path / f"{name}.jsonl"
        other.write_bytes(orjson.dumps(rec) + b"\n")
        assert "bad-players" in [p.code for p in validate([str(other)]).problems], name
