#!/usr/bin/env python3
"""Acceptance of burst's stratified re-read (``burst.BURST_STRATA``): the audit's pair verdicts with it off (``base``)
and on (``strat``), on the same decision rows of many rooms (docs/independent4.md, "A ring taking turns").

    nice -n 19 python benchmarks/eval_strat.py [--sets indep4,ring,indep3,own] [--sizes 1000] [--jobs 2]
                                               [--cache /tmp/strat] [--prepare-only] [--json OUT]
    python benchmarks/eval_strat.py --report OUT[,OUT2]   # the rooms and totals of earlier runs, together
    python benchmarks/eval_strat.py --null                # the seeded null of tests/test_burst_strat.py

Rooms (every one simulated with a fixed seed, its log's decision store written once with ``analyzer decisions``,
cached under --cache; a log or store of the same name already in --reuse is linked instead of recomputed):

- ``indep4``: every room of benchmarks/independent_sim4.py (c-signal7 aside) at seeds 41 and 47 (1,000 hands; at
  3,000 hands seeds 43 and 47), as benchmarks/eval_independent4.py draws them;
- ``ring``: c-ring3 at the other seeds of benchmarks/eval_ring.py (51, 53, 59, 61, 67, 71; at 3,000 hands 51);
- ``indep3``: every room of benchmarks/independent_sim3.py at seed 11 (3,000 hands: 31), as
  benchmarks/eval_independent3.py draws them;
- ``own``: the project's simulator, the room designs of benchmarks/eval_audit.py (its extra styles, one room of each
  style with weak friends, and the honest room of 40 players) at --sizes hands (the occasional rooms 1.5x).

Per room and variant the pair table is computed in this process (``stream.pair_signals`` + ``calibrate``:
the verdicts ``analyzer audit`` gives on those rows). Printed per room: each true pair's verdict, score and rank under
both variants, and every honest pair (two players who are neither colluders nor lone cheaters) flagged or marked for
review under either; then the totals (with the pairs of a cheater and an honest player marked) and the acceptance
rule (no honest pair marked under strat that base left clear, no true pair's verdict worse).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from analyzer.audit import burst  # noqa: E402
from analyzer.audit.calibrate import Alarm, calibrate, rank_pairs  # noqa: E402
from analyzer.audit.stream import pair_signals  # noqa: E402

SIM3 = os.path.join(HERE, "independent_sim3.py")
SIM4 = os.path.join(HERE, "independent_sim4.py")
ROOMS4 = ["h-friends", "h-hetero", "h-noisy", "c-ring3", "c-weak", "c-endgame", "c-tongguard", "c-partial",
          "c-protect", "c-oneway", "c-kamikaze", "c-ghost"]
SEEDS4 = {1000: (41, 47), 3000: (43, 47)}
RING_SEEDS = {1000: (51, 53, 59, 61, 67, 71), 3000: (51,)}
ROOMS3 = ["honest-mix", "honest-friends", "honest-noisy", "soft", "highmult", "rotating", "occasional", "feeder",
          "coverinfo", "noisy-pair", "lone"]
SEEDS3 = {1000: 11, 3000: 31}
VERDICTS = {"clear": 0, "review": 1, "flagged": 2}


def own_specs(hands: int) -> list[tuple[str, dict[str, Any]]]:
    """The project's simulator rooms of benchmarks/eval_audit.py (its designs and seeds) at ``hands`` hands."""
    sys.path.insert(0, HERE)
    from eval_audit import extra_room_specs, room_specs

    styles, honest = room_specs(hands, {})
    specs = extra_room_specs(hands) + [s for s in styles if s["slow"] == "no" and s["friend_skill"] == "novice"
                                       and "skill_mix" not in s] + [honest]
    out = []
    for s in specs:
        name = "own-" + "-".join(str(s[k]) for k in ("label", "style", "seed") if k in s)
        out.append((name, {k: v for k, v in s.items() if k != "label"}))
    return out


def rooms(sets: list[str], n: int) -> list[tuple[str, str, Any]]:
    """(name of the cached files, simulator, what it needs) for every room of ``sets`` at ``n`` hands."""
    out: list[tuple[str, str, Any]] = []
    for s in sets:
        if s == "indep4":
            out += [(f"{r}-{n}-s{seed}", "sim4", (r, n, seed)) for seed in SEEDS4.get(n, ()) for r in ROOMS4]
        elif s == "ring":
            out += [(f"c-ring3-{n}-s{seed}", "sim4", ("c-ring3", n, seed)) for seed in RING_SEEDS.get(n, ())]
        elif s == "indep3":
            out += [(f"i3-{r}-{n}-s{SEEDS3[n]}", "sim3", (r, n, SEEDS3[n])) for r in ROOMS3] if n in SEEDS3 else []
        elif s == "own":
            out += [(f"{name}-{n}", "own", spec) for name, spec in own_specs(n)]
        else:
            sys.exit(f"unknown set {s!r}")
    return out


