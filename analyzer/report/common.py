"""The self-contained page shell shared by every report: labels, safe JSON embedding, assets, CSP."""

from __future__ import annotations

import base64
import hashlib
import html
import math
import os
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import orjson

from analyzer.logs import atomic_write_bytes

LANGS = ("en", "zh")

#: Every label the pages show, by language. The script looks keys up with ``t(key)``; a test checks
#: that both languages define every key the script uses.
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title_hand": "Hand replay", "title_player": "Player report", "title_pair": "Pair report",
        "title_audit": "Collusion audit", "title_validation": "Validation report",
        "hand": "Hand", "table": "Table", "seat": "seat", "player": "Player", "players": "players",
        "pair": "Pair", "pairs": "pairs", "hands": "hands", "decisions": "decisions",
        "first": "|◀", "back": "◀", "forward": "▶", "last": "▶|", "prev_dev": "⇤ deviation", "next_dev": "deviation ⇥",
        "step_of": "step {0} / {1}", "reveal_covered": "show covered cards", "only_big": "only big deviations ≥",
        "points": "points", "moves": "Moves", "cover": "cover", "covered": "covered",
        "tong": "通", "dutou": "独头七", "tong_1": "通", "tong_2": "双通", "tong_3": "三通", "tong_4": "四通",
        "no_tong": "no 通 (factor ×1)", "factor_others": "{0} on the players who are not 通",
        "at_action": "action {0}", "to_act": "To act", "forced": "forced",
        "options_no_analysis": "options (no decision analysis)", "option": "option",
        "expected_points": "expected points of seat {0}", "ev": "expected", "ev_dd": "true deal",
        "regret": "regret", "rank": "rank", "dd_regret": "regret (true deal)", "difficulty": "difficulty",
        "sensible": "sensible choice", "effect_on": "effect on the others (points)", "chosen": "chosen",
        "final_scores": "Final scores", "raw_points": "covered points", "multiplier": "multiplier",
        "final_points": "final points", "score": "score", "place": "place",
        "hand_not_embedded": "this hand is not in the page", "summary": "Summary",
        "match_rate": "match rate", "mean_regret": "mean regret", "room_mean_regret": "room mean regret",
        "skill": "skill (95% interval)", "signal_p": "plays better than their level: p",
        "room_percentile": "share of the room with lower mean regret", "over_time": "Accuracy and regret over time",
        "think_vs_difficulty": "Think time against difficulty", "no_think": "The logs carry no action times.",
        "regret_vs_room": "Regret against the room", "hand_number": "hand (in the player's order)",
        "this_player": "this player", "room": "room", "room_median": "room median", "think_s": "think time (s)",
        "share": "share of decisions", "worst_decisions": "Largest deviations", "action": "action",
        "reasons": "reasons", "flagged": "flagged", "not_flagged": "not flagged",
        "hands_together": "hands together", "others_each": "others (each)", "total": "total",
        "per_decision": "per decision", "collusion_table": "Who helped whom",
        "collusion_help": "Points each actor's decisions gave each player per hand together, against the "
                          "sensible choice (green: helped, red: hurt); ± is one standard error.",
        "actor_recipient": "actor ↓ / for →", "signals": "Signals", "signal": "signal", "value": "value",
        "uncertainty": "uncertainty", "value_95": "value (95% interval)", "evidence": "Evidence hands",
        "no_evidence": "No evidence hands listed.", "score_vs_hands": "Pair score against hands together",
        "no_alarm": "The audit file records no alarm line.", "alarm": "alarm", "filter_player": "filter by player",
        "details": "details", "show_all": "show all {0}", "ranked_pairs": "Pairs, flagged first",
        "valid_hands": "valid", "problems": "Problems", "by_code": "Problems by code", "code": "code",
        "count": "count", "meaning": "meaning", "where": "file:line", "message": "message",
        "all_valid": "Every hand is valid.", "truncated": "{0} more problems are not shown.",
        "back_overview": "back to the overview", "trick": "trick",
    },
    "zh": {
        "title_hand": "牌局回放", "title_player": "玩家报告", "title_pair": "玩家组合报告",
        "title_audit": "串通审查", "title_validation": "牌局校验报告",
        "hand": "牌局", "table": "牌桌", "seat": "座位", "player": "玩家", "players": "玩家",
        "pair": "组合", "pairs": "组合", "hands": "局", "decisions": "决策",
        "first": "|◀", "back": "◀", "forward": "▶", "last": "▶|", "prev_dev": "⇤ 偏差", "next_dev": "偏差 ⇥",
        "step_of": "第 {0} / {1} 步", "reveal_covered": "显示扣牌", "only_big": "只看大偏差 ≥",
        "points": "分", "moves": "出牌记录", "cover": "扣", "covered": "扣牌",
        "tong": "通", "dutou": "独头七", "tong_1": "通", "tong_2": "双通", "tong_3": "三通", "tong_4": "四通",
        "no_tong": "无人走通（×1）", "factor_others": "未通的玩家扣牌分 {0}",
        "at_action": "第 {0} 手", "to_act": "轮到", "forced": "唯一选择",
        "options_no_analysis": "可选（无决策分析）", "option": "选项",
        "expected_points": "座位 {0} 的期望得分", "ev": "期望", "ev_dd": "明牌",
        "regret": "损失", "rank": "名次", "dd_regret": "损失（明牌）", "difficulty": "难度",
        "sensible": "合理选择", "effect_on": "对其他人的影响（分）", "chosen": "实际选择",
        "final_scores": "结算", "raw_points": "扣牌分", "multiplier": "倍数",
        "final_points": "最终扣牌分", "score": "得分", "place": "名次",
        "hand_not_embedded": "此牌局未包含在本页", "summary": "概况",
        "match_rate": "吻合率", "mean_regret": "平均损失", "room_mean_regret": "全房间平均损失",
        "skill": "水平（95% 区间）", "signal_p": "超出自身水平：p",
        "room_percentile": "房间中平均损失更低的比例", "over_time": "准确率和损失随时间变化",
        "think_vs_difficulty": "思考时间与难度", "no_think": "日志中没有出牌时间。",
        "regret_vs_room": "损失分布与全房间对比", "hand_number": "牌局（该玩家的顺序）",
        "this_player": "该玩家", "room": "全房间", "room_median": "全房间中位数", "think_s": "思考时间（秒）",
        "share": "决策比例", "worst_decisions": "最大偏差", "action": "手",
        "reasons": "原因", "flagged": "已标记", "not_flagged": "未标记",
        "hands_together": "同桌局数", "others_each": "其他人（每人）", "total": "合计",
        "per_decision": "每次决策", "collusion_table": "谁帮了谁",
        "collusion_help": "与合理选择相比，每位出牌者的决策在每局同桌中给各玩家带来的分数（绿：帮助，红：损害）；± 为一个标准误。",
        "actor_recipient": "出牌者 ↓ / 受益者 →", "signals": "信号", "signal": "信号", "value": "数值",
        "uncertainty": "不确定度", "value_95": "数值（95% 区间）", "evidence": "证据牌局",
        "no_evidence": "没有列出证据牌局。", "score_vs_hands": "组合得分与同桌局数",
        "no_alarm": "审查文件中没有报警线。", "alarm": "报警线", "filter_player": "按玩家筛选",
        "details": "详情", "show_all": "显示全部 {0} 个", "ranked_pairs": "组合排名（已标记的在前）",
        "valid_hands": "有效", "problems": "问题", "by_code": "按代码统计", "code": "代码",
        "count": "数量", "meaning": "含义", "where": "文件:行", "message": "说明",
        "all_valid": "所有牌局均有效。", "truncated": "还有 {0} 个问题未显示。",
        "back_overview": "返回概览", "trick": "墩",
    },
}

