"""JSON Schema of audit.json (published as schemas/audit-v1.schema.json by ``python -m analyzer.publish``)."""

from __future__ import annotations

from typing import Any

from analyzer.audit.calibrate import DIRECTED, SHARED_NOISE

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
        props["slower_ratio"] = {**_NUM, "description": "actor's think time with the partner / without, for the "
                                                        "difficulty; null when the times cannot be read (z is then 0)"}
    else:
        props |= {"decisions": _COUNT,
                  "points_per_hand": {**_NUM, "description": "raw effect per hand together, points"},
                  "centred_per_hand": {**_NUM, "description": "effect per hand beyond what the room does in the same "
                                                            "situations; for the favour signals, of the reading whose "
                                                            "z counts (plain or without the actor's seat habit)"},
                  "se_per_hand": _NUM}
    return _obj(props)


_EVIDENCE_PROPS: dict[str, Any] = {
    "hand_id": {"type": "string"}, "action": {"type": "integer", "minimum": 0},
    "actor": {"type": "string", "description": "the player who made the decision (the one who could know)"},
    "partner": {"type": "string"}, "direction": {"type": "string", "description": "actor -> partner"},
    "seat": {"type": "integer", "minimum": 0, "maximum": 3},
    "kind": {"enum": ["play", "cover"]}, "chosen": {"type": "string"},
    "alternative": {"type": "string", "description": "the sensible choice by the actor's own information"},
    "regret": {"type": "number", "description": "points the choice cost the actor by its own information"},
    "effect": _effects("points for each seat, chosen minus the alternative, by the actor's own information"),
    "effect_true_deal": _effects("points for each seat with every hand known, chosen minus the average option"),
    "effect_immediate": _effects("exact immediate effect: cards made playable (+) or stranded (-) in each hand, "
                                 "against the average option"),
    "edge": {"type": "number", "description": "partner's gain minus the mean of the two opponents' on the true deal, "
                                              "chosen against the average option (as dd_marginal sums it), points, "
                                              "uncapped"},
    "edge_immediate": {"type": "number", "description": "the same with the exact immediate effect, cards"},
    "rank_by": {"enum": ["edge", "edge_immediate"], "description": "the field the rows are ranked by: the quantity "
                                                                   "of the signal that fired (always positive here)"},
    "hand_favour": {"type": "number", "description": "burst: the hand's favour in the actor's spreads per hand"},
    "hand_rank": {"type": "integer", "minimum": 1, "description": "burst: the hand's place among its extreme hands"},
    "think_ms": _NUM, "reasons": {"type": "string"},
}
EVIDENCE = _obj(_EVIDENCE_PROPS, [k for k in _EVIDENCE_PROPS if k not in ("rank_by", "hand_favour", "hand_rank")])

_LABELLED = _obj({"key": {"type": "string", "description": "label of the sentence (report pages, both languages)"},
                  "args": {"type": "array", "items": {"type": "string"}}}, extra=True)

