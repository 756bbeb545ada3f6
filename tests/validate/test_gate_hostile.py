"""Hostile records at the gate: nothing bad validates, nothing raises; split codes, out-of-range numbers, deep
nesting, repeated keys, lookalike ids, hostile corruptions caught at their line on both paths."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import msgspec
import numpy as np
import orjson
import pytest
from conftest import assert_caught_at_its_line, legal_obj, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.corrupt import HOSTILE_PLANTERS
from analyzer.logs import Line, decoder, generate_lines
from analyzer.rules import MAX_DUTOU_FACTOR, MAX_POINTS, MAX_THRESHOLDS, MAX_TONG_FACTOR, Rules
from analyzer.explain import explain_line
from analyzer.validate import check_lines, validate
from analyzer.variants.bieqi import VARIANT, settle


def _codes(obj: dict | bytes) -> list[str]:
    data = obj if isinstance(obj, bytes) else orjson.dumps(obj)
    [item] = check_lines([Line("f.jsonl", 1, data)])
    return [p.code for p in item.check.problems]


def _clean(r: object) -> bool:
    """The command ended by exiting, not by an exception."""
    return getattr(r, "exception", None) is None or isinstance(r.exception, SystemExit)  # type: ignore[attr-defined]


def _split(obj: dict) -> dict:
    """Codes split at the wrong places: "7S", "8S" -> "7", "S8S"; the joined string is unchanged."""
    d = obj["deal"][0]
    d[0], d[1] = d[0][0], d[0][1] + d[1]
    return obj


def test_codes_split_at_the_wrong_places_are_bad_cards() -> None:
    assert _codes(legal_obj(1)) == []
    assert set(_codes(_split(legal_obj(1)))) == {"bad-card"}
    o = legal_obj(2)
    a = o["actions"]
    a[3]["card"], a[4]["card"] = a[3]["card"] + a[4]["card"][0], a[4]["card"][1]
    assert "bad-card" in _codes(o)


def test_split_codes_never_reach_decisions_audit_or_report(tmp_path: Path) -> None:
    log = tmp_path / "split.jsonl"
    log.write_bytes(orjson.dumps(_split(legal_obj(3, "bad"))) + b"\n")
    r = run_cli("report", str(log), "--hand", "bad", "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 2 and _clean(r) and "not a record a page can replay" in r.output
    assert "[bad-card]" in r.output, r.output  # the reason itself, not only a pointer to `analyzer validate`
    r = run_cli("decisions", str(log), "-o", str(tmp_path / "d.parquet"), "--samples", "1",
                                 "--dd-samples", "0")
    assert r.exit_code == 0 and _clean(r) and "0 decisions" in r.output and "[bad-card]" in r.output, r.output


@pytest.mark.parametrize("rules", [
    {"cover_doubling": [0] * 64},
    {"cover_doubling": [1] * 15000},
    {"cover_doubling": [MAX_POINTS + 1]},
    {"dutou_factor": 2**63},
    {"dutou_factor": MAX_DUTOU_FACTOR + 1},
    {"dutou_factor": 0},
    {"tong_factors": [2**63] * 5},
    {"tong_factors": [1, 2, 4, 8, MAX_TONG_FACTOR + 1]},
    {"tong_factors": [1, 2]},
    {"dutou": "triple"},
    {"units": [1, 1, 1, 1]},
])
def test_rule_options_out_of_bounds_are_bad_rules(rules: dict) -> None:
    o = legal_obj(4)
    o["rules"] = rules
    assert set(_codes(o)) == {"bad-rules"}


def test_rule_option_with_an_int_of_thousands_of_digits_is_a_problem() -> None:
    line = orjson.dumps(legal_obj(5)).replace(b'"hand_id"', b'"rules":{"dutou_factor":' + b"9" * 5000 + b'},"hand_id"')
    assert _codes(line) == ["bad-rules"]


@pytest.mark.parametrize("field", ["seat", "ms"])
def test_numbers_of_more_digits_than_python_converts_are_out_of_range(field: str) -> None:
    """5,000 digits: beyond Python's int/str limit, still bad-type (out of range), and the message neither
    prints the digits nor advises raising Python's limit."""
    line = orjson.dumps(legal_obj(5)).replace(f'"{field}":'.encode(), f'"{field}":{"9" * 5000}'.encode() + b",\"x\":", 1)
    _, problems = explain_line(line)
    assert "bad-type" in [p.code for p in problems] and "not-json" not in [p.code for p in problems]
    text = " ".join(p.message for p in problems)
    assert "thousands of digits" in text and "set_int_max_str_digits" not in text and len(text) < 2000


