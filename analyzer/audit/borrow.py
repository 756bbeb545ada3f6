"""Audit of the borrowing variant: illegal borrows per player (certain cheating) and lending favour per pair.

An illegal borrow (``borrow-with-live``) needs no statistics: the replay proves it. Lending favour
does: each lent card is ranked among the cards the lender could have handed over (0 = the least
useful to the borrower, 1 = the most useful), and a pair's lends to each other are compared with
their lends to everyone else by a one-sided Mann-Whitney test. When either side has few lends the
test is exact (:func:`exact_rank_sum_p`, the permutation distribution of the rank sum with its ties):
the normal approximation is far too sure of itself for a lend or two against a crowd of tied ranks,
and one lend among N can carry no more than a p of 1/N.

Each lending pair then gets a verdict as the pair audit's pairs do (:func:`lending_verdicts`): **flagged** when its p is
at most the alarm's alpha (the audit's ``--alpha``), **review** when not flagged and its Benjamini-Hochberg q over the
pairs tested is at most the alarm's false-discovery rate (``--fdr``), else **clear**. A flagged or review lending pair
is a case of the fair-play desk (kind ``lending``), and a flagged one makes the audit exit 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from typing import Any

import orjson
import pandas as pd

from analyzer.cards import parse_card, scan
from analyzer.logs import DEFAULT_MAX_LINE_BYTES
from analyzer.problems import Problem, path_text
from analyzer.validate import generate_checked
from analyzer.variants.borrow import (
    BORROW,
    DEFAULT_RULES,
    LEND,
    NAME,
    Borrow,
    BorrowRecord,
    State,
    deal_masks,
    steps_to_live,
)

ILLEGAL = "borrow-with-live"
PLAYER_COLUMNS = ("player", "hands", "borrows", "illegal_borrows", "hands_with_illegal", "first_illegal")
PAIR_COLUMNS = ("a", "b", "lends_to_partner", "goodness_to_partner", "lends_to_others", "goodness_to_others",
                "favour", "p_value")
#: The columns :func:`lending_verdicts` adds.
VERDICT_COLUMNS = ("q_value", "score", "verdict")
#: The alarm the lending pairs' verdicts use when the audit gives none (the pair audit's defaults,
#: ``audit.calibrate.Alarm``).
DEFAULT_ALPHA, DEFAULT_FDR = 1e-5, 0.05


@dataclass(frozen=True, slots=True)
class Lend:
    """One card handed over, and how good it was for the borrower among the lender's options."""

    hand_id: str
    action: int
    lender: str
    borrower: str
    card: int
    options: int
    goodness: float


def lend_goodness(table: int, lendable: int, card: int) -> float | None:
    """Share of the lender's other options that were less useful than ``card`` (more steps to live), in
    [0, 1]: 0 for the least useful, the honest choice; None when the options do not differ (no real choice).

    Strictly less useful, not a mid-rank: ties among the least useful cards then cost an honest lender nothing.
    """
    steps = [steps_to_live(table, c) for c in scan(lendable)]
    if len(set(steps)) < 2:
        return None
    mine = steps_to_live(table, card)
    return sum(s > mine for s in steps) / (len(steps) - 1)


def generate_lends(rec: BorrowRecord) -> Iterator[Lend]:
    """Every lend of a hand whose replay reached its end (the validator's outcome is not None)."""
    deal = deal_masks(rec, [])
    if deal is None:
        return
    st = State(deal, rec.rules or DEFAULT_RULES)
    for i, a in enumerate(rec.actions):
        c = parse_card(a.card, jokers=True)
        if not isinstance(a, Borrow):
            st.push(c)
            continue
        st.push(BORROW)
        g = lend_goodness(st.table, st.lendable(st.lender), c)
        if g is not None:
            yield Lend(rec.hand_id, i, rec.players[st.lender], rec.players[st.turn], c,
                       st.lendable(st.lender).bit_count(), g)
        st.push(LEND + c)


