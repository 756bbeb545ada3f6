"""The games this tool knows, one module each behind the contract in :mod:`analyzer.variants.base`.

Adding a game: write ``analyzer/variants/<name>.py`` exposing ``VARIANT`` (a :class:`~analyzer.variants.base.Game`),
add it to ``MODULES``, write its simulator and docs; every consumer finds it here, and the
conformance test (tests/variants/test_conformance.py) plays it.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from analyzer.variants.base import Game

#: Module names of the registered variants (the log's ``variant`` value is each module's ``VARIANT.name``).
MODULES: tuple[str, ...] = ("bieqi", "borrow", "heiqi")


@cache
def registry() -> dict[str, Game]:
    """Log ``variant`` value -> its game object, for every registered variant."""
    out: dict[str, Game] = {}
    for mod in MODULES:
        if find_spec(f"analyzer.variants.{mod}") is None:  # a variant still being written
            continue
        v = import_module(f"analyzer.variants.{mod}").VARIANT
        out[v.name] = v
    return out


def game_of(record: Any) -> Game | None:
    """The game a decoded record belongs to (by its ``variant`` tag), or None for anything else."""
    config = getattr(type(record), "__struct_config__", None)
    return registry().get(getattr(config, "tag", None))  # type: ignore[arg-type]
