"""The published schemas, the reader and the docs are provably in step."""

import json
import re

import jsonschema
import pytest

from analyzer.logs import decoder
from analyzer.problems import CODES
from analyzer.publish import generated_files
from analyzer.schema import dumps, variant_schema
from analyzer.validate import validate
from conftest import ROOT, SAMPLES

DOC = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(generated_files()))
def test_schema_files_are_what_the_reader_generates(name):
    path = ROOT / "schemas" / name
    assert path.exists(), f"run: python -m analyzer.publish  ({name} is missing)"
    assert path.read_text(encoding="utf-8") == dumps(generated_files()[name]), \
        f"schemas/{name} drifted from the record types: run python -m analyzer.publish"


def test_every_generated_schema_is_a_valid_json_schema():
    for schema in generated_files().values():
        jsonschema.Draft202012Validator.check_schema(schema)


def _example() -> str:
    return re.search(r"### Example.*?```json\n(.*?)```", DOC, re.S).group(1)


def test_the_documented_example_is_valid_by_schema_reader_and_validator(tmp_path):
    obj = json.loads(_example())
    jsonschema.validate(obj, json.loads((ROOT / "schemas" / "log-v1.schema.json").read_text()))
    jsonschema.validate(obj, variant_schema("bieqi"))
    rec = decoder().decode(json.dumps(obj))
    assert rec.hand_id == obj["hand_id"]
    p = tmp_path / "example.jsonl"
    p.write_text(json.dumps(obj) + "\n")
    assert validate([str(p)]).problems == []


def test_the_example_is_a_line_of_the_legal_sample():
    lines = [json.loads(x) for x in (SAMPLES / "legal.jsonl").read_text().splitlines()]
    assert json.loads(_example()) in lines


def test_the_field_table_names_exactly_the_schema_fields():
    record = variant_schema("bieqi")
    props = set(record["$defs"]["Record"]["properties"])
    table = re.search(r"## A hand of standard.*?\n\n(\|.*?)\n\n", DOC, re.S).group(1)
    documented = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    assert documented == props
    required = set(record["$defs"]["Record"]["required"])
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert (cells[2] == "yes") == (cells[0].strip("`") in required), row


def test_action_result_and_rules_fields_are_all_documented():
    defs = variant_schema("bieqi")["$defs"]
    for struct in ("Action", "Result", "Rules"):
        for field in defs[struct]["properties"]:
            assert f"`{field}`" in DOC, f"{struct}.{field} is not documented in docs/log-format.md"


def test_readme_problem_code_table_is_the_validator_list():
    table = re.search(r"## Problem codes.*?(\| code \|.*?)\n\n", README + "\n\n", re.S).group(1)
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.M)
    assert documented == list(CODES)