def illegal_borrows(problems: Iterable[Problem], borrows: dict[str, int] | None = None,
                    hands: dict[str, int] | None = None) -> pd.DataFrame:
    """Per player: illegal borrows (from validation problems), the hands they were in, the first one.

    ``borrows`` and ``hands`` (per player) add context; every player named anywhere gets a row.
    """
    count: dict[str, int] = {}
    in_hands: dict[str, set[str]] = {}
    first: dict[str, str] = {}
    for p in problems:
        if p.code != ILLEGAL or p.player is None:
            continue
        count[p.player] = count.get(p.player, 0) + 1
        in_hands.setdefault(p.player, set()).add(str(p.hand_id))
        first.setdefault(p.player, f"{path_text(p.file or '-')}:{p.line or 0} hand {p.hand_id}"
                                  + ("" if p.action is None else f" move {p.action + 1}"))
    names = sorted(set(count) | set(borrows or {}) | set(hands or {}))
    rows = [(n, (hands or {}).get(n, 0), (borrows or {}).get(n, 0), count.get(n, 0), len(in_hands.get(n, ())),
             first.get(n, "")) for n in names]
    df = pd.DataFrame(rows, columns=list(PLAYER_COLUMNS))
    return df.sort_values(["illegal_borrows", "player"], ascending=[False, True], ignore_index=True)


#: Lends on the smaller side up to which the Mann-Whitney p is the exact permutation p.
EXACT_LENDS = 12


def exact_rank_sum_p(partner: list[float], others: list[float]) -> float:
    """One-sided exact p that the partner's lends rank this high among all the pair's lends: the share of
    the ways of choosing len(partner) of them whose (mid)rank sum is at least the partner's. Counted by
    dynamic programming over the distinct values, so ties are exact; the work grows with the smaller
    side's size, which is why only small sides are counted (see EXACT_LENDS)."""
    import numpy as np
    from scipy.special import comb
    from scipy.stats import rankdata

    pooled = np.asarray(partner + others, np.float64)
    twice = np.rint(2 * rankdata(pooled)).astype(np.int64)  # midranks are halves: twice them are integers
    k, n = len(partner), len(pooled)
    small = min(k, n - k)
    side = twice[:k] if small == k else twice[k:]
    observed = int(side.sum())
    values, counts = np.unique(twice, return_counts=True)
    top = int(values[-1]) * small
    ways = np.zeros((small + 1, top + 1))
    ways[0, 0] = 1.0
    for x, c in zip(values.tolist(), counts.tolist()):
        new = ways.copy()
        for i in range(1, min(c, small) + 1):
            new[i:, i * x:] += comb(c, i) * ways[:small + 1 - i, :top + 1 - i * x]
        ways = new
    dist = ways[small] / comb(n, small)
    # the partner's rank sum high is the others' low (their sum is the total less the partner's)
    tail = dist[observed:].sum() if small == k else dist[:observed + 1].sum()
    return float(min(tail, 1.0))


def lending_favour(lends: Iterable[Lend]) -> pd.DataFrame:
    """Per unordered pair that lent to each other: how good their lends to each other were versus their
    lends to others (mean goodness, favour = the difference, one-sided Mann-Whitney p-value, exact for a
    small side)."""
    from scipy.stats import mannwhitneyu  # here: scipy.stats costs ~1 CPU-s to import, and only 借牌 needs it

    by_lender: dict[str, list[Lend]] = {}
    for x in lends:
        by_lender.setdefault(x.lender, []).append(x)
    pairs = {tuple(sorted((x.lender, x.borrower))) for xs in by_lender.values() for x in xs}
    rows = []
    for a, b in sorted(pairs):
        mine = by_lender.get(a, []) + by_lender.get(b, [])
        partner = [x.goodness for x in mine if x.borrower in (a, b)]
        others = [x.goodness for x in mine if x.borrower not in (a, b)]
        if not (partner and others):
            p = float("nan")
        elif min(len(partner), len(others)) <= EXACT_LENDS:
            p = exact_rank_sum_p(partner, others)
        else:
            p = float(mannwhitneyu(partner, others, alternative="greater").pvalue)
        mp = sum(partner) / len(partner)
        mo = sum(others) / len(others) if others else float("nan")
        rows.append((a, b, len(partner), mp, len(others), mo, mp - mo, float(p)))
    df = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    return df.sort_values(["p_value", "a", "b"], ignore_index=True, na_position="last")


