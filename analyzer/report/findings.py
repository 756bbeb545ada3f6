"""What the audit found in the games its pair audit does not read: the summary's lines and the page's data.

The pair audit's signals read hands of standard 憋七 only. A room of 借牌 hands has its own findings (the
illegal borrows by player and the lending table, audit.json's ``bieqi-borrow`` section); a room of 信阳黑七
hands is validated only. The summary and the page say so for each game, instead of an empty pair audit, and a game
validated only lists its own problems (a problem names its hand's game), in a mixed room too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from analyzer.variants import registry

#: What validation checks in a game with no audit section of its own (the pair audit does not read it).
VALIDATED_ONLY = "the deal, bids, plays and settlement replayed by the rules"


def game_problems(audit: Mapping[str, Any], game: str) -> Counter[str]:
    """The problems of ``game``'s hands by code (audit.json's problems name their hand's game, ``game``)."""
    return Counter(str(p.get("code")) for p in audit.get("problems") or [] if p.get("game") == game)


def invalid_hands(audit: Mapping[str, Any], game: str) -> int:
    """``game``'s hands left out for their problems (their lines)."""
    return len({(p.get("file"), p.get("line")) for p in audit.get("problems") or [] if p.get("game") == game})


def _problem_counts(by_code: Counter[str]) -> str:
    if not by_code:
        return "no problem found"
    return f"{sum(by_code.values())} problem(s) found: " + ", ".join(f"{c} {n}" for c, n in by_code.most_common())


def unanalysed(audit: Mapping[str, Any]) -> list[str]:
    """The games validated only (no pair audit, no section of their own) whose hands had problems: what an audit with
    no valid hand still reports (``analyzer audit`` writes its files and exits 2)."""
    games = registry()
    return [g for g in other_games(audit) if g in games and not games[g].offers.audit_section
            and not games[g].offers.decisions and game_problems(audit, g)]


def pair_audit_line(audit: Mapping[str, Any]) -> str:
    """The pair audit's line: its hands, pairs and verdicts; when it read no hand, that plainly."""
    invalid = f", {audit['invalid_hands']} invalid hands left out" if audit.get("invalid_hands") else ""
    if audit["hands"] == 0 and other_games(audit):
        return f"pair audit: no hand of standard 憋七, no pair analysed{invalid}"
    pairs = audit["pairs"]
    flagged = sum(1 for p in pairs if p["flagged"])
    review = sum(1 for p in pairs if p.get("verdict") == "review")
    return f"{audit['hands']} hands, {len(pairs)} pairs, {flagged} flagged, {review} for review{invalid}"


def other_games(audit: Mapping[str, Any]) -> list[str]:
    """The games of this audit other than standard 憋七: with an audit section, or valid hands the pair audit
    skipped."""
    games = registry()
    named = {g for g, n in (audit.get("skipped_hands") or {}).items() if n}
    named |= {name for name, game in games.items() if game.offers.audit_section and name in audit}
    named |= {str(p["game"]) for p in audit.get("problems") or [] if p.get("game") in games
              and not games[str(p["game"])].offers.decisions}  # a game's hands all invalid
    return sorted(named)


def game_lines(audit: Mapping[str, Any]) -> list[str]:
    """One line per other game: its audit section's findings, or for a game validated only, what was checked
    and that the pair audit does not cover it."""
    games = registry()
    lines = []
    skipped = audit.get("skipped_hands") or {}
    for name in other_games(audit):
        game = games.get(name)
        if game is not None and game.offers.audit_section and name in audit:
            lines.append(game.offer("audit_section").summary(audit[name]))
        else:
            own = game_problems(audit, name)
            bad = invalid_hands(audit, name)
            left = f", {bad} left out for their problems" if bad else ""
            if audit["hands"]:  # beside standard hands
                lines.append(f"  not in the pair audit (its signals read standard 憋七 hands only): "
                             f"{skipped.get(name, 0)} valid hand(s) of {name}{left} ({_problem_counts(own)})")
            else:
                lines.append(f"{name}: {skipped.get(name, 0)} valid hand(s) checked by validation ({VALIDATED_ONLY})"
                             f"{left}, {_problem_counts(own)}; the pair audit does not cover this game (its collusion "
                             f"signals read standard 憋七 hands only): no pair analysed, no verdict")
    return lines


def summary_lines(audit: Mapping[str, Any]) -> list[str]:
    """The audit summary's first lines: the pair audit's, then each other game's (``analyzer audit``)."""
    return [pair_audit_line(audit), *game_lines(audit)]


