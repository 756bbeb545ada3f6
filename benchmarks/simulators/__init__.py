"""Every room simulator the evaluations use, behind one interface: its styles, a room written, its truth normalised.

``SIMULATORS`` maps a name to a :class:`Simulator`; ``generate(style, hands, seed, out, players=None)`` writes one
room's log (and the simulator's own truth file beside it) and returns the room's :class:`Truth` in one form for
every simulator: the colluding pairs with their style (and groups of three or more), the honest friend pairs who sit
together by design, lone cheaters, each player's role, bot and noise parameters where the simulator knows them.
Every simulator x style x seed at N hands is one loop::

    for sim in SIMULATORS.values():
        for style in sim.styles:
            truth = sim.generate(style.name, hands=1000, seed=1, out=folder / f"{sim.name}-{style.name}{sim.suffix}")

Each simulator runs in a process of its own (its module's command line, or ``analyzer simulate``), so a room's
bytes depend only on its arguments and seed. The five independent simulators were written from the rules without
reading the analyzer's simulator or its detection code; benchmarks/README.md says what their bots,
rooms and styles are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

HONEST, COLLUSION, LONE = "honest", "collusion", "lone"


@dataclass(frozen=True)
class Style:
    """One kind of room a simulator writes: ``kind`` is honest, collusion or lone (a cheater without a partner)."""

    name: str
    kind: str
    about: str


@dataclass(frozen=True)
class Colluding:
    """Players who collude (two for a pair, more for a group) and the simulator's name for how."""

    players: tuple[str, ...]
    style: str
    hands_together: int | None = None


Pair = tuple[str, str]