_CASE_PROPS: dict[str, Any] = {
    "lead": {**_LABELLED, "description": "the opening sentence: the main signal in the stronger direction, in its "
                                         "own units, against a typical pair of the room"},
    "detail": {**_LABELLED, "properties": {**_LABELLED["properties"], "args": {
        "type": "array", "items": {"type": "string"}, "description": "the sentence's figures, in order"}},
        "description": "burst: its other look (the pair's hands' mean percentile)"},
    "evidence_signal": {"type": "string", "description": "the signal the evidence rows are behind (main_signal)"},
    "burst_directions": {"type": "array", "items": _obj({
        "actor": {"type": "string"}, "partner": {"type": "string"},
        "above": {**_COUNT, "description": "the pair's hands above the level: the count burst reads"},
        "hands": _COUNT, "level": {**_NUM, "description": "the level (a share of the actor's hands with others)"},
        "expected": {**_NUM, "description": "the count a typical pair with as many hands has"},
        "expected_sd": {**_NUM, "description": "its standard deviation (beta-binomial)"},
        "listed": {**_COUNT, "description": "hands listed in extreme"},
        "with_moves": {**_COUNT, "description": "of them, the first ones with their moves in the evidence"},
        "extreme": {"type": "array", "items": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}],
                                               "minItems": 2, "maxItems": 2},
                    "description": "the hands the count counts, largest favour first: [hand_id, the hand's favour in "
                                   "the actor's spreads per hand]"}}),
        "description": "burst: per evidence actor, the count, its hands, level, a typical pair's count and spread"},
    "verdict": {**_LABELLED, "description": "why the verdict: score, q, hands more to the alarm"},
    "evidence_actors": {"type": "array", "items": {"type": "string"},
                        "description": "players whose moves are evidence (those who show signs of knowing)"},
    "signals": {"type": "array", "items": _obj({
        "signal": {"type": "string"}, "actor": {"type": "string"}, "partner": {"type": "string"},
        "unit": {"type": ["string", "null"]}, "per_hand": _NUM, "se": _NUM, "z": _NUM, "log10_p": _NUM,
        "p": _PROB, "signal_p": _PROB}), "description": "one row per signal and direction"},
    "outcomes": _obj({
        "hands_together": _COUNT, "hands_apart": _COUNT,
        "score_together": {**_NUM, "description": "the two players' combined score per hand together"},
        "score_together_se": _NUM, "score_apart": {**_NUM, "description": "a's mean score apart + b's"},
        "score_apart_se": _NUM, "typical": {**_NUM, "description": "the room's mean of two players' combined score"},
        "typical_sd": {**_NUM, "description": "its spread over as many hands as the pair sat together"},
        "tong_together": _NUM, "tong_apart": _NUM, "tong_room": _NUM}),
}
CASE = _obj(_CASE_PROPS, [k for k in _CASE_PROPS if k not in ("detail", "evidence_signal", "burst_directions")])

PAIR = _obj({
    "players": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2,
                "description": "the two player ids, sorted"},
    "hands_together": {"type": "integer", "minimum": 1},
    "verdict": {"enum": ["flagged", "review", "clear"],
                "description": "flagged: p <= alarm.alpha (family-wise); review: q <= alarm.fdr (false-discovery tier)"},
    "flagged": {"type": "boolean", "description": "verdict == 'flagged'"},
    "score": {**_NUM, "description": "-log10 p_value, computed in log space (no ceiling); higher = more suspicious"},
    "log10_p": {**_NUM, "description": "log10 of p_value (kept when p_value underflows to 0)"},
    "z": {**_NUM, "description": "the one-sided normal quantile of p_value, floored at 0 (a p of 1/2 or more is "
                               "no evidence either way)"},
    "p_value": _PROB, "q_value": {**_PROB, "description":
                                          "Benjamini-Hochberg over the pairs with min_hands or more hands (others: 1)"},
    "log10_q": {**_NUM, "description": "log10 of q_value, computed from the p-values' logs (kept when q_value "
                                       "underflows to 0)"},
    "effect_size": {**_NUM, "description": "favour per hand together in units of an honest hand's spread (ties)"},
    "hands_to_alarm": {"type": ["integer", "null"], "minimum": 0,
                       "description": "more hands together before p could reach alarm.alpha at the current effect"},
    "main_signal": {"type": "string"},
    "signals": _obj({
        **{name: _obj({"p": _PROB, "null_scale": _NUM, "ab": _directed(name == "think"),
                       "ba": _directed(name == "think"),
                       **({"direction_rho": {**_NUM, "description": "the room's correlation of the two directions' z "
                                             "(shared tables' pace); 'both sides' is their sum over sqrt(2 (1 + rho))"}}
                          if name in SHARED_NOISE else {})}) for name in DIRECTED},
        "favour": _obj({"p": _PROB, "null_scale": _NUM, "corr_factor": {
                            **_NUM, "description": "variance of the Stouffer sum over its number of signals"},
                        "ab": _obj({"actor": {"type": "string"}, "partner": {"type": "string"}, "z": _NUM}),
                        "ba": _obj({"actor": {"type": "string"}, "partner": {"type": "string"}, "z": _NUM})}),
        "codev": _obj({"p": _PROB, "z": _NUM, "null_scale": _NUM, "both_deviated": _COUNT, "observed": _COUNT,
                       "expected": _NUM}),
        "burst": _obj({"p": _PROB, "look": {"enum": ["mean", "count"],
                                            "description": "the look that fired: the hands' mean rank, or the count"},
                       **{tag: _obj({
            "actor": {"type": "string"}, "partner": {"type": "string"}, "z": _NUM, "hands": _COUNT,
            "above": {**_COUNT, "description": "hands together above the actor's level quantile with others"},
            "expected": {**_NUM, "description": "hands expected above it"},
            "level": {**_NUM, "description": "the upper quantile (0.01 = the actor's top 1% of hands with others)"},
            "z_mean": {**_NUM, "description": "the mean look's z: the pair's hands' normal scores among the actor's "
                                              "hands at the same seat offset (a stratified permutation test)"},
            "mean_percentile": {**_NUM, "description": "the pair's hands' mean percentile among those hands (50: none)"}})
            for tag in ("ab", "ba")}}),
    }),
    "evidence": {"type": "array", "items": EVIDENCE},
    "case": CASE,
}, required=["players", "hands_together", "verdict", "flagged", "score", "log10_p", "z", "p_value", "q_value",
             "log10_q", "effect_size", "hands_to_alarm", "main_signal", "signals", "evidence"])

