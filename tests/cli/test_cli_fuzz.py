"""A fuzz test that drives every command with mutated records: no traceback, exit codes as documented, inputs
byte-identical afterwards."""

from __future__ import annotations

import hashlib
import random
import tempfile
from pathlib import Path

from conftest import legal_obj, legal_record, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.corrupt import HOSTILE_PLANTERS, PLANTERS
from analyzer.logs import format_record

ALL_PLANTERS = {**PLANTERS, **HOSTILE_PLANTERS}


#: Exit codes each command may end with (README): 0 fine, 1 problems found / pairs flagged, 2 usage or I/O.
EXITS = {"validate": {0, 1, 2}, "decisions": {0, 2}, "players": {0, 2}, "audit": {0, 1, 2}, "report": {0, 2},
         "simulate": {2}}


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """A byte-level mutation: flip, insert, delete or repeat a slice (what a broken or hostile server sends)."""
    k = rng.randrange(len(data))
    kind = rng.randrange(5)
    if kind == 0:
        return data[:k] + bytes([rng.randrange(256)]) + data[k + 1:]
    if kind == 1:
        return data[:k] + rng.choice([b"\x00", b"\r", b"\xef\xbb\xbf", b"[" * 300, b'"', b"\\", b"1e999",
                                      b"\xe2\x80\xae", b"NaN", b"9" * 30]) + data[k:]
    if kind == 2:
        return data[:k] + data[k + rng.randrange(1, 40):]
    if kind == 3:
        j = min(len(data), k + rng.randrange(1, 60))
        return data[:j] + data[k:j] + data[j:]
    return data[:k]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), codes=st.lists(st.sampled_from(sorted(ALL_PLANTERS)), min_size=1, max_size=3),
       mutations=st.integers(0, 3))
def test_every_command_survives_mutated_records(tmp_path: Path, seed: int, codes: list[str], mutations: int) -> None:
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(dir=tmp_path))  # one folder per example (the fixture is shared)
    logs = base / "in"
    logs.mkdir()
    lines = [format_record(legal_record(seed + k, f"h{k}")) for k in range(3)]
    for j, code in enumerate(codes):
        planted = ALL_PLANTERS[code](legal_obj(seed + 10 + j, f"m{j}"), rng)
        if planted is not None:
            lines.append(planted[0])
    for _ in range(mutations):
        i = rng.randrange(len(lines))
        lines[i] = _mutate(lines[i], rng)
    (logs / "room.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (logs / "copy.jsonl").write_bytes(b"\r\n".join(reversed(lines)))
    before = _digest(logs)
    out = base / "out"
    ids = legal_record(seed).players
    fast = ["--samples", "1", "--dd-samples", "0"]
    runs = [
        ("validate", [str(logs)]),
        ("validate", [str(logs), "--format", "json", "-o", str(out / "v.html"), "--max-line-bytes", "2000"]),
        ("decisions", [str(logs), "-o", str(out / "d.parquet"), *fast]),
        ("players", [str(logs), "--format", "json", *fast]),
        ("audit", [str(logs), "--out", str(out / "audit"), "--samples", "1", "--dd-samples", "1"]),
        ("report", [str(logs), "--hand", "h0", "--out", str(out / "h.html"), "--samples", "1"]),
        ("report", [str(logs), "--hand", "m0", "--out", str(out / "m.html"), "--samples", "1"]),
        ("report", [str(logs), "--player", ids[0], "--out", str(out / "p.html"), "--samples", "1"]),
        ("report", [str(logs), "--pair", f"{ids[0]},{ids[1]}", "--out", str(out / "q.html"), "--samples", "1"]),
        ("simulate", ["--hands", "-1", "--out", str(out / "s.jsonl")]),
        ("simulate", ["--hands", "5", "--players", "4", "--colluders", "3", "--out", str(out / "s.jsonl")]),
        ("simulate", ["--hands", "5", "--option", "share=nan", "--out", str(out / "s.jsonl")]),
        ("simulate", ["--hands", "5", "--variant", "nope", "--out", str(out / "s.jsonl")]),
    ]
    for command, args in runs:
        r = run_cli(command, *args)
        assert r.exception is None or isinstance(r.exception, SystemExit), (command, args, repr(r.exception))
        assert r.exit_code in EXITS[command], (command, args, r.exit_code, r.output)
        assert "Traceback" not in r.output
    assert _digest(logs) == before
    assert not (out / "s.jsonl").exists()
