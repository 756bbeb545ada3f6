"""Problems found in a log, as data: a stable code, where it is, and a sentence a person can act on."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

#: Every problem code the validator emits, with what it means. The README's table is checked
#: against this dict by a test, so the two cannot drift.
CODES: dict[str, str] = {
    # reading
    "io-error": "a path cannot be read (missing, unreadable, bad gzip)",
    "line-too-long": "a line is longer than --max-line-bytes; it is skipped without being parsed",
    "not-utf8": "a line is not valid UTF-8",
    "not-json": "a line is not JSON",
    "not-object": "a line is JSON but not an object",
    "duplicate-key": "a key appears twice in one JSON object (readers disagree on which value counts)",
    # shape (schema)
    "missing-field": "a required field is absent",
    "extra-field": "a field the format does not define",
    "bad-type": "a field has the wrong type or an out-of-range value",
    "unknown-format": "`format` is not \"bieqi-log\"",
    "unknown-version": "`version` is not a supported version (1)",
    "unknown-variant": "`variant` names no known game",
    "bad-card": "a card code names no card",
    "bad-time": "`started_at` is not an RFC 3339 time",
    "bad-rules": "`rules` names an unknown option or an invalid value",
    "id-too-long": "a hand, table or player id longer than 256 characters (an id is repeated in every output that "
                   "names it)",
    # the hand itself
    "bad-players": ("not 4 distinct non-empty player ids (two that look alike once normalised count as the same; "
                    "one only of spaces or zero-width characters is empty)"),
    "bad-deal": "the deal is not the variant's cards, dealt in the right counts",
    "duplicate-hand-id": "the hand id was already used earlier in the input",
    "duplicate-deal": "the same deal, players and moves as an earlier hand: a copy of it under another id",
    "lookalike-ids": ("a hand or player id spelled otherwise than an earlier hand's that looks the same once normalised "
                      "(one player under two spellings, or two a reader cannot tell apart); the hand stays valid"),
    "first-action": "the first action is not the 7 of spades played by its holder",
    "out-of-turn": "an action by a seat whose turn it is not",
    "card-not-held": "an action with a card that is not in the actor's hand",
    "not-live": "a play of a card that is not live",
    "cover-with-live": "a cover while the actor holds a live card",
    "missing-actions": "the hand ends before every card is played or covered",
    "extra-actions": "actions after the hand is over",
    "time-backwards": ("an action's `ms` is smaller than the one before, or a hand of a table whose rules span its hands "
                       "(借牌, 信阳黑七) starts before the table's previous hand"),
    "result-mismatch": "the recorded result differs from the replay",
    "result-not-zero-sum": "the recorded scores do not sum to zero",
    # table variant with borrowing (bieqi-borrow)
    "borrow-with-live": "a borrow while holding a live card (the seed's named cheat)",
    "wrong-lender": "a borrow from someone other than the next player who still holds cards",
    "empty-hand-acts": "a player whose hand is empty acts",
    "bad-dealer": "the dealer is not the loser of the table's previous hand",
    "bad-lend": "a lent card the rules forbid (the joker, when rule lend_joker is false)",
    # 信阳黑七 (xinyang-heiqi)
    "bad-bidding": "a bid out of turn, not lower than the lowest so far, or after a final pass",
    "bad-dealer-choice": "the dealer is not the lowest bidder (or set when all passed)",
    "bad-bury": "buried cards the dealer did not hold after taking the bottom",
    "bad-lead": "a lead that is not a single, a pair or a tractor of one suit",
    "bad-follow": "a follow that breaks the follow-suit, pair or tractor obligation",
    "wrong-leader": "a trick led by a seat that did not win the trick before",
    "bad-first-bidder": "the first bidder is not the seat after the table's previous hand's first bidder (after a "
                        "pass-out, the seat the rule option redeal_first_bidder names: the same by default)",
}


@dataclass(slots=True)
class Problem:
    """One thing wrong with one record (or one line that is not a record)."""

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    hand_id: str | None = None
    action: int | None = None
    seat: int | None = None
    player: str | None = None
    trick: int | None = None
    #: the game (variant name) of the hand, when its line decoded into a record: a mixed room's summary and page list
    #: each game's own problems
    game: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The problem for programs: ``action`` is the 0-based index into the log's ``actions``
        (the ``$.actions[i]`` of messages) and ``move`` the same action counted from 1, as people read it;
        ``game`` when known."""
        d = asdict(self)
        d["file"], d["message"] = None if self.file is None else path_text(self.file), path_text(self.message)
        for key in ("trick", "game"):
            if d[key] is None:
                del d[key]
        d["move"] = None if self.action is None else self.action + 1
        return d

    def format(self) -> str:
        """One line for people: ``file:line: hand H, move 8 (seat 2, p3): [code] message`` (moves and tricks count
        from 1)."""
        where = f"{self.file or '-'}:{self.line}" if self.line else (self.file or "-")  # a whole file's: no line
        parts = []
        if self.hand_id is not None:
            parts.append(f"hand {shown_id(self.hand_id)}")
        if self.trick is not None:  # counted from 1 for people too (``trick`` in JSON stays the 0-based index)
            parts.append(f"trick {self.trick + 1}")
        if self.action is not None:
            parts.append(f"move {self.action + 1}")
        if self.seat is not None:
            parts.append(f"seat {self.seat}" + (f" ({shown_id(self.player)})" if self.player is not None else ""))
        ctx = ", ".join(parts)
        return printable(f"{where}: {ctx + ': ' if ctx else ''}[{self.code}] {self.message}")


