"""The published schemas, the generated reference pages, the reader and the docs are provably in step."""

import json
import re
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from analyzer.logs import decoder, parse_record
from analyzer.problems import CODES
from analyzer.publish import AUDIT_FIELD_NOTES, generated_files, generated_pages
from analyzer.schema import dumps, variant_schema
from analyzer.validate import validate
from analyzer.variants import registry
from conftest import ROOT, SAMPLES

DOC = (ROOT / "docs" / "reference" / "log-format.md").read_text(encoding="utf-8")
README = ROOT / "README.md"
#: Every page a person reads: the README, the changelog and docs/.
PAGES = sorted([README, ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md", *(ROOT / "docs").rglob("*.md")])


# --------------------------------------------------------------------------- generated files

@pytest.mark.parametrize("name", sorted(generated_files()))
def test_schema_files_are_what_the_reader_generates(name):
    path = ROOT / "schemas" / name
    assert path.exists(), f"run: python -m analyzer.publish  ({name} is missing)"
    assert path.read_text(encoding="utf-8") == dumps(generated_files()[name]), \
        f"schemas/{name} drifted from the record types: run python -m analyzer.publish"


def test_every_generated_schema_is_a_valid_json_schema():
    for schema in generated_files().values():
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.fixture(scope="module")
def pages():
    return generated_pages()


def test_the_generated_pages_are_the_ones_published(pages):
    for rel, text in pages.items():
        path = ROOT / rel
        assert path.exists(), f"run: python -m analyzer.publish  ({rel} is missing)"
        assert path.read_text(encoding="utf-8") == text, f"{rel} drifted from the code: run python -m analyzer.publish"


def test_the_problem_code_page_lists_every_code_once_in_order(pages):
    text = pages["docs/reference/problem-codes.md"]
    assert re.findall(r"^\| `([a-z0-9-]+)` \|", text, re.M) == list(CODES)


def test_the_decision_rows_page_names_every_column_with_its_type(pages):
    from analyzer.analysis.decisions import COLUMNS, analyse

    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", pages["docs/reference/decision-rows.md"], re.M))
    assert list(rows) == list(COLUMNS)
    types = analyse([]).dtypes
    for c in ("hand_seq", "regret", "player"):
        assert rows[c] == {"int64": "int64", "float64": "float64"}.get(str(types[c]), "string")
    assert rows["options"] == "list of structs" and isinstance(types["options"], pd.ArrowDtype)


def test_the_audit_page_walks_the_schema_and_every_note_names_a_field(pages):
    text = pages["docs/reference/audit-json.md"]
    fields = re.findall(r"^\| `([^`]+)` \|", text, re.M)
    assert {"pairs[].verdict", "pairs[].case.lead.key", "groups[].pairs[].score", "alarm.alpha"} <= set(fields)
    names = {f.rsplit(".", 1)[-1].rsplit("[]", 1)[-1] for f in fields}
    assert [k for k in AUDIT_FIELD_NOTES if k not in fields and k not in names] == []
    # every field says what it is
    assert [r for r in text.splitlines() if r.startswith("| `") and r.rstrip().endswith("|  |")] == []


def test_the_commands_page_holds_every_command_and_no_hidden_option(pages):
    from analyzer.cli import COMMANDS

    text = pages["docs/reference/commands.md"]
    for name in COMMANDS:
        assert f"## `analyzer {name}`" in text
    assert "`-o, --out DIRECTORY`" in text and "[default: 1e-05; 0<x<=1]" in text


def test_the_commands_page_does_not_depend_on_what_ran_before():
    """click caches a command's help option with the names of the first context that asks for it: a command run
    on its own (no -h) must not change the page."""
    from click.testing import CliRunner

    from analyzer.commands.audit import command
    from analyzer.publish import commands_page

    CliRunner().invoke(command, ["--help"])
    assert commands_page() == (ROOT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")


def test_a_page_is_refused_when_a_column_has_no_meaning(monkeypatch):
    import analyzer.analysis.decisions as decisions
    from analyzer import publish

    monkeypatch.setattr(decisions, "COLUMNS", (*decisions.COLUMNS, "brand_new"))
    with pytest.raises(ValueError, match="brand_new"):
        publish.decision_rows_page()


def test_publish_writes_every_file_under_the_root_it_is_given(tmp_path):
    from analyzer import publish

    assert publish.main([str(tmp_path)]) == 0
    for name in generated_files():
        assert (tmp_path / "schemas" / name).read_text(encoding="utf-8") == dumps(generated_files()[name])
    for rel, text in generated_pages().items():
        assert (tmp_path / rel).read_text(encoding="utf-8") == text


# --------------------------------------------------------------------------- the log format page

def _example(heading: str) -> str:
    return re.search(re.escape(heading) + r"\n.*?```json\n(.*?)```", DOC, re.S).group(1)


def test_the_documented_example_is_valid_by_schema_reader_and_validator(tmp_path):
    obj = json.loads(_example("### Example"))
    jsonschema.validate(obj, json.loads((ROOT / "schemas" / "log-v1.schema.json").read_text()))
    jsonschema.validate(obj, variant_schema("bieqi"))
    rec = decoder().decode(json.dumps(obj))
    assert rec.hand_id == obj["hand_id"]
    p = tmp_path / "example.jsonl"
    p.write_text(json.dumps(obj) + "\n")
    assert validate([str(p)]).problems == []


def test_the_example_is_a_line_of_the_legal_sample():
    lines = [json.loads(x) for x in (SAMPLES / "legal.jsonl").read_text().splitlines()]
    assert json.loads(_example("### Example")) in lines


def test_the_borrowing_example_is_a_valid_hand_with_a_borrow():
    obj = json.loads(_example("### Example of the borrowing game"))
    jsonschema.validate(obj, variant_schema("bieqi-borrow"))
    assert [a for a in obj["actions"] if a["kind"] == "borrow"] == [
        {"kind": "borrow", "seat": 1, "from": 2, "card": "KD", "ms": 50000}]
    game = registry()["bieqi-borrow"]
    assert game.check(parse_record(json.dumps(obj))).problems == []


def _field_table(heading: str) -> str:
    return re.search(re.escape(heading) + r".*?\n\n(\|.*?)\n\n", DOC, re.S).group(1)


@pytest.mark.parametrize(("variant", "heading", "record"), [
    ("bieqi", "## A hand of standard", "Record"),
    ("bieqi-borrow", "## A hand of the borrowing game", "BorrowRecord"),
    ("xinyang-heiqi", "## A hand of 信阳黑七", "HeiqiRecord"),
])
def test_each_game_s_field_table_names_exactly_the_schema_fields(variant, heading, record):
    schema = variant_schema(variant)["$defs"][record]
    props, required = set(schema["properties"]), set(schema["required"])
    documented: dict[str, str] = {}
    for row in _field_table(heading).splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for name in re.findall(r"`(\w+)`", cells[0]):
            documented[name] = cells[2]
    assert set(documented) == props
    for name, cell in documented.items():
        assert (cell == "yes") == (name in required), (variant, name)


@pytest.mark.parametrize(("variant", "structs"), [
    ("bieqi", ("Action", "Result", "Rules")),
    ("bieqi-borrow", ("Play", "Borrow", "BorrowResult", "BorrowRules")),
    ("xinyang-heiqi", ("HeiqiBid", "HeiqiTrick", "HeiqiResult", "HeiqiRules")),
])
def test_every_nested_field_is_documented(variant, structs):
    defs = variant_schema(variant)["$defs"]
    for struct in structs:
        for field in defs[struct]["properties"]:
            assert f"`{field}`" in DOC or f'"{field}"' in DOC, f"{variant} {struct}.{field} is not in the log format page"


# --------------------------------------------------------------------------- every page

def _prose(text: str) -> str:
    """The text without fenced code blocks and code spans (links and headings live in the prose)."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation out (letters of any script stay), spaces
    to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", _prose(path.read_text(encoding="utf-8")))
            if not re.match(r"[a-z]+:", t)]


def test_slugs_are_githubs():
    assert slug("`analyzer validate`") == "analyzer-validate"
    assert slug("Where the rule texts are silent: the engine's choices") == \
        "where-the-rule-texts-are-silent-the-engines-choices"
    assert slug("A hand of 信阳黑七 (`\"variant\": \"xinyang-heiqi\"`)") == "a-hand-of-信阳黑七-variant-xinyang-heiqi"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.is_relative_to(ROOT):
            broken.append(f"{target} (outside the repository)")
        elif not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert broken == [], f"{page.relative_to(ROOT)}: links that lead nowhere"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_page_names_is_there(page):
    """A page (a generated one too: --help texts and schema descriptions) that names a file of the repository in
    prose or code names one that exists."""
    named = set(re.findall(r"(?<![\w/.])((?:docs|schemas|samples|benchmarks|analyzer|tests)/[\w./-]*?\w"
                           r"\.(?:md|jsonl\.gz|jsonl|json|py))(?!\w)", page.read_text(encoding="utf-8")))
    missing = sorted(n for n in named if not (ROOT / n).exists()
                     and "<" not in n)
    assert missing == [], f"{page.relative_to(ROOT)} names files that are not there"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_hold_no_history_and_stay_short(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"session|issue [0-9]+", text, re.I), "history belongs in git; say 'sitting' for play"
    assert not re.search(r"/work/|/tmp/", _prose(text)), "a page points outside the repository"
    assert len(text.encode("utf-8")) <= 40_000, "a page over 40 KB: split it"


def test_the_readme_is_short_and_keeps_its_ci_quick_start():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    quick = re.search(r"<!-- ci: quick-start -->\n```sh\n(.*?)\n```", text, re.S)
    assert quick and quick.group(1) == \
        "pip install -e . && analyzer audit samples/demo-room.jsonl.gz --out reports/demo"
    assert "bash .ci/run" in text and "rc=$?; [ $rc -le 1 ]" in text
