"""The per-player ``skill`` read-out on the other simulators' noise models: Spearman with the known noise.

    python -m benchmarks.eval_skill_heldout [--seeds 1,2,3] [--players 24] [--hands 2400] [--sweeps all]

Each sweep is an honest room of one simulator (benchmarks/simulators, not the analyzer's own noise rooms the skill
reference is fitted on) with one bot family and one noise parameter spread over its range, every other noise
parameter fixed, through the simulator module's own classes (its player builder wrapped in a process of its own):

- ``heuristic_lookahead/temperature``: every player a ``heur`` bot, softmax temperature 0.2..4 (geometric);
- ``planner_sampler/blunder``: every player a ``planner`` at the simulator's default weights and a low softmax
  temperature (0.15, the low end of its planners), the per-decision blunder rate (a uniformly random option) 0..0.5;
- ``thumb_epsilon/eps``: every player a ``thumb`` bot, epsilon (a random move) 0..0.5.

The levels are assigned to players in a seeded random order. The room goes through ``analyzer validate``,
``analyzer decisions`` and ``analyzer audit`` (benchmarks.harness) and the players table's ``skill`` is set
beside each player's level: Spearman sign turned, 1 = the noisier, the less skilled. One row a sweep and seed,
and the smallest over seeds. Writes benchmarks/results/skill_heldout.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import harness
from benchmarks.results import Results, command_line

#: planner_sampler's sweep: the softmax temperature every planner keeps (its planners' lowest), so blunders are the noise
PLANNER_TEMP = 0.15

#: sweep -> (simulator module, noise parameter, levels' range, geometric)
SWEEPS: dict[str, tuple[str, str, tuple[float, float], bool]] = {
    "heuristic_lookahead/temperature": ("heuristic_lookahead", "temperature", (0.2, 4.0), True),
    "planner_sampler/blunder": ("planner_sampler", "blunder", (0.0, 0.5), False),
    "thumb_epsilon/eps": ("thumb_epsilon", "eps", (0.0, 0.5), False),
}


def levels(sweep: str, n: int, seed: int) -> list[float]:
    """The sweep's ``n`` noise levels over its range, in a seeded random order (the i-th is the i-th player's)."""
    _, _, (lo, hi), geometric = SWEEPS[sweep]
    xs = list(np.geomspace(lo, hi, n) if geometric else np.linspace(lo, hi, n))
    random.Random(f"{sweep}:{seed}").shuffle(xs)
    return [round(float(x), 4) for x in xs]


def _assigner(xs: list[float], known: dict[str, float]) -> Callable[[str], float]:
    """Each new player the next level (recorded in ``known``); a player seen again keeps theirs."""
    it = iter(xs)

    def level(pid: str) -> float:
        if pid not in known:
            known[pid] = next(it)
        return known[pid]
    return level


def write_room(sweep: str, seed: int, players: int, hands: int, out: Path) -> dict[str, float]:
    """Write the sweep's room (the log at ``out``) in this process, the simulator's builder wrapped; the levels."""
    module, _, _, _ = SWEEPS[sweep]
    known: dict[str, float] = {}
    level = _assigner(levels(sweep, players, seed), known)
    if module == "heuristic_lookahead":
        from benchmarks.simulators import heuristic_lookahead as h

        orig_build = h.build_players

        def build_players(style: str, rng: random.Random, n: int) -> Any:
            ids, P = orig_build(style, rng, n)
            for pid in ids:
                P[pid].kind, P[pid].temp = "heur", level(pid)
            return ids, P
        h.build_players = build_players
        h.main(["--style", "honest_longtables", "--seed", str(seed), "--hands", str(hands), "--players",
                str(players), "--friends", "0", "--out", str(out)])
    elif module == "planner_sampler":
        from benchmarks.simulators import planner_sampler as ps

        class PlannerPlayer(ps.Player):  # type: ignore[misc]
            def __init__(self, pid: str, bot_kind: str, rng: random.Random, nprng: Any, params: Any = None,
                         pace: Any = None, role: str = "honest") -> None:
                super().__init__(pid, "planner", rng, nprng, {"temp": PLANNER_TEMP, "blunder": level(pid)}, pace, role)
        ps.Player = PlannerPlayer  # type: ignore[misc]
        ps.ROOMS["honest-sweep"] = dict(n=players, mix=[(1, "planner")],
                                        desc="honest; one bot kind, one noise parameter swept")
        ps.simulate("honest-sweep", hands, seed, str(out))
    elif module == "thumb_epsilon":
        from benchmarks.simulators import thumb_epsilon as t

        class Player(t.Player):  # type: ignore[name-defined,misc]
            def __init__(self, pid: str, fam: str, params: Any, noise: Any, pace: Any) -> None:
                super().__init__(pid, fam, params, ("eps", level(pid)), pace)
        t.Player = Player  # type: ignore[misc]
        t.ROOMS["h-sweep"] = dict(kind="honest", players=players, mix={"thumb": 1.0},
                                  doc="honest; one family, one noise parameter swept")
        t.main(["--room", "h-sweep", "--seed", str(seed), "--hands", str(hands), "--out", str(out)])
    else:
        raise KeyError(sweep)
    return known


def lost_points(log: Path) -> pd.Series:
    """Each player's mean cover points a hand (the points they lose) in the room's log."""
    opener: Any = gzip.open if log.suffix == ".gz" else open
    pts: dict[str, list[int]] = {}
    with opener(log, "rt", encoding="utf-8") as f:
        for line in f:
            h = json.loads(line)
            for pid, p in zip(h["players"], h["result"]["points"]):
                pts.setdefault(pid, []).append(int(p))
    return pd.Series({pid: float(np.mean(v)) for pid, v in pts.items()}, name="lost_points")


def room_players(sweep: str, seed: int, players: int, hands: int, cache: Path = harness.CACHE) -> pd.DataFrame:
    """The sweep room's player table (``analyzer audit``) with each player's ``level``; the room cached."""
    base = cache / "skill_heldout" / f"{sweep.replace('/', '-')}-p{players}-{hands}h-s{seed}"
    base.mkdir(parents=True, exist_ok=True)
    # heuristic_lookahead writes plain JSON lines whatever the name
    log = base / ("room.jsonl" if SWEEPS[sweep][0] == "heuristic_lookahead" else "room.jsonl.gz")
    lv = base / "levels.json"
    if not lv.exists():
        tmp = base / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        subprocess.run([sys.executable, "-m", "benchmarks.eval_skill_heldout", "--write", sweep, str(seed),
                        str(players), str(hands), str(tmp / log.name)], cwd=harness.ROOT, env=harness._env(),
                       check=True, capture_output=True)
        for f in tmp.iterdir():
            f.replace(base / f.name)
        tmp.rmdir()
    known = json.loads(lv.read_text(encoding="utf-8"))
    harness.validate(log)
    st = base / f"store-{harness.analysis_key()}"
    if not st.exists():
        harness.analyzer("decisions", str(log), "--out", str(st.with_name(st.name + ".tmp")))
        st.with_name(st.name + ".tmp").replace(st)
    with tempfile.TemporaryDirectory(prefix="audit-", dir=cache) as out:
        harness.analyzer("audit", str(log), "--decisions", str(st), "--out", out, ok=(0, 1))
        pl = pd.read_csv(Path(out) / "players.csv", dtype={"player": str, "partner": str})
    pl["noise_level"] = pl["player"].map(known)
    pl["lost_points"] = pl["player"].map(lost_points(log))
    return pl


def points_spearman(players: pd.DataFrame) -> float:
    """Spearman of the known noise level with the mean cover points a hand: does the noise cost points?"""
    from scipy.stats import spearmanr

    d = players[["noise_level", "lost_points"]].dropna()
    return float(spearmanr(d["noise_level"], d["lost_points"]).statistic) if len(d) >= 3 else float("nan")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--players", type=int, default=24)
    ap.add_argument("--hands", type=int, default=2400)
    ap.add_argument("--sweeps", default="all", help=f"comma-separated, of {', '.join(SWEEPS)}")
    ap.add_argument("--write", nargs=5, metavar=("SWEEP", "SEED", "PLAYERS", "HANDS", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.write:
        sweep, seed, players, hands, out = a.write
        known = write_room(sweep, int(seed), int(players), int(hands), Path(out))
        Path(out).with_name("levels.json").write_text(json.dumps(known), encoding="utf-8")
        return
    sweeps = list(SWEEPS) if a.sweeps == "all" else a.sweeps.split(",")
    seeds = [int(x) for x in a.seeds.split(",")]
    res = Results("skill_heldout", "Skill on the other simulators' noise models", "skill",
                  command_line("benchmarks.eval_skill_heldout", argv),
                  parameters={"seeds": seeds, "players": a.players, "hands": a.hands, "sweeps": sweeps},
                  about="Spearman of the players table's skill with the known noise (1 = the noisier, the less "
                        "skilled) in honest rooms of simulators the skill reference was not fitted on: one bot "
                        "family, one noise parameter spread over its range, the others fixed.")
    rows = []
    for sweep in sweeps:
        for seed in seeds:
            pl = room_players(sweep, seed, a.players, a.hands)
            rho = harness.skill_spearman(pl, "level")
            moves = points_spearman(pl)
            rows.append([sweep, seed, int(pl["noise_level"].notna().sum()), float(pl["hands"].median()), moves, rho])
            print(f"{sweep} seed {seed}: Spearman {rho:.3f} (noise with lost points {moves:.3f})", file=sys.stderr,
                  flush=True)
    t = pd.DataFrame(rows, columns=["sweep", "seed", "players", "hands each", "points", "spearman"])
    out = []
    for s in sweeps:
        g = t[t["sweep"] == s]
        out += [[r.sweep, str(r.seed), r.players, r._3, r.points, r.spearman] for r in g.itertuples(index=False)]
        out.append([s, "smallest", int(g["players"].min()), float(g["hands each"].min()), float(g["points"].min()),
                    float(g["spearman"].min())])
    res.table("by_sweep", "Skill's Spearman with the known noise, by simulator and noise model",
              ["simulator/noise", "seed", "players", "hands each", "noise ~ lost points", "Spearman"], out)
    res.note("noise ~ lost points: Spearman of each player's noise level with their mean cover points a hand, a check "
             "that the swept noise costs points at all (near 0: no read-out of play could order those players).")
    res.figure("skill_heldout_min", float(t["spearman"].min()), "", "the smallest Spearman of skill with the known "
               "noise, every held-out sweep and seed", goal=">= 0.93")
    res.write()


if __name__ == "__main__":
    main()
