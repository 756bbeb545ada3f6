"""Simulated rooms of honest players and colluders, with the truth: one module per game variant.

Each module named in ``SIMULATORS`` exposes ``simulate(*, hands, players, seed, **options) ->
Simulation``; ``analyzer simulate --variant NAME`` dispatches here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

#: log ``variant`` value -> module under analyzer.simulate
SIMULATORS: dict[str, str] = {
    "bieqi": "room",
    "bieqi-borrow": "borrow",
    "xinyang-heiqi": "heiqi",
}


@dataclass
class Simulation:
    """A simulated room: its hands (log v1 records, lazily) and the truth about who colluded."""

    records: Iterator[Any]
    truth: dict[str, Any] = field(default_factory=dict)


def simulator(variant: str) -> Any:
    """The simulator module of a variant; KeyError when there is none."""
    return import_module(f"analyzer.simulate.{SIMULATORS[variant]}")
