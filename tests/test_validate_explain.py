"""How a line that does not decode is explained (validate.explain_line): bounded work on a hostile line, problems in
the line's order, a borrow action judged as the kind it says it is, and the reader's own refusals placed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

import analyzer.validate as validating
from analyzer.validate import MAX_SCHEMA_ERRORS, MAX_SHAPE_PROBLEMS, explain_line, validate

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


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
