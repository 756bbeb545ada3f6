"""The review page's "its numbers": a signal's numbers from audit.json read as lines, one a direction."""

from __future__ import annotations

import pytest

pytest.importorskip("flask", reason="the serve extra is not installed (pip install -e '.[serve]')")

from analyzer.desk.serve import signal_lines  # noqa: E402  (needs flask)

BURST = {"p": 0.0, "look": "mean",
         "ab": {"actor": "p12", "partner": "p14", "z": 32.8407, "hands": 1123, "above": 625},
         "ba": {"actor": "p14", "partner": "p12", "z": 31.7215, "hands": 1123, "above": 787}}


def test_a_directed_signal_reads_as_its_own_numbers_then_one_line_a_direction() -> None:
    lines = signal_lines(BURST)
    assert [head for head, _ in lines] == ["", "p12 → p14", "p14 → p12"]
    assert lines[0][1] == [("p", "0"), ("look", "mean")]
    assert ("z", "32.84") in lines[1][1] and ("hands above", "625") in lines[1][1]
    assert all("actor" not in name and not name.startswith("ab") for _, items in lines for name, _ in items)


def test_a_signal_without_directions_and_an_empty_one() -> None:
    assert signal_lines({"p": 1e-5, "lends": {"to_partner": 1}}) == [("", [("p", "1e-05"), ("lends.to_partner", "1")])]
    assert signal_lines(None) == [] and signal_lines({}) == []