#: Default regret (points) from which a decision counts as a big deviation in the replayer.
BIG_DEVIATION = 5.0


def json_for_script(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` can end the element."""
    text = orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY, default=_default).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _default(obj: Any) -> Any:
    """numpy/pandas scalars that orjson does not know: plain numbers (NaN becomes null)."""
    if hasattr(obj, "item"):
        return clean(obj.item())
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def clean(x: Any) -> Any:
    """A float that JSON can hold (NaN and infinities become None); other values unchanged."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@cache
def _asset(name: str) -> str:
    return files("analyzer.report").joinpath("static").joinpath(name).read_text(encoding="utf-8")


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(kind: str, *, lang: str, data: Mapping[str, Any],
                stores: Mapping[str, Sequence[Any]] | None = None, plotly: bool = False,
                subtitle: str = "") -> str:
    """One self-contained HTML page of ``kind`` (hand, player, pair, audit, validation).

    ``data`` becomes the page's main JSON; each ``stores[name][i]`` its own JSON element, parsed
    only when the page opens it (so a big audit loads fast). Only our own scripts may run: the
    Content-Security-Policy lists their hashes, which also blocks inline event handlers.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, not {lang!r}")
    # the games' hand views: their scripts, styles and labels
    from analyzer.report.views import page_assets

    view_js, view_css, view_labels = page_assets()
    labels = {**LABELS[lang], **view_labels.get(lang, {})}
    main_data = {"page": kind, "lang": lang, "labels": labels, "threshold": BIG_DEVIATION, **data}
    # one script: the games' views first (they register in HAND_VIEWS), then report.js, which routes
    own = "\n".join([*(_asset(name) for name in view_js), _asset("report.js")])
    scripts = ([_plotly_js()] if plotly else []) + [own]
    # report.js runs plotly.js (kept as text below) itself, after the first paint
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src "
           + " ".join(_sha256(s) for s in scripts))
    title = html.escape(labels[f"title_{kind}"])
    parts = [
        "<!doctype html>\n<html lang=\"", "zh-CN" if lang == "zh" else "en", "\"><head><meta charset=\"utf-8\">",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{title}</title><style>{''.join(_asset(n) for n in ('report.css', *view_css))}</style></head><body>",
        f"<header class=\"top\"><h1>{title}</h1><div class=\"sub\">{html.escape(subtitle)}</div></header>",
        "<main><div id=\"overview\"></div><div id=\"detail\"></div></main>",
        f"<script type=\"application/json\" id=\"report-data\">{json_for_script(main_data)}</script>",
    ]
    for name, items in (stores or {}).items():
        for i, item in enumerate(items):
            parts.append(f"<script type=\"application/json\" id=\"s-{name}-{i}\">{json_for_script(item)}</script>")
    if plotly:
        parts.append(f"<script type=\"text/plain\" id=\"plotly-js\">{_plotly_js()}</script>")
    parts.append(f"<script>{own}</script>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_page(path: str | os.PathLike[str], page: str) -> None:
    atomic_write_bytes(path, page.encode("utf-8"))
