"""HTML reports without a browser: safe embedding, page data against the engine, the report command."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import msgspec
import orjson
import pandas as pd
import pytest
from conftest import legal_obj, run_cli
from report_fixtures import EVIL_HAND, EVIL_PLAYER, EVIL_TABLE, PLAYERS, AuditRun

from analyzer.cards import format_card, scan
from analyzer.problems import Problem
from analyzer.report.audit import alarm_line, write_audit_report
from analyzer.report.common import LABELS, json_for_script, render_page
from analyzer.report.hand import hand_data, parse_action, write_hand_report
from analyzer.report.pair import collusion_table, hands_with, measure, write_pair_report
from analyzer.report.player import player_data, write_player_report
from analyzer.variants.bieqi import VARIANT, Action, State

SCRIPT = Path(__file__).resolve().parents[2] / "analyzer" / "report" / "static" / "report.js"


def test_json_for_script_cannot_close_the_element() -> None:
    obj = {"id": EVIL_HAND, "p": EVIL_PLAYER, "t": EVIL_TABLE}
    text = json_for_script(obj)
    assert not re.search(r"[<>&]", text)
    assert json.loads(text) == obj


def test_labels_cover_every_key_the_script_uses() -> None:
    # prefixes of keys built at run time ("tong_" + n, "sig_" + signal, ...) are checked by family
    used = {k for k in re.findall(r'\bt\("([a-z_0-9]+)"', SCRIPT.read_text()) if not k.endswith("_")}
    used |= {f"tong_{n}" for n in range(1, 5)} | {f"title_{k}" for k in ("hand", "player", "pair", "audit", "validation")}
    for lang in ("en", "zh"):
        assert used <= set(LABELS[lang]), used - set(LABELS[lang])
    assert set(LABELS["en"]) == set(LABELS["zh"])


def test_page_shell_is_offline_and_locked_down() -> None:
    page = render_page("audit", lang="zh", data={"x": EVIL_PLAYER}, plotly=True)
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=", page)  # nothing loaded from elsewhere
    assert page.count("<script>") == 1 and page.count('id="plotly-js"') == 1  # the app runs plotly, once
    assert "script-src 'sha256-" in page and "unsafe-inline' ; script" not in page
    assert EVIL_PLAYER not in page and '<html lang="zh-CN">' in page


@pytest.fixture(scope="module")
def records(audit_run: AuditRun) -> list:
    return audit_run.records


@pytest.fixture(scope="module")
def decisions(audit_run: AuditRun) -> pd.DataFrame:
    return audit_run.decisions


def test_every_page_keeps_hostile_ids_out_of_the_markup(tmp_path: Path, records: list, decisions: pd.DataFrame,
                                                       audit_run: AuditRun) -> None:
    assert records[0].hand_id == EVIL_HAND and EVIL_PLAYER in records[0].players
    write_hand_report(tmp_path / "hand.html", records[0], decisions=decisions)
    write_player_report(tmp_path / "player.html", EVIL_PLAYER, decisions, records=records)
    write_pair_report(tmp_path / "pair.html", EVIL_PLAYER, "北风", decisions=decisions, records=records)
    write_audit_report(tmp_path, audit_run.audit, decisions=decisions, records=records)
    for name in ("hand", "player", "pair", "report"):
        page = (tmp_path / f"{name}.html").read_text()
        for evil in (EVIL_PLAYER, EVIL_HAND, EVIL_TABLE, "p2</script>"):
            assert evil not in page, (name, evil)
        assert "\\u003cimg src=x onerror=alert(1)\\u003e" in page  # the id is there, as escaped JSON


def test_hand_data_follows_the_engine(records: list) -> None:
    rec = records[1]
    hd = hand_data(rec)
    st = State(VARIANT.deal_masks(rec, []))
    assert hd is not None and hd["first"] == st.turn and len(hd["actions"]) == 52
    for k, a in enumerate(hd["actions"]):
        gone = st.table | sum(st.covered)
        assert set(hd["live"][k]) == {c for c in range(52) if (st.live & ~gone) >> c & 1}
        assert st.is_legal(a)
        st.push(a)
    assert list(hd["outcome"]["scores"]) == list(st.outcome().scores)
    assert hd["outcome"]["explain"] == st.outcome().explain()


def test_hand_data_stops_at_the_first_illegal_action(records: list) -> None:
    rec = records[2]
    st = State(VARIANT.deal_masks(rec, []))
    for a in rec.actions[:10]:
        st.push(parse_action(a.card, a.kind))
    dead = st.hands[st.turn] & ~st.live  # held but not live: playing it is illegal
    assert dead
    bad = Action(seat=st.turn, kind="play", card=format_card(next(scan(dead))))
    broken = msgspec.structs.replace(rec, actions=[*rec.actions[:10], bad], result=None)
    hd = hand_data(broken, problems=[Problem("not-live", "not live", action=10, seat=st.turn)])
    assert hd is not None and len(hd["actions"]) == 10 and hd["outcome"] is None
    assert hd["problems"] == [{"action": 10, "seat": st.turn, "code": "not-live", "message": "not live"}]


def test_collusion_table_sums_the_deltas(records: list, decisions: pd.DataFrame) -> None:
    a, b = EVIL_PLAYER, "北风"
    rows = hands_with(decisions, a, b)
    cells = collusion_table(rows, a, b, rows["hand_id"].nunique())
    col = measure(rows)
    assert col == "imm"  # the audit's rows carry the exact immediate effect, which the table measures with
    by_a = rows[rows["player"] == a]
    seat_b = (by_a[[f"p{s}" for s in range(4)]] == b).to_numpy()
    expected = (by_a[[f"{col}{s}" for s in range(4)]].to_numpy() * seat_b).sum()
    assert expected > 0  # the planted pair: what a's moves did for b
    assert cells[0][1]["sum"] == pytest.approx(expected)
    assert cells[0][1]["per_hand"] == pytest.approx(expected / rows["hand_id"].nunique())
    assert cells[0][0] is None and cells[1][1] is None  # own effect left out


def test_player_data_against_the_frame(decisions: pd.DataFrame) -> None:
    p = player_data(decisions, PLAYERS[1])
    mine = decisions[decisions["player"] == PLAYERS[1]]
    assert p["decisions"] == len(mine)
    assert p["match_rate"] == pytest.approx((mine["loss"] <= 0).mean())  # the evaluator's best was chosen
    # the page shows the figures of the one shared player table (CLI, audit players.csv, this page)
    from analyzer.analysis.players import player_table

    row = player_table(decisions).set_index("player").loc[PLAYERS[1]]
    assert (p["match_rate"], p["mean_regret"], p["skill"]) == pytest.approx(
        (row["match_rate"], row["mean_regret"], row["skill"]))
    assert sum(p["hist"]["player"]) == pytest.approx(1.0)
    assert [w["regret"] for w in p["worst"]] == sorted(mine["regret"], reverse=True)[:10]


def test_the_player_page_says_when_the_signal_was_not_read(decisions: pd.DataFrame) -> None:
    """With neither part of "plays better than their level" read (fewer than 8 players for a level, no co-player with
    hands apart) the table's p is 1, which a page would show as "certainly not": the page gets no p (it says "not
    read") exactly then, and the table's p where a part was read."""
    from analyzer.analysis.players import MIN_PEERS, player_table

    table = player_table(decisions).set_index("player")
    assert len(table) < MIN_PEERS and table["level_z"].isna().all()  # this room: 6 players
    unread = table.index[table["partner_z"].isna()]
    assert len(unread) > 0
    for name in table.index:
        got = player_data(decisions, name)["signal_p"]
        if name in unread:
            assert got is None
        else:
            assert got == pytest.approx(table.loc[name, "signal_p"])


