"""The audit and the player table on rooms of a second independent simulator (benchmarks/independent_sim2.py: rule
players with fixed quirks, improvers and tired players, honest blockers, a determinized search bot; collusion that
helps only a partner who is behind, self-sacrifice, one-way information from a spotter, cheating in the last third,
two colluding pairs at one table, a signal through the covered card, a lone cheater who sees every hand).

    python benchmarks/eval_independent2.py                          # every room, seed 11 (~10 min on 2 cores)
    python benchmarks/eval_independent2.py --rooms coll_oneway:11 honest_highcover:12 --hands 1000

Per room: each true pair's verdict, score and rank; the honest pairs flagged or for review; the players the player
table flags (``analyzer players``), each said honest or cheating (a cheater: a lone cheater of the truth file, or a
colluder). Rooms are written once into ``--cache``; the commands run with the code of this checkout.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from eval_independent import honest_marked  # benchmarks/ is the script's folder: on the path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("honest_search_twins:11", "honest_mirror:11", "honest_clones:11", "blockers:11", "honest_highcover:12",
         "coll_behind:11", "coll_signal:11", "coll_sacrifice:11", "coll_oneway:11", "coll_late:11",
         "coll_twopairs:11", "omniscient:11")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def room(spec: str, hands: int, cache: Path) -> tuple[Path, dict]:
    name, seed = spec.split(":")
    log = cache / f"{name}_s{seed}_{hands}.jsonl"
    if not log.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "independent_sim2.py"), "--room", name, "--seed",
                        seed, "--hands", str(hands), "--out", str(log)], check=True, stdout=subprocess.DEVNULL)
    return log, json.loads(log.with_suffix(".truth.json").read_text())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", *args], cwd=ROOT, env=_env(),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"analyzer {' '.join(args)} failed: {r.stderr[-2000:]}")
    return r


def summary(name: str, truth: dict, audit: dict, players: list[dict]) -> None:
    pairs = audit["pairs"]
    key = {tuple(sorted(p["players"])): (i + 1, p) for i, p in enumerate(pairs)}
    true = {tuple(sorted(c["pair"])) for c in truth["colluders"]}
    friends = {tuple(sorted((x, y))) for f in truth["friends"] for i, x in enumerate(f["group"])
               for y in f["group"][i + 1:]}
    cheaters = {x for k in true for x in k} | {c["player"] for c in truth.get("cheaters", [])}
    shown = []
    for k in sorted(true):
        if k in key:
            rank, p = key[k]
            shown.append(f"{'+'.join(k)} {p['verdict']} {p['score']:.1f} rank {rank} ({p['main_signal']}, "
                         f"{p['hands_together']} h)")
        else:
            shown.append(f"{'+'.join(k)} not audited")
    flagged, review = honest_marked(pairs, true, friends)
    top = max((p["score"] for p in pairs if tuple(sorted(p["players"])) not in true), default=0.0)
    marked = [r for r in players if r["flag"] == "True"]
    lone = [c["player"] for c in truth.get("cheaters", [])]
    print(f"{name}: {audit['hands']} hands, {len(pairs)} pairs")
    print(f"  true pairs: {'; '.join(shown) or 'none'}")
    print(f"  honest pairs flagged: {len(flagged)}{': ' + '; '.join(flagged) if flagged else ''}; review: "
          f"{len(review)}{': ' + '; '.join(review) if review else ''}; top honest score {top:.2f}")
    named = ", ".join(r["player"] + (" (cheater)" if r["player"] in cheaters else " (HONEST)") for r in marked)
    honest_q = [(float(r["signal_q"]), r["player"]) for r in players
                if r["player"] not in cheaters and r["signal_q"] not in ("", "nan")]
    least = min(honest_q, default=None)
    print(f"  players flagged: {named or 'none'}; smallest honest player q "
          f"{f'{least[0]:.3g} ({least[1]})' if least else 'none'}"
          + "".join(f"; lone cheater {c}: q {next((r['signal_q'] for r in players if r['player'] == c), 'absent')}"
                    for c in lone), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rooms", nargs="+", default=list(ROOMS), help="NAME:SEED of independent_sim2's rooms")
    ap.add_argument("--hands", type=int, default=2400)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "eval_independent2")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    for spec in args.rooms:
        log, truth = room(spec, args.hands, args.cache)
        with tempfile.TemporaryDirectory() as out:
            _cli("audit", str(log), "--out", out, "--jobs", str(args.jobs))
            audit = json.loads((Path(out) / "audit.json").read_text())
            players = list(csv.DictReader(io.StringIO(Path(out, "players.csv").read_text())))
        summary(log.stem, truth, audit, players)


if __name__ == "__main__":
    main()
