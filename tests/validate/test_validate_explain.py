"""How a line that does not decode is explained (explain.explain_line): bounded work on a hostile line, problems in
the line's order, a borrow action judged as the kind it says it is, and the reader's own refusals placed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SAMPLES, hand_line, legal_lines, legal_obj

import analyzer.explain as validating
from analyzer.explain import MAX_SCHEMA_ERRORS, MAX_SHAPE_PROBLEMS, explain_line
from analyzer.validate import validate



def _first(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8").splitlines()[0])


def _explain(obj: dict[str, Any] | bytes) -> list[Any]:
    data = obj if isinstance(obj, bytes) else orjson.dumps(obj)
    return explain_line(data, None)[1]


def test_a_line_of_many_bad_items_draws_a_bounded_number_of_schema_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """5,000 bad items (a 1 MB line may hold 500,000): the explainer takes at most MAX_SCHEMA_ERRORS + 1 errors from
    jsonschema's iterator, not all of them before saying the first 20 (which cost seconds and gigabytes a line)."""
    obj = _first("legal.jsonl")
    obj["deal"][0] = [0] * 5000
    drawn = 0
    real = validating._validator(obj["variant"])

    class Counting:
        def iter_errors(self, instance: Any) -> Any:
            nonlocal drawn
            for err in real.iter_errors(instance):
                drawn += 1
                yield err

    monkeypatch.setattr(validating, "_validator", lambda variant: Counting())
    problems = _explain(obj)
    assert drawn == MAX_SCHEMA_ERRORS + 1
    assert len(problems) == MAX_SHAPE_PROBLEMS + 1
    assert problems[-1].message == f"... and at least {MAX_SCHEMA_ERRORS - MAX_SHAPE_PROBLEMS} more shape problems"


def test_problems_come_in_the_lines_order_and_the_rest_is_counted_exactly() -> None:
    """25 bad seats: moves 1..20 in order (array places compared as numbers, not "10" before "2"), then 5 more."""
    obj = _first("legal.jsonl")
    for a in obj["actions"][:25]:
        a["seat"] = 9
    problems = _explain(obj)
    assert [p.action for p in problems[:MAX_SHAPE_PROBLEMS]] == list(range(MAX_SHAPE_PROBLEMS))
    assert problems[-1].message == "... and 5 more shape problems"
    obj["actions"][20]["seat"] = 0
    obj["actions"] = obj["actions"][:21]
    assert [p.action for p in _explain(obj)] == list(range(MAX_SHAPE_PROBLEMS))  # exactly 20: nothing more to count


@pytest.mark.parametrize(("action", "field", "value", "code", "says"), [
    (1, "from", 4, "bad-type", "$.actions[1].from is 4: 4 is greater than the maximum of 3"),
    (1, "from", "1", "bad-type", "$.actions[1].from is '1': '1' is not of type 'integer'"),
    (1, "ms", -5, "bad-type", "$.actions[1].ms is -5: -5 is less than the minimum of 0"),
    (1, "seat", 4, "bad-type", "$.actions[1].seat is 4: 4 is greater than the maximum of 3"),
    (1, "kind", "cover", "bad-type", "$.actions[1].kind is 'cover': expected one of 'borrow', 'play'"),
    (1, "kind", None, "missing-field", "$.actions[1] lacks the required field 'kind'"),
    (0, "ms", -5, "bad-type", "$.actions[0].ms is -5: -5 is less than the minimum of 0"),
    (0, "seat", 4, "bad-type", "$.actions[0].seat is 4: 4 is greater than the maximum of 3"),
])
def test_a_borrow_variant_action_is_explained_as_the_kind_it_says(action: int, field: str, value: Any, code: str,
                                                                  says: str) -> None:
    """Not "'from' was unexpected" (the play branch's complaint about a borrow) nor "lacks 'from'" (the borrow
    branch's about a play): the schema's discriminator (``kind``) picks the branch that explains the value."""
    obj = _first("borrow-sample.jsonl")
    assert [a["kind"] for a in obj["actions"][:2]] == ["play", "borrow"]
    if value is None:
        del obj["actions"][action][field]
    else:
        obj["actions"][action][field] = value
    [problem] = _explain(obj)
    assert (problem.code, problem.message, problem.action) == (code, says, action)