def test_audit_ranks_flagged_first_and_reads_the_alarm(tmp_path: Path, audit_run: AuditRun) -> None:
    audit = copy.deepcopy(audit_run.audit)
    audit["pairs"].reverse()
    path = write_audit_report(tmp_path, audit)
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', path.read_text()).group(1))
    pairs = data["audit"]["pairs"]
    assert pairs[0]["verdict"] == "flagged" and tuple(sorted(pairs[0]["players"])) == tuple(sorted(audit_run.planted))
    assert [p["score"] for p in pairs[1:]] == sorted((p["score"] for p in pairs[1:]), reverse=True)
    assert data["audit"]["alarm"] == alarm_line(audit) == {"score": audit["alarm"]["score"],
                                                           "alpha": audit["alarm"]["alpha"], "fdr": audit["alarm"]["fdr"]}
    assert audit["alarm"]["score"] == pytest.approx(5.0)  # -log10 of the default alpha, 1e-5
    assert alarm_line({}) is None


def test_report_command(tmp_path: Path, records: list, audit_run: AuditRun) -> None:
    log = audit_run.log
    hand = records[3].hand_id
    out = tmp_path / "h.html"
    res = run_cli("report", str(log), "--hand", hand, "--out", str(out), "--samples", "4", "--lang", "zh")
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 10_000 and hand in out.read_text()
    res = run_cli("report", str(log), "--hand", "nope", "--out", str(out))
    assert res.exit_code == 2 and "nope" in res.output
    res = run_cli("report", str(log), "--hand", hand, "--player", "p3")
    assert res.exit_code == 2
    # the pair page with its entry of the real audit.json (the pair with the fewest hands: the quickest)
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps(audit_run.audit))
    entry = min(audit_run.audit["pairs"], key=lambda p: p["hands_together"])
    res = run_cli("report", str(log), "--pair", ",".join(entry["players"]), "--audit", str(audit),
                              "--out", str(tmp_path / "pair.html"), "--samples", "4")
    assert res.exit_code == 0, res.output
    assert f'"main_signal":"{entry["main_signal"]}"' in (tmp_path / "pair.html").read_text()