def page_games(audit: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each other game for the page: its section's tables as audit.json holds them (``kind: "borrow"``), or a
    game validated only (``kind: "validated"``) with its valid hands, the hands left out and its own problems by
    code."""
    games = registry()
    out: list[dict[str, Any]] = []
    for name in other_games(audit):
        game = games.get(name)
        section = audit.get(name)
        if game is not None and game.offers.audit_section and isinstance(section, Mapping):
            out.append({"game": name, "kind": "borrow", "hands": section.get("hands", 0),
                        "illegal_borrows": section.get("illegal_borrows", 0),
                        "lending_flagged": section.get("lending_flagged", 0),
                        "lending_review": section.get("lending_review", 0),
                        "players": list(section.get("players") or []), "pairs": list(section.get("pairs") or [])})
        else:
            by_code = game_problems(audit, name)
            out.append({"game": name, "kind": "validated", "hands": (audit.get("skipped_hands") or {}).get(name, 0),
                        "invalid_hands": invalid_hands(audit, name),
                        "problems": sorted(by_code.items(), key=lambda x: (-x[1], x[0]))})
    return out


FINDINGS_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "game_borrow": "借牌 (bieqi-borrow): {0} hands",
        "borrow_found": "{0} illegal borrows (borrowing while holding a live card: certain cheating, proven by the "
                        "replay) by {1} players. The command exits 1.",
        "borrow_none": "No illegal borrow: no one borrowed while holding a live card.",
        "illegal_by_player": "Illegal borrows by player",
        "lending_table": "Lending between pairs",
        "lending_help": "Each lent card is ranked among the cards the lender could have handed over (0: the least "
                        "useful to the borrower, the honest choice; 1: the most useful). favour: the pair's lends to "
                        "each other less their lends to others; p: one-sided Mann-Whitney test (exact for few lends).",
        "col_borrows": "borrows", "col_illegal": "illegal borrows", "col_hands_illegal": "hands with one",
        "col_first_illegal": "first", "col_lends_partner": "lends to each other", "col_good_partner": "their goodness",
        "col_lends_others": "lends to others", "col_good_others": "goodness to others", "col_favour": "favour",
        "no_lends": "No pair lent to each other and to others both: nothing to compare.",
        "lending_found": "{0} pairs compared: {1} flagged, {2} for review, on the pair audit's terms (flagged: p ≤ "
                         "{3}, the command exits 1; review: Benjamini-Hochberg q ≤ {4}). Each flagged or review pair "
                         "is a case.",
        "game_validated": "{0}: {1} valid hands",
        "validated_help": "Validated only: every hand replayed by the rules (deal, bids, plays, settlement) and "
                          "checked. The pair audit does not cover this game: its collusion signals read hands of "
                          "standard 憋七 only, so no pair is analysed and there is no verdict.",
        "validated_problems": "Problems found by validation",
        "validated_clean": "Validation found no problem.",
        "pair_audit_empty": "Pair audit: no hand of standard 憋七, no pair analysed.",
    },
    "zh": {
        "game_borrow": "借牌：{0} 局",
        "borrow_found": "非法借牌 {0} 次（手中有活牌却借牌：回放证实的作弊），涉及 {1} 名玩家。命令以 1 退出。",
        "borrow_none": "没有非法借牌：无人在手中有活牌时借牌。",
        "illegal_by_player": "各玩家的非法借牌",
        "lending_table": "玩家两两之间的出借",
        "lending_help": "每张借出的牌在出借者可借出的牌中排位（0：对借牌者最无用，即诚实的选择；1：最有用）。"
                        "偏袒：两人互借的平均排位减去借给他人的平均排位；p：单侧曼-惠特尼检验（出借少时为精确检验）。",
        "col_borrows": "借牌", "col_illegal": "非法借牌", "col_hands_illegal": "含非法借牌的局",
        "col_first_illegal": "第一次", "col_lends_partner": "互借", "col_good_partner": "互借排位",
        "col_lends_others": "借给他人", "col_good_others": "借给他人排位", "col_favour": "偏袒",
        "no_lends": "没有两人既互借又借给他人：无从比较。",
        "lending_found": "比较了 {0} 对：{1} 对已标记，{2} 对待复核，标准与搭档审计相同（已标记：p ≤ {3}，命令以 1 退出；"
                         "待复核：Benjamini-Hochberg q ≤ {4}）。每一对已标记或待复核的都是一个案件。",
        "game_validated": "{0}：{1} 局有效牌局",
        "validated_help": "只做了校验：每局按规则回放（发牌、叫分、出牌、结算）并检查。搭档审计不涵盖这一玩法："
                          "其串通信号只读取标准憋七的牌局，因此没有分析任何搭档，也没有结论。",
        "validated_problems": "校验发现的问题",
        "validated_clean": "校验没有发现问题。",
        "pair_audit_empty": "搭档审计：没有标准憋七的牌局，没有分析任何搭档。",
    },
}