def lending_verdicts(pairs: pd.DataFrame, alpha: float = DEFAULT_ALPHA, fdr: float = DEFAULT_FDR) -> pd.DataFrame:
    """The lending table with each pair's verdict: ``q_value`` (Benjamini-Hochberg over the pairs with a p-value: those
    that lent to each other and to others both), ``score`` (-log10 p) and ``verdict``: ``flagged`` (p <= ``alpha``),
    ``review`` (not flagged, q <= ``fdr``) or ``clear`` (a pair with nothing to compare is clear)."""
    import numpy as np

    from analyzer.analysis.dist import bh_adjust

    out = pairs.copy()
    p = out["p_value"].to_numpy(np.float64)
    tested = np.isfinite(p)
    q = np.full(len(out), np.nan)
    q[tested] = bh_adjust(p[tested])
    with np.errstate(divide="ignore"):
        score = np.where(tested, -np.log10(np.maximum(p, 1e-300)), np.nan)
    out["q_value"] = q
    out["score"] = score
    out["verdict"] = np.where(tested & (p <= alpha), "flagged", np.where(tested & (q <= fdr), "review", "clear"))
    return out


@dataclass
class BorrowAudit:
    """The two tables of this variant's audit, and every problem validation found."""

    players: pd.DataFrame
    pairs: pd.DataFrame
    hands: int = 0
    problems: list[Problem] = field(default_factory=list)


class Section:
    """This variant's audit fed one checked hand at a time, so it shares the audit's one pass over the input
    (``-`` included). Keeps per-player counts, the illegal-borrow problems and the lends: not the records."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.lends: list[Lend] = []
        self.borrows: dict[str, int] = {}
        self.seen: dict[str, int] = {}
        self.hands = 0

    def add(self, item: Any) -> None:
        """One :class:`~analyzer.validate.Checked` line of the input, valid or not, of any variant."""
        self.problems.extend(p for p in item.check.problems if p.code == ILLEGAL)
        rec = item.record
        if item.variant != NAME or rec is None:
            return
        self.hands += 1
        for name in rec.players:
            self.seen[name] = self.seen.get(name, 0) + 1
        for a in rec.actions:
            if isinstance(a, Borrow):
                self.borrows[rec.players[a.seat]] = self.borrows.get(rec.players[a.seat], 0) + 1
        if item.check.outcome is not None:
            self.lends.extend(generate_lends(rec))

    def audit(self) -> BorrowAudit:
        return BorrowAudit(illegal_borrows(self.problems, self.borrows, self.seen), lending_favour(self.lends),
                           self.hands, self.problems)

    def result(self, alarm: dict[str, Any] | None = None) -> dict[str, Any]:
        """This variant's part of audit.json: illegal borrows per player (certain cheating, no statistics
        needed) and per pair the lending favour with its verdict at ``alarm``'s ``alpha`` and ``fdr`` (audit.json's
        ``alarm``; default the pair audit's defaults)."""
        found = self.audit()
        alarm = alarm or {}
        pairs = lending_verdicts(found.pairs, float(alarm.get("alpha", DEFAULT_ALPHA)),
                                 float(alarm.get("fdr", DEFAULT_FDR)))
        return {"hands": found.hands, "illegal_borrows": int(found.players["illegal_borrows"].sum()),
                "lending_flagged": int((pairs["verdict"] == "flagged").sum()),
                "lending_review": int((pairs["verdict"] == "review").sum()),
                "players": orjson.loads(found.players.to_json(orient="records")),
                "pairs": orjson.loads(pairs.to_json(orient="records"))}


