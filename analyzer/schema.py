"""JSON Schemas of the log format, generated from the record types so schema and reader cannot drift.

``python -m analyzer.publish`` rewrites the files under ``schemas/`` (these and the audit's); a test
fails when they differ from what is generated.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import msgspec

from analyzer.variants import registry

LOG_VERSION = 1
CARD_PATTERN = r"^(?:10|[2-9TJQKAtjqka])[SHDCshdc♠♥♦♣]$"
JOKER_PATTERN = r"^(?:10|[2-9TJQKAtjqka])[SHDCshdc♠♥♦♣]$|^(?:[SBsb][Jj])$"


def _patch_cards(node: Any) -> None:
    """Give every card-code string a pattern (the reader checks cards itself, faster than a regex)."""
    if isinstance(node, dict):
        desc = node.get("description", "")
        if node.get("type") == "string" and desc.startswith("Card code"):
            node["pattern"] = JOKER_PATTERN if "joker" in desc.lower() else CARD_PATTERN
        for v in node.values():
            _patch_cards(v)
    elif isinstance(node, list):
        for v in node:
            _patch_cards(v)


def _finish(schema: dict[str, Any], title: str, ident: str) -> dict[str, Any]:
    _patch_cards(schema)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": ident, "title": title, **schema}


@cache
def variant_schema(name: str) -> dict[str, Any]:
    """The schema of one variant's hand record."""
    v = registry()[name]
    schema = msgspec.json.schema(v.record_type)
    return _finish(schema, f"bieqi-log v{LOG_VERSION}: one hand of {name}", f"log-v{LOG_VERSION}-{name}.schema.json")


@cache
def log_schema() -> dict[str, Any]:
    """The schema of one line of a log: a hand of any registered variant (tagged by ``variant``)."""
    types = [v.record_type for v in registry().values()]
    union: Any = types[0]
    for t in types[1:]:
        union = union | t
    schema = msgspec.json.schema(union)
    return _finish(schema, f"bieqi-log v{LOG_VERSION}: one line of a log", f"log-v{LOG_VERSION}.schema.json")


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