def test_the_largest_legal_rules_score_exactly_in_the_compiled_scorer() -> None:
    """Every legal combination fits: the worst case (biggest factors, every threshold passed) scores the
    same compiled as in Python, and below 2**53."""
    from analyzer.kernels.scoring import rule_table, settle_into

    rules = Rules(tong_factors=(MAX_TONG_FACTOR,) * 5, dutou_factor=MAX_DUTOU_FACTOR,
                  cover_doubling=(0,) * MAX_THRESHOLDS)
    for pts, l7 in [([0, 0, 0, MAX_POINTS], [True, True, True, False]), ([0, 100, 100, 164], [True] * 4),
                    ([91, 91, 91, 91], [False] * 4)]:
        ref = settle(pts, l7, [0, 1, 2, 3], rules)
        mult, scores = np.zeros(4, np.int64), np.zeros(4, np.int64)
        settle_into(np.array(pts, np.int64), np.array(l7), rule_table([rules])[0], mult, scores)
        assert list(scores) == list(ref.scores) and list(mult) == list(ref.multipliers)
        assert max(abs(s) for s in ref.scores) < 2**53


@pytest.mark.parametrize("value", [2**53, 2**63, 2**64 - 1])
def test_huge_times_are_bad_type(value: int) -> None:
    o = legal_obj(6)
    o["actions"][-1]["ms"] = value
    assert _codes(o) == ["bad-type"]


@pytest.mark.parametrize("field", ["seat", "ms"])
def test_numbers_beyond_64_bits_are_out_of_range_not_json_errors(field: str) -> None:
    line = orjson.dumps(legal_obj(7)).replace(f'"{field}":'.encode(), f'"{field}":1{"0" * 400}'.encode() + b",\"x\":", 1)
    codes = _codes(line)
    assert "not-json" not in codes and "bad-type" in codes


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(literal: bytes) -> None:
    line = orjson.dumps(legal_obj(8)).replace(b'"ms":1', b'"ms":' + literal + b',"y":1', 1)
    assert _codes(line) == ["not-json"]


@pytest.mark.parametrize("where", ["extra", "players", "rules", "actions", "result"])
@pytest.mark.parametrize("depth", [255, 600, 1100, 5000])
def test_deep_nesting_is_a_problem_never_a_recursion_error(where: str, depth: int) -> None:
    o = legal_obj(9)
    deep = b"[" * depth + b"]" * depth
    key = {"extra": "zz", "players": "players", "rules": "rules", "actions": "actions", "result": "result"}[where]
    o.pop(key, None)
    line = orjson.dumps(o)[:-1] + b',"' + key.encode() + b'":' + deep + b"}"
    codes = _codes(line)
    assert codes and set(codes) <= {"not-json", "bad-type", "extra-field", "bad-rules", "bad-players"}


def test_deep_nesting_in_a_room_does_not_break_its_audit(tmp_path: Path) -> None:
    lines = [orjson.dumps(legal_obj(s, f"h{s}")) for s in range(3)]
    lines.append(orjson.dumps(legal_obj(10, "deep"))[:-1] + b',"x":' + b"[" * 300 + b"]" * 300 + b"}")
    log = tmp_path / "room.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    summary = validate([str(log)])
    assert summary.hands == 4 and summary.valid_hands == 3
    r = run_cli("audit", str(log), "--out", str(tmp_path / "out"), "--samples", "1",
                                 "--dd-samples", "1")
    assert r.exit_code in (0, 1), r.output
    assert (tmp_path / "out" / "report.html").exists()


def test_duplicate_keys_are_reported() -> None:
    line = orjson.dumps(legal_obj(11)).replace(b'"hand_id":"h11"', b'"hand_id":"h11","hand_id":"h12"', 1)
    assert "duplicate-key" in _codes(line)
    act = orjson.dumps(legal_obj(12)).replace(b'"card":"', b'"card":"2C","card":"', 1)
    assert "duplicate-key" in _codes(act)


def test_an_empty_player_id_is_bad_players() -> None:
    o = legal_obj(13)
    o["players"][2] = ""
    assert _codes(o) == ["bad-players"]


def test_a_bom_first_in_a_file_is_skipped_and_elsewhere_is_a_problem(tmp_path: Path) -> None:
    line = orjson.dumps(legal_obj(14))
    log = tmp_path / "bom.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + line + b"\n\xef\xbb\xbf" + orjson.dumps(legal_obj(15)) + b"\n")
    s = validate([str(log)])
    assert s.valid_hands == 1 and [p.code for p in s.problems] == ["not-json"] and s.problems[0].line == 2