def test_many_actions_of_an_unknown_kind_are_capped_too() -> None:
    obj = _first("borrow-sample.jsonl")
    for a in obj["actions"][:40]:
        a["kind"] = "cover"
    problems = _explain(obj)
    assert len(problems) == MAX_SHAPE_PROBLEMS + 1 and problems[-1].message == "... and 20 more shape problems"


@pytest.mark.parametrize(("literal", "place", "says"), [
    (b'"seat": 1.0', 1, "$.actions[1].seat is 1.0: Expected `int`, got `float`"),
    (b'"seat": 1e0', 1, "$.actions[1].seat is 1.0: Expected `int`, got `float`"),
])
def test_a_float_where_an_int_belongs_is_placed_at_its_action(literal: bytes, place: int, says: str) -> None:
    """JSON Schema counts 1.0 as an integer, the reader does not: the problem names the move, as the reader's path
    says, not only inside the message text."""
    obj = _first("legal.jsonl")
    obj["actions"][place]["seat"] = "@"
    [problem] = _validated(orjson.dumps(obj).replace(b'"@"', literal.split(b": ")[1])).problems
    assert (problem.code, problem.action, problem.message) == ("bad-type", place, says)


def _validated(data: bytes) -> Any:
    """What ``validate`` (the command's path: the reader first, then the explainer) says of one line."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "one.jsonl"
        path.write_bytes(data + b"\n")
        return validate([str(path)])


@pytest.mark.parametrize(("literal", "shown"), [(b"1e400", "is inf:"), (str(2**70).encode(), f"is {2**70}:")])
def test_numbers_beyond_a_double_or_64_bits_are_shown_as_they_are(literal: bytes, shown: str) -> None:
    """Not "is null" (orjson writes inf as null) nor a float for an integer written in full."""
    obj = _first("legal.jsonl")
    obj["actions"][0]["ms"] = "@"
    [problem] = _validated(orjson.dumps(obj).replace(b'"@"', literal)).problems
    assert problem.code == "bad-type" and problem.action == 0 and shown in problem.message, problem.message


@pytest.mark.parametrize("when", ["20261101T200000Z", "2026-11-01T20:00Z", "2026-11-01T20:00:00.Z",
                                  "2026-11-01T20:00:00", "2026-02-30T20:00:00Z"])
def test_every_time_the_reader_refuses_is_a_bad_time(when: str) -> None:
    """One code for one fault: the reader's refusals the standard library would have taken are bad-time too."""
    obj = _first("legal.jsonl")
    obj["started_at"] = when
    [problem] = _validated(orjson.dumps(obj)).problems
    assert problem.code == "bad-time" and problem.message.startswith(f"$.started_at is {when!r}: "), problem.message


def test_a_gzip_log_without_its_gz_name_is_said_to_be_one(tmp_path) -> None:
    import gzip

    from conftest import SAMPLES

    p = tmp_path / "room.jsonl"
    p.write_bytes(gzip.compress((SAMPLES / "legal.jsonl").read_bytes()))
    first = validate([str(p)]).problems[0]
    assert first.code == "not-utf8" and first.line == 1 and "name ends in .gz" in first.message



def test_a_file_of_lone_cr_line_ends_says_so(tmp_path: Path) -> None:
    """CR alone parts no JSON Lines records: the file is one line, whose "unexpected content after document at
    column 3081" did not say why; the problem now names the line ends."""
    log = tmp_path / "mac.jsonl"
    log.write_bytes(legal_lines(3).replace(b"\n", b"\r"))
    s = validate([str(log)])
    assert [(p.code, p.line) for p in s.problems] == [("not-json", 1)]
    assert "parted by CR alone" in s.problems[0].message
    crlf = tmp_path / "dos.jsonl"
    crlf.write_bytes(legal_lines(3).replace(b"\n", b"\r\n"))
    assert validate([str(crlf)]).valid_hands == 3


def test_gzip_data_under_a_plain_name_or_on_standard_input_says_how_to_read_it() -> None:
    from analyzer.explain import explain_line

    _, [p] = explain_line(gzip.compress(legal_lines(1))[:40])
    assert p.code == "not-utf8" and "ends in .gz" in p.message and "zcat" in p.message


@pytest.mark.parametrize(("encoding", "said"), [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
                                                ("gb18030", "GB18030")])
