"""Detection on every simulator's rooms: the audit (and its player table) on each simulator x style x seed.

    python -m benchmarks.eval_simulators                                  # every style of the detection simulators
    python -m benchmarks.eval_simulators --simulators quirky_rules --styles coll_oneway,honest_mirror --hands 1000
    python -m benchmarks.eval_simulators --simulators heuristic_lookahead --styles honest_chatty --option runs=5-10

Each room is simulated once into the harness' cache, validated (no problem allowed), its decisions analysed once
(``analyzer decisions``) and audited (``analyzer audit --decisions``) with this checkout's code. Per simulator x
style: colluding pairs flagged and marked (flagged or for review), the AUC of the pair score (colluding pairs against
the same rooms' honest pairs), honest pairs flagged and for review, the review tier's false-discovery share, friend
pairs marked and the top honest score, pairs of a cheater and an honest player marked, and honest players the player
table flags; then the same by simulator, and the honest pairs' p-value shares (the pair score's null calibration).
Writes benchmarks/results/<--name>.json.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from benchmarks import harness as h
from benchmarks.results import Results, command_line
from benchmarks.simulators import COLLUSION, HONEST, LONE, rooms

#: The simulators whose rooms test detection (analyzer_noise's honest rooms are for the skill read-out; fixed_policy's
#: honest rooms of simple bots test false alarms).
DETECTION = ("heuristic_lookahead", "quirky_rules", "planner_sampler", "thumb_epsilon", "boltzmann_families", "fixed_policy",
             "analyzer")

STYLE_COLUMNS = ["simulator", "style", "rooms", "colluding", "flagged", "marked", "auc", "honest", "honest_flagged",
                 "honest_review", "review_fdr", "friends_marked", "top_honest_score", "with_cheater_marked",
                 "players_flagged"]
SIM_COLUMNS = ["simulator", "rooms", "colluding", "flagged", "marked", "auc", "honest", "honest_flagged",
               "honest_review", "review_fdr", "players_flagged", "honest_players"]
P_COLUMNS = ["simulator", "honest", "p_le_0.01", "p_le_0.05", "p_le_0.5"]


def plan(simulators: tuple[str, ...], styles: tuple[str, ...] | None, kinds: tuple[str, ...], hands: int,
         seeds: tuple[int, ...], options: tuple[tuple[str, str], ...]) -> list[h.Room]:
    """The rooms: every simulator x style (of these kinds, or named) x seed at ``hands``."""
    return [h.Room(sim.name, style.name, hands, seed, options=options)
            for sim, style in rooms(kinds, simulators) if styles is None or style.name in styles
            for seed in seeds]


def evaluate(res: Results, todo: list[h.Room], workers: int = 1, calibration: bool = True) -> None:
    """Audit the rooms (cached) and add the detection tables and totals and the honest pairs' p shares to ``res``."""
    t0 = time.monotonic()
    audited = h.audit_all(todo, workers=workers)
    res.parameters["rooms"] = len(todo)
    res.parameters["wall_minutes"] = round((time.monotonic() - t0) / 60, 1)
    pairs = pd.concat([h.pair_rows(x) for x in audited], ignore_index=True)
    players = pd.concat([h.player_rows(x) for x in audited], ignore_index=True)
    by_style = h.tabulate(pairs, players, by=("simulator", "style"))
    res.table("by_style", "By simulator and style", STYLE_COLUMNS, h.frame_rows(by_style, STYLE_COLUMNS),
              page=False)
    by_sim = h.tabulate(pairs, players, by=("simulator",))
    res.table("by_simulator", "By simulator", SIM_COLUMNS, h.frame_rows(by_sim, SIM_COLUMNS))
    col, hon = pairs[pairs["kind"] == "colluding"], pairs[pairs["kind"] == "honest"]
    res.figure("colluding_flagged", int((col["verdict"] == "flagged").sum()), f"of {len(col)}",
               "colluding pairs flagged, every simulator")
    res.figure("colluding_marked", int((col["verdict"] != "clear").sum()), f"of {len(col)}",
               "colluding pairs flagged or for review, every simulator")
    res.figure("honest_flagged", int((hon["verdict"] == "flagged").sum()), f"of {len(hon)}",
               "honest pairs flagged, every simulator")
    res.figure("honest_review", int((hon["verdict"] == "review").sum()), f"of {len(hon)}",
               "honest pairs for review, every simulator")
    honest_pl = players[~players["cheater"]]
    res.figure("players_flagged", int(honest_pl["flag"].astype(str).eq("True").sum()), f"of {len(honest_pl)}",
               "honest players the player table flags, every simulator")
    lone_ids = {(x.room.label, p) for x in audited for p in x.truth.lone}
    lone = players[[(r, p) in lone_ids for r, p in zip(players["room"], players["player"])]]
    if len(lone):
        res.figure("lone_flagged", int(lone["flag"].astype(str).eq("True").sum()), f"of {len(lone)}",
                   "lone cheaters (no partner) the player table flags")
    calib = h.tabulate(hon.assign(all="every simulator"), by=("all",)).rename(columns={"all": "simulator"})
    calib = pd.concat([h.tabulate(pairs, by=("simulator",)), calib])
    res.table("calibration", "Honest pairs' p-values: shares at or below 0.01, 0.05 and 0.5", P_COLUMNS,
              h.frame_rows(calib, P_COLUMNS),
              about="A calibrated pair score gives shares near 0.01, 0.05 and 0.5 on honest pairs.")
    if calibration:  # the page's calibration section shows it
        res.tables[-1]["section"] = "calibration"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simulators", default=",".join(DETECTION), help="comma-separated registry names")
    ap.add_argument("--styles", help="comma-separated style names (default: every style of --kinds)")
    ap.add_argument("--kinds", default=f"{HONEST},{COLLUSION},{LONE}")
    ap.add_argument("--hands", type=int, default=1000)
    ap.add_argument("--seeds", default="1", help="comma-separated seeds")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="a simulator option for every room (e.g. runs=5-10)")
    ap.add_argument("--workers", type=int, default=1, help="rooms audited at a time")
    ap.add_argument("--name", default="detection_simulators", help="the results file: benchmarks/results/NAME.json")
    a = ap.parse_args(argv)
    sims = tuple(a.simulators.split(","))
    styles = tuple(a.styles.split(",")) if a.styles else None
    seeds = tuple(int(s) for s in a.seeds.split(","))
    options = tuple(tuple(o.split("=", 1)) for o in a.option)
    res = Results(a.name, "Detection on every simulator's rooms", "detection",
                  command_line("benchmarks.eval_simulators", argv),
                  parameters={"simulators": list(sims), "styles": list(styles) if styles else "all",
                              "kinds": a.kinds.split(","), "hands": a.hands, "seeds": list(seeds),
                              "options": dict(options)},  # type: ignore[arg-type]
                  about="The audit on each simulator x style: the five independent simulators (written from the "
                        "rules without reading the analyzer) and the analyzer's own. A colluding pair is marked "
                        "when flagged or for review; AUC is the pair score's, colluding pairs against their own "
                        "rooms' honest pairs.")
    todo = plan(sims, styles, tuple(a.kinds.split(",")), a.hands, seeds, options)  # type: ignore[arg-type]
    evaluate(res, todo, a.workers)
    res.note("The pair score's combination weights (analyzer/data/combine.json) were fitted on rooms of these same "
             "simulators, so these rows are not held out: the held-out figures are in the Held-out simulators section.")
    res.write()


if __name__ == "__main__":
    main()
