"""The one harness every evaluation uses: simulate (cached by arguments), validate, audit, and tabulate.

- :func:`simulate` writes a :class:`Room` through its simulator (benchmarks.simulators) into the cache, once: the
  same arguments give the same bytes, so a cached room is the room.
- :func:`validate` runs ``analyzer validate --format json`` and refuses a room with any problem.
- :func:`audit` runs the commands as a user does: ``analyzer decisions`` once into a decision store (cached, keyed by
  the analysis' defaults and the value model's bytes), then ``analyzer audit LOG --decisions STORE`` (never cached:
  the audit is what is measured); its audit.json, pairs.csv and players.csv come back as an :class:`Audited`.
  :func:`rows` gives the store's decision rows and the seating for in-process work with the library.
- :func:`pair_rows` joins an audit's pairs with the truth (colluding, honest, with a cheater, friends), and
  :func:`tabulate` reads them by any grouping: AUC of the score (colluding pairs against the same rooms' honest
  pairs), colluding pairs flagged and marked (flagged or for review), honest pairs flagged and for review, the review
  tier's false-discovery share, the honest pairs' p-value shares at 0.01, 0.05 and 0.5, and honest players the
  player table flags. :func:`skill_spearman` is the skill read-out's Spearman with the known noise.

Commands run with this checkout's code (``PYTHONPATH`` at the repository's root) in processes of their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.simulators import SIMULATORS, Truth, pair

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "bieqi-bench"))


@dataclass(frozen=True)
class Room:
    """One simulated room: which simulator and style, how many hands, the seed, and the simulator's own options."""

    simulator: str
    style: str
    hands: int
    seed: int
    players: int | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        more = (f"-p{self.players}" if self.players else "") + (
            "-" + hashlib.sha256(json.dumps(self.options).encode()).hexdigest()[:8] if self.options else "")
        return f"{self.style}-{self.hands}h-s{self.seed}{more}"

    @property
    def label(self) -> str:
        return f"{self.simulator}/{self.name}"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def analyzer(*args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    """``analyzer ARGS`` with this checkout's code, in a process of its own; exit codes outside ``ok`` raise."""
    r = subprocess.run([sys.executable, "-m", "analyzer.cli", *args], cwd=ROOT, env=_env(), capture_output=True,
                       text=True)
    if r.returncode not in ok:
        raise RuntimeError(f"analyzer {' '.join(args)}: exit {r.returncode}\n{r.stderr[-3000:]}")
    return r


# ---- simulate and validate ----------------------------------------------------------------------------------------

def room_base(room: Room, cache: Path = CACHE) -> Path:
    return cache / "rooms" / room.simulator / room.name


def simulate(room: Room, cache: Path = CACHE) -> tuple[Path, Truth]:
    """The room's log and truth, written once into the cache (a room is whole once its ``.room.json`` is)."""
    sim = SIMULATORS[room.simulator]
    base = room_base(room, cache)
    log = base.with_name(base.name + sim.suffix)
    done = base.with_name(base.name + ".room.json")
    if done.exists():
        return log, Truth.from_json(json.loads(done.read_text(encoding="utf-8"))["truth"])
    truth = sim.generate(room.style, room.hands, room.seed, log, room.players, dict(room.options))
    tmp = done.with_suffix(".tmp")
    tmp.write_text(json.dumps({"room": asdict(room), "truth": truth.to_json()}, indent=1), encoding="utf-8")
    os.replace(tmp, done)
    return log, truth


def validate(log: Path) -> dict[str, Any]:
    """``analyzer validate --format json`` of the log; a room with any problem is refused (ValueError)."""
    v = json.loads(analyzer("validate", "--format", "json", str(log), ok=(0, 1)).stdout)
    if v["n_problems"]:
        raise ValueError(f"{log}: {v['n_problems']} problems {v['problem_counts']}")
    return v


# ---- decisions and audit ------------------------------------------------------------------------------------------

def analysis_key() -> str:
    """What the decision rows depend on besides the log: the analysis' defaults and the value model's bytes."""
    from analyzer.analysis import decisions as d

    model = hashlib.sha256((ROOT / "analyzer" / "data" / "value_model.npz").read_bytes()).hexdigest()[:10]
    return f"s{d.DEFAULT_SAMPLES}-{d.DEFAULT_MAX_SAMPLES}-dd{d.DEFAULT_DD_SAMPLES}-{d.AUDIT_POLICY}-vm{model}"


def store(room: Room, cache: Path = CACHE, jobs: int = 1) -> Path:
    """The room's decision store at the commands' defaults (``analyzer decisions``, written once)."""
    log, _ = simulate(room, cache)
    path = room_base(room, cache).with_name(f"{room.name}.store-{analysis_key()}")
    if not path.exists():
        validate(log)
        tmp = path.with_name(path.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        analyzer("decisions", str(log), "--out", str(tmp), "--jobs", str(jobs))
        os.replace(tmp, path)
    return path


@dataclass
class Audited:
    """One room's audit: its audit.json, pairs.csv and players.csv (as frames) and the audit's wall seconds."""

    room: Room
    truth: Truth
    audit: dict[str, Any]
    pairs: pd.DataFrame
    players: pd.DataFrame
    seconds: float


def audit(room: Room, cache: Path = CACHE, jobs: int = 1, args: tuple[str, ...] = ()) -> Audited:
    """``analyzer audit LOG --decisions STORE --out DIR --jobs J [ARGS]`` of the room (the store written first)."""
    log, truth = simulate(room, cache)
    st = store(room, cache, jobs)
    with tempfile.TemporaryDirectory(prefix="audit-", dir=cache) as out:
        t0 = time.monotonic()
        analyzer("audit", str(log), "--decisions", str(st), "--out", out, "--jobs", str(jobs), *args, ok=(0, 1))
        secs = time.monotonic() - t0
        a = json.loads((Path(out) / "audit.json").read_text(encoding="utf-8"))
        pairs = pd.read_csv(Path(out) / "pairs.csv", dtype={"a": str, "b": str})
        players = pd.read_csv(Path(out) / "players.csv", dtype={"player": str, "partner": str})
    return Audited(room, truth, a, pairs, players, secs)


def audit_log(log: Path, truth: Truth, room: Room, jobs: int = 1, args: tuple[str, ...] = ()) -> Audited:
    """``analyzer audit`` of any log (one the caller changed, e.g. its think times rewritten), no store."""
    with tempfile.TemporaryDirectory(prefix="audit-") as out:
        t0 = time.monotonic()
        analyzer("audit", str(log), "--out", out, "--jobs", str(jobs), *args, ok=(0, 1))
        secs = time.monotonic() - t0
        a = json.loads((Path(out) / "audit.json").read_text(encoding="utf-8"))
        pairs = pd.read_csv(Path(out) / "pairs.csv", dtype={"a": str, "b": str})
        players = pd.read_csv(Path(out) / "players.csv", dtype={"player": str, "partner": str})
    return Audited(room, truth, a, pairs, players, secs)


def _audit_job(job: tuple[Room, Path, int, tuple[str, ...]]) -> Audited:
    return audit(*job)


def audit_all(rooms: Iterable[Room], cache: Path = CACHE, workers: int = 1, jobs: int = 1,
              args: tuple[str, ...] = (), progress: bool = True) -> list[Audited]:
    """Every room audited (``workers`` rooms at a time, each audit with ``--jobs jobs``), in the rooms' order."""
    rooms = list(rooms)
    jobs_ = [(r, cache, jobs, args) for r in rooms]
    out: list[Audited] = []
    if workers <= 1:
        for j in jobs_:
            out.append(_audit_job(j))
            if progress:
                _said(out[-1], len(out), len(rooms))
        return out
    with ProcessPoolExecutor(workers) as ex:
        for a in ex.map(_audit_job, jobs_):
            out.append(a)
            if progress:
                _said(a, len(out), len(rooms))
    return out


def _said(a: Audited, i: int, n: int) -> None:
    rows = pair_rows(a)
    col = rows[rows["kind"] == "colluding"]
    hon = rows[rows["kind"] == "honest"]
    print(f"[{i}/{n}] {a.room.label}: {len(rows)} pairs, colluding {int((col['verdict'] == 'flagged').sum())} flagged "
          f"/ {int((col['verdict'] != 'clear').sum())} marked of {len(col)}; honest "
          f"{int((hon['verdict'] == 'flagged').sum())} flagged / {int((hon['verdict'] == 'review').sum())} review of "
          f"{len(hon)} ({a.seconds:.0f} s)", file=sys.stderr, flush=True)


def rows(room: Room, cache: Path = CACHE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The room's decision rows (from its store) and its seating (hand_id, hand_seq, p0..p3), for the library."""
    from analyzer.analysis.store import open_store, read_rows

    log, _ = simulate(room, cache)
    df = read_rows(open_store(store(room, cache)))
    seating = seating_of(log)
    return df, seating


def seating_of(log: Path) -> pd.DataFrame:
    """Who sat where in each hand of the log, in the log's order."""
    import gzip

    opener = gzip.open if log.name.endswith(".gz") else open
    out = []
    with opener(log, "rb") as f:
        for k, line in enumerate(f):
            rec = json.loads(line)
            out.append((rec["hand_id"], k, *rec["players"]))
    return pd.DataFrame(out, columns=["hand_id", "hand_seq", "p0", "p1", "p2", "p3"])


# ---- tabulate -----------------------------------------------------------------------------------------------------

def pair_rows(a: Audited) -> pd.DataFrame:
    """One row per audited pair with the truth beside it: ``kind`` (colluding / honest / with-cheater / cheaters),
    the collusion ``how`` (its style in the simulator), ``friend``, and the audit's score, verdict, p and q."""
    t = a.truth
    p = a.pairs
    coll = t.colluding_pairs
    friends = set(t.friends)
    keys = [pair(x, y) for x, y in zip(p["a"], p["b"])]
    return pd.DataFrame({
        "simulator": a.room.simulator, "style": a.room.style, "room": a.room.label, "hands": a.room.hands,
        "a": [k[0] for k in keys], "b": [k[1] for k in keys],
        "kind": [t.kind_of(*k) for k in keys], "how": [coll.get(k, "") for k in keys],
        "friend": [k in friends for k in keys], "hands_together": p["hands_together"].to_numpy(),
        "score": p["score"].to_numpy(float), "verdict": p["verdict"].astype(str).to_numpy(),
        "p_value": p["p_value"].to_numpy(float), "q_value": p["q_value"].to_numpy(float),
        "main_signal": p["main_signal"].astype(str).to_numpy()})


def player_rows(a: Audited) -> pd.DataFrame:
    """The audit's player table with each player's truth: role, bot and noise parameters."""
    t = a.truth
    pl = a.players.copy()
    cheaters = t.cheaters
    pl["simulator"], pl["style"], pl["room"] = a.room.simulator, a.room.style, a.room.label
    pl["cheater"] = pl["player"].isin(cheaters)
    pl["bot"] = [t.bots.get(p, "") for p in pl["player"]]
    for name in sorted({k for v in t.noise.values() for k in v}):
        pl[f"noise_{name}"] = pl["player"].map(lambda x, n=name: t.noise.get(x, {}).get(n, np.nan))
    return pl


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(a colluding pair's score > an honest pair's), ties counting half (NaN without both)."""
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    from scipy.stats import rankdata

    r = rankdata(np.r_[pos, neg])
    return float((r[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def tabulate(pairs: pd.DataFrame, players: pd.DataFrame | None = None, by: tuple[str, ...] = ("simulator", "style")
             ) -> pd.DataFrame:
    """The detection table: one row per group of ``by``.

    colluding / honest: pairs of each kind; AUC: colluding pairs' scores against the honest pairs of the same rooms;
    flagged / marked: colluding pairs flagged / flagged or for review; honest flagged / review; review FDR: honest
    pairs among the pairs for review (0 when none is); p<=0.01 / 0.05 / 0.5: shares of honest pairs' p-values;
    with-cheater marked: pairs of a cheater and an honest player flagged or for review; players flagged: honest
    players the player table flags (with ``players``)."""
    out = []
    pl_groups = {(k if isinstance(k, tuple) else (k,)): g for k, g in players.groupby(list(by), sort=False)} \
        if players is not None else {}
    for key, g in pairs.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        col, hon = g[g["kind"] == "colluding"], g[g["kind"] == "honest"]
        mix = g[g["kind"] == "with-cheater"]
        # AUC within each room, pooled: colluding pairs against their own rooms' honest pairs
        pos_rooms = [(c["score"].to_numpy(), hon[hon["room"] == r]["score"].to_numpy()) for r, c in col.groupby("room")]
        n_pairs = sum(len(p) * len(n) for p, n in pos_rooms)
        a = (sum(auc(p, n) * len(p) * len(n) for p, n in pos_rooms if len(n)) / n_pairs) if n_pairs else float("nan")
        review = g[g["verdict"] == "review"]
        row = dict(zip(by, key))
        row.update({
            "rooms": g["room"].nunique(), "colluding": len(col), "honest": len(hon), "auc": a,
            "flagged": int((col["verdict"] == "flagged").sum()), "marked": int((col["verdict"] != "clear").sum()),
            "honest_flagged": int((hon["verdict"] == "flagged").sum()),
            "honest_review": int((hon["verdict"] == "review").sum()),
            "review_fdr": float((review["kind"] == "honest").mean()) if len(review) else 0.0,
            "p_le_0.01": float((hon["p_value"] <= 0.01).mean()) if len(hon) else float("nan"),
            "p_le_0.05": float((hon["p_value"] <= 0.05).mean()) if len(hon) else float("nan"),
            "p_le_0.5": float((hon["p_value"] <= 0.5).mean()) if len(hon) else float("nan"),
            "with_cheater_marked": int((mix["verdict"] != "clear").sum()),
            "friends_marked": int((hon["friend"] & (hon["verdict"] != "clear")).sum()),
            "top_honest_score": float(hon["score"].max()) if len(hon) else float("nan")})
        if players is not None:
            pg = pl_groups.get(key, players.iloc[:0])
            honest_pl = pg[~pg["cheater"]]
            row["players_flagged"] = int(honest_pl["flag"].astype(str).eq("True").sum())
            row["honest_players"] = len(honest_pl)
        out.append(row)
    return pd.DataFrame(out)


def skill_spearman(players: pd.DataFrame, noise: str) -> float:
    """Spearman between the player table's ``skill`` and the known noise parameter (sign turned: 1 = the noisier a
    player, the lower their skill, in perfect order)."""
    from scipy.stats import spearmanr

    col = f"noise_{noise}"
    d = players[["skill", col]].dropna()
    if len(d) < 3:
        return float("nan")
    return -float(spearmanr(d[col], d["skill"]).statistic)


def frame_rows(df: pd.DataFrame, columns: list[str]) -> list[list[Any]]:
    """A frame's columns as plain rows for a results table."""
    return [[None if (isinstance(x, float) and x != x) else (x.item() if hasattr(x, "item") else x) for x in r]
            for r in df[columns].itertuples(index=False)]
