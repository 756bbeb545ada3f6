"""The self-contained page shell shared by every report: labels, safe JSON embedding, assets, CSP."""

from __future__ import annotations

import base64
import hashlib
import html
import math
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import orjson

from analyzer.logs import atomic_write_bytes
from analyzer.problems import CODES, path_text
from analyzer.report import i18n
from analyzer.report.i18n import LANGS
from analyzer.report.case_labels import CASE_LABELS
from analyzer.report.findings import FINDINGS_LABELS

#: Every label the pages show, by language, from i18n.json (the one file pages, docs and tests share).
#: The script looks keys up with ``t(key)``; a test checks both languages define every key it uses.
LABELS: dict[str, dict[str, str]] = {lang: i18n.labels(lang) for lang in LANGS}

# the case file's labels live with the case file (analyzer/report/case_labels.py)
for _lang, _labels in CASE_LABELS.items():
    LABELS[_lang].update(_labels)
for _lang, _labels in FINDINGS_LABELS.items():  # the other games' findings (analyzer/report/findings.py)
    LABELS[_lang].update(_labels)

#: Default regret (points) from which a decision counts as a big deviation in the replayer.
BIG_DEVIATION = 5.0


#: Characters that are invisible or reorder text: C1 controls and DEL, bidi overrides, isolates and marks,
#: zero-width ones, the soft hyphen, the combining grapheme joiner, tag characters and variation selectors
#: (C0 controls are added where raw; in JSON they arrive as escapes).
_HIDDEN = ("\\x7f-\\x9f\\xad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f"
           "\\u2028-\\u202e\\u2060-\\u206f\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb"
           "\\U000e0000-\\U000e007f\\U000e0100-\\U000e01ef")
#: In the JSON text: an escape (kept whole, so an escaped backslash is never misread), or a hidden character.
_ESCAPE_OR_HIDDEN = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)|[" + _HIDDEN + "]")
_HIDDEN_CHAR = re.compile("[\\x00-\\x1f" + _HIDDEN + "]")
_SHORT_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "b": 0x08, "f": 0x0C}


def _visible(m: re.Match[str]) -> str:
    """A hidden character as visible text (a log's id cannot hide, forge or reverse what the page shows)."""
    tok = m[0]
    if tok[0] != "\\":
        code = ord(tok)
    elif tok[1] in _SHORT_ESCAPES:
        code = _SHORT_ESCAPES[tok[1]]
    elif tok[1] == "u" and int(tok[2:], base=16) < 0x20:  # noqa: FURB166 - a JSON escape, not a 0x literal
        code = int(tok[2:], base=16)  # noqa: FURB166
    else:
        return tok  # \\, \", \/ and other escapes stay as they are
    return chr(0x2400 + code) if code < 0x20 else f"\u2039U+{code:04X}\u203a"  # ␊ ␛ ..., ‹U+202E›


def visible_text(text: str) -> str:
    """``text`` with its control and invisible characters shown (for text the page's HTML holds itself)."""
    return _HIDDEN_CHAR.sub(_visible, text)


def json_for_script(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` can end the element,
    and every control or invisible character of the data (ids from logs) is shown as visible text."""
    text = orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY, default=_default).decode()
    text = _ESCAPE_OR_HIDDEN.sub(_visible, text)
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
    # the games' hand views: their scripts, styles and labels (both languages ride along, so the
    # page's switch changes language without running anything again)
    from analyzer.report.views import page_assets

    view_js, view_css, view_labels = page_assets()
    # the script's words; the glossary (docs only) and the "since the last look" block's words (HTML made in Python,
    # analyzer/report/changes.py) stay out of every page
    words = {k: v for k, v in i18n.data().items() if k not in ("_about", "glossary", "changes")}
    words["labels"] = {lg: {**LABELS[lg], **view_labels.get(lg, {})} for lg in LANGS}
    words["codes_en"] = dict(CODES)
    labels = words["labels"][lang]
    main_data = {"page": kind, "lang": lang, "i18n": words, "threshold": BIG_DEVIATION, **data}
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
        "<header class=\"top\"><div id=\"lang-switch\" class=\"lang-switch\"></div>",
        f"<h1 id=\"page-title\">{title}</h1><div class=\"sub\" data-raw=\"1\"><bdi>{html.escape(visible_text(path_text(subtitle)))}"
        "</bdi></div></header>",
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
