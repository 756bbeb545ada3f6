"""Simulated rooms of honest players and colluders, with the truth: one module per game variant.

Each variant names its simulator in its contract (``VARIANT.offers.simulator``), a module exposing
``simulate(*, hands, players, seed, **options) -> Simulation``; ``analyzer simulate --variant NAME``
asks it here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any


def simulators() -> dict[str, str]:
    """Log ``variant`` value -> the module simulating it, for every variant that offers one."""
    from analyzer.variants import registry

    return {name: v.offers.simulator for name, v in registry().items() if v.offers.simulator}


@dataclass
class Simulation:
    """A simulated room: its hands (log v1 records, lazily) and the truth about who colluded."""

    records: Iterator[Any]
    truth: dict[str, Any] = field(default_factory=dict)


def simulator(variant: str) -> Any:
    """The simulator module of a variant; KeyError when there is none."""
    return import_module(simulators()[variant])