def audit_borrow(paths: Iterable[str], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> BorrowAudit:
    """Validate the logs and audit their hands of this variant (illegal borrows, lending favour).

    Hands with an illegal borrow still count for lending: the replay goes on past the borrow.
    """
    section = Section()
    for item in generate_checked(paths, max_line_bytes=max_line_bytes):
        section.add(item)
    return section.audit()


#: validation codes that mean this variant's hands are in the input even when none is valid
SECTION_CODES = frozenset({"borrow-with-live", "wrong-lender", "bad-lend", "bad-dealer"})

#: The JSON Schema of this section in audit.json (under the variant's name).
SECTION_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "hands": {"type": "integer", "minimum": 0},
        "illegal_borrows": {"type": "integer", "minimum": 0, "description": "borrows while holding a live card"},
        "players": {"type": "array", "items": {"type": "object"},
                    "description": "per player: hands, borrows, illegal borrows (certain cheating)"},
        "lending_flagged": {"type": "integer", "minimum": 0,
                            "description": "lending pairs flagged (p <= the alarm's alpha): the audit exits 1"},
        "lending_review": {"type": "integer", "minimum": 0,
                           "description": "lending pairs for review (Benjamini-Hochberg q <= the alarm's fdr)"},
        "pairs": {"type": "array", "items": {"type": "object"},
                  "description": "per pair: how good their lends to each other were vs to others, p-value, q-value "
                                 "(Benjamini-Hochberg over the pairs tested), score (-log10 p) and verdict (flagged, "
                                 "review, clear)"},
    },
    "required": ["hands", "illegal_borrows", "players", "pairs"],
}


def certain_cheats(section: dict[str, Any]) -> int:
    """How many cheats the section proves (the audit exits 1 when any)."""
    return int(section["illegal_borrows"])


def flagged(section: dict[str, Any]) -> int:
    """Lending pairs the section flags (the audit exits 1 when any, as for a flagged pair of the pair audit)."""
    return int(section.get("lending_flagged") or 0)


#: Players and pairs the summary's line names at most (the rest are in audit.json and on the page).
SUMMARY_NAMES = 5


def _lending_text(pairs: list[dict[str, Any]]) -> str:
    """The lending table in a few words: how many pairs were compared, the flagged and review ones, or the lowest p."""
    tested = [p for p in pairs if isinstance(p.get("p_value"), (int, float)) and p["p_value"] == p["p_value"]]
    if not tested:
        return f"lending: {len(pairs)} pairs lent, none to each other and to others both (nothing to compare)"
    tested.sort(key=lambda p: p["p_value"])

    def one(p: dict[str, Any]) -> str:
        q = p.get("q_value")
        return (f"{p['a']} & {p['b']} p {p['p_value']:.3g}" + ("" if q is None else f", q {q:.3g}")
                + f" ({p['lends_to_partner']} lends to each other, favour {p['favour']:+.2f})")

    marked = [p for p in tested if p.get("verdict") in ("flagged", "review")]
    head = f"lending: {len(tested)} pairs compared"
    if not marked:
        return f"{head}, none flagged or for review (lowest: {one(tested[0])})"
    more = f" and {len(marked) - SUMMARY_NAMES} more" if len(marked) > SUMMARY_NAMES else ""
    n_flagged = sum(p["verdict"] == "flagged" for p in marked)
    return (f"{head}, {n_flagged} flagged, {len(marked) - n_flagged} for review: "
            + "; ".join(f"{p['verdict'].upper()} {one(p)}" for p in marked[:SUMMARY_NAMES]) + more)


def summary(section: dict[str, Any]) -> str:
    """One line for the terminal: the illegal borrows by player, and the lending table in a few words."""
    cheats = sorted(((str(p["player"]), int(p["illegal_borrows"])) for p in section.get("players", [])
                     if p.get("illegal_borrows")), key=lambda x: (-x[1], x[0]))
    if cheats:
        more = f" and {len(cheats) - SUMMARY_NAMES} more" if len(cheats) > SUMMARY_NAMES else ""
        found = (f"{section['illegal_borrows']} illegal borrows by {len(cheats)} players (borrowing while holding a "
                 f"live card): " + ", ".join(f"{n} {k}" for n, k in cheats[:SUMMARY_NAMES]) + more)
    else:
        found = "no illegal borrow"
    return f"{NAME} (借牌): {section['hands']} hands, {found}; {_lending_text(section.get('pairs', []))}"


def variant_section(paths: Iterable[str], **kw: Any) -> dict[str, Any]:
    """This variant's part of audit.json from a pass of its own over the inputs (:class:`Section` shares
    the audit's pass instead; this is for callers holding only paths)."""
    section = Section()
    for item in generate_checked(paths, **kw):
        section.add(item)
    return section.result()
