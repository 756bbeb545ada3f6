"""The audit on rooms of an independent simulator (benchmarks/independent_sim.py: other bots, room shapes, think
times and collusion styles than the project's simulator): per room, the true pairs' verdict, score and rank, and
the honest pairs flagged or marked for review (which signal, friends marked).

    python benchmarks/eval_independent.py                      # the default rooms below (~10 min on 2 cores)
    python benchmarks/eval_independent.py --rooms share:1 cover_only:1:5-50 honest_chatty:2:5-10

A room is STYLE:SEED[:RUNS] (RUNS: hands a table sits before it re-forms, e.g. 5-10; the simulator's default 5-50).
Rooms (2,400 hands, 20 players) are written once into ``--cache``; the audits run with the code of this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Honest friends who chat (1.4x slower together) at tables re-formed every 5-10 hands: flagged on think time alone
#: before METHOD_VERSION 15; colluders who share hands; who cheat only in their covers (the weakest style found);
#: honest friends and habits at the simulator's usual tables.
DEFAULT_ROOMS = ("honest_chatty:1:5-10", "honest_chatty:2:5-10", "share:1", "cover_only:1", "honest_friends:1")


def room(spec: str, cache: Path) -> tuple[Path, dict]:
    style, seed, *runs = spec.split(":")
    name = f"{style}_s{seed}" + (f"_r{runs[0]}" if runs else "")
    log = cache / f"{name}.jsonl"
    if not log.exists():
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(ROOT / "benchmarks" / "independent_sim.py"), "--style", style, "--seed", seed,
               "--out", str(log), *(["--runs", runs[0]] if runs else [])]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return log, json.loads(log.with_suffix(".truth.json").read_text())


def audit(log: Path, jobs: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        r = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "audit", str(log), "--out",
                            out, "--jobs", str(jobs)], cwd=ROOT, env=env, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            raise SystemExit(f"audit of {log} failed: {r.stderr[-2000:]}")
        return json.loads((Path(out) / "audit.json").read_text())


def honest_marked(pairs: list[dict], true: set[tuple[str, ...]], friends: set[tuple[str, ...]]
                  ) -> tuple[list[str], list[str]]:
    """The honest pairs (not in ``true``) flagged and those for review, each said as names (friends marked), score and
    main signal."""
    honest = [p for p in pairs if tuple(sorted(p["players"])) not in true]

    def said(p: dict) -> str:
        return (f"{'+'.join(p['players'])}{' (friends)' if tuple(sorted(p['players'])) in friends else ''} "
                f"{p['score']:.1f} {p['main_signal']}")

    return ([said(p) for p in honest if p["verdict"] == "flagged"],
            [said(p) for p in honest if p["verdict"] == "review"])


def summary(name: str, truth: dict, a: dict) -> None:
    pairs = a["pairs"]
    rank = {tuple(sorted(p["players"])): i + 1 for i, p in enumerate(pairs)}
    by = {tuple(sorted(p["players"])): p for p in pairs}
    true = set()
    for c in truth["colluders"]:
        m = c["players"]
        true |= {tuple(sorted((x, y))) for i, x in enumerate(m) for y in m[i + 1:]}
    friends = {tuple(sorted(f["players"])) for f in truth["friends"]}
    shown = []
    for k in sorted(true):
        p = by.get(k)
        shown.append(f"{'+'.join(k)} {p['verdict']} {p['score']:.1f} rank {rank[k]} ({p['main_signal']}, "
                     f"{p['hands_together']} h)" if p else f"{'+'.join(k)} not audited")
    flagged, review = honest_marked(pairs, true, friends)
    print(f"{name}: {a['hands']} hands, {len(pairs)} pairs")
    print(f"  true pairs: {'; '.join(shown) or 'none (honest room)'}")
    print(f"  honest flagged: {len(flagged)}{': ' + '; '.join(flagged) if flagged else ''}")
    print(f"  honest review: {len(review)}{': ' + '; '.join(review) if review else ''}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rooms", nargs="+", default=list(DEFAULT_ROOMS))
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "eval_independent")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    for spec in args.rooms:
        log, truth = room(spec, args.cache)
        summary(log.stem, truth, audit(log, args.jobs))


if __name__ == "__main__":
    main()
