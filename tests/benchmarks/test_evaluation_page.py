"""The evaluation pages are what benchmarks/evaluation_page.py makes of the committed results files, so no figure on
them is typed by hand; they have every heading the docs link to; a results file is whole and names its command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks import evaluation_page as page
from benchmarks.results import RESULTS, Results, read_all

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_pages_are_what_the_results_make():
    pages = page.render(read_all())
    assert set(pages) == set(page.PAGES)
    for name, text in pages.items():
        assert (ROOT / "docs" / name).read_text(encoding="utf-8") == text, \
            f"docs/{name} drifted from benchmarks/results/: run python -m benchmarks.evaluation_page"


def test_every_link_into_the_evaluation_finds_its_section():
    """A docs link to an evaluation page's anchor lands on a heading of that page, and every section is on one page
    in the order of SECTIONS."""
    pages = page.render(read_all())
    slugs = {name: slugs_in_order(re.findall(r"^## (.+)$", text, re.M)) for name, text in pages.items()}
    assert [a for a, _, _ in page.SECTIONS] == [a for a, _, _ in page.SECTIONS
                                                if a in slugs[page.page_of(a)]]
    assert sorted(sum(slugs.values(), [])) == sorted(a for a, _, _ in page.SECTIONS)
    links = set()
    for md in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        links |= set(re.findall(r"(evaluation(?:-detection)?\.md)#([\w-]+)", md.read_text(encoding="utf-8")))
    assert len(links) >= 8
    for name, anchor in sorted(links):
        assert anchor in slugs[name], f"a link to {name}#{anchor}: that page has no such section"


def slugs_in_order(headings: list[str]) -> list[str]:
    return [re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings]


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_results_file_says_what_made_it(path: Path):
    r = json.loads(path.read_text(encoding="utf-8"))
    assert r["name"] == path.stem
    assert r["command"].startswith("python -m benchmarks.")
    assert re.fullmatch(r"[0-9a-f]{40}", r["commit"] or "")
    assert r["machine"]["cores"] >= 1 and set(r["load"]) == {"start", "end"}
    assert r["figures"] or r["tables"]


def test_a_section_without_results_names_its_command_and_a_figure_shows_its_source(tmp_path: Path):
    res = Results("speed", "Speed of a thing", "scale", "python -m benchmarks.bench_x --runs 3", parameters={"runs": 3})
    res.figure("rate", 1234.5678, "hands/s", "hands a second", goal=">= 150")
    res.table("t", "A table", ["style", "auc"], [["share", 0.98765], ["feed", float("nan")]])
    res.write(tmp_path)
    pages = page.render(read_all(tmp_path))
    text = pages["evaluation.md"]
    scale = text.split("## Scale\n", 1)[1].split("\n## ", 1)[0]
    assert "`python -m benchmarks.bench_x --runs 3`" in scale
    assert "| hands a second | 1,235 hands/s | >= 150 |" in scale
    assert "| share | 0.988 |" in scale and "| feed | – |" in scale
    assert "runs `3`" in scale
    assert "## Scale" not in pages["evaluation-detection.md"] and "## Skill\n" in pages["evaluation-detection.md"]
    gate = text.split("## Gate\n", 1)[1].split("\n## ", 1)[0]
    assert "Not measured yet: `python -m benchmarks.gate_mutations`" in gate


def test_a_results_file_naming_an_unknown_section_is_refused(tmp_path: Path):
    Results("odd", "Odd", "nowhere", "python -m benchmarks.odd").write(tmp_path)
    with pytest.raises(ValueError, match="nowhere"):
        page.render(read_all(tmp_path))
