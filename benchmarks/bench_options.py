"""The decision rows' options column: a JSON text a row against the typed Arrow column, write and read CPU and size.

Run: ``python -m benchmarks.bench_options [--hands 2000] [--players 16] [--seed 3] [--rounds 7] [--json-from REV]``
(writes results/options_column.json).

One simulated room (the analyzer's simulator, ``--players`` players, ``--seed``) is analysed once at the default
settings; its rows' options are then written and read both ways, ``--rounds`` times each, in turn (the order
turned every round), and the median CPU time of this process is reported:

- **write**: the options of every row made from the analysis' flat arrays (what ``decisions._frame`` does a
  batch): the JSON texts by the compiled writer the JSON column had, or the typed column;
- **arrays**: the rows' options, in memory, read into the flat numpy arrays the pair signals, the player table and
  burst read (``option_arrays`` with the three losses): the compiled JSON reader, or the typed column's buffers;
- **read**: the same from a Parquet file of the options column alone (decoding the column, then the arrays: what
  reading a store's part costs the options);
- **size**: the Parquet file of the options column alone and of the whole rows, each way.

The JSON column's writer and reader are those of revision ``--json-from`` (the last that had them, by default),
loaded from git into a temporary folder: the package no longer holds them.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analyzer.analysis.decisions import analyse
from analyzer.analysis.options import LOSS_KEYS, frame_table, option_arrays, options_column, table_frame
from analyzer.cards import parse_card
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from benchmarks.results import ROOT, Results, command_line

#: The last revision whose rows held the options as JSON texts (its writer and reader are measured).
JSON_REVISION = "a62f8a4"


def json_modules(rev: str, folder: Path) -> tuple[ModuleType, ModuleType]:
    """The JSON column's compiled writer/reader and its array reader, as revision ``rev`` had them, imported from
    ``folder`` (numba caches their compiled code there)."""
    names = {"analyzer/kernels/optionsjson.py": "json_optionsjson", "analyzer/analysis/options.py": "json_options"}
    for path, name in names.items():
        done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_options: cannot read {path} of revision {rev} from git: {done.stderr.strip()}")
        (folder / f"{name}.py").write_text(done.stdout.replace("analyzer.kernels.optionsjson", "json_optionsjson"))
    sys.path.insert(0, str(folder))
    return importlib.import_module("json_optionsjson"), importlib.import_module("json_options")


def room_rows(hands: int, players: int, seed: int) -> pd.DataFrame:
    sim = simulate(hands=hands, players=players, seed=seed)
    return analyse((Checked("bench", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(sim.records)), seed=0,
                   reasons=False)


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--players", type=int, default=16)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json-from", default=JSON_REVISION, help="the revision whose JSON writer and reader to measure")
    args = ap.parse_args(argv)
    res = Results("options_column", "The options column: JSON texts against the typed column", "options-column",
                  command_line("benchmarks.bench_options", argv), parameters=dict(vars(args)),
                  about="CPU of making the decision rows' options (write), of reading them into the signals' arrays "
                        "from memory (arrays) and from a Parquet file (read), and the Parquet sizes, for the options "
                        "as one JSON text a row and as the typed Arrow column; medians of interleaved rounds on one "
                        "room.")
    tmp = Path(tempfile.mkdtemp(prefix="bench-options-"))
    oldj, olda = json_modules(args.json_from, tmp)
    rows = room_rows(args.hands, args.players, args.seed)
    typed = rows["options"]
    flat = option_arrays(typed, LOSS_KEYS)
    cover = (rows["kind"] == "cover").to_numpy()
    cards = np.array([parse_card(c) for c in flat.card.tolist()], np.int64)
    inputs = (cover, flat.count, cards, flat.ev, flat.ev_dd, *(flat.values[k] for k in LOSS_KEYS))
    codes = [str(c) for c in olda._CODE_TEXTS]

    def write_json() -> list[str]:
        out = oldj.options_json(codes, *inputs)
        assert out is not None
        return list(out)

    texts = write_json()
    # the same values either way (the typed column's rows as JSON are the texts)
    import orjson

    assert [orjson.dumps(list(r)).decode() for r in typed.array.__arrow_array__().to_pylist()[:500]] == texts[:500]
    as_text = pd.Series(np.asarray(texts, dtype=object), dtype=object)
    json_file, typed_file = tmp / "json.parquet", tmp / "typed.parquet"
    pq.write_table(pa.table({"options": pa.array(texts, pa.string())}), json_file)
    pq.write_table(frame_table(rows[["options"]]), typed_file)
    whole_json, whole_typed = tmp / "json-rows.parquet", tmp / "typed-rows.parquet"
    pq.write_table(pa.Table.from_pandas(rows.assign(options=as_text), preserve_index=False), whole_json)
    pq.write_table(frame_table(rows), whole_typed)

    ways: dict[str, dict[str, Callable[[], Any]]] = {
        "json": {"write": write_json,
                 "arrays": lambda: olda.option_arrays(as_text.tolist(), LOSS_KEYS),
                 "read": lambda: olda.option_arrays(pq.read_table(json_file).column(0).to_pylist(), LOSS_KEYS)},
        "typed": {"write": lambda: options_column(*inputs),
                  "arrays": lambda: option_arrays(typed, LOSS_KEYS),
                  "read": lambda: option_arrays(table_frame(pq.read_table(typed_file))["options"], LOSS_KEYS)},
    }
    for way in ways.values():  # compile, load the caches
        for fn in way.values():
            fn()
    a, b = olda.option_arrays(as_text.tolist(), LOSS_KEYS), option_arrays(typed, LOSS_KEYS)
    assert np.array_equal(a.ev, b.ev) and all(np.array_equal(a.values[k], b.values[k]) for k in LOSS_KEYS)
    times: dict[tuple[str, str], list[float]] = {(w, s): [] for w in ways for s in ways[w]}
    for r in range(args.rounds):
        for step in ("write", "arrays", "read"):
            for w in (("json", "typed") if r % 2 == 0 else ("typed", "json")):
                times[(w, step)].append(cpu(ways[w][step])[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    n_rows, n_opts = len(rows), len(flat.card)
    res.figure("rows", n_rows, "", f"decision rows of the room ({args.hands} hands)")
    res.figure("options", n_opts, "", "options of those rows")
    table = []
    for step, what in (("write", "write (from the analysis' arrays)"), ("arrays", "arrays (in memory)"),
                       ("read", "read (a Parquet file, then arrays)")):
        j, t = med[("json", step)], med[("typed", step)]
        table.append([f"{what}, CPU-s", j, t, t / j])
    sizes = [("options column", json_file, typed_file), ("whole rows", whole_json, whole_typed)]
    for label, jf, tf in sizes:
        j, t = jf.stat().st_size, tf.stat().st_size
        table.append([f"Parquet size, {label}, MB", j / 1e6, t / 1e6, t / j])
    res.table("options_column", "The options as JSON texts and as the typed column (CPU: median of the rounds)",
              ["step", "JSON texts", "typed column", "typed / JSON"], table,
              about=f"{n_rows:,} rows, {n_opts:,} options; every round runs both ways in turn, the order turned "
                    f"every round")
    res.write()


if __name__ == "__main__":
    main()
