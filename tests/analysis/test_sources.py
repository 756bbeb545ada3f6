"""The library behind `players`' inputs (analysis.sources): its errors are data a caller other than the CLI can read."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analyzer.analysis.execute import Settings
from analyzer.analysis.sources import DecisionSources, NotDecisionFile, SourceError, read_decisions


def test_a_hand_from_two_inputs_is_refused_naming_both() -> None:
    sources = DecisionSources()
    sources.add_frame("first", pd.DataFrame({"hand_id": ["h1", "h2"]}))
    with pytest.raises(SourceError, match="hand 'h2' is in both first and second"):
        sources.add_frame("second", pd.DataFrame({"hand_id": ["h2", "h3"]}))
    assert len(sources.frames) == 1


def test_rows_of_other_settings_are_refused() -> None:
    sources = DecisionSources()
    sources._settings("a store", Settings.of(8, 0, 1))
    sources.check_settings("same", Settings.of(8, 0, 1))
    with pytest.raises(SourceError, match="the logs was written with --samples 9 .* but a store with --samples 8"):
        sources.check_settings("the logs", Settings.of(9, 0, 1))


def test_a_file_that_is_not_a_decision_file_is_named(tmp_path: Path) -> None:
    text = tmp_path / "rows.parquet"
    text.write_text("not parquet")
    with pytest.raises(NotDecisionFile, match="cannot read decision rows from .*rows.parquet"):
        read_decisions(str(text))
    other = tmp_path / "other.parquet"
    pd.DataFrame({"hand_id": ["h1"]}).to_parquet(other)
    with pytest.raises(NotDecisionFile, match="lacks the column"):
        DecisionSources().add(str(other))
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotDecisionFile, match="no \\*.parquet files"):
        DecisionSources().add(str(tmp_path / "empty"))