#: The longest id (hand, player) a line or a page shows whole: a hostile log's 40 KB hand id, repeated in each of its
#: problems, made a validation page of 200 MB from an 11 MB log. Every id a record may hold (at most 256 characters,
#: ``variants.record.MAX_ID_LENGTH``) is shown whole, and JSON keeps it whole; a line refused for a longer one carries
#: it cut (``explain.cut_id``).
MAX_SHOWN_ID = 256


def shown_id(text: str, limit: int = MAX_SHOWN_ID) -> str:
    """An id (or message) as lines and pages show it: whole up to ``limit`` characters, else its start and its size."""
    return text if len(text) <= limit else f"{text[:limit - 40]}... ({len(text):,} characters)"


def path_text(name: str) -> str:
    """A text that may hold a file name, made fit for data (JSON, HTML, CSV): a name whose bytes are not UTF-8 comes
    from the operating system with each such byte as a lone surrogate (``\\udcff``, Python's surrogateescape),
    which no UTF-8 encoder (orjson, the page's bytes) accepts; each becomes the byte's escape, ``\\xff``, as
    ``ls -b`` would show it. Any other text is returned as it is (the one way every command puts a path into
    data: problems' ``file`` and ``message``, pages, audit.json). Text output for people goes through
    :func:`printable` instead."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file system byte gives: escaped as the code point
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


#: Characters Python counts as printable that still show nothing or change nothing a reader sees: the combining
#: grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other variation selectors, the Braille blank.
_BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                    "\U000e0100-\U000e01ef]")


class _Escapes(dict[int, str]):
    """``str.translate``'s table for :func:`printable`, filled as characters come (one Python call a distinct
    character, then C speed: an id of a million hidden characters is escaped in milliseconds, not seconds)."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if ch.isprintable() and _BLANK.match(ch) is None:
            shown = ch
        else:
            shown = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
        if len(self) >= 1 << 16:  # bounded: a text of every code point must not keep a table of them all
            self.clear()
        self[code] = shown
        return shown


_ESCAPES = _Escapes()


def printable(text: str) -> str:
    """``text`` with every control or invisible character escaped (``\\x1b``, ``\\u202e``, ``\\U000e0041``): data
    from a log can then neither forge lines, move the cursor, retitle the terminal, reorder what follows, nor
    hide a character. Escaped is what Unicode calls other or separator (``str.isprintable``: controls, format
    characters such as the soft hyphen, zero-width and bidi controls and tag characters, private-use,
    surrogate and unassigned code points, line and paragraph separators, spaces other than the ASCII space)
    and the few blank marks of :data:`_BLANK`."""
    if text.isprintable() and (text.isascii() or _BLANK.search(text) is None):
        return text
    return text.translate(_ESCAPES)


#: Ids longer than this are not kept in :func:`id_key`'s cache (a log's ids could be up to a line long each).
_KEY_CACHED = 64


def id_key(text: str) -> str:
    """What a person could tell of an id: NFKC (compatibility forms, NFC against NFD), case folded, without its
    format and blank characters (zero-width, soft hyphen, tags, variation selectors) and without leading or
    trailing whitespace. Two ids with one key look alike."""
    return _cached_key(text) if len(text) <= _KEY_CACHED else _key(text)


