"""`analyzer validate`: every planted problem found at the right line and action, legal hands never flagged."""

import gzip
import json
import os
import random

import pytest
from conftest import PEER, SAMPLES, assert_caught_at_its_line, legal_obj, legal_record, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.corrupt import PLANTERS
from analyzer.logs import decoder, format_record, generate_lines
from analyzer.validate import generate_checked, validate
from analyzer.variants.bieqi import VARIANT


def test_sample_of_legal_hands_is_valid():
    s = validate([str(SAMPLES / "legal.jsonl")])
    assert (s.hands, s.valid_hands, s.problems) == (7, 7, [])


def test_sample_of_problems_gives_each_expected_problem_at_its_line_and_action():
    expected = json.loads((SAMPLES / "problems.expected.json").read_text())
    s = validate([str(SAMPLES / "problems.jsonl")])
    found = {(p.line, p.code, p.action) for p in s.problems}
    for e in expected:
        assert (e["line"], e["code"], e["action"]) in found, e
    assert {p.line for p in s.problems} == {e["line"] for e in expected}
    assert s.hands == 27 and s.valid_hands == 1


def test_every_problem_names_file_line_hand_and_action():
    s = validate([str(SAMPLES / "problems.jsonl")])
    for p in s.problems:
        assert p.file.endswith("problems.jsonl") and p.line >= 1 and p.message
        if p.code in ("out-of-turn", "card-not-held", "not-live", "cover-with-live", "first-action"):
            assert p.hand_id and p.action is not None and p.seat is not None and p.player


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), code=st.sampled_from(sorted(PLANTERS)), where=st.integers(0, 4))
def test_any_single_corruption_is_caught_at_the_right_line_and_action(tmp_path_factory, seed, code, where):
    assert_caught_at_its_line(tmp_path_factory.mktemp("c"), seed, PLANTERS[code], where)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**9), code=st.sampled_from(sorted(PLANTERS)))
def test_compiled_fast_path_agrees_with_the_engine(seed, code):
    """The batch kernel and the explaining engine must judge every decodable hand alike."""
    planted = PLANTERS[code](legal_obj(seed), random.Random(seed))
    dec = decoder()
    recs = [legal_record(seed + 1)]
    try:
        recs.append(dec.decode(planted[0]))
    except Exception:
        pass  # shape problems never reach the kernel
    fast = VARIANT.check_batch(recs)
    slow = [VARIANT.check(r) for r in recs]
    assert [f.ok for f in fast] == [s.ok for s in slow]
    assert [[p.code for p in f.problems] for f in fast] == [[p.code for p in s.problems] for s in slow]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**9))
def test_records_round_trip_through_the_log_format(seed):
    rec = legal_record(seed)
    line = format_record(rec)
    assert decoder().decode(line) == rec
    assert format_record(decoder().decode(line)) == line


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_fuzz_arbitrary_bytes_never_crash(tmp_path_factory, chunks):
    path = tmp_path_factory.mktemp("f") / "fuzz.jsonl"
    path.write_bytes(b"\n".join(chunks))
    s = validate([str(path)])
    assert s.valid_hands == 0
    assert len({p.line for p in s.problems}) == s.hands


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
                        st.sampled_from(["format", "version", "variant", "hand_id", "players", "deal", "actions",
                                         "seat", "kind", "card", "ms", "result", "scores", "rules", "x"]),
                        kids, max_size=6), max_leaves=30))
def test_fuzz_arbitrary_json_never_crashes(tmp_path_factory, obj):
    base = legal_obj(1)
    doc = {**base, **obj} if isinstance(obj, dict) else obj
    path = tmp_path_factory.mktemp("j") / "fuzz.jsonl"
    path.write_bytes(json.dumps(doc).encode() + b"\n")
    s = validate([str(path)])
    assert s.hands == 1 and (s.valid_hands == 1) == (not s.problems)


def test_deeply_nested_line_is_a_problem_not_a_crash(tmp_log):
    p = tmp_log([b'{"a":' * 100000 + b"1" + b"}" * 100000, b"[" * 100000 + b"]" * 100000,
                 format_record(legal_record(3))])
    s = validate([str(p)])
    assert [x.line for x in s.problems] == [1, 2] and s.valid_hands == 1