def _log_of(tmp_path: Path, objs: list[dict] | None = None, name: str = "log.jsonl") -> Path:
    p = tmp_path / name
    objs = objs if objs is not None else [legal_obj(s, f"h{s}") for s in range(3)]
    p.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return p


def test_html_text_shows_soft_hyphens_joiners_and_tag_characters() -> None:
    from analyzer.report.common import json_for_script, visible_text

    assert visible_text("al\u00adice\u034f\U000e0041") == "al\u2039U+00AD\u203aice\u2039U+034F\u203a\u2039U+E0041\u203a"
    assert "\U000e0041" not in json_for_script({"player": "alice\U000e0041"})


def test_html_pages_isolate_ids_and_show_hidden_characters(tmp_path: Path) -> None:
    objs = [legal_obj(s, f"h{s}") for s in range(2)]
    for o in objs:
        o["players"] = ["evil\u202e", "p06", "x\x1b[31m", "\u2067y"]
    log = _log_of(tmp_path, objs)
    out = tmp_path / "pair.html"
    r = run_cli("report", str(log), "--pair", "evil\u202e,p06", "--out", str(out), "--samples", "1")
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    page = "".join(re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.DOTALL))
    page += html.split("<main>")[0]  # the head and its subtitle
    assert "\u202e" not in page and "\u2067" not in page and "\x1b" not in page and "\\u001b" not in page
    assert "evil\u2039U+202E\u203a" in page and "\u241b[31m" in page
    assert "unicode-bidi: isolate" in html
    bad = _log_of(tmp_path, [dict(objs[0], hand_id="h\u202e", actions=objs[0]["actions"][:3])], name="bad.jsonl")
    v = tmp_path / "v.html"
    assert run_cli("validate", str(bad), "-o", str(v)).exit_code == 1
    vhtml = v.read_text(encoding="utf-8")
    assert "\u202e" not in "".join(re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', vhtml, re.DOTALL))
    assert "h\u2039U+202E\u203a" in vhtml
