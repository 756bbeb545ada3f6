"""Hand views by game: each variant names its view lazily, and every page asks here, never by game name.

A variant's offers name its view's module, ``Offers(hand_view="analyzer.report.<module>")`` (a
string, so the rules never import report code); the module's ``VIEW`` is a :class:`HandView`: the
function that turns a record into the page data (replayed through the variant's own engine), the
static files that draw it, and its labels in every language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import Any

from analyzer.problems import Problem

#: Labels every game's view uses (the stepper, jokers), by language.
SHARED_LABELS: dict[str, dict[str, str]] = {
    "en": {"gv_cards": "cards", "gv_attempted": "not legal: the replay stops here",
           "gv_joker_s": "SJ", "gv_joker_b": "BJ", "gv_start": "the deal", "gv_dealer": "dealer"},
    "zh": {"gv_cards": "张", "gv_attempted": "不合规：回放到此为止",
           "gv_joker_s": "小王", "gv_joker_b": "大王", "gv_start": "发牌", "gv_dealer": "庄家"},
}


@dataclass(frozen=True, slots=True)
class HandView:
    """What a game supplies to show one of its hands."""

    #: The key report.js dispatches on (``hand["view"]``).
    name: str
    #: ``data(record, decisions=None, problems=())``: the page data, or None when the hand cannot be shown.
    data: Callable[..., dict[str, Any] | None]
    #: Static files (analyzer/report/static/) the view needs, loaded before report.js.
    scripts: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()
    #: Labels by language ("en", "zh"), merged into the page's labels.
    labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def resolve(ref: str) -> HandView:
    """``"package.module:NAME"`` -> the HandView it names; ``"package.module"`` -> the module's ``VIEW``,
    or a plain view of its ``hand_data`` (named after the module) when it declares none."""
    module, _, name = ref.partition(":")
    mod = import_module(module)
    view = getattr(mod, name or "VIEW", None)
    if view is None and not name and callable(getattr(mod, "hand_data", None)):
        view = HandView(module.rsplit(".", 1)[-1], mod.hand_data)
    if not isinstance(view, HandView):
        raise TypeError(f"{ref} names no HandView")
    return view


@cache
def views() -> dict[str, HandView]:
    """Variant name -> its hand view, for every registered variant whose offers name one."""
    from analyzer.variants import registry

    return {name: resolve(ref) for name, v in registry().items() if (ref := v.offers.hand_view)}


def view_for(record: Any) -> HandView | None:
    """The hand view of the game ``record`` belongs to (None for anything else)."""
    from analyzer.variants import game_of

    game = game_of(record)
    return None if game is None else views().get(game.name)


def hand_data(record: Any, decisions: Mapping[str, Any] | None = None,
              problems: Sequence[Problem] = ()) -> dict[str, Any] | None:
    """The page data of any game's hand, replayed up to its first illegal action; None if it has no view."""
    view = view_for(record)
    if view is None:
        return None
    data = view.data(record, decisions=decisions, problems=problems)
    if data is not None:
        data["view"] = view.name
    return data


@cache
def page_assets() -> tuple[tuple[str, ...], tuple[str, ...], dict[str, dict[str, str]]]:
    """Every view's scripts and styles (in registry order, once each) and their labels by language.

    Every page carries them all: any page may embed a hand of any game (validation, audit evidence).
    """
    scripts: dict[str, None] = {}
    styles: dict[str, None] = {}
    labels: dict[str, dict[str, str]] = {}
    for view in views().values():
        scripts.update(dict.fromkeys(view.scripts))
        styles.update(dict.fromkeys(view.styles))
        for lang, table in view.labels.items():
            labels.setdefault(lang, {}).update(table)
    return tuple(scripts), tuple(styles), labels
