"""Groups of marked pairs: players joined by flagged or review pairs, three or more of them, named as one group.

A ring of three or more accounts shows up in the pair audit as several marked pairs that share players (A + B
flagged, B + C for review, ...); listed pair by pair, an analyst has to join them by hand, and a ring's weakest pair
(often clear, in a ring taking turns) is easy to miss. A group is a connected component of
the graph whose nodes are players and whose edges are the marked pairs (``scipy.sparse.csgraph``), kept when it has
three or more players. It changes no p-value and no verdict: it is a way of reading the pairs' verdicts, with every
pair among the members (the clear ones too) and how often the members sat together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

#: Verdicts that join two players into a group.
MARKED = ("flagged", "review")
#: The fewest players a group has (two are a pair, already listed as one).
MIN_PLAYERS = 3
#: Seats at a table: a group of more players than this never sits at one table whole.
SEATS = 4


def marked_groups(pairs: Sequence[Mapping[str, Any]], seat_rows: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    """The groups of the audit's ``pairs`` entries (audit.json's: ``players``, ``verdict``, ``score``,
    ``hands_together``), each a dict for audit.json's ``groups``. ``seat_rows``: per player, the positions (in any
    one numbering of the room's hands) of the hands he sat in, for the hands the members sat together. Ordered
    with the groups holding a flagged pair first, then by their marked pairs' count and their best score."""
    marked = [p for p in pairs if p["verdict"] in MARKED]
    if len(marked) < MIN_PLAYERS - 1:
        return []
    names = sorted({str(x) for p in marked for x in p["players"]})
    code = {n: i for i, n in enumerate(names)}
    a = np.array([code[str(p["players"][0])] for p in marked])
    b = np.array([code[str(p["players"][1])] for p in marked])
    graph = coo_array((np.ones(len(marked)), (a, b)), shape=(len(names), len(names)))
    _, label = connected_components(graph, directed=False)
    by_pair = {tuple(sorted(map(str, p["players"]))): p for p in pairs}
    groups: list[dict[str, Any]] = []
    for g in np.unique(label):
        members = [names[i] for i in np.flatnonzero(label == g)]
        if len(members) < MIN_PLAYERS:
            continue
        inside = [by_pair[k] for k in combinations(members, 2) if k in by_pair]
        inside.sort(key=lambda p: (-_score(p), sorted(map(str, p["players"]))))
        groups.append({
            "players": members,
            "verdict": "flagged" if any(p["verdict"] == "flagged" for p in inside) else "review",
            "marked_pairs": sum(p["verdict"] in MARKED for p in inside),
            "pairs": [{"players": sorted(map(str, p["players"])), "verdict": p["verdict"], "score": p.get("score"),
                       "hands_together": p["hands_together"]} for p in inside],
            **_together(members, seat_rows),
        })
    groups.sort(key=lambda g: (g["verdict"] != "flagged", -g["marked_pairs"], -_score(g["pairs"][0]), g["players"]))
    return groups


def _score(p: Mapping[str, Any]) -> float:
    s = p.get("score")
    return float(s) if isinstance(s, (int, float)) and np.isfinite(s) else float("-inf")


def _together(members: list[str], seat_rows: Mapping[str, np.ndarray]) -> dict[str, int | None]:
    """Hands where two or more of the members sat at one table, and where all of them did (None: more members than
    seats)."""
    seen = [np.unique(np.asarray(seat_rows.get(m, ()), np.int64)) for m in members]
    _, counts = np.unique(np.concatenate(seen), return_counts=True) if seen else (None, np.zeros(0, np.int64))
    return {"hands_two_or_more": int((counts >= 2).sum()),
            "hands_all": int((counts == len(members)).sum()) if len(members) <= SEATS else None}