def test_line_longer_than_the_limit_is_skipped_and_the_next_is_checked(tmp_log):
    good = format_record(legal_record(4))
    p = tmp_log([b'{"x": "' + b"y" * 5000 + b'"}', good])
    s = validate([str(p)], max_line_bytes=len(good) + 10)
    assert [(x.line, x.code) for x in s.problems] == [(1, "line-too-long")] and s.valid_hands == 1


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
@pytest.mark.parametrize("slack", [-2, -1, 0, 1, 2, 3, 4])
def test_a_bom_first_line_near_the_limit_is_read_whole(tmp_path, slack, ending):
    """The byte order mark before the first line is not part of it: a first line within a few bytes of
    --max-line-bytes is read whole (not cut in two at the limit plus the mark) or skipped whole, and the
    lines after it keep their numbers."""
    first = format_record(legal_record(4, "hA"))
    second = format_record(legal_record(4, "hB")).replace(b'"p4"', b'"q4"')  # other players: no copy of the first
    p = tmp_path / "bom.jsonl"  # two lines of one length, the first after the mark
    p.write_bytes(b"\xef\xbb\xbf" + first + ending + second + ending)
    limit = len(first) + slack
    expected = [(1, None), (2, None)] if slack < 0 else [(1, first), (2, second)]
    assert [(x.line, x.data) for x in generate_lines(str(p), limit)] == expected
    s = validate([str(p)], max_line_bytes=limit)
    assert [(x.line, x.code) for x in s.problems] == [(n, "line-too-long") for n, data in expected if data is None]
    assert (s.hands, s.valid_hands) == (2, 0 if slack < 0 else 2)


def test_gzip_folders_and_stdin(tmp_path):
    lines = b"".join(format_record(legal_record(k)) + b"\n" for k in range(3))
    (tmp_path / "a").mkdir()
    with gzip.open(tmp_path / "a" / "x.jsonl.gz", "wb") as f:
        f.write(lines)
    (tmp_path / "a" / "ignored.txt").write_text("not a log")
    assert validate([str(tmp_path)]).valid_hands == 3
    r = run_cli("validate", "-", input=lines, catch_exceptions=False)
    assert r.exit_code == 0 and "3 hands, 3 valid" in r.output