def pair(a: str, b: str) -> Pair:
    """A pair as the sorted tuple every table here keys on."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Truth:
    """What a room really holds, in one form for every simulator.

    ``pairs``: the colluding pairs (each a true pair, with its style); ``groups``: colluding groups of three or more
    (their member pairs that collude are in ``pairs``); ``friends``: honest pairs the simulator seats together on
    purpose (the hard negatives); ``roles``: each player's role (honest, friend, colluder, lone) where the simulator
    lists its players; ``bots``: each player's bot kind or family; ``noise``: each player's known noise parameters
    (``temperature``, ``blunder``, ``eps``, a noise model's level, ...).
    """

    simulator: str
    style: str
    seed: int
    hands: int
    pairs: tuple[Colluding, ...] = ()
    groups: tuple[Colluding, ...] = ()
    friends: tuple[Pair, ...] = ()
    lone: tuple[str, ...] = ()
    roles: dict[str, str] = field(default_factory=dict)
    bots: dict[str, str] = field(default_factory=dict)
    noise: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def colluding_pairs(self) -> dict[Pair, str]:
        return {pair(*c.players): c.style for c in self.pairs}

    @property
    def cheaters(self) -> set[str]:
        """Everyone who cheats: colluders (of pairs and groups) and lone cheaters."""
        out = {p for c in (*self.pairs, *self.groups) for p in c.players} | set(self.lone)
        return out | {p for p, r in self.roles.items() if r in ("colluder", "lone")}

    def kind_of(self, a: str, b: str) -> str:
        """``colluding`` (a true pair), ``honest`` (two honest players), ``with-cheater`` (one cheater) or
        ``cheaters`` (two cheaters who are no true pair, e.g. one ring's accomplices who never help each other)."""
        if pair(a, b) in self.colluding_pairs:
            return "colluding"
        n = len({a, b} & self.cheaters)
        return ("honest", "with-cheater", "cheaters")[n]

    def to_json(self) -> dict[str, Any]:
        return {"simulator": self.simulator, "style": self.style, "seed": self.seed, "hands": self.hands,
                "pairs": [vars(c) | {"players": list(c.players)} for c in self.pairs],
                "groups": [vars(c) | {"players": list(c.players)} for c in self.groups],
                "friends": [list(f) for f in self.friends], "lone": list(self.lone), "roles": self.roles,
                "bots": self.bots, "noise": self.noise}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Truth:
        def coll(x: dict[str, Any]) -> Colluding:
            return Colluding(tuple(x["players"]), x["style"], x.get("hands_together"))

        return cls(d["simulator"], d["style"], d["seed"], d["hands"], tuple(coll(x) for x in d["pairs"]),
                   tuple(coll(x) for x in d["groups"]), tuple(pair(*f) for f in d["friends"]), tuple(d["lone"]),
                   d["roles"], d["bots"], d["noise"])


def _pairs_of(players: list[str]) -> list[Pair]:
    return [pair(a, b) for i, a in enumerate(players) for b in players[i + 1:]]


@dataclass(frozen=True)
class Simulator:
    """One simulator: its styles, how its command line writes a room, and how its truth file reads."""

    name: str
    about: str
    styles: tuple[Style, ...]
    suffix: str  # the log's name ends so (the plain-text writers cannot gzip)
    command: Callable[[str, int, int, Path, int | None, dict[str, Any]], list[str]]
    normalise: Callable[[dict[str, Any]], dict[str, Any]]
    takes_players: bool = True

    def style(self, name: str) -> Style:
        for s in self.styles:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no style {name!r} (it has {', '.join(s.name for s in self.styles)})")

    def truth_path(self, out: Path) -> Path:
        """Where the simulator writes its own truth for the log ``out``."""
        return out.with_name(out.name.removesuffix(self.suffix) + ".truth.json")

    def generate(self, style: str, hands: int, seed: int, out: Path, players: int | None = None,
                 options: dict[str, Any] | None = None) -> Truth:
        """Write the room's log to ``out`` (its name must end in ``suffix``) and its truth beside it; return the
        truth normalised. ``players`` is passed on where the simulator takes it (else ValueError); ``options`` are
        the simulator's own command-line options (``{"runs": "5-10"}`` is ``--runs 5-10``)."""
        self.style(style)
        if not out.name.endswith(self.suffix):
            raise ValueError(f"{self.name} writes logs named *{self.suffix}, not {out.name}")
        if players is not None and not self.takes_players:
            raise ValueError(f"{self.name} sets its rooms' players itself")
        out.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        r = subprocess.run(self.command(style, hands, seed, out, players, options or {}), cwd=ROOT, env=env, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{self.name} {style} (seed {seed}, {hands} hands) failed: {r.stderr[-2000:]}")
        return self.read_truth(out, style, seed, hands)

    def read_truth(self, out: Path, style: str, seed: int, hands: int) -> Truth:
        raw = json.loads(self.truth_path(out).read_text(encoding="utf-8"))
        return Truth(simulator=self.name, style=style, seed=seed, hands=hands, **self.normalise(raw))


def _flags(options: dict[str, Any]) -> list[str]:
    out = []
    for k, v in options.items():
        for x in v if isinstance(v, list) else [v]:
            out += [f"--{k.replace('_', '-')}", str(x)]
    return out


def _module(name: str, style_flag: str = "--room"
            ) -> Callable[[str, int, int, Path, int | None, dict[str, Any]], list[str]]:
    def command(style: str, hands: int, seed: int, out: Path, players: int | None, options: dict[str, Any]
                ) -> list[str]:
        more = (["--players", str(players)] if players is not None else []) + _flags(options)
        return [sys.executable, "-m", f"benchmarks.simulators.{name}", style_flag, style, "--hands", str(hands),
                "--seed", str(seed), "--out", str(out), *more]

    return command


# ---- the truths, normalised -------------------------------------------------------------------------------------

def _heuristic_lookahead(t: dict[str, Any]) -> dict[str, Any]:
    pairs, groups = [], []
    for c in t["colluders"]:
        m = c["players"]
        for a, b in _pairs_of(m):
            hands = c["hands_together"].get(f"{a}|{b}", c["hands_together"].get(f"{b}|{a}"))
            pairs.append(Colluding((a, b), c["mode"], hands))
        if len(m) > 2:
            groups.append(Colluding(tuple(sorted(m)), c["mode"]))
    friends = sorted({pair(*f["players"]) for f in t["friends"]})
    cheat = {p for c in t["colluders"] for p in c["players"]}
    bots, noise = {}, {}
    for p, kind in t["kinds"].items():
        bot, temp = kind.split(":")
        bots[p] = bot
        if bot == "heur":
            noise[p] = {"temperature": float(temp)}
    roles = {p: "colluder" if p in cheat else "friend" if any(p in f for f in friends) else "honest" for p in bots}
    return {"pairs": tuple(pairs), "groups": tuple(groups), "friends": tuple(friends), "roles": roles, "bots": bots,
            "noise": noise}


def _quirky_rules(t: dict[str, Any]) -> dict[str, Any]:
    pairs = tuple(Colluding(pair(*c["pair"]), c["style"]) for c in t["colluders"])
    friends = sorted({p for f in t["friends"] for p in _pairs_of(f["group"])})
    return {"pairs": pairs, "friends": tuple(friends), "lone": tuple(c["player"] for c in t.get("cheaters", []))}


def _listed_players(t: dict[str, Any], bot_key: str, noise_of: Callable[[dict[str, Any]], dict[str, float]]
                    ) -> dict[str, Any]:
    """The truths that list every player with a role: colluding pairs, friend pairs, lone cheaters, bots, noise."""
    pairs = tuple(Colluding(pair(*c["players"]), c["style"], c.get("hands_together")) for c in t["colluding_pairs"])
    groups = tuple(Colluding(tuple(sorted(g["players"])), g["style"]) for g in t.get("colluding_groups", []))
    friends = tuple(sorted(pair(*(f["players"] if isinstance(f, dict) else f)) for f in t["friend_pairs"]))
    players = t["players"]
    lone = tuple(t.get("lone_cheaters", []))
    roles = {p: "lone" if p in lone else v["role"] for p, v in players.items()}
    return {"pairs": pairs, "groups": groups, "friends": friends, "lone": lone, "roles": roles,
            "bots": {p: v[bot_key] for p, v in players.items()}, "noise": {p: noise_of(v) for p, v in players.items()}}


def _planner_sampler(t: dict[str, Any]) -> dict[str, Any]:
    return _listed_players(t, "bot", lambda v: {"temperature": v["params"]["temp"],
                                                "blunder": v["params"]["blunder"]})


def _thumb_epsilon(t: dict[str, Any]) -> dict[str, Any]:
    return _listed_players(t, "family", lambda v: {str(v["noise"][0]): float(v["noise"][1])})


def _boltzmann_families(t: dict[str, Any]) -> dict[str, Any]:
    return _listed_players(t, "family", lambda v: {"temperature": v["temp"], "blunder": v["blunder"],
                                                   "misclick": v["misclick"], "fatigue": v["fatigue"]})


def _analyzer(t: dict[str, Any]) -> dict[str, Any]:
    pairs = tuple(Colluding(pair(*c["players"]), c["style"], c["hands_together"]) for c in t["colluding_pairs"])
    friends = tuple(pair(*f["players"]) for f in t["friend_pairs"])
    players = t["players"]
    return {"pairs": pairs, "friends": friends, "roles": {p: v["role"] for p, v in players.items()},
            "bots": {p: v["level"] for p, v in players.items()},
            "noise": {p: {"temperature": v["temperature"], "search_samples": v["search_samples"]}
                      for p, v in players.items()}}


def _analyzer_noise(t: dict[str, Any]) -> dict[str, Any]:
    return {"roles": {p: "honest" for p in t["level"]}, "bots": t["model"],
            "noise": {p: {t["model"][p]: lv} for p, lv in t["level"].items()}}


def _fixed_policy(t: dict[str, Any]) -> dict[str, Any]:
    return {"roles": {p: "honest" for p in t["policies"]}, "bots": t["policies"]}


# ---- the styles -------------------------------------------------------------------------------------------------

def _styles(rows: str) -> tuple[Style, ...]:
    """Styles written one a line: ``name kind about``."""
    out = []
    for line in rows.strip().splitlines():
        name, kind, about = line.split(None, 2)
        out.append(Style(name, kind, about))
    return tuple(out)


HEURISTIC_LOOKAHEAD = _styles("""
honest_friends honest three honest friend pairs who often sit together, one always in the same order
honest_habits honest friends and 40% of the rest with a strong personal habit (starve the next seat, cover high, 7s first)
honest_longtables honest tables that sit 30-50 hands
honest_chatty honest friends who think 1.4x slower when they sit together (a tell without collusion)
honest_club honest four regulars at one table, always in the same seats, each with a habit
honest_casual honest casual friends who think slower together
honest_mentor honest a strong player who nearly always plays with a random-playing novice friend
share collusion a pair that shares hands and minimises the pair's joint loss
late_feed collusion a pair that feeds the partner's far cards late in the hand, when it holds many points
block collusion a pair that plays honestly but opens nothing for the opponents and covers to shut their suits
signal collusion the partner's think time names a suit it needs; the colluder feeds it and never shuts it
trio collusion three colluders who share hands
part20 collusion share, in 20% of the hands together
weak_share collusion share, by weak players (random or very hot heuristics)
cover_only collusion honest plays; only the covers use the partner's hand
""")

QUIRKY_RULES = _styles("""
honest_search_twins honest two strong search bots who sit together 80% of the time
honest_mirror honest a weak player who mirrors an expert's suit; heavy-tailed think times, some without ms, some in whole seconds
honest_clones honest three clone bots of one operator; improvers and tired players
blockers honest two honest blockers who sit together
honest_highcover honest players who cover high cards early
coll_behind collusion help only when the partner is behind
coll_signal collusion a signal through which card is covered
coll_sacrifice collusion self-sacrifice for the partner
coll_oneway collusion one-way information, spotter to beneficiary
coll_late collusion cheating only in the last third of the room
coll_twopairs collusion two colluding pairs at one table
omniscient lone a lone cheater who sees every hand
""")


def _listed(module: str, kinds: Callable[[str], str]) -> tuple[Style, ...]:
    """The styles a simulator module lists in its ROOMS (each with a ``desc`` or ``doc``)."""
    import importlib

    mod = importlib.import_module(f"benchmarks.simulators.{module}")
    dropped: set[str] = getattr(mod, "DROPPED", set())
    return tuple(Style(name, cfg.get("kind") or kinds(name), cfg.get("desc") or cfg.get("doc") or cfg.get("what")
                       or getattr(mod, "STYLE_DOC", {}).get(cfg.get("style"), ""))
                 for name, cfg in mod.ROOMS.items() if name not in dropped)


def _planner_kind(name: str) -> str:
    return HONEST if name.startswith("honest") else LONE if name in ("lone", "four-lone") else COLLUSION


def _boltzmann_kind(name: str) -> str:
    return HONEST if name.startswith("h-") else COLLUSION


#: The analyzer's own rooms: ``analyzer simulate`` options of each style (20 players, three colluding pairs and
#: three friend pairs; the honest room 40 players and six friend pairs; occasional help in small rooms, so pairs
#: sit together long).
ANALYZER_STYLES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "honest": (HONEST, "honest players and six friend pairs", {"players": 40, "colluders": 0, "friends": 6}),
    "share": (COLLUSION, "both know both hands", {"style": "share"}),
    "feed": (COLLUSION, "one knows the partner's hand and feeds it", {"style": "feed"}),
    "block": (COLLUSION, "both know both hands and block the opponents", {"style": "block"}),
    "harm": (COLLUSION, "both know both hands and spend it on hurting the opponents", {"style": "harm"}),
    "partial": (COLLUSION, "share, in 40% of their decisions", {"style": "share", "share": 1.0, "slow": "no",
                                                               "option": ["decisions=0.4"]}),
    "occasional": (COLLUSION, "share, in one hand of ten together", {"players": 12, "colluders": 2, "friends": 2,
                                                                    "style": "share", "share": 0.1, "slow": "no"}),
}
_ANALYZER_BASE: dict[str, Any] = {"players": 20, "colluders": 3, "friends": 3}


def _analyzer_command(style: str, hands: int, seed: int, out: Path, players: int | None, options: dict[str, Any]
                      ) -> list[str]:
    opts = {**_ANALYZER_BASE, **ANALYZER_STYLES[style][2], **options}
    if players is not None:
        opts["players"] = players
    argv = [sys.executable, "-m", "analyzer.cli", "simulate", "--hands", str(hands), "--seed", str(seed), "--out",
            str(out), "--truth", str(out.with_name(out.name.removesuffix(".jsonl.gz") + ".truth.json"))]
    return argv + _flags(opts)


def _registry() -> dict[str, Simulator]:
    from analyzer.simulate.noise import MODELS as noise_models
    from benchmarks.simulators.fixed_policy import STYLES as FIXED

    sims = [
        Simulator("heuristic_lookahead", "random, greedy, softmax-heuristic and small-lookahead bots",
                  HEURISTIC_LOOKAHEAD, ".jsonl", _module("heuristic_lookahead", "--style"), _heuristic_lookahead),
        Simulator("quirky_rules", "rule players with fixed quirks, improvers and tired players, blockers, a search bot",
                  QUIRKY_RULES, ".jsonl", _module("quirky_rules"), _quirky_rules),
        Simulator("planner_sampler", "planner, blocker, beginner, Monte Carlo sampler and drifter bots (softmax + "
                  "blunders)", _listed("planner_sampler", _planner_kind), ".jsonl.gz", _module("planner_sampler"),
                  _planner_sampler, takes_players=False),
        Simulator("thumb_epsilon", "rule-of-thumb bots with epsilon or rank noise (thumb, looker, novice, tilter, "
                  "learner)", _listed("thumb_epsilon", _planner_kind), ".jsonl.gz", _module("thumb_epsilon"),
                  _thumb_epsilon, takes_players=False),
        Simulator("boltzmann_families", "shedder, spoiler, hoarder, Monte Carlo, fumbler and day-shift bots "
                  "(Boltzmann noise, fatigue, misclicks)", _listed("boltzmann_families", _boltzmann_kind), ".jsonl.gz",
                  _module("boltzmann_families"), _boltzmann_families, takes_players=False),
        Simulator("fixed_policy", "simple fixed-policy bots: random, lowest or highest first, hoarders, openers",
                  tuple(Style(n, HONEST, f"{p} players: {', '.join(pol)}; tables sit {r:g} hands on average")
                        for n, (p, pol, r) in FIXED.items()), ".jsonl", _module("fixed_policy", "--style"),
                  _fixed_policy),
        Simulator("analyzer", "the analyzer's own simulator (analyzer simulate): feature-weighted softmax players "
                  "and search experts", tuple(Style(n, k, a) for n, (k, a, _) in ANALYZER_STYLES.items()),
                  ".jsonl.gz", _analyzer_command, _analyzer),
        Simulator("analyzer_noise", "the analyzer's players at a known noise level, one noise model a room",
                  tuple(Style(m, HONEST, f"every player a {m} player at a level across the model's range")
                        for m in noise_models), ".jsonl", _module("analyzer_noise", "--style"), _analyzer_noise),
    ]
    return {s.name: s for s in sims}


SIMULATORS: dict[str, Simulator] = _registry()


def rooms(kinds: tuple[str, ...] = (HONEST, COLLUSION, LONE), simulators: tuple[str, ...] | None = None
          ) -> Iterator[tuple[Simulator, Style]]:
    """Every (simulator, style) of these kinds, in the registry's order."""
    for sim in SIMULATORS.values():
        if simulators is None or sim.name in simulators:
            for s in sim.styles:
                if s.kind in kinds:
                    yield sim, s
