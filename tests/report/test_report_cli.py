"""`analyzer report` on odd requests: empty or unrelated decision stores, a hand given twice, hands no page can
replay, ids with commas, variants without a page."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES, clean_exit, legal_obj, run_cli

from analyzer.logs import write_records


def _log(folder: Path, name: str = "room.jsonl", n: int = 3, first: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_bytes(b"".join(orjson.dumps(legal_obj(first + s, f"h{first + s}")) + b"\n" for s in range(n)))
    return p


def test_report_player_on_a_borrow_room_is_a_usage_error(tmp_path: Path) -> None:
    from analyzer.simulate.borrow import simulate

    log = tmp_path / "borrow.jsonl"
    write_records(log, simulate(hands=3, players=4, seed=1).records)
    pid = orjson.loads(log.read_bytes().splitlines()[0])["players"][0]
    r = run_cli("report", str(log), "--player", pid, "--out", str(tmp_path / "p.html"), "--samples", "1")
    clean_exit(r, 2)
    hand = orjson.loads(log.read_bytes().splitlines()[0])["hand_id"]
    r = run_cli("report", str(log), "--hand", hand, "--out", str(tmp_path / "h.html"), "--samples", "1")
    assert r.exit_code in (0, 2) and (r.exception is None or isinstance(r.exception, SystemExit)), r.output


def test_report_hand_of_a_variant_without_a_page_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.report import hand

    def refuse(*a: object, **k: object) -> None:
        raise ValueError("no replay page for this variant")

    monkeypatch.setattr(hand, "write_hand_report", refuse)
    log = _log(tmp_path)
    clean_exit(run_cli("report", str(log), "--hand", "h0", "--out", str(tmp_path / "h.html"), "--samples", "1"), 2)


def test_pair_ids_with_commas_and_spaces(tmp_path: Path) -> None:
    objs = [legal_obj(s, f"h{s}") for s in range(2)]
    for o in objs:
        o["players"] = ["a,b", "c d", " e", "f"]
    log = tmp_path / "odd.jsonl"
    log.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    out = tmp_path / "pair.html"
    r = run_cli("report", str(log), "--pair", "a,b,c d", "--out", str(out), "--samples", "1")
    clean_exit(r, 0)
    assert out.exists()
    r = run_cli("report", str(log), "--pair", "c d, e", "--out", str(out), "--samples", "1")
    clean_exit(r, 0)


def test_report_hand_says_when_its_id_is_used_again(tmp_path: Path) -> None:
    log = tmp_path / "dup.jsonl"
    log.write_bytes(b"".join(orjson.dumps(legal_obj(s, "same")) + b"\n" for s in range(3)))
    out = tmp_path / "h.html"
    r = run_cli("report", str(log), "--hand", "same", "-o", str(out))
    clean_exit(r, 0)
    assert f"is used 3 times; the page shows the first, {log}:1 (also at {log}:2, {log}:3)" in r.output
    assert out.exists()


FAST = ["--samples", "1", "--dd-samples", "0"]


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decision store of logs without a hand of standard 憋七: what `decisions` writes for such a day (no part)."""
    store = tmp_path_factory.mktemp("stores") / "empty"
    clean_exit(run_cli("decisions", str(SAMPLES / "heiqi-sample.jsonl"), "-o", str(store), *FAST), 0)
    assert not list(store.glob("part-*"))
    return store


@pytest.mark.parametrize("page", [["--player", "alice"], ["--pair", "alice,bob"], ["--hand", "sample-tong"]])
def test_report_with_an_empty_store_says_it_is_empty(empty_store: Path, tmp_path: Path, page: list[str]) -> None:
    out = tmp_path / "page.html"
    r = run_cli("report", str(SAMPLES / "legal.jsonl"), "--decisions", str(empty_store), *page, "-o", str(out))
    clean_exit(r, 2)
    assert f"{empty_store} is an empty decision store: it holds no hand" in r.output
    assert "leave out --decisions" in r.output and "other logs" not in r.output
    assert not out.exists()


@pytest.mark.parametrize("store", ["empty", "full"])
def test_a_hand_page_of_a_game_without_decisions_ignores_the_store(empty_store: Path, tmp_path: Path,
                                                                   store: str) -> None:
    """A 信阳黑七 or 借牌 hand has no decision rows in any store: its page is written as without --decisions (was
    exit 2: "holds none of the hands of this page: it was written from other logs")."""
    path = empty_store
    if store == "full":
        path = tmp_path / "full"
        clean_exit(run_cli("decisions", str(SAMPLES / "legal.jsonl"), "-o", str(path), *FAST), 0)
    for log in ("heiqi-sample.jsonl", "borrow-sample.jsonl"):
        hand = json.loads((SAMPLES / log).read_text(encoding="utf-8").splitlines()[0])["hand_id"]
        out = tmp_path / f"{log}.html"
        r = run_cli("report", str(SAMPLES / log), "--decisions", str(path), "--hand", hand, "-o", str(out))
        clean_exit(r, 0)
        assert out.stat().st_size > 10_000


LEGAL = SAMPLES / "legal.jsonl"


PROBLEMS = SAMPLES / "problems.jsonl"


def test_report_hand_given_twice_is_a_usage_error(tmp_path: Path) -> None:
    page = tmp_path / "h.html"
    r = run_cli("report", str(LEGAL), "--hand", "sample-plain", "--hand", "sample-tong", "-o", str(page))
    clean_exit(r, 2)
    assert "given 2 times" in r.output and "give it once" in r.output and not page.exists()


def test_report_of_a_hand_no_page_can_replay_says_where_and_why(tmp_path: Path) -> None:
    """A hand whose deal is not the cards' (nothing to replay from) is refused with its file, line and problem."""
    page = tmp_path / "h.html"
    r = run_cli("report", str(PROBLEMS), "--hand", "planted-bad-deal", "-o", str(page))
    clean_exit(r, 2)
    assert "cannot be replayed" in r.output and "problems.jsonl:2: [bad-deal]" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not page.exists()
