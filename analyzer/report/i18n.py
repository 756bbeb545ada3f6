"""The pages' two languages from one data file (i18n.json): labels, glossary, code meanings, phrases.

report.js embeds the same file and translates in the browser with the same rules as ``translate``
here, so a test can check in Python what a Chinese page will show.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from typing import Any

from analyzer.problems import CODES

LANGS = ("en", "zh")
#: Characters that mark Chinese text (CJK ideographs and CJK punctuation).
CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff01-\uff0f\uff1a-\uff1f]")
_WORD = re.compile(r"[A-Za-z][A-Za-z_'\-]*[A-Za-z]")
#: What may stay ASCII in a Chinese text without being English: JSON paths, quoted names, card codes.
#: A card as the logs write it (``TH``, ``10H``, ``AC``): shown as ``10♥`` in translated text.
_CARD_CODE = re.compile(r"\b(10|[2-9AJQKT])([SHDC])\b")
_NOT_WORDS = re.compile(r"\$[\w.\[\]\-]*|'[^']*'|\"[^\"]*\"|`[^`]*`|\b[\w.]+\.\w+\b")


@cache
def data() -> dict[str, Any]:
    """The whole i18n.json (read once)."""
    out: dict[str, Any] = json.loads(files("analyzer.report").joinpath("i18n.json").read_text(encoding="utf-8"))
    return out


def labels(lang: str) -> dict[str, str]:
    return dict(data()["labels"][lang])


def code_meaning(code: str, lang: str) -> str:
    """A problem code's meaning in ``lang`` (English from analyzer.problems.CODES)."""
    return str(data()["codes_zh"].get(code, CODES.get(code, ""))) if lang == "zh" else CODES.get(code, "")


def key_label(key: str, lang: str) -> str | None:
    """A data key's (signal, evidence column) label in ``lang``, or None when the glossary lacks it."""
    pair = data()["keys"].get(key)
    return None if pair is None else str(pair[LANGS.index(lang)])


@cache
def _phrases() -> list[tuple[re.Pattern[str], str]]:
    macros = data()["macros"]
    out = []
    for pattern, zh in data()["phrases"]:
        for name, value in macros.items():
            pattern = pattern.replace(name, value)
        out.append((re.compile(pattern), zh))
    return out


def pretty_cards(text: str) -> str:
    """Card codes (``TH``) as the pages show cards (``10♥``)."""
    return _CARD_CODE.sub(lambda m: ("10" if m.group(1) in ("T", "10") else m.group(1)) + "♠♥♦♣"["SHDC".index(m.group(2))],
                          text)


def english_words(text: str) -> list[str]:
    """English words left in a text meant to be Chinese (paths, quoted names and allowed terms aside)."""
    allowed = set(data()["allowed_ascii"])
    return [w for w in _WORD.findall(_NOT_WORDS.sub(" ", text)) if w not in allowed]


def translate_part(part: str) -> str | None:
    """One "; "-separated part of a message or reason in Chinese, or None when no phrase knows it."""
    words = data()["words"]
    for rx, zh in _phrases():
        m = rx.match(part)
        if m:
            out = zh
            for i, g in enumerate(m.groups(), 1):
                out = out.replace("{" + str(i) + "}", pretty_cards(words.get(g, g)) if g is not None else "")
            return out.replace("none", words["none"])
    return None


def translate(text: str, code: str | None = None) -> str:
    """A problem message (give its ``code``) or a decision's reasons in Chinese.

    Parts no phrase knows are left out, with a note that the original says more; a message left
    empty (or still English) falls back to its code's meaning. report.js does the same in the page.
    """
    whole = translate_part(text.strip())
    parts = [whole] if whole is not None else [translate_part(p.strip()) for p in text.split(";") if p.strip()]
    known = [p for p in parts if p is not None]
    out = "；".join(known)
    if code is not None and (not known or english_words(out)):
        return code_meaning(code, "zh")
    if len(known) < len(parts):  # say that something was left out: the original is the tooltip
        out += labels("zh")["untranslated_rest" if known else "untranslated_all"]
    return out


def glossary_markdown() -> str:
    """docs/glossary.md, made from i18n.json (a test checks the file is up to date)."""
    lines = ["# Glossary / 术语表", "",
             "The words the pages, the command line and the docs use, in both languages. Made from",
             "`analyzer/report/i18n.json` by `python -m analyzer.report.i18n > docs/glossary.md` (a test",
             "checks it is current); the pages read the same file.", "",
             "| English | 中文 | meaning | 含义 |", "|---|---|---|---|"]
    for g in data()["glossary"]:
        lines.append(f"| {g['en']} | {g['zh']} | {g['en_note']} | {g['zh_note']} |")
    lines += ["", "## Signals of the audit / 审查信号", "", "| key | English | 中文 |", "|---|---|---|"]
    for k in ("favour", "marginal", "dd_marginal", "imm_marginal", "total", "pooled", "codev", "think"):
        en, zh = data()["keys"][k]
        lines.append(f"| `{k}` | {en} | {zh} |")
    lines += ["", "## Problem codes / 问题代码", "", "| code | 含义 |", "|---|---|"]
    for code in CODES:
        lines.append(f"| `{code}` | {data()['codes_zh'][code]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(glossary_markdown(), end="")
