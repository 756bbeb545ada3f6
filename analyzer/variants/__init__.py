"""The games this tool knows, one module each behind the contract in :mod:`analyzer.variants.base`.

Adding a game: write ``analyzer/variants/<name>.py`` exposing ``VARIANT``, and add it to ``MODULES``.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.util import find_spec

from analyzer.variants.base import Variant

#: Module names of the registered variants (the log's ``variant`` value is each module's ``VARIANT.name``).
MODULES: tuple[str, ...] = ("bieqi", "borrow", "heiqi")


@cache
def registry() -> dict[str, Variant]:
    out: dict[str, Variant] = {}
    for mod in MODULES:
        if find_spec(f"analyzer.variants.{mod}") is None:  # a variant still being written
            continue
        v = import_module(f"analyzer.variants.{mod}").VARIANT
        out[v.name] = v
    return out
