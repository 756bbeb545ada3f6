"""Hostile inputs found by a hunt over the commands (encodings, gzip streams, paths, outputs): each one a clear
error or problem naming the file, never a traceback, never a partial output."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from conftest import clean_exit, legal_obj, run_cli

from analyzer.progress import count_lines
from analyzer.validate import validate

FAST = ["--samples", "1", "--dd-samples", "0"]


def _lines(n: int, first: int = 0) -> bytes:
    return b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n))


def _broken_gzip(path: Path) -> Path:
    """A gzip header then deflate data that does not decode (zlib's "invalid code lengths set"), after a good
    start: not a stream cut short (EOFError) nor a bad header (BadGzipFile) but ``zlib.error``, no OSError."""
    good = gzip.compress(_lines(3), mtime=0)
    path.write_bytes(good[:10] + b"garbagegarbage" * 50)
    return path


def test_a_gzip_of_broken_compressed_data_is_an_io_error_problem(tmp_path: Path) -> None:
    bad = _broken_gzip(tmp_path / "bad.jsonl.gz")
    good = tmp_path / "good.jsonl"
    good.write_bytes(_lines(2, 10))
    s = validate([str(bad), str(good)])
    assert s.valid_hands == 2
    assert [(p.code, p.file) for p in s.problems] == [("io-error", str(bad))]
    assert "broken compressed data" in s.problems[0].message
    assert count_lines([str(bad)]) is None  # the progress bar's pre-count gives up, the command reports it


@pytest.mark.parametrize("command", [["validate"], ["players", *FAST], ["decisions", *FAST, "-o", "{o}"],
                                     ["report", "--hand", "h0", "-o", "{o}"]])
def test_every_command_names_a_gzip_of_broken_data(tmp_path: Path, command: list[str]) -> None:
    bad = _broken_gzip(tmp_path / "bad.jsonl.gz")
    out = tmp_path / "out"
    r = run_cli(command[0], str(bad), *(a.replace("{o}", str(out)) for a in command[1:]))
    clean_exit(r, 2)
    assert f"{bad}" in r.output and "broken compressed data" in r.output
    assert not out.exists()


def test_players_of_a_store_without_parts_is_its_empty_table(tmp_path: Path) -> None:
    """A store fed a day of no standard hand holds no part (decisions exits 0 for it): players of that store, as
    PATH or as --decisions alone, writes the empty table and exits 0, as for logs of no valid hand (was exit 3,
    an IndexError on no frames)."""
    from conftest import SAMPLES

    store = tmp_path / "store"
    clean_exit(run_cli("decisions", str(SAMPLES / "heiqi-sample.jsonl"), "-o", str(store), *FAST), 0)
    assert not list(store.glob("part-*"))
    for args in ([str(store)], ["--decisions", str(store)]):
        out = tmp_path / "players.csv"
        r = run_cli("players", *args, "-o", str(out))
        clean_exit(r, 0)
        assert out.read_text().startswith("player,skill,") and len(out.read_text().splitlines()) == 1


def test_players_of_a_folder_named_parquet_without_decision_files_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "day.parquet"
    (folder / "sub").mkdir(parents=True)
    r = run_cli("players", str(folder))
    clean_exit(r, 2)
    assert "no *.parquet files" in r.output and str(folder) in r.output


def test_think_slope_of_vanishing_difficulties_is_finite_or_nan_never_a_lapack_failure() -> None:
    """Legal rules of huge factors (tong_factors up to 1024, cover_doubling's 8 thresholds) put the options' values
    millions of points apart: the difficulties are then as small as 1e-300, polyfit's scaling squared them to 0 and
    LAPACK failed ("SVD did not converge", its "** On entry to DLASCL" lines on standard output), which `players`
    reported as rows "not written by analyzer decisions", exit 2, for a valid log."""
    import math
    import warnings

    import numpy as np

    from analyzer.analysis.players import _think

    think = np.arange(40, dtype=float) * 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for diff in (np.linspace(0.0, 1e-300, 40), np.r_[np.zeros(39), 5e-324], np.r_[np.ones(39), 1 + 2e-16]):
            mean, rho, slope = _think(think, diff)
            assert mean == 1950.0 and math.isfinite(rho) and (math.isfinite(slope) or math.isnan(slope))
        assert _think(think, np.linspace(0.0, 3.0, 40))[2] == pytest.approx(1300.0)  # an ordinary fit unchanged


def test_players_of_a_valid_room_under_huge_rule_factors(tmp_path: Path) -> None:
    """The same through the command: 8 hands of the demo room under legal rules of huge factors (the result left
    out: it is optional) are valid, and `players` writes their table (was exit 2 naming them rows not of
    `analyzer decisions`)."""
    from conftest import SAMPLES

    rules = {"tong_factors": [1024, 1, 1024, 1, 1024], "dutou_factor": 256, "cover_doubling": [0, 1, 2, 3, 4, 5, 6, 7]}
    hands = []
    for line in gzip.open(SAMPLES / "demo-room.jsonl.gz").read().splitlines()[:8]:
        hand = orjson.loads(line)
        hand["rules"] = rules
        del hand["result"]
        hands.append(orjson.dumps(hand) + b"\n")
    log = tmp_path / "room.jsonl"
    log.write_bytes(b"".join(hands))
    assert validate([str(log)]).valid_hands == 8
    out = tmp_path / "players.json"
    r = run_cli("players", str(log), *FAST, "-o", str(out))
    clean_exit(r, 0)
    table = orjson.loads(out.read_bytes())
    assert len(table) == 8 and all(row["decisions"] > 0 for row in table)  # the 8 players of these hands


def test_a_range_inside_a_line_of_many_ranges_reads_no_further_than_its_end(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate --jobs 2`` splits a file into ranges of 4 MB; a range that starts inside a line skipped it to its
    end, so a hostile line of N ranges was read N times over (a 2 GB line of NULs: 84 s instead of 5). A range the
    line goes on past holds no line and stops at its own end."""
    import io

    import analyzer.validate as v

    hand = orjson.dumps(legal_obj(3, "after")) + b"\n"
    log = tmp_path / "long.jsonl"
    log.write_bytes(b"x" * (12 << 20) + b"\n" + hand)
    furthest = [0]

    class Counting(io.BufferedReader):
        def readline(self, size: int | None = -1) -> bytes:
            line = super().readline(size)
            furthest[0] = max(furthest[0], self.tell())
            return line

    monkeypatch.setattr(v, "open", lambda path, mode, buffering: Counting(io.FileIO(path, "rb"), buffering),
                        raising=False)
    assert v._range_lines(v._Range(str(log), 1 << 20, 2 << 20), 1 << 20) == ([], 0)
    assert furthest[0] <= (2 << 20) + (1 << 16)
    lines, count = v._range_lines(v._Range(str(log), 11 << 20, None), 1 << 20)  # the range the hand starts in
    assert [x.data for x in lines] == [hand.rstrip(b"\n")] and count == 1
    monkeypatch.undo()
    s = validate([str(log)], jobs=2)
    assert (s.hands, s.valid_hands, [(p.code, p.line) for p in s.problems]) == (2, 1, [("line-too-long", 1)])


@pytest.mark.parametrize(("field", "where", "action"), [(b'"card":"', "$.actions[4]", 4), (b'"scores":', "$.result", None),
                                                        (b'"hand_id":', "$", None)])
def test_a_repeated_key_is_named_with_its_place_and_move(field: bytes, where: str, action: int | None) -> None:
    """A key twice in an action's object named only the hand: the problem now gives the object's place and, in an
    action, its move (the standard: file, line, hand and action)."""
    from analyzer.logs import Line
    from analyzer.validate import check_lines

    line = orjson.dumps(legal_obj(12, "h12"))
    k = -1
    for _ in range(5 if field == b'"card":"' else 1):  # the fifth action's card
        k = line.index(field, k + 1)
    line = line[:k] + field.rstrip(b'"') + b'"2C",' + line[k:]
    [item] = check_lines([Line("x.jsonl", 1, line)])
    [p] = [p for p in item.check.problems if p.code == "duplicate-key"]
    assert (p.hand_id, p.action) == ("h12", action) and f"({where})" in p.message


def test_a_link_to_a_folder_inside_an_input_folder_is_said_not_skipped_silently(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Links to folders are not followed (a link back up would loop), but the logs below one were left out without a
    word: the command ran on part of the input. Now each is named in a warning, as a FIFO inside a folder is."""
    from analyzer.logs import expand_paths

    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.jsonl").write_bytes(_lines(2))
    top = tmp_path / "top"
    top.mkdir()
    (top / "new.jsonl").write_bytes(_lines(1, 5))
    (top / "march").symlink_to(tmp_path / "archive")
    (top / "loop").symlink_to(top)
    assert expand_paths([str(top)]) == [str(top / "new.jsonl")]
    err = capsys.readouterr().err
    assert f"{top / 'march'}: a link to a folder; not followed" in err and f"{top / 'loop'}: a link" in err
    assert len(err.splitlines()) == 2


def test_a_file_of_lone_cr_line_ends_says_so(tmp_path: Path) -> None:
    """CR alone parts no JSON Lines records: the file is one line, whose "unexpected content after document at
    column 3081" did not say why; the problem now names the line ends."""
    log = tmp_path / "mac.jsonl"
    log.write_bytes(_lines(3).replace(b"\n", b"\r"))
    s = validate([str(log)])
    assert [(p.code, p.line) for p in s.problems] == [("not-json", 1)]
    assert "parted by CR alone" in s.problems[0].message
    crlf = tmp_path / "dos.jsonl"
    crlf.write_bytes(_lines(3).replace(b"\n", b"\r\n"))
    assert validate([str(crlf)]).valid_hands == 3


def test_gzip_data_under_a_plain_name_or_on_standard_input_says_how_to_read_it() -> None:
    from analyzer.validate import explain_line

    _, [p] = explain_line(gzip.compress(_lines(1))[:40])
    assert p.code == "not-utf8" and "ends in .gz" in p.message and "zcat" in p.message


def test_a_failure_on_rows_computed_from_the_logs_is_a_bug_not_a_users_store(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows the command computed itself cannot be "not decision rows written by `analyzer decisions`": a failure on
    them (as the LAPACK one above was) is exit 3, the analyzer's bug, not exit 2 blaming the input."""
    import analyzer.analysis.players as players

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("SVD did not converge")

    monkeypatch.setattr(players, "player_table", broken)
    log = tmp_path / "room.jsonl"
    log.write_bytes(_lines(2))
    r = run_cli("players", str(log), *FAST)
    assert r.exit_code != 2 and isinstance(r.exception, ValueError)
    assert "not decision rows" not in r.output