def _key(text: str) -> str:
    if text.isascii():  # NFKC changes no ASCII, and ASCII has no format character
        return text.strip().lower()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    # format characters (Unicode's category Cf: soft hyphen, zero-width and bidi controls, tags...) as this Python's
    # Unicode knows them (a written list would fall behind a newer Unicode), dropped by str.translate: one question a
    # distinct character, not one a character (an id that NFKC expands 18-fold cost seconds a line)
    return folded.translate(_HIDDEN).strip()


#: Letters of other scripts drawn as Latin ones (a small skeleton after Unicode's confusables, UTS #39, which Python's
#: ``unicodedata`` lacks): Cyrillic and Greek letters whose glyph is a Latin letter's in common fonts, capital and
#: small, mapped to that letter (``р1``, Cyrillic er, reads as ``p1``). A capital counts as its small letter does once
#: case folded (Greek ``Η`` is drawn as ``H``: ``η`` maps to ``h``). Latin letters alike among themselves (``l``,
#: ``I`` and ``1``; ``rn`` and ``m``) are not here: real ids differ by them.
CONFUSABLE = dict(zip(
    "авекмнорстухѕіјԁԛԝһӏАВЕКМНОРСТУХЅІЈԚԜҺӀ" "αβεζηικμνορτυχϲϳΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿɑıȷ",
    "abekmhopctyxsijdqwhlABEKMHOPCTYXSIJQWHI" "abezhikmnoptyxcjABEZHIKMNOPTYXCJaij"))


class _Hidden(dict[int, "str | None"]):
    """``str.translate``'s table for :func:`id_key`: None (dropped) for a format or blank character, a letter of
    another script drawn as a Latin one (:data:`CONFUSABLE`) as that Latin letter, filled as characters come."""

    def __missing__(self, code: int) -> str | None:
        ch = chr(code)
        kept = None if unicodedata.category(ch) == "Cf" or _BLANK.match(ch) is not None else CONFUSABLE.get(ch, ch)
        if len(self) >= 1 << 16:  # bounded, as _Escapes
            self.clear()
        self[code] = kept
        return kept


_HIDDEN = _Hidden()


_cached_key = lru_cache(maxsize=4096)(_key)  # a room's ids come back hand after hand


def lookalike_ids(ids: Sequence[str]) -> tuple[int, int] | None:
    """The first two positions (i < j) of ``ids`` that hold the same id or two that look alike
    (:func:`id_key`), or None when a person can tell every id apart. On the validator's path for every hand: ASCII
    ids are compared directly (~0.5 us a hand), others through a cache of the tables' ids (they come back hand after
    hand)."""
    joined = "".join(ids)
    if joined.isascii():  # the usual ids: their keys are their lower-case forms, stripped (no cache needed)
        return None if len({x.strip().lower() for x in ids}) == len(ids) else _lookalike(ids)
    if len(joined) <= _KEY_CACHED * 4:
        return _lookalike_cached(tuple(ids))
    return _lookalike(ids)


def blank_id(ids: Sequence[str]) -> int | None:
    """The first position of ``ids`` whose id is blank once normalised (only spaces, zero-width or other format
    characters: :func:`id_key` is empty), or None. Such an id names nobody a person could see."""
    for i, x in enumerate(ids):
        if not id_key(x):
            return i
    return None


def blank_hand_id(hand_id: str) -> bool:
    """Whether a hand id is blank once normalised (``"   "``, a zero-width space): it names no hand a person could see
    or ask for. Hand ids are each new, so :func:`id_key`'s cache is left to the players' ids."""
    return not (hand_id.strip() if hand_id.isascii() else _key(hand_id))


def named_table(table_id: str | None) -> str | None:
    """The table a hand's ``table_id`` names, for the checks that chain a table's hands (the dealer, the first
    bidder): None for no id or a blank one (``""``, spaces, a zero-width space), which names no table. A writer that
    fills the field with ``""`` for "no table" would otherwise chain every such hand of a log into one table and
    draw false ``bad-dealer`` problems."""
    return None if table_id is None or blank_hand_id(table_id) else table_id


def _lookalike(ids: Sequence[str]) -> tuple[int, int] | None:
    keys = [id_key(x) for x in ids]
    if len(set(keys)) == len(keys):
        return None
    first: dict[str, int] = {}
    for j, k in enumerate(keys):
        if k in first:
            return first[k], j
        first[k] = j
    return None  # not reached: two keys are equal