def test_a_log_in_another_text_encoding_is_named_with_how_to_convert_it(tmp_path: Path, encoding: str,
                                                                        said: str) -> None:
    """A server that writes UTF-16 (Windows), UTF-32 or GBK: every line a problem as before, each now saying what
    the text looks like and how to convert it (was "invalid start byte" on the first line and "unexpected
    character" on the others, which did not say why)."""
    text = "".join(hand_line(s, f"h{s}", ["张三", "p2", "p3", "p4"]).decode() for s in range(3))
    log = tmp_path / "log.jsonl"
    log.write_bytes(text.encode(encoding))
    s = validate([str(log)])
    assert s.valid_hands == 0 and s.n_problems == s.hands >= 3  # little-endian: the last line ending's NULs too
    assert all("iconv -f " in p.message and said in p.message for p in s.problems), [p.message for p in s.problems]
    assert f"iconv -f {said} -t UTF-8" in s.problems[0].message


def test_a_latin1_line_gets_no_encoding_guess(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(hand_line(1, "h1", ["alic\u00e9", "p2", "p3", "p4"]).decode().encode("latin-1"))
    (p,) = validate([str(log)]).problems
    assert p.code == "not-utf8" and "iconv" not in p.message


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


def _records(n: int = 3) -> list[dict]:
    return [legal_obj(s, f"h{s}") for s in range(n)]


def test_a_pretty_printed_log_says_each_hand_must_be_on_one_line(tmp_path: Path) -> None:
    """`json.dump(hand, indent=2)` per hand: every line a problem that said only "unexpected content after document"
    or "unexpected end of data"; each now says the log looks pretty-printed and how to make it one hand a line."""
    log = tmp_path / "pretty.jsonl"
    log.write_text("".join(json.dumps(h, indent=2) + "\n" for h in _records(1)))
    s = validate([str(log)])
    assert s.valid_hands == 0 and s.n_problems == s.hands > 100
    said = [p for p in s.problems if "pretty-printed" in p.message]
    assert len(said) >= 0.9 * s.n_problems and "jq -c . FILE" in said[0].message
    assert s.problems[0].line == 1 and "pretty-printed" in s.problems[0].message  # the "{" line


def test_a_json_array_of_hands_says_one_hand_per_line(tmp_path: Path) -> None:
    log = tmp_path / "array.jsonl"
    log.write_text(json.dumps(_records()) + "\n")
    (p,) = validate([str(log)]).problems
    assert p.code == "not-object" and "an array of 3" in p.message and "jq -c '.[]' FILE" in p.message


def test_the_lines_of_a_json_array_say_the_comma_after_the_record(tmp_path: Path) -> None:
    log = tmp_path / "array-lines.jsonl"
    log.write_text("[\n" + ",\n".join(json.dumps(h) for h in _records()) + "\n]\n")
    s = validate([str(log)])
    assert s.valid_hands == 1  # the last record, with no comma after it
    by_line = {p.line: p.message for p in s.problems}
    assert sorted(by_line) == [1, 2, 3, 5]
    assert "a comma or bracket follows the record" in by_line[2] and "a comma or bracket" in by_line[3]


def test_two_hands_on_one_line_say_where_the_second_starts(tmp_path: Path) -> None:
    first, second = (json.dumps(h) for h in _records(2))
    log = tmp_path / "joined.jsonl"
    log.write_text(first + second + "\n")
    (p,) = validate([str(log)]).problems
    assert p.code == "not-json" and f"another value follows the first at character {len(first) + 1}" in p.message


def test_a_hand_encoded_twice_says_so(tmp_path: Path) -> None:
    log = tmp_path / "twice.jsonl"
    log.write_text("".join(json.dumps(json.dumps(h)) + "\n" for h in _records(2)))
    s = validate([str(log)])
    assert [p.code for p in s.problems] == ["not-object"] * 2
    assert all("encoded twice" in p.message for p in s.problems)


def test_ordinary_garbage_gets_no_guess(tmp_path: Path) -> None:
    log = tmp_path / "junk.jsonl"
    log.write_bytes(b"hello world\n<html><body>502 Bad Gateway</body></html>\n{\"a\": 1} trailing\n[1, 2, 3]\n")
    s = validate([str(log)])
    assert s.n_problems == 4
    assert not [p for p in s.problems if "pretty-printed" in p.message or "array" in p.message
                or "another value" in p.message], [p.message for p in s.problems]
