"""The audit under timing models it was not built on: the same simulated room with its think times rewritten.

Run: ``python benchmarks/eval_timing.py [--hands 3000] [--players 16] [--seeds 21 22] [--models ...] [--jobs 2]``
(from the checkout to measure; ``PYTHONPATH`` set to another checkout measures that one).

Another platform's logs need not time actions as this project's simulator does. Each model rewrites every hand's
``ms`` (the moves, deals and results stay), and the room is audited as a user would (``analyzer audit --jobs N``):

- ``as-simulated``: the simulator's own times (its colluders think longer when they collude: ``--slow yes``);
- ``constant``: every action one second after the last (a log whose times are placeholders);
- ``zero``: every ``ms`` 0; ``seconds``: times floored to whole seconds;
- ``hand-noise``: each action's think time times lognormal(0, 1) noise, independent;
- ``hand-lag``: each hand's think times times one lognormal(0, 0.7) factor (a hand slow as a whole);
- ``table-lag``: each sitting's (consecutive hands of one table with the same players) think times times one
  lognormal(0, 0.7) factor (a laggy table);
- ``drift``: each player's think times times exp(0.8 sin(2 pi i / 600 + phase)), i the hand's place in the room (a
  pace that drifts over a session);
- ``bots``: the first half of the players (p01..) act after a fixed 800 ms (bots among people).

Prints per model and seed: the honest pairs flagged and for review, the colluding pair's verdict and score, and the
largest think-time z of an honest pair (``think_ab_z``/``think_ba_z`` in pairs.csv).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

Model = Callable[[list[dict], np.random.Generator], None]


def _rewrite(recs: list[dict], think: Callable[[int, dict, np.ndarray], np.ndarray]) -> None:
    """Each hand's ``ms`` from its think times (differences) rewritten by ``think(i, rec, deltas)``."""
    for i, rec in enumerate(recs):
        ms = [a.get("ms") or 0 for a in rec["actions"]]
        deltas = np.diff([0, *ms]).astype(float)
        new = np.cumsum(np.maximum(think(i, rec, deltas), 0.0)).astype(np.int64)
        for a, x in zip(rec["actions"], new.tolist()):
            a["ms"] = int(x)


def _sittings(recs: list[dict]) -> list[int]:
    """Each hand's sitting: consecutive hands of one table with the same players."""
    last: dict[object, tuple] = {}
    ids: dict[tuple, int] = {}
    out = []
    for rec in recs:
        key = (rec.get("table_id"), tuple(sorted(rec["players"])))
        if last.get(rec.get("table_id")) != key:
            last[rec.get("table_id")] = key
            ids[key] = len(ids)
        out.append(ids[key])
    return out


def _seats(rec: dict) -> np.ndarray:
    return np.array([a["seat"] for a in rec["actions"]])


def models() -> dict[str, Model]:
    def same(recs: list[dict], rng: np.random.Generator) -> None:
        return None

    def constant(recs: list[dict], rng: np.random.Generator) -> None:
        _rewrite(recs, lambda i, r, d: np.full(len(d), 1000.0))

    def zero(recs: list[dict], rng: np.random.Generator) -> None:
        _rewrite(recs, lambda i, r, d: np.zeros(len(d)))

    def seconds(recs: list[dict], rng: np.random.Generator) -> None:
        for rec in recs:
            for a in rec["actions"]:
                a["ms"] = (a.get("ms") or 0) // 1000 * 1000

    def hand_noise(recs: list[dict], rng: np.random.Generator) -> None:
        _rewrite(recs, lambda i, r, d: d * rng.lognormal(0.0, 1.0, len(d)))

    def hand_lag(recs: list[dict], rng: np.random.Generator) -> None:
        _rewrite(recs, lambda i, r, d: d * rng.lognormal(0.0, 0.7))

    def table_lag(recs: list[dict], rng: np.random.Generator) -> None:
        sit = _sittings(recs)
        factor = rng.lognormal(0.0, 0.7, max(sit) + 1)
        _rewrite(recs, lambda i, r, d: d * factor[sit[i]])

    def drift(recs: list[dict], rng: np.random.Generator) -> None:
        names = sorted({p for r in recs for p in r["players"]})
        phase = dict(zip(names, rng.uniform(0.0, 2 * np.pi, len(names))))

        def pace(i: int, r: dict, d: np.ndarray) -> np.ndarray:
            ph = np.array([phase[r["players"][s]] for s in _seats(r)])
            return d * np.exp(0.8 * np.sin(2 * np.pi * i / 600 + ph))
        _rewrite(recs, pace)

    def bots(recs: list[dict], rng: np.random.Generator) -> None:
        names = sorted({p for r in recs for p in r["players"]})
        fixed = set(names[:len(names) // 2])
        _rewrite(recs, lambda i, r, d: np.where([r["players"][s] in fixed for s in _seats(r)], 800.0, d))

    return {"as-simulated": same, "constant": constant, "zero": zero, "seconds": seconds, "hand-noise": hand_noise,
            "hand-lag": hand_lag, "table-lag": table_lag, "drift": drift, "bots": bots}


def audit(log: Path, out: Path, jobs: int) -> pd.DataFrame:
    cmd = [sys.executable, "-c", "from analyzer.cli import main; main()", "audit", str(log), "--out", str(out),
           "--jobs", str(jobs)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({r.returncode}): {r.stderr[-2000:]}")
    return pd.read_csv(out / "pairs.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--players", type=int, default=16)
    ap.add_argument("--seeds", type=int, nargs="+", default=[21, 22])
    ap.add_argument("--models", nargs="+", default=list(models()))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    known = models()
    print(f"rooms: {args.hands} hands, {args.players} players, 1 colluding pair (share, slow) and 1 pair of friends; "
          f"seeds {args.seeds}; load {os.getloadavg()[0]:.1f}")
    print(f"{'model':<14}{'seed':>5}{'honest flagged':>16}{'honest review':>15}{'colluders':>11}{'score':>9}"
          f"{'max honest think z':>20}")
    with tempfile.TemporaryDirectory(prefix="eval-timing-") as tmp:
        for seed in args.seeds:
            base = Path(tmp) / f"room-{seed}.jsonl"
            truth = Path(tmp) / f"room-{seed}.truth.json"
            subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "simulate", "--hands",
                            str(args.hands), "--players", str(args.players), "--colluders", "1", "--friends", "1",
                            "--slow", "yes", "--seed", str(seed), "-o", str(base), "--truth", str(truth)],
                           check=True, capture_output=True)
            pair = tuple(sorted(json.loads(truth.read_text())["colluding_pairs"][0]["players"]))
            lines = base.read_bytes().splitlines()
            for name in args.models:
                recs = [orjson.loads(line) for line in lines]
                known[name](recs, np.random.default_rng(seed))
                log = Path(tmp) / f"{name}-{seed}.jsonl"
                log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
                pairs = audit(log, Path(tmp) / f"out-{name}-{seed}", args.jobs)
                is_pair = np.array([tuple(sorted(x)) == pair for x in pairs[["a", "b"]].to_numpy().tolist()])
                honest = pairs[~is_pair]
                mine = pairs[is_pair].iloc[0]
                think = honest[["think_ab_z", "think_ba_z"]].to_numpy(float)
                print(f"{name:<14}{seed:>5}{int((honest['verdict'] == 'flagged').sum()):>16}"
                      f"{int((honest['verdict'] == 'review').sum()):>15}{mine['verdict']:>11}{mine['score']:>9.1f}"
                      f"{np.nanmax(think) if think.size else float('nan'):>20.2f}")


if __name__ == "__main__":
    main()