_lookalike_cached = lru_cache(maxsize=8192)(_lookalike)


def quote_ids(a: str, b: str) -> tuple[str, str]:
    """Two ids for a message, quoted so a reader sees how they differ: escaped as :func:`printable` does, or,
    when that shows them the same (``café`` composed and decomposed), with every non-ASCII character as its
    code point."""
    qa, qb = f"'{printable(a)}'", f"'{printable(b)}'"
    if _drawn(qa) == _drawn(qb):  # canonically equivalent, or letters of two scripts: drawn alike
        qa, qb = (f"'{x.encode('ascii', 'backslashreplace').decode()}'" for x in (a, b))
    return qa, qb


def _drawn(text: str) -> str:
    """``text`` as it is drawn, near enough: NFC, and every letter of :data:`CONFUSABLE` as the Latin one it looks
    like."""
    return unicodedata.normalize("NFC", text).translate(_DRAWN)


_DRAWN = str.maketrans(CONFUSABLE)


class IdSpellings:
    """The cross-hand check of ids that look alike (``lookalike-ids``): the first spelling of each id as a person reads
    it (:func:`id_key`), per kind (hands, players), and one problem for each other spelling of it, at the first hand
    that uses that spelling. An id costs one dict entry (~120 bytes; ~1 us a hand): the first spelling's text is kept
    only when it differs from its key (``Alice``, ``Ａ1``), a plain one (``alice``) being its own key."""

    __slots__ = ("_hands", "_players", "_names", "_numbers", "_file", "_number", "_said", "_exact")

    def __init__(self) -> None:
        self._hands: dict[int, int | tuple[str, int]] = {}  # hash of the key -> where (file number, line) [, spelling]
        self._players: dict[int, int | tuple[str, int]] = {}
        self._names: list[str] = []
        self._numbers: dict[str, int] = {}  # file -> its place in ``_names``
        self._file: str | None = None  # the file of the last hand, and its number in ``_names``
        self._number = 0
        self._said: set[tuple[bool, str]] = set()  # (a player's?, spelling) already reported
        self._exact: set[str] = set()  # player ids seen as written: a room's players come back hand after hand

    def check(self, file: str, line: int, hand_id: str | None, players: Sequence[str] | None) -> list[Problem]:
        """The ``lookalike-ids`` problems of one hand (its hand id, and its players' ids by seat)."""
        if file is not self._file:
            self._file = file
            number = self._numbers.get(file)
            if number is None:  # by a dict: a folder of 100,000 files costs no search a file
                number = self._numbers[file] = len(self._names)
                self._names.append(file)
            self._number = number
        place = self._number << 40 | line
        found = []
        if hand_id is not None:
            said = self._see(self._hands, False, hand_id, place)
            if said is not None:
                found.append(Problem("lookalike-ids", f"hand id {said[0]} looks like hand id {said[1]} of the hand at "
                                     f"{said[2]} (the same once normalised): two hands a reader cannot tell apart",
                                     file=file, line=line, hand_id=hand_id))
        if players is None or self._exact.issuperset(players):
            return found
        for seat, x in enumerate(players):
            if x in self._exact:
                continue
            said = self._see(self._players, True, x, place)
            if said is None:
                if len(self._exact) < 1 << 20:  # bounded (a log of a new player each hand)
                    self._exact.add(x)
                continue
            found.append(Problem("lookalike-ids", f"player id {said[0]} looks like player id {said[1]} of the hand at "
                                 f"{said[2]} (the same once normalised): one player under two spellings, or two "
                                 f"players a reader cannot tell apart; the other commands count them as two players",
                                 file=file, line=line, hand_id=hand_id, seat=seat, player=x))
        return found

    def _see(self, first: dict[int, int | tuple[str, int]], player: bool, x: str,
             place: int) -> tuple[str, str, str] | None:
        """(this spelling, the first one, where that was: quoted for a message) when ``x`` is a new spelling of an id
        seen before; else None (and ``x`` remembered when its id is new)."""
        key = x.strip().lower() if x.isascii() else id_key(x)
        h = hash(key)
        got = first.get(h)
        if got is None:
            first[h] = place if x == key else (x, place)
            return None
        was, where = (key, got) if isinstance(got, int) else got
        if was == x or (player, x) in self._said:
            return None
        self._said.add((player, x))
        a, b = quote_ids(x, was)
        return a, b, f"{self._names[where >> 40]}:{where & ((1 << 40) - 1)}"