def test_nul_bytes_and_control_bytes_are_not_json() -> None:
    line = orjson.dumps(legal_obj(16))
    assert _codes(line[:-1] + b"\x00}") == ["not-json"]
    assert _codes(b"\x00" * 100) == ["not-json"]


def test_max_line_bytes_counts_crlf_and_lf_alike(tmp_path: Path) -> None:
    body = b'{"a":1}'
    for ending in (b"\n", b"\r\n"):
        p = tmp_path / "x.jsonl"
        p.write_bytes(body + ending + body + b"x" + ending)
        lines = list(generate_lines(str(p), max_line_bytes=len(body)))
        assert [x.data for x in lines] == [body, None], ending


def test_gz_with_trailing_garbage_and_concatenated_members(tmp_path: Path) -> None:
    a, b = orjson.dumps(legal_obj(17, "a")) + b"\n", orjson.dumps(legal_obj(18, "b")) + b"\n"
    cat = tmp_path / "cat.jsonl.gz"
    cat.write_bytes(gzip.compress(a) + gzip.compress(b))
    assert validate([str(cat)]).valid_hands == 2
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(gzip.compress(a) + b"garbage after the member")
    s = validate([str(junk)])
    assert s.valid_hands == 1 and [p.code for p in s.problems] == ["io-error"]
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert validate([str(empty)]).hands == 0


LOOKALIKES = {  # seat 0 and seat 1 of one table, each pair the same once normalised
    "nfc-nfd": ("caf\u00e9", "cafe\u0301"),
    "case": ("alice", "ALICE"),
    "trailing-space": ("alice", "alice "),
    "leading-nbsp": ("bob", "\u00a0bob"),
    "zero-width": ("carol", "car\u200bol"),
    "soft-hyphen": ("dave", "da\u00adve"),
    "tag-character": ("erin", "erin\U000e0041"),
    "fullwidth": ("frank", "\uff46\uff52\uff41\uff4e\uff4b"),
    "case-and-nfd": ("\u00c9lodie", "e\u0301LODIE"),
}


@pytest.mark.parametrize("ids", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_player_ids_that_look_alike_are_bad_players(ids: tuple[str, str]) -> None:
    o = legal_obj(16)
    o["players"][:2] = ids
    [item] = check_lines([Line("f.jsonl", 1, orjson.dumps(o))])
    [p] = item.check.problems
    assert p.code == "bad-players" and "look alike" in p.message and "seats 0 and 1" in p.message, p.message
    shown = p.format()
    a, b = (shown.split("player ids ")[1].split(" (seats")[0]).split(" and ")
    assert a != b, shown  # the reader sees how the two differ (escaped, or as code points)
    assert not any(c in shown for c in "\u200b\u00ad\U000e0041\u00a0"), shown


@pytest.mark.parametrize("players", [["alice", "bob", "carol", "dave"], ["北风", "南风", "東風", "西风"],
                                     ["p1", "p11", "p1x", "q1"], ["café", "cafe", "Zoë", "Zoe"], ["a b", "ab", "a_b", "a-b"]])
def test_distinct_player_ids_still_pass(players: list[str]) -> None:
    o = legal_obj(17)
    o["players"] = players
    assert _codes(o) == []


def test_look_alike_ids_are_caught_in_a_batch_for_the_compiled_path_too(tmp_path: Path) -> None:
    """A file of 70 hands goes through the compiled check (64 or more), which must send the look-alike hand
    through the explaining path rather than pass it."""
    objs = [legal_obj(100 + s, f"b{s}") for s in range(70)]
    objs[40]["players"][2] = objs[40]["players"][0].upper()  # "P1" beside "p1"
    log = tmp_path / "room.jsonl"
    log.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    s = validate([str(log)])
    assert (s.hands, s.valid_hands) == (70, 69)
    assert [(p.code, p.hand_id, p.line) for p in s.problems] == [("bad-players", "b40", 41)]


@pytest.mark.parametrize("name", ["bieqi", "bieqi-borrow", "xinyang-heiqi"])
def test_every_variant_reports_look_alike_players(name: str) -> None:
    import msgspec
    from conftest import variant_record

    from analyzer.variants import registry

    game = registry()[name]
    good = variant_record(name, 3)
    assert not [p for p in game.check(good).problems if p.code == "bad-players"]
    bad = msgspec.structs.replace(good, players=["ann", "bo", "Ann", "di"])
    [p] = [p for p in game.check(bad).problems if p.code == "bad-players"]
    assert p.message == "player ids 'ann' and 'Ann' (seats 0 and 2) look alike (the same once normalised)"


def test_the_invisible_characters_of_ids_cover_every_format_character() -> None:
    """``id_key`` drops every format character (Unicode's category Cf, as this Python's Unicode has it) and the blank
    marks: an id with one of them added looks like the id without it."""
    import sys
    import unicodedata

    from analyzer.problems import id_key

    kept = [f"U+{c:04X}" for c in range(0x80, sys.maxunicode + 1)
            if unicodedata.category(chr(c)) == "Cf" and id_key("ab" + chr(c)) != "ab"]
    assert kept == [], f"format characters id_key keeps: {kept}"
    assert id_key("a\u034fb\ufe0f") == "ab" and id_key("a\u00e9") != "ae"  # blank marks go, letters stay
    long_id = "\u00e9" * 5000
    assert id_key(long_id + "\u200b ") == id_key("E\u0301" * 5000) == long_id  # not cached, the same key


@pytest.mark.parametrize("blank", ["   ", "\u200b", "\u3000", " \u00ad "])
def test_a_player_id_blank_once_normalised_is_bad_players(blank: str) -> None:
    """Only spaces or zero-width characters: a non-empty string that names nobody a person could see."""
    o = legal_obj(9)
    o["players"][2] = blank
    [item] = check_lines([Line("f.jsonl", 1, orjson.dumps(o))])
    assert [p.code for p in item.check.problems] == ["bad-players"] and "seat 2" in item.check.problems[0].message
    o["players"][2] = blank + "x"
    [item] = check_lines([Line("f.jsonl", 1, orjson.dumps(o))])
    assert item.check.problems == []


def test_id_keys_drop_format_and_blank_characters_at_c_speed() -> None:
    """The look-alike key drops format (Cf) and blank characters through a translate table (one question a distinct
    character; an id that NFKC expands 18-fold, U+FDFA, cost 4x more asked a character at a time): the same keys."""
    import random
    import unicodedata

    from analyzer.problems import _BLANK, _key

    def reference(text: str) -> str:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf" and _BLANK.match(ch) is None).strip()

    rng = random.Random(3)
    pool = ["a", "B", "é", "e\u0301", "\u200b", "\u00ad", "\u3164", "\ufe0f", "\u2060", " ", "\u3000", "ﬁ", "Ａ",
            "\U000e0041", "\u202e", "\u034f", "ß", "\ufdfa", "漢"]
    for _ in range(500):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(1, 12)))
        assert _key(text) == reference(text), repr(text)
    assert len(_key("\ufdfa" * 50_000)) == 18 * 50_000