PLAYER = _obj({
    "player": {"type": "string"}, "hands": _COUNT, "decisions": _COUNT, "mean_regret": _NUM, "match_rate": _NUM,
    "skill": {**_NUM, "description": "analyzer.analysis.players: the headline rating, the sensitivity whose expected "
              "loss on the shipped reference decisions equals that of the player's fitted two-direction choice "
              "model (docs/methods/skill.md)"},
    "skill_lo": _NUM, "skill_hi": _NUM,
    "signal_p": {**_NUM, "description": "p of 'plays better than their level / than without the partner'"},
    "signal_flag": {"type": "boolean"},
    "median_think_ms": _NUM, "max_pair_score": _NUM,
    "flagged_with": {"type": "array", "items": {"type": "string"}},
})


GROUP = _obj({
    "players": {"type": "array", "items": {"type": "string"}, "minItems": 3,
                "description": "the members, sorted: players joined by flagged or review pairs (a connected group)"},
    "verdict": {"enum": ["flagged", "review"], "description": "flagged when one of its pairs is flagged"},
    "marked_pairs": {**_COUNT, "description": "its flagged and review pairs"},
    "pairs": {"type": "array", "items": _obj({
        "players": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        "verdict": {"enum": ["flagged", "review", "clear"]}, "score": _NUM, "hands_together": _COUNT}),
              "description": "every pair of members that sat together, the clear ones too, the highest score first"},
    "hands_two_or_more": {**_COUNT, "description": "hands where two or more of the members sat at one table"},
    "hands_all": {"type": ["integer", "null"], "minimum": 0,
                  "description": "hands where all of them did (null: more members than seats)"},
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
        "verdicts": _obj({"flagged": _COUNT, "review": _COUNT, "clear": _COUNT}),
        "room": _obj({"pair_score_mean": _NUM, "pair_score_sd": _NUM, "tong_rate": _NUM},
                     ),
        "options": {"type": "object"},
        "problems": {"type": "array", "items": {"type": "object"}},
        "lookalike_ids": _obj({
            "count": {**_COUNT, "description": "valid hands' ids spelled otherwise than an earlier hand's that look "
                      "the same once normalised (validate's lookalike-ids); the hands are kept, their ids as written"},
            "shown": {"type": "array", "items": {"type": "object"}, "description": "the first 100, as problems"}}),
        "players": {"type": "array", "items": PLAYER},
        "pairs": {"type": "array", "items": PAIR},
        "groups": {"type": "array", "items": GROUP,
                   "description": "three or more players joined by marked pairs (analyzer.audit.groups); no verdict "
                                  "of a pair depends on it"},
        **_sections(),
    }, required=["format", "version", "hands", "players", "pairs"])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "audit-v1.schema.json",
            "title": "bieqi audit v1: pairs of players ranked by how their decisions helped each other", **body}
