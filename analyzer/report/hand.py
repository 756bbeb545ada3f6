"""The hand replayer page, and the per-hand data every page embeds to replay a hand in the browser."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from functools import lru_cache
from typing import TYPE_CHECKING, Any


from analyzer.cards import CardError, parse_card, scan
from analyzer.problems import Problem, path_text
from analyzer.report import views
from analyzer.report.common import clean, render_page, write_page
from analyzer.report.views import HandView
from analyzer.rules import dead_cards, touched_cards
from analyzer.variants import game_of
from analyzer.variants.bieqi import COVER, DEFAULT_RULES, VARIANT, Outcome, Rules, State

if TYPE_CHECKING:
    import pandas as pd

#: Decision-row columns copied as they are into the page (see docs/design.md, "Decision rows").
_SCALAR_COLUMNS = ("rank", "regret", "regret_se", "dd_regret", "think_ms", "difficulty", "reasons")


def parse_action(code: str, kind: str) -> int:
    """A card code and "play"/"cover" as an engine action int."""
    if type(code) is str and type(kind) is str:  # the usual case: 52 cards, two kinds, parsed once each
        return _action(code, kind)
    c = parse_card(code)
    return COVER + c if kind == "cover" else c


@lru_cache(maxsize=1024)
def _action(code: str, kind: str) -> int:
    c = parse_card(code)
    return COVER + c if kind == "cover" else c


def decision_entry(row: Mapping[str, Any]) -> dict[str, Any]:
    """One decision row as the replayer reads it: actions as engine ints, options with their values."""
    kind = str(row.get("kind", "play"))
    raw = row.get("options")
    options = raw if isinstance(raw, (list, tuple)) else []  # the typed column gives a list of dicts a row
    entry: dict[str, Any] = {k: clean(row.get(k)) for k in _SCALAR_COLUMNS if k in row}
    entry["options"] = [{"a": parse_action(o["card"], o.get("kind", kind)),
                         "ev": [clean(float(x)) for x in o["ev"]] if o.get("ev") is not None else None,
                         "ev_dd": [clean(float(x)) for x in o["ev_dd"]] if o.get("ev_dd") is not None else None}
                        for o in options]
    entry["chosen"] = parse_action(row["chosen"], kind)
    best = row.get("best")
    entry["best"] = parse_action(best, kind) if isinstance(best, str) and best else None
    if all(f"delta{s}" in row for s in range(4)):
        entry["delta"] = [clean(float(row[f"delta{s}"])) for s in range(4)]
    if all(f"imm{s}" in row for s in range(4)):  # cards made playable (+) or stranded (-), the evidence's card edge
        entry["imm"] = [clean(float(row[f"imm{s}"])) for s in range(4)]
    return entry


#: The columns :func:`decision_entry` reads.
ENTRY_COLUMNS = ("hand_id", "action", "kind", "options", "chosen", "best", *_SCALAR_COLUMNS,
                 *(f"delta{s}" for s in range(4)), *(f"imm{s}" for s in range(4)))


def decisions_by_hand(decisions: pd.DataFrame | None,
                      hand_ids: Iterable[str] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """hand id -> action index (as a JSON key) -> decision entry, for the given hands (all when None)."""
    if decisions is None or decisions.empty:
        return {}
    rows = decisions if hand_ids is None else decisions[decisions["hand_id"].isin(set(hand_ids))]
    # the columns read, each as one list of Python values (as a row's dict holds them), then a dict a row
    cols = {c: rows[c].tolist() for c in ENTRY_COLUMNS if c in rows.columns}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for values in zip(*cols.values()):
        row = dict(zip(cols, values))
        try:
            out.setdefault(str(row["hand_id"]), {})[str(int(row["action"]))] = decision_entry(row)
        except (CardError, KeyError, TypeError, ValueError):
            continue  # a row this page cannot read is left out rather than breaking the page
    return out


def multiplier_factors(out: Outcome, rules: Rules) -> list[list[list[Any]]] | None:
    """Per seat, the factors whose product is its multiplier, as ``[kind, factor, detail]``:
    ``["tong", 2, n]`` (n players went 通), ``["dutou", 8, k]`` (k 独头七), ``["doubling", 2, threshold]``.
    None when they do not multiply up to the recorded multipliers (rules this page does not know)."""
    n, k = len(out.tong), len(out.dutou)
    shared: list[list[Any]] = []
    if k and rules.dutou == "replace":
        shared.append(["dutou", rules.dutou_factor ** k, k])
    else:
        if rules.tong_factors[n] != 1:
            shared.append(["tong", rules.tong_factors[n], n])
        if k:
            shared.append(["dutou", rules.dutou_factor ** k, k])
    factors: list[list[list[Any]]] = []
    for s, points in enumerate(out.points):
        mine = [list(f) for f in shared] if points else []
        mine += [["doubling", 2, th] for th in rules.cover_doubling if points > th]
        if math.prod(f[1] for f in mine) != out.multipliers[s]:
            return None
        factors.append(mine)
    return factors


def hand_data(record: Any, decisions: Mapping[str, Any] | None = None,
              problems: Sequence[Problem] = ()) -> dict[str, Any] | None:
    """Everything the browser needs to replay one standard hand, or None when it cannot be replayed.

    The replay stops at the first action that is not legal (as the validator does), so a bad hand
    shows up to its failing action. ``live[k]`` is the live cards still to come after k actions.
    """
    game = game_of(record)
    if game is None or game.offers.hand_view is None:
        return None
    if game.offers.hand_view != __name__:  # another game's page: its contract names the module
        return game.offer("hand_view").hand_data(record, decisions, problems)
    masks = VARIANT.deal_masks(record, [])
    if masks is None:
        return None
    st = State(masks, record.rules or DEFAULT_RULES)
    first = st.turn
    actions: list[int] = []
    live = [list(scan(st.live))]
    decisions = {k: dict(v) for k, v in (decisions or {}).items()}
    for a in record.actions:
        try:
            act = parse_action(a.card, a.kind)
        except CardError:
            break
        if st.is_terminal() or a.seat != st.turn or not st.is_legal(act):
            break
        d = decisions.get(str(len(actions)))
        if d is not None:  # the cards this move made live or unplayable, in every hand: the evidence's marks
            d["touched"] = list(scan(touched_cards(act, dead_cards(st.covered)) & ~st.table))
        st.push(act)
        actions.append(act)
        gone = st.table | st.covered[0] | st.covered[1] | st.covered[2] | st.covered[3]
        live.append(list(scan(st.live & ~gone)))
    times = [a.ms for a in record.actions[: len(actions)]]
    outcome = None
    if st.is_terminal():
        out = st.outcome()
        outcome = {**asdict(out), "explain": out.explain(),
                   "factors": multiplier_factors(out, record.rules or DEFAULT_RULES)}
    return {
        "id": record.hand_id, "table": record.table_id, "players": list(record.players),
        "deal": [list(scan(m)) for m in masks], "first": first, "actions": actions, "live": live,
        "ms": times if times and None not in times else None, "outcome": outcome,
        "decisions": decisions,
        "problems": [{"action": p.action, "seat": p.seat, "code": p.code, "message": path_text(p.message)} for p in problems],
    }


def hand_store(records: Iterable[Any], decisions: pd.DataFrame | None = None,
               wanted: Iterable[str] | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """The replayable hands among ``records`` (records or validate's Checked items), only ``wanted``
    ids when given: their ids and their page data, in input order."""
    want = None if wanted is None else set(wanted)
    picked = [rec for rec in (getattr(item, "record", item) for item in records)
              if want is None or getattr(rec, "hand_id", None) in want]
    by_hand = decisions_by_hand(decisions, [rec.hand_id for rec in picked]) if picked else {}
    ids: list[str] = []
    data: list[dict[str, Any]] = []
    for rec in picked:
        hd = views.hand_data(rec, by_hand.get(rec.hand_id))  # any game's hand, through its view
        if hd is not None:
            ids.append(rec.hand_id)
            data.append(hd)
    return ids, data


def _view_data(record: Any, decisions: Any = None, problems: Sequence[Problem] = ()) -> dict[str, Any] | None:
    """The standard game's hand view: ``decisions`` may be decision rows (a frame) or one hand's entries."""
    if decisions is not None and hasattr(decisions, "columns"):
        hand_id = str(getattr(record, "hand_id", ""))
        decisions = decisions_by_hand(decisions, [hand_id]).get(hand_id)
    return hand_data(record, decisions, problems)


#: The standard game's hand view (named by ``analyzer.variants.bieqi.VARIANT.offers.hand_view``).
VIEW = HandView("bieqi", _view_data)


def write_hand_report(path: str | os.PathLike[str], record: Any, *, decisions: pd.DataFrame | None = None,
                      lang: str = "en", problems: Sequence[Problem] = ()) -> None:
    """Write the replay page of one hand of any game, through its variant's hand view (decision analysis
    shown when the game has one and ``decisions`` has its rows; ``problems`` marked where they happen)."""
    data = views.hand_data(record, decisions, problems)
    if data is None:
        raise ValueError(f"hand {getattr(record, 'hand_id', '?')!r} cannot be replayed: its deal is not valid "
                         "or its game has no hand view")
    page = render_page("hand", lang=lang, data={"hand_ids": [data["id"]], "default_view": ["hand", 0]},
                       stores={"hand": [data]})
    write_page(path, page)