@pytest.mark.parametrize(("field", "where", "action"), [(b'"card":"', "$.actions[4]", 4), (b'"scores":', "$.result", None),
                                                        (b'"hand_id":', "$", None)])
def test_a_repeated_key_is_named_with_its_place_and_move(field: bytes, where: str, action: int | None) -> None:
    """A key twice in an action's object named only the hand: the problem now gives the object's place and, in an
    action, its move (the standard: file, line, hand and action)."""
    from analyzer.logs import Line
    from analyzer.validate import check_lines

    line = orjson.dumps(legal_obj(12, "h12"))
    k = -1
    for _ in range(5 if field == b'"card":"' else 1):  # the fifth action's card
        k = line.index(field, k + 1)
    line = line[:k] + field.rstrip(b'"') + b'"2C",' + line[k:]
    [item] = check_lines([Line("x.jsonl", 1, line)])
    [p] = [p for p in item.check.problems if p.code == "duplicate-key"]
    assert (p.hand_id, p.action) == ("h12", action) and f"({where})" in p.message


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), code=st.sampled_from(sorted(HOSTILE_PLANTERS)), where=st.integers(0, 4))
def test_hostile_corruptions_are_caught_at_the_right_line(tmp_path_factory: pytest.TempPathFactory, seed: int,
                                                          code: str, where: int) -> None:
    assert_caught_at_its_line(tmp_path_factory.mktemp("c"), seed, HOSTILE_PLANTERS[code], where)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**9), code=st.sampled_from(sorted(HOSTILE_PLANTERS)))
def test_the_fast_path_never_passes_a_hostile_hand(seed: int, code: str) -> None:
    """The gate (decoding, the key scan, the compiled check) and the engine both reject every one."""
    planted = HOSTILE_PLANTERS[code](legal_obj(seed), random.Random(seed))
    [item] = check_lines([Line("x.jsonl", 1, planted[0])])
    assert not item.ok and planted[1] in {p.code for p in item.check.problems}
    if code != "duplicate-key":  # a repeated key decodes (the last wins); the scan above refuses it
        try:
            rec = decoder().decode(planted[0])
        except (msgspec.ValidationError, msgspec.DecodeError):
            return  # refused while decoding: never reaches the kernel
        assert not VARIANT.check(rec).ok and not VARIANT.check_batch([rec])[0].ok
