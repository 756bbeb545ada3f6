"""The audit page's lead when the look is recorded in a cases database: what it opened, reopened and changed.

The block is plain HTML in both languages (its words: ``changes`` in i18n.json), placed before the page's own
overview; the page's language switch sets ``<html lang>``, and the block's style shows the one language it names.
Its data is :meth:`analyzer.desk.cases.LookChanges.to_dict` (the report does not read the database).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from analyzer.report import i18n

#: Cases the block lists one a row (the rest: ``analyzer cases list --changed``).
MAX_ROWS = 50
#: The languages the block is written in (the page's two).
LANGS = ("en", "zh")
_STYLE = ("<style>html:lang(zh) .look-changes[data-lang=en], html:not(:lang(zh)) .look-changes[data-lang=zh]"
          "{display:none}</style>")


def words(lang: str) -> dict[str, str]:
    return dict(i18n.data()["changes"][lang])


def _fill(template: str, *args: Any) -> str:
    out = template
    for k, a in enumerate(args):
        out = out.replace("{" + str(k) + "}", html.escape(str(a)))
    return out


def _level(w: Mapping[str, str], level: Any, kind: Any) -> str:
    if not isinstance(level, (int, float)):
        return "–"
    shown = str(round(level)) if kind == "count" else f"{level:.3g}"  # a count of illegal borrows whole
    return f"{shown} <span class=\"muted\">{html.escape(w.get('level_' + str(kind), str(kind)))}</span>"


def _look(w: Mapping[str, str], look: Mapping[str, Any]) -> str:
    label = look.get("label")
    return _fill(w["look_labelled"] if label else w["look"], look["look_id"], look["at"], label or "")


def _rows(w: Mapping[str, str], changes: list[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(w[k])}</th>" for k in ("col_what", "col_case", "col_kind", "col_members",
                                                               "col_verdict", "col_level", "col_status"))
    body = []
    for ch in changes[:MAX_ROWS]:
        members = " + ".join(html.escape(str(m)) for m in ch["members"])
        if ch.get("report_index") is not None:  # the pair (a group's: its best pair) in this page
            members = f"<a href=\"#pair={int(ch['report_index'])}\">{members}</a>"
        verdict = html.escape(w.get("verdict_" + str(ch["verdict"]), str(ch["verdict"])))
        level = _level(w, ch.get("level"), ch.get("level_kind"))
        if ch["what"] != "new" and ch.get("before_verdict") is not None:
            before = html.escape(w.get("verdict_" + str(ch["before_verdict"]), str(ch["before_verdict"])))
            if before != verdict:
                verdict = f"{before} → {verdict}"
            level = f"{_level(w, ch.get('before_level'), ch.get('before_kind'))} → {level}"
        body.append(f"<tr data-role=\"change\" data-what=\"{html.escape(str(ch['what']))}\">"
                    f"<td>{html.escape(w['what_' + str(ch['what'])])}</td><td class=\"num\">#{int(ch['case_id'])}</td>"
                    f"<td>{html.escape(w.get('kind_' + str(ch['kind']), str(ch['kind'])))}</td>"
                    f"<td><bdi class=\"ids\">{members}</bdi></td><td>{verdict}</td><td class=\"num\">{level}</td>"
                    f"<td>{html.escape(w.get('status_' + str(ch['status']), str(ch['status'])))}</td></tr>")
    more = len(changes) - MAX_ROWS
    tail = f"<p class=\"muted\">{_fill(w['more'], more)}</p>" if more > 0 else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{tail}"


def _one(data: Mapping[str, Any], lang: str) -> str:
    w = words(lang)
    counts = data["counts"]
    prev = data.get("previous")
    title = _fill(w["title"], data["look_id"])
    if prev is None:
        against = html.escape(w["first_look"])
    else:
        against = _fill(w["against"], _look(w, prev))
    summary = _fill(w["counts"], counts["new"], counts["reopened"], counts["changed"])
    again = f" {html.escape(w['already'])}" if data.get("already") else ""
    body = (_rows(w, list(data["changes"])) if data["changes"] else
            f"<p data-role=\"no-changes\">{html.escape(w['nothing'] if prev is not None else w['nothing_first'])}</p>")
    return (f"<section class=\"box look-changes\" data-role=\"look-changes\" data-lang=\"{lang}\" "
            f"lang=\"{'zh-CN' if lang == 'zh' else 'en'}\"><h2>{title}</h2>"
            f"<p>{_look(w, data)}: {against}. <strong data-role=\"change-counts\">{summary}</strong>{again}</p>"
            f"{body}<p class=\"muted\">{html.escape(w['help'])}</p></section>")


def changes_html(data: Mapping[str, Any]) -> str:
    """The block, in both languages (one shown at a time)."""
    return _STYLE + "".join(_one(data, lang) for lang in LANGS)


def lead_with_changes(page: str, data: Mapping[str, Any] | None) -> str:
    """``page`` (an audit page) with the block first in its main part; the page as it is when ``data`` is None (no cases
    database given: the page says nothing about changes)."""
    if data is None:
        return page
    at = page.index("<main>") + len("<main>")
    return page[:at] + changes_html(data) + page[at:]