def test_truncated_gzip_is_an_io_problem(tmp_path):
    data = gzip.compress(b"".join(format_record(legal_record(k)) + b"\n" for k in range(50)))
    (tmp_path / "t.jsonl.gz").write_bytes(data[: len(data) // 2])
    s = validate([str(tmp_path / "t.jsonl.gz")])
    assert any(p.code == "io-error" for p in s.problems)


def test_cli_exit_codes_and_json_output(tmp_path):
    assert run_cli("validate", str(SAMPLES / "legal.jsonl"), catch_exceptions=False).exit_code == 0
    r = run_cli("validate", "--format", "json", str(SAMPLES / "problems.jsonl"), catch_exceptions=False)
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["hands"] == 27 and doc["valid_hands"] == 1
    assert set(doc["problems"][0]) >= {"code", "file", "line", "hand_id", "action", "seat", "player", "message"}
    assert run_cli("validate", str(tmp_path / "nope.jsonl"), catch_exceptions=False).exit_code == 2


def test_duplicate_ids_across_files(tmp_log):
    a = tmp_log([format_record(legal_record(1, "same"))], "a.jsonl")
    b = tmp_log([format_record(legal_record(2, "same"))], "b.jsonl")
    s = validate([str(a), str(b)])
    assert [(p.code, p.file) for p in s.problems] == [("duplicate-hand-id", str(b))]


def _copy(line: bytes, hand_id: bytes, new_id: bytes) -> bytes:
    obj = json.loads(line)
    obj["hand_id"] = new_id.decode()
    obj["table_id"] = "another-table"
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()  # as the export wrote it


def test_a_hand_told_twice_under_two_ids_is_a_duplicate_deal(tmp_log):
    """An export run twice under new ids would count the same play twice in the audit: the copy is invalid."""
    first = format_record(legal_record(1, "orig"))
    p = tmp_log([first, format_record(legal_record(2)), _copy(first, b"orig", b"copy")])
    s = validate([str(p)])
    assert [(p.code, p.line, p.hand_id) for p in s.problems] == [("duplicate-deal", 3, "copy")]
    assert f"{p}:1" in s.problems[0].message
    assert (s.hands, s.valid_hands) == (3, 2)


def test_the_same_deal_with_other_players_or_other_moves_is_no_copy(tmp_log):
    """A tournament deals a deal again on purpose to other players; the same people may play it otherwise."""
    from analyzer.variants.bieqi import make_record, play_random, random_deal

    rng = random.Random(5)
    deal = random_deal(rng)
    players = ["p1", "p2", "p3", "p4"]
    hands = [make_record(play_random(deal, random.Random(k)), deal, hand_id=f"d{k}", players=ps, table_id=f"t{k}")
             for k, ps in enumerate([players, players, ["q1", "q2", "q3", "q4"]])]
    assert hands[0].actions != hands[1].actions
    s = validate([str(tmp_log([format_record(h) for h in hands]))])
    assert (s.valid_hands, s.problems) == (3, [])


def test_a_copy_is_found_across_the_worker_processes(tmp_log):
    """The copy's key made in a worker process equals the original's made in the parent (blake2b, not ``hash``)."""
    lines = [format_record(legal_record(k, f"w{k}")) for k in range(600)]  # > 1 MB: several ranges, workers check
    lines.append(_copy(lines[3], b"w3", b"late-copy"))
    s = validate([str(tmp_log(lines))], jobs=2)
    assert [(p.code, p.line) for p in s.problems] == [("duplicate-deal", 601)]


def test_stream_order_is_input_order_across_batches(tmp_log):
    lines = [format_record(legal_record(k)) if k % 7 else b"nope" for k in range(2500)]
    items = list(generate_checked([str(tmp_log(lines))], batch_size=256))
    assert [i.line for i in items] == list(range(1, 2501))
    assert [i.ok for i in items] == [bool(k % 7) for k in range(2500)]


@pytest.mark.skipif(not PEER.exists(), reason="shared/peer is not beside the repo")
def test_every_hand_of_the_independent_engine_validates_and_its_moves_are_in_our_legal_sets():
    from analyzer.cards import parse_card
    from analyzer.variants.bieqi import COVER, State

    s = validate([str(PEER)])
    assert (s.hands, s.valid_hands) == (200, 200)
    dec = decoder()
    covers = 0
    for line in PEER.read_bytes().splitlines():
        rec = dec.decode(line)
        state = State([sum(1 << parse_card(c) for c in seat) for seat in rec.deal])
        for a in rec.actions:
            act = parse_card(a.card) + (COVER if a.kind == "cover" else 0)
            assert act in state.legal_actions()
            covers += a.kind == "cover"
            state.push(act)
    assert covers > 0


def test_worker_processes_find_the_same_problems_in_the_same_order():
    one = validate([str(SAMPLES / "problems.jsonl"), str(SAMPLES / "legal.jsonl")], jobs=1)
    two = validate([str(SAMPLES / "problems.jsonl"), str(SAMPLES / "legal.jsonl")], jobs=2)
    assert one.to_dict() == two.to_dict()
    assert one.valid_hands == 7  # 1 in problems.jsonl, 6 in legal.jsonl (sample-tong is a repeat there)


def test_no_command_overwrites_its_input(tmp_path):
    log = tmp_path / "in.jsonl"
    log.write_bytes((SAMPLES / "legal.jsonl").read_bytes())
    before = log.read_bytes()
    attempts = [
        ["validate", str(log), "-o", str(log)],
        ["report", str(log), "--hand", "sample-tong", "--out", str(log)],
        ["decisions", str(log), "-o", str(log)],
    ]
    for args in attempts:
        r = run_cli(*args)
        assert r.exit_code == 2 and "refusing to overwrite" in r.output, (args, r.output)
        assert log.read_bytes() == before
    audit_dir = tmp_path / "out"
    audit_dir.mkdir()
    (audit_dir / "audit.json").write_bytes(before)
    r = run_cli("audit", str(audit_dir / "audit.json"), "--out", str(audit_dir))
    assert r.exit_code == 2 and (audit_dir / "audit.json").read_bytes() == before


def test_a_small_file_never_loads_numba() -> None:
    """Start-up: checking a handful of hands (duplicate keys included) stays in Python; numba and scipy
    load only for batches big enough to pay for them (benchmarks/bench_validate.py measures the time)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from analyzer.validate import validate\n"
            f"validate([{str(SAMPLES / 'legal.jsonl')!r}, {str(SAMPLES / 'problems.jsonl')!r}])\n"
            "print(sorted(m for m in ('numba', 'scipy', 'pandas') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_forked_workers_with_compiled_batches_find_what_one_process_finds(tmp_path):
    # batches big enough for the compiled path: the parent checks the first, loading the kernels, and the
    # workers forked after it check the rest with the kernels they inherited
    rng = random.Random(3)
    lines, planted = [], 0
    for k in range(300):
        line = format_record(legal_record(k, f"f{k}"))
        if k % 37 == 5:
            bad = PLANTERS[sorted(PLANTERS)[k % len(PLANTERS)]](legal_obj(k, f"f{k}"), rng)
            if bad is not None:
                line, planted = bad[0], planted + 1
        lines.append(line)
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")

    def run(jobs: int) -> list:
        return [(c.line, c.hand_id, c.ok, [p.to_dict() for p in c.check.problems])
                for c in generate_checked([str(log)], batch_size=100, jobs=jobs, keep_records=False)]

    one, two = run(1), run(2)
    assert one == two and len(one) == 300
    assert planted >= 5 and sum(not ok for _, _, ok, _ in one) == planted


def _awkward_bytes(rng: random.Random) -> bytes:
    """Lines as a careless or hostile writer leaves them: a byte order mark first, blank lines, CRLF,
    lines over the limit (some far over), stray CRs, no LF at the end."""
    pieces = [b"\xef\xbb\xbf"] if rng.random() < 0.5 else []
    for _ in range(rng.randrange(1, 40)):
        pieces.append(rng.choice([b"", b" ", b"\r", b"{}", b"ab", b"x" * rng.randrange(1, 30), b"\xef\xbb\xbf1",
                                  b"\n" * rng.randrange(1, 20)])  # a run of empty lines (passed at once)
                      + rng.choice([b"\n", b"\r\n", b"\r\r\n"]))
    return b"".join(pieces)[: -rng.randrange(0, 3) or None]


def test_ranges_of_a_file_read_its_lines_once_each_with_their_numbers(tmp_path):
    """A file cut at any bytes into ranges (each read by a worker): every line is read by the range it
    starts in, once, whole or as too long, numbered as reading the whole file numbers it."""
    from analyzer.validate import _Range, _range_lines

    rng = random.Random(11)
    p = tmp_path / "a.jsonl"
    for _ in range(400):
        data = _awkward_bytes(rng)
        p.write_bytes(data)
        limit = rng.randrange(0, 12)
        cuts = sorted(rng.sample(range(1, len(data) + 2), min(len(data) + 1, rng.randrange(0, 6))))
        bounds = [0, *cuts]
        got, base = [], 0
        for k, a in enumerate(bounds):
            lines, count = _range_lines(_Range(str(p), a, bounds[k + 1] if k + 1 < len(bounds) else None), limit)
            got += [(base + x.line, x.data) for x in lines]
            base += count
        assert got == [(x.line, x.data) for x in generate_lines(str(p), limit)], (data, limit, bounds)


def test_workers_reading_their_own_ranges_find_what_one_process_finds(tmp_path, monkeypatch):
    """Worker processes that read ranges of the files themselves (cut small here: 30 ranges a file, lines
    cut across) find the same problems at the same lines as one process; a gzip file between two plain
    ones is read by the parent and sent in batches, as before."""
    import analyzer.validate as v

    rng = random.Random(5)
    lines = []
    for k in range(150):
        line = format_record(legal_record(k, f"r{k}"))
        if k % 11 == 3:
            bad = PLANTERS[sorted(PLANTERS)[k % len(PLANTERS)]](legal_obj(k, f"r{k}"), rng)
            line = bad[0] if bad is not None else line
        lines.append(line + (b"\r\n" if k % 7 == 0 else b"\n") + (b"\n" if k % 13 == 0 else b""))
    lines[5] = b'{"x": "' + b"y" * 9000 + b'"}\n'  # over the limit below
    data = b"\xef\xbb\xbf" + b"".join(lines)
    (tmp_path / "a.jsonl").write_bytes(data)
    with gzip.open(tmp_path / "b.jsonl.gz", "wb") as f:
        f.write(b"".join(lines[:40]))
    (tmp_path / "c.jsonl").write_bytes(b"".join(lines[60:]).rstrip(b"\n"))
    paths = [str(tmp_path / n) for n in ("a.jsonl", "b.jsonl.gz", "c.jsonl")]
    monkeypatch.setattr(v, "RANGE_BYTES", len(data) // 30)

    def run(jobs: int) -> list:
        return [(c.file, c.line, c.hand_id, c.ok, [p.to_dict() for p in c.check.problems])
                for c in generate_checked(paths, batch_size=64, jobs=jobs, keep_records=False, max_line_bytes=8000)]

    one, two = run(1), run(2)
    assert one == two
    assert len(one) == 150 + 40 + 90 and sum(not ok for *_, ok, _ in one) > 15
    assert ("a.jsonl", 7) in {(c[0].rsplit("/", 1)[-1], c[1]) for c in one if c[4] and c[4][0]["code"] == "line-too-long"}


def _reference_lines(data: bytes, limit: int) -> list:
    """What a reader of the format sees, the plain way: the lines cut at LF, a byte order mark dropped from
    the first, a line over the limit (without its CRLF or LF) as None, blank lines skipped."""
    out = []
    for n, seg in enumerate(data.split(b"\n"), 1):
        last = n == data.count(b"\n") + 1
        if last and not seg:
            break
        if n == 1 and seg.startswith(b"\xef\xbb\xbf"):
            seg = seg[3:]
        size = len(seg) - (0 if last else seg.endswith(b"\r"))
        if size > limit:
            out.append((n, None))
        elif seg.strip():
            out.append((n, seg.rstrip(b"\r\n")))
    return out


def test_the_line_reader_reads_what_the_format_says(tmp_path):
    """The buffered line reader against the plain reading of the format, on awkward bytes and limits."""
    rng = random.Random(12)
    p = tmp_path / "a.jsonl"
    for _ in range(600):
        data = rng.choice([_awkward_bytes(rng), b"\xef\xbb\xbf", b"\xef\xbb\xbf\n", b" \r\n\n", b"ab\r"])
        p.write_bytes(data)
        limit = rng.randrange(0, 12)
        assert [(x.line, x.data) for x in generate_lines(str(p), limit)] == _reference_lines(data, limit), (data, limit)


def test_a_whole_files_problem_names_no_line(tmp_path):
    """An io-error concerns the file, not a line: ``FILE: [io-error] ...`` (it said ``FILE:0:``)."""
    p = tmp_path / "cut.jsonl.gz"
    p.write_bytes(gzip.compress(b"x\n" * 100)[:20])
    r = run_cli("validate", str(p), catch_exceptions=False)
    assert r.exit_code == 1
    assert any(line.startswith(f"{p}: [io-error] ") for line in r.output.splitlines()), r.output
    assert f"{p}:0:" not in r.output


def test_a_folders_files_are_read_in_their_numbers_order(tmp_path) -> None:
    """``part-9`` before ``part-10``: a table's hands split over numbered files are read in order (plain text order
    put part-10 first, and a table's next dealer was checked against the wrong hand)."""
    from analyzer.logs import expand_paths

    for name in ("part-10.jsonl", "part-9.jsonl", "part-1.jsonl", "part-01.jsonl", "b.jsonl", "a.jsonl"):
        (tmp_path / name).write_text("")
    names = [os.path.basename(p) for p in expand_paths([str(tmp_path)])]
    assert names == ["a.jsonl", "b.jsonl", "part-01.jsonl", "part-1.jsonl", "part-9.jsonl", "part-10.jsonl"]
