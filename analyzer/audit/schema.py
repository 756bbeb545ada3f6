"""JSON Schema of audit.json (published as schemas/audit-v1.schema.json by ``python -m analyzer.publish``)."""

from __future__ import annotations

from typing import Any

from analyzer.audit.calibrate import DIRECTED

_NUM = {"type": ["number", "null"]}
_PROB = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT = {"type": "integer", "minimum": 0}


def _obj(props: dict[str, Any], required: list[str] | None = None, *, extra: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required,
            "additionalProperties": extra}


def _effects(desc: str) -> dict[str, Any]:
    return {**_obj({"actor": {"type": "number"}, "partner": {"type": "number"},
                    "others": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}),
            "description": desc}


def _directed(think: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"actor": {"type": "string"}, "partner": {"type": "string"},
                             "z": {**_NUM, "description": "z of the actor's treatment of the partner"},
                             "hands": _COUNT}
    if think:
        props["slower_ratio"] = {**_NUM, "description": "actor's think time with the partner / without, for the difficulty"}
    else:
        props |= {"decisions": _COUNT,
                  "points_per_hand": {**_NUM, "description": "raw effect per hand together, points"},
                  "centred_per_hand": {**_NUM, "description": "effect per hand beyond what the room does in the same situations"},
                  "se_per_hand": _NUM}
    return _obj(props)


EVIDENCE = _obj({
    "hand_id": {"type": "string"}, "action": {"type": "integer", "minimum": 0},
    "actor": {"type": "string"}, "partner": {"type": "string"}, "seat": {"type": "integer", "minimum": 0, "maximum": 3},
    "kind": {"enum": ["play", "cover"]}, "chosen": {"type": "string"},
    "alternative": {"type": "string", "description": "the sensible choice by the actor's own information"},
    "regret": {"type": "number", "description": "points the choice cost the actor by its own information"},
    "effect": _effects("points for each seat, chosen minus the alternative, by the actor's own information"),
    "effect_true_deal": _effects("the same with every hand known"),
    "effect_immediate": {"anyOf": [_effects("exact immediate effect: points of cards made live (+) or dead (-) in "
                                            "each hand, against the average option"), {"type": "null"}]},
    "weight": {"type": "number", "description": "the decision's contribution to the signal"},
    "signal": {"type": "string"}, "think_ms": _NUM, "reasons": {"type": "string"},
})

PAIR = _obj({
    "players": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2,
                "description": "the two player ids, sorted"},
    "hands_together": {"type": "integer", "minimum": 1},
    "score": {**_NUM, "description": "higher = more suspicious (the z of p_value)"},
    "z": _NUM, "p_value": _PROB, "q_value": {**_PROB, "description": "Benjamini-Hochberg over all pairs"},
    "flagged": {"type": "boolean"}, "main_signal": {"type": "string"},
    "signals": _obj({
        **{name: _obj({"p": _PROB, "null_scale": _NUM, "ab": _directed(name == "think"),
                       "ba": _directed(name == "think")}) for name in DIRECTED},
        "favour": _obj({"p": _PROB, "null_scale": _NUM, "corr_factor": {
                            **_NUM, "description": "variance of the Stouffer sum over its number of signals"},
                        "ab": _obj({"actor": {"type": "string"}, "partner": {"type": "string"}, "z": _NUM}),
                        "ba": _obj({"actor": {"type": "string"}, "partner": {"type": "string"}, "z": _NUM})}),
        "codev": _obj({"p": _PROB, "z": _NUM, "null_scale": _NUM, "both_deviated": _COUNT, "observed": _COUNT,
                       "expected": _NUM}),
    }),
    "evidence": {"type": "array", "items": EVIDENCE},
})

PLAYER = _obj({
    "player": {"type": "string"}, "hands": _COUNT, "decisions": _COUNT, "mean_regret": _NUM, "match_rate": _NUM,
    "skill": {**_NUM, "description": "analyzer.analysis.players: the fitted choice-model sensitivity (headline)"},
    "skill_lo": _NUM, "skill_hi": _NUM,
    "signal_p": {**_NUM, "description": "p of 'plays better than their level / than without the partner'"},
    "signal_flag": {"type": "boolean"},
    "median_think_ms": _NUM, "max_pair_score": _NUM,
    "flagged_with": {"type": "array", "items": {"type": "string"}},
})


def _sections() -> dict[str, Any]:
    """The section each variant's contract offers (``offers.audit_section``), under the variant's name."""
    from analyzer.variants import registry

    return {name: game.offer("audit_section").SECTION_SCHEMA for name, game in registry().items()
            if game.offers.audit_section}


def audit_schema() -> dict[str, Any]:
    """The schema of the audit.json that ``analyzer audit`` writes."""
    body = _obj({
        "format": {"const": "bieqi-audit"}, "version": {"const": 1},
        "hands": {**_COUNT, "description": "hands analysed"}, "decisions": _COUNT,
        "valid_hands": _COUNT, "invalid_hands": {**_COUNT, "description": "reported in problems and left out"},
        "skipped_hands": {"type": "object", "additionalProperties": _COUNT,
                          "description": "valid hands of variants without a decision analysis, by variant"},
        "alarm": _obj({"alpha": _PROB, "fdr": _PROB, "min_hands": _COUNT,
                       "score": {**_NUM, "description": "the score at p = alpha: pairs above it (with q <= fdr and "
                                 "enough hands together) are flagged"},
                       "score_signals": {"type": "array", "items": {"type": "string"}}}),
        "options": {"type": "object"},
        "problems": {"type": "array", "items": {"type": "object"}},
        "players": {"type": "array", "items": PLAYER},
        "pairs": {"type": "array", "items": PAIR},
        **_sections(),
    }, required=["format", "version", "hands", "players", "pairs"])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "audit-v1.schema.json",
            "title": "bieqi audit v1: pairs of players ranked by how their decisions helped each other", **body}