def run(cmd: list[str]) -> None:
    r = subprocess.run(["nice", "-n", "19", sys.executable, *cmd], env=dict(os.environ, PYTHONPATH=ROOT),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")


def simulate_own(spec: dict[str, Any], log: str, truth: str) -> None:
    """One room of the project's simulator, written as ``analyzer simulate`` writes it."""
    from analyzer.logs import write_records
    from analyzer.simulate.room import simulate

    sim = simulate(**spec)
    write_records(log, sim.records)
    with open(truth, "w") as f:
        json.dump(sim.truth, f)


def prepare(room: tuple[str, str, Any], cache: str, reuse: list[str]) -> str:
    """The room's log, truth and decision store under ``cache`` (made once); returns their common stem."""
    name, kind, what = room
    base = os.path.join(cache, name)
    for ext in (".jsonl.gz", ".truth.json", ".store"):
        if os.path.exists(base + ext):
            continue
        # the ring and indep4 runs name their files as this script does (without the i3-/own- prefixes)
        for d in reuse:
            src = os.path.join(d, name + ext)
            if os.path.exists(src):
                os.symlink(src, base + ext)
                break
    if not os.path.exists(base + ".jsonl.gz"):
        if kind == "sim4":
            r, n, seed = what
            run([SIM4, "--room", r, "--hands", str(n), "--seed", str(seed), "--out", base + ".jsonl.gz"])
        elif kind == "sim3":
            r, n, seed = what
            run([SIM3, "--room", r, "--hands", str(n), "--seed", str(seed), "--out", base + ".jsonl.gz"])
        else:
            simulate_own(what, base + ".jsonl.gz", base + ".truth.json")
    if not os.path.exists(base + ".store"):
        run(["-m", "analyzer.cli", "decisions", base + ".jsonl.gz", "--out", base + ".store", "--jobs", "1"])
    return base


def cheaters(truth: dict[str, Any]) -> tuple[set[tuple[str, str]], set[str]]:
    """The true pairs (sorted) and every player who cheats (colluders and lone cheaters)."""
    pairs = {tuple(sorted(p["players"])) for p in truth.get("colluding_pairs", [])}
    bad = {q for p in pairs for q in p} | set(truth.get("colluders", [])) | set(truth.get("lone_cheaters", []))
    return pairs, bad  # type: ignore[return-value]


def pair_table(base: str, strata: bool) -> pd.DataFrame:
    """The audit's calibrated, ranked pair table of the room's decision store, with burst's re-read by strata on or
    off (``burst.BURST_STRATA``)."""
    df = pd.read_parquet(base + ".store")
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    was = burst.BURST_STRATA
    burst.BURST_STRATA = strata
    try:
        pairs = pair_signals(df, seating)
    finally:
        burst.BURST_STRATA = was
    c = rank_pairs(calibrate(pairs, Alarm()))
    c["rank"] = np.arange(1, len(c) + 1)
    return c.set_index(["a", "b"])


def evaluate(base: str) -> dict[str, Any]:
    """Both variants' verdicts of the room's true pairs and of its honest pairs marked under either."""
    truth = json.load(open(base + ".truth.json"))
    true, bad = cheaters(truth)
    t = {v: pair_table(base, v == "strat") for v in ("base", "strat")}
    b, s = t["base"], t["strat"]
    honest = [k for k in b.index if k[0] not in bad and k[1] not in bad]
    out: dict[str, Any] = {"room": os.path.basename(base), "pairs": len(b), "honest": len(honest), "true": [],
                           "marked": []}
    for k in sorted(true):
        if k not in b.index:
            out["true"].append({"pair": list(k), "absent": True})
            continue
        out["true"].append({"pair": list(k), "hands": int(b.loc[k, "hands_together"]),
                            **{f"{v}_{c}": (str(t[v].loc[k, c]) if c == "verdict" else float(t[v].loc[k, c]))
                               for v in t for c in ("verdict", "score", "rank")}})
    mixed = [k for k in b.index if k not in true and (k[0] in bad) != (k[1] in bad)]
    out["mixed"] = len(mixed)
    out["mixed_marked"] = {v: {w: int((t[v].loc[mixed, "verdict"] == w).sum()) for w in ("flagged", "review")}
                           for v in t}
    for k in honest:
        if b.loc[k, "verdict"] != "clear" or s.loc[k, "verdict"] != "clear":
            out["marked"].append({"pair": list(k), "hands": int(b.loc[k, "hands_together"]),
                                  **{f"{v}_{c}": (str(t[v].loc[k, c]) if c == "verdict" else float(t[v].loc[k, c]))
                                     for v in t for c in ("verdict", "score", "rank")}})
    out["honest_top"] = {v: float(t[v].loc[honest, "score"].max()) if honest else float("nan") for v in t}
    rise = (s.loc[honest, "score"] - b.loc[honest, "score"]).to_numpy(np.float64) if honest else np.zeros(0)
    out["honest_moved"] = int((np.abs(rise) > 1e-9).sum())
    out["honest_rise"] = float(rise.max(initial=0.0))
    out["changed"] = int((b["verdict"] != s.loc[b.index, "verdict"]).sum())
    out["score_moved"] = int((np.abs(b["score"] - s.loc[b.index, "score"]) > 1e-9).sum())
    return out


def show(r: dict[str, Any]) -> None:
    def v(d: dict[str, Any], var: str) -> str:
        return f"{d[var + '_verdict']} {d[var + '_score']:.1f} #{int(d[var + '_rank'])}"

    print(f"== {r['room']}: {r['pairs']} pairs ({r['honest']} honest), verdicts changed {r['changed']}, scores moved "
          f"{r['score_moved']}; honest top {r['honest_top']['base']:.2f} -> {r['honest_top']['strat']:.2f}")
    for d in r["true"]:
        if d.get("absent"):
            print(f"   true {'+'.join(d['pair'])}: never together")
            continue
        mark = "" if d["base_verdict"] == d["strat_verdict"] else ("  GAIN" if VERDICTS[d["strat_verdict"]] >
                                                                    VERDICTS[d["base_verdict"]] else "  LOSS")
        print(f"   true {'+'.join(d['pair'])} ({d['hands']}): {v(d, 'base')} -> {v(d, 'strat')}{mark}")
    for d in r["marked"]:
        new = d["base_verdict"] == "clear" and d["strat_verdict"] != "clear"
        print(f"   honest {'+'.join(d['pair'])} ({d['hands']}): {v(d, 'base')} -> {v(d, 'strat')}"
              + ("  NEW" if new else ""))


def group(name: str) -> str:
    if name.startswith("own-"):
        return "own (" + ("honest" if "share-7" in name else "colluding") + ")"
    if name.startswith("i3-"):
        return "indep3 (" + ("honest" if name.startswith("i3-honest") else "colluding") + ")"
    if name.startswith("c-ring3"):
        return "indep4 ring3"
    return "indep4 (" + ("honest" if name.startswith("h-") else "other colluding") + ")"


def totals(results: list[dict[str, Any]]) -> bool:
    rows: dict[tuple[str, str], dict[str, float]] = {}
    ok = True
    for r in results:
        n = r["room"].rsplit("-s", 1)[0].rsplit("-", 1)[-1] if not r["room"].startswith("own-") else \
            r["room"].rsplit("-", 1)[-1]
        key = (group(r["room"]), n)
        t = rows.setdefault(key, {"rooms": 0, "true": 0, "honest": 0, **{f"{v}_{c}": 0 for v in ("base", "strat")
                                                                          for c in ("flagged", "review", "hf", "hr")},
                                  "gain": 0, "loss": 0, "new": 0, "moved": 0})
        t["rooms"] += 1
        t["honest"] += r["honest"]
        t["moved"] += r["honest_moved"]
        t["mixed"] = t.get("mixed", 0) + r["mixed"]
        for v in ("base", "strat"):
            for w in ("flagged", "review"):
                t[f"{v}_m{w[0]}"] = t.get(f"{v}_m{w[0]}", 0) + r["mixed_marked"][v][w]
        t["rise"] = max(t.get("rise", 0.0), r["honest_rise"])
        for d in r["true"]:
            if d.get("absent"):
                continue
            t["true"] += 1
            for v in ("base", "strat"):
                if d[f"{v}_verdict"] != "clear":
                    t[f"{v}_{d[f'{v}_verdict']}"] += 1
            diff = VERDICTS[d["strat_verdict"]] - VERDICTS[d["base_verdict"]]
            t["gain"] += diff > 0
            t["loss"] += diff < 0
        for d in r["marked"]:
            for v in ("base", "strat"):
                if d[f"{v}_verdict"] != "clear":
                    t[f"{v}_h{d[f'{v}_verdict'][0]}"] += 1
            t["new"] += d["base_verdict"] == "clear" and d["strat_verdict"] != "clear"
    print("\nroom class (hands): rooms; true pairs flagged / review / clear, base -> strat (gains, losses); honest "
          "pairs flagged / review, base -> strat (newly marked); honest pairs whose score moved, the largest rise; "
          "pairs of a cheater and an honest player flagged / review, base -> strat")
    for (g, n), t in sorted(rows.items()):
        clear = {v: t["true"] - t[f"{v}_flagged"] - t[f"{v}_review"] for v in ("base", "strat")}
        print(f"  {g} ({n}): {t['rooms']}; {t['base_flagged']} / {t['base_review']} / {clear['base']} -> "
              f"{t['strat_flagged']} / {t['strat_review']} / {clear['strat']} of {t['true']} (+{t['gain']}, "
              f"-{t['loss']}); {t['base_hf']} / {t['base_hr']} -> {t['strat_hf']} / {t['strat_hr']} of {t['honest']} "
              f"({t['new']}); {t['moved']}, {t['rise']:+.2f}; {t['base_mf']} / {t['base_mr']} -> {t['strat_mf']} / "
              f"{t['strat_mr']} of {t['mixed']}")
        ok = ok and t["loss"] == 0 and t["new"] == 0
    print("\nacceptance (no honest pair newly marked, no true pair worse):", "PASS" if ok else "FAIL")
    return ok


def null_check() -> None:
    """The share of the null's 360 bystander pairs at p <= 0.05 / 0.01 by each look: before (``BURST_STRATA`` off),
    the audit's reading by strata, and the variant first tried (the count look the better reading too)."""
    from scipy import stats

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from audit_synth import bystander_null_room  # the tests' null (tests/test_burst_strat.py)

    audit = burst._better_reading

    def both_looks(apart: pd.Series, by_presence: pd.Series) -> pd.Series:
        out = audit(apart, by_presence)
        out["logp_count"] = min(0.0, float(min(apart["logp_count"], by_presence["logp_count"])) + float(np.log(2.0)))
        out["logp"] = min(0.0, min(out["logp_mean"], out["logp_count"]) + float(np.log(burst.BURST_LOOKS)))
        return out

    rooms_ = [bystander_null_room(seed) for seed in (1, 2)]
    was = burst.BURST_STRATA
    try:
        for name, strata, better in (("before", False, audit), ("by strata", True, audit),
                                     ("both looks", True, both_looks)):
            burst.BURST_STRATA, burst._better_reading = strata, better
            r = pd.concat([burst._burst(lk, 0.0) for lk in rooms_])
            r = r[r.index.get_level_values("other").str.startswith("b")]
            print(f"{name:10}: " + "; ".join(
                f"{col} " + " / ".join(f"{float((r[col] <= np.log(al)).mean()):.4f}" for al in (0.05, 0.01))
                for col in ("logp_mean", "logp_count", "logp")) + f" ({len(r)} pairs)")
    finally:
        burst.BURST_STRATA, burst._better_reading = was, audit
    n = 360
    print("binomial bounds (one-sided 0.001) at 0.05 / 0.01: "
          f"{stats.binom.isf(0.001, n, 0.05) / n:.4f} / {stats.binom.isf(0.001, n, 0.01) / n:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="indep4,ring,indep3,own")
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--cache", default="/tmp/strat")
    ap.add_argument("--reuse", default="/tmp/ring,/tmp/indep4",
                    help="folders whose logs / stores of the same name are linked instead of made again")
    ap.add_argument("--jobs", type=int, default=2, help="rooms prepared at once (each `decisions --jobs 1`)")
    ap.add_argument("--only", help="only rooms whose name holds one of these (comma-separated), e.g. c-ring3")
    ap.add_argument("--prepare-only", action="store_true")
    ap.add_argument("--json", help="write the per-room results here")
    ap.add_argument("--report", help="print the rooms and totals of earlier --json files (comma-separated) and stop")
    ap.add_argument("--null", action="store_true", help="the seeded null of tests/test_burst_strat.py, by variant")
    a = ap.parse_args()
    if a.null:
        null_check()
        return
    if a.report:
        results = [r for f in a.report.split(",") for r in json.load(open(f))]
        for r in results:
            show(r)
        totals(results)
        return
    os.makedirs(a.cache, exist_ok=True)
    reuse = [d for d in a.reuse.split(",") if d]
    todo = [r for n in a.sizes.split(",") for r in rooms(a.sets.split(","), int(n))
            if not a.only or any(k in r[0] for k in a.only.split(","))]
    t0 = time.time()
    results = []
    with ThreadPoolExecutor(a.jobs) as ex:
        for base in ex.map(lambda r: prepare(r, a.cache, reuse), todo):
            if a.prepare_only:
                print(f"ready {base} ({time.time() - t0:.0f} s)", flush=True)
                continue
            r = evaluate(base)
            show(r)
            results.append(r)
            sys.stdout.flush()
    if a.prepare_only:
        return
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    totals(results)
    print(f"({len(results)} rooms, {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
