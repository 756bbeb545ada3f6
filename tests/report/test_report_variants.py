"""Hand pages of the 借牌 table game and 信阳黑七 without a browser: data from the engine, dispatch, CLI, validation."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from conftest import run_cli
from report_variant_fixtures import (
    EVIL_HAND,
    EVIL_PLAYER,
    EVIL_RTL,
    EVIL_TABLE,
    borrow_records,
    borrow_states,
    cheat_records,
    hand_cards,
    heiqi_records,
    heiqi_tricks,
    kou_hand,
    plant_not_live,
    plant_swapped_follow,
)

from analyzer.cards import scan
from analyzer.logs import decoder, format_record
from analyzer.report.common import LABELS
from analyzer.report.hand import write_hand_report
from analyzer.report.validation import write_validation_report
from analyzer.report.views import hand_data, page_assets, views
from analyzer.validate import validate
from analyzer.variants import borrow, heiqi, registry

STATIC = Path(__file__).resolve().parents[2] / "analyzer" / "report" / "static"


@pytest.fixture(scope="module")
def bw() -> list[borrow.BorrowRecord]:
    return borrow_records()


@pytest.fixture(scope="module")
def hq() -> list[heiqi.HeiqiRecord]:
    return heiqi_records()


def test_every_variant_names_a_hand_view_and_pages_carry_them() -> None:
    assert set(views()) == set(registry())
    assert {v.name for v in views().values()} == {"bieqi", "borrow", "heiqi"}
    scripts, styles, labels = page_assets()
    assert scripts == ("hand_games.js", "hand_borrow.js", "hand_heiqi.js") and styles == ("hand_games.css",)
    assert set(labels["en"]) == set(labels["zh"])


def test_labels_cover_every_key_the_game_views_use() -> None:
    _, _, labels = page_assets()
    used: set[str] = set()
    for name in ("hand_games.js", "hand_borrow.js", "hand_heiqi.js"):
        text = (STATIC / name).read_text()
        used |= set(re.findall(r'\bt\("([a-z_0-9]+)"', text)) - {"hq_lead_", "hq_out_"}  # + a kind, below
    used |= {f"hq_lead_{k}" for k in ("single", "pair", "tractor", "throw")}
    used |= {f"hq_out_{k}" for k in ("dealer_double", "dealer", "draw", "defenders")}
    for lang in ("en", "zh"):
        merged = {**LABELS[lang], **labels[lang]}
        assert used <= set(merged), used - set(merged)


def test_borrow_steps_are_the_engines_states(bw: list) -> None:
    rec = bw[0]
    hd = hand_data(rec)
    assert hd is not None and hd["view"] == "borrow"
    states = borrow_states(rec)
    assert len(hd["steps"]) == len(states) == len(rec.actions) + 1
    for k, st in enumerate(states):
        step = hd["steps"][k]
        assert step["hands"] == [hand_cards(st, s) for s in range(4)]
        assert step["table"] == list(scan(st.table)) and step["finished"] == st.finish_order
        assert step["turn"] == (-1 if st.is_terminal() else st.current_player())
    out = borrow.VARIANT.check(rec).outcome
    assert hd["outcome"]["finish_order"] == list(out.finish_order) and hd["outcome"]["loser"] == out.loser
    assert hd["joker"] in (52, 53) and len(hd["deal"][rec.dealer]) == 14
    lends = [m for m in hd["moves"] if m["kind"] == "borrow"]
    assert lends and all(m["lender"] == states[i].next_holder(states[i].turn)
                         for i, m in enumerate(hd["moves"]) if m["kind"] == "borrow")


def test_illegal_borrow_is_marked_with_the_live_cards_held_and_the_replay_goes_on() -> None:
    for rec in cheat_records():
        problems = borrow.VARIANT.check(rec).problems
        hd = hand_data(rec, problems=problems)
        assert hd is not None and hd["outcome"] is not None  # replayed to the end
        states = borrow_states(rec)
        marked = {i for i, m in enumerate(hd["moves"]) if "live_held" in m}
        assert marked == {p.action for p in problems if p.code == "borrow-with-live"} and marked
        for i in marked:
            assert hd["moves"][i]["live_held"] == list(scan(states[i].live_in_hand()))
        assert [p["step"] for p in hd["problems"]] == [p.action for p in problems]


def test_borrow_hand_stops_at_its_first_illegal_play(bw: list) -> None:
    line, i = plant_not_live(bw[1])
    rec = decoder().decode(line)
    problems = borrow.VARIANT.check(rec).problems
    assert [(p.code, p.action) for p in problems] == [("not-live", i)]
    hd = hand_data(rec, problems=problems)
    assert len(hd["steps"]) == i + 1 and hd["outcome"] is None
    assert hd["attempted"]["seat"] == rec.actions[i].seat and hd["attempted"]["code"] == rec.actions[i].card
    assert hd["problems"][0]["step"] == i


def test_heiqi_steps_are_the_engines_tricks(hq: list) -> None:
    rec = kou_hand(hq)
    hd = hand_data(rec)
    assert hd is not None and hd["view"] == "heiqi"
    tricks = heiqi_tricks(rec)
    assert len(hd["steps"]) == len(rec.tricks) + 1 == len(tricks)
    for k, want in enumerate(tricks[:-1], start=1):
        step = hd["steps"][k]
        assert step["hands"] == want["hands"]
        assert step["winner"] == want["winner"] and step["defender_points"] == want["defender_points"]
        assert step["leader"] == rec.tricks[k - 1].leader
        assert sorted(map(sorted, step["plays"])) == sorted(sorted(heiqi._parse_cards(p)[0]) for p in rec.tricks[k - 1].plays)
    out = tricks[-1]["outcome"]
    o = hd["outcome"]
    assert (o["defender_points"], o["bottom_points"], o["bottom_factor"], o["outcome"], o["settlement"]) == (
        out.defender_points, out.bottom_points, out.bottom_factor, out.outcome, list(out.settlement))
    assert o["bottom_factor"] >= 1 and o["bottom_points"] > 0
    assert o["trick_points"] + o["bottom_points"] * o["bottom_factor"] == o["defender_points"]
    assert sorted(hd["buried"]) == sorted(heiqi._parse_cards(rec.buried)[0]) and len(hd["taken"]) == 33
    order = heiqi.ORDERS["SHDC".index(rec.trump)]
    assert hd["suit"] == list(order.suit) and hd["level"] == list(order.level)


def test_heiqi_passed_out_hand_shows_the_auction_only(hq: list) -> None:
    rec = next(r for r in hq if r.dealer is None)
    hd = hand_data(rec)
    assert len(hd["steps"]) == 1 and hd["dealer"] is None and hd["outcome"]["outcome"] is None
    assert [b["bid"] for b in hd["bids"]] == [None] * 4 and all(b["ok"] for b in hd["bids"])


def test_heiqi_hand_stops_at_the_failing_trick(hq: list) -> None:
    rec = kou_hand(hq)
    rec2 = decoder().decode(plant_swapped_follow(rec, 4))
    problems = heiqi.VARIANT.check(rec2).problems
    assert len(problems) == 1 and problems[0].trick == 4
    hd = hand_data(rec2, problems=problems)
    assert len(hd["steps"]) == 6 and hd["outcome"] is None
    last = hd["steps"][5]
    assert last["trick"] == 4 and len(last["plays"]) == 1 and last["attempted"]["seat"] == problems[0].seat
    assert hd["problems"][0]["step"] == 5


def test_heiqi_bad_bid_stops_the_auction(hq: list) -> None:
    obj = orjson.loads(format_record(kou_hand(hq)))
    obj["bids"][0]["seat"] = (obj["bids"][0]["seat"] + 1) % 4
    rec = decoder().decode(orjson.dumps(obj))
    problems = heiqi.VARIANT.check(rec).problems
    hd = hand_data(rec, problems=problems)
    assert problems[0].code == "bad-bidding" and hd["bids"] == [{"seat": obj["bids"][0]["seat"], "bid": obj["bids"][0]["bid"],
                                                                 "ok": False}]
    assert len(hd["steps"]) == 1 and hd["problems"][0]["step"] == 0 and hd["dealer"] is None


def test_pages_keep_hostile_ids_out_of_the_markup(tmp_path: Path, bw: list, hq: list) -> None:
    write_hand_report(tmp_path / "b.html", bw[0])
    write_hand_report(tmp_path / "h.html", hq[0], lang="zh")
    for name in ("b", "h"):
        page = (tmp_path / f"{name}.html").read_text()
        for evil in (EVIL_PLAYER, EVIL_HAND, EVIL_TABLE, "p3</script>"):
            assert evil not in page, (name, evil)
        body = page.split('id="report-data">')[0]
        assert EVIL_RTL not in body  # only in the JSON data; the browser test checks it shows isolated
        assert page.count("<script>") == 1  # the views ride in the one hashed script


def _write_log(path: Path, records: list, extra: list[bytes] = ()) -> Path:
    path.write_bytes(b"".join(format_record(r) + b"\n" for r in records) + b"".join(x + b"\n" for x in extra))
    return path


def test_report_command_makes_a_hand_page_for_any_game(tmp_path: Path, bw: list, hq: list) -> None:
    line, _ = plant_not_live(bw[1])
    log = _write_log(tmp_path / "mixed.jsonl", [bw[0], hq[1]], [line.replace(b'"hand_id":"b1"', b'"hand_id":"bad"')])
    for hand_id, view in ((hq[1].hand_id, "heiqi"), (EVIL_HAND, "borrow"), ("bad", "borrow")):
        out = tmp_path / "page.html"
        res = run_cli("report", str(log), "--hand", hand_id, "--out", str(out))
        assert res.exit_code == 0, res.output
        page = out.read_text()
        assert f'"view":"{view}"' in page
        assert ("problem(s)" in res.output) == (hand_id == "bad")
    res = run_cli("report", str(log), "--hand", "nope", "--out", str(tmp_path / "x.html"))
    assert res.exit_code == 2 and "no hand 'nope'" in res.output


def test_validation_page_links_each_problem_to_its_move_or_trick(tmp_path: Path, bw: list, hq: list) -> None:
    line, _ = plant_not_live(bw[1])
    swapped = plant_swapped_follow(kou_hand(hq), 2)
    log = _write_log(tmp_path / "v.jsonl", cheat_records(), [line, swapped])
    summary = validate([str(log)])
    write_validation_report(tmp_path / "v.html", [str(log)], summary)
    page = (tmp_path / "v.html").read_text()
    data = orjson.loads(re.search(r'id="report-data">(.*?)</script>', page).group(1))
    rows = data["validation"]["problems"]
    assert len(rows) == len(summary.problems) >= 6
    for row in rows:
        assert row["h"] is not None  # every problem's hand is embedded
        want = row["trick"] + 1 if row["trick"] is not None else row["action"] if row["action"] is not None else 0
        assert row["step"] == want, row  # a problem about the whole hand (here a duplicate id) opens at the deal
    stores = re.findall(r'id="s-hand-\d+">(.*?)</script>', page)
    assert sorted(orjson.loads(s)["view"] for s in stores) == ["borrow", "borrow", "borrow", "heiqi"]


def test_a_move_naming_no_card_is_shown_as_its_text(bw: list) -> None:
    obj = orjson.loads(format_record(bw[2]))
    obj["actions"][9]["card"] = "<b>"  # codes are 2-3 characters (longer ones are refused while decoding)
    rec = decoder().decode(orjson.dumps(obj))
    problems = borrow.VARIANT.check(rec).problems
    hd = hand_data(rec, problems=problems)
    assert problems[0].code == "bad-card" and hd["problems"][0]["step"] == 9 == len(hd["steps"]) - 1
    assert hd["attempted"]["card"] is None and hd["attempted"]["code"] == "<b>"


def test_pages_that_embed_hands_take_any_game(bw: list, hq: list) -> None:
    from analyzer.report.hand import hand_store

    ids, data = hand_store([bw[1], hq[1]])
    assert ids == [bw[1].hand_id, hq[1].hand_id] and [d["view"] for d in data] == ["borrow", "heiqi"]


def test_a_borrow_cannot_open_the_hand(bw: list) -> None:
    obj = orjson.loads(format_record(bw[0]))
    opener = obj["actions"][0]["seat"]
    nxt = (opener + 1) % 4
    obj["actions"][0] = {"kind": "borrow", "seat": opener, "from": nxt, "card": obj["deal"][nxt][0]}
    rec = decoder().decode(orjson.dumps(obj))
    problems = borrow.VARIANT.check(rec).problems
    hd = hand_data(rec, problems=problems)
    assert problems[0].code == "first-action" and len(hd["steps"]) == 1 and hd["attempted"]["kind"] == "borrow"
