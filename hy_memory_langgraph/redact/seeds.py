"""Wallet seed phrases: 12, 15, 18, 21 or 24 words of one BIP39 list whose checksum holds.

A BIP39 mnemonic is 12, 15, 18, 21 or 24 words of a list of 2,048 (one list per
language: English, Spanish, French, Italian, Portuguese, Czech, Japanese, Korean, Chinese
simplified and traditional; Russian and Turkish lists are in use too); whoever holds the
words holds the wallet. The lists ship as data (``bip39/``, see its ``NOTICE``).

The standard makes a phrase check itself: each word is 11 bits (its index in the list),
and the last ``n / 3`` bits of ``11 n`` are the first bits of the SHA-256 of the others
(the entropy). A wallet refuses words whose checksum fails; so does this module. A run of
list words is read as words stand in a list: separated by spaces, line breaks, commas,
table bars, numbering (``1.``, ``12)``, ``#3``, ``(4)``, ``1-word``), quotes and brackets
(a JSON array), an "and" before the last; in any case, accents typed or not. Of a run, the
whole run and the phrases of each length that begin or end it are checked, in every list
it belongs to; a phrase whose checksum holds is a seed phrase, unless it repeats words as
the standard's test vectors do (``abandon`` eleven times and ``about``: a public example,
no one's wallet). Lists of ordinary words fail the checksum as often as the checksum has
bits to fail (15 of 16 twelve-word lists, 255 of 256 of 24 words); so does a phrase
copied with a typo, which a label still finds: a run of list words right after words that
name a seed phrase (``seed_labels`` of ``patterns.toml``: "recovery phrase:", "助记词")
is one whatever its checksum. Chinese and Japanese
words count only written apart (the lists' single characters are everywhere in running text).

Example:
    >>> text = "seed: legal winner thank year wave sausage worth useful legal winner thank yellow thanks"
    >>> [(text[s:e].split()[0], len(text[s:e].split()), kind) for s, e, kind in seed_phrases(text)]
    [('legal', 12, 'seed_phrase')]
    >>> seed_phrases("legal winner thank year wave sausage worth useful legal winner thank yard")
    []
    >>> seed_phrases("We went hiking near the lake and saw a deer, then had coffee")
    []
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from pathlib import Path
from typing import Final

from hy_memory_langgraph.redact.rules import load_rules

KIND: Final = "seed_phrase"
#: The lengths of a mnemonic, longest first.
LENGTHS: Final = (24, 21, 18, 15, 12)
#: Fewest words of a phrase (BIP39's shortest mnemonic).
MIN_WORDS: Final = 12
_LISTS: Final = Path(__file__).with_name("bip39")
#: A token between separators: spaces (the ideographic one too), commas, semicolons,
#: colons, 、, table bars.
_TOKEN: Final = re.compile(r"[^\s,，、;；:：|]+")
#: A number that numbers the words (``1.``, ``12)``, ``#3``, ``(4)``), and a dash or an arrow
#: after it (``1 - word``, ``1 => word``): it neither counts nor breaks a run; also in front of
#: its word (``1-word``, ``1.word``).
_NUMBERING: Final = re.compile(r"[#(]?\d{1,2}[.):]?|[-–—=>→]{1,2}")
_NUMBERED: Final = re.compile(r"\d{1,2}[-.)](?=[^\W\d_])")
#: Punctuation a word may carry at either end ("words: abandon, … about.", a JSON array).
_EDGES: Final = "\"'“”‘’()[]{}.:!?*`"
#: Words for "and" before a list's last word: skipped inside a run.
#: Most characters of a phrase's half read from the end of one message and the start of the next.
_HALF_PHRASE: Final = 400
_AND: Final = frozenset({"and", "&", "et", "und", "y", "e", "en", "och", "og", "ja", "és", "ve", "и", "i", "a",
                         "oraz", "dan", "và", "と", "和", "및", "그리고"})


@functools.cache
def _lists() -> tuple[dict[str, int], ...]:
    """Each list as its words' indices (lower case, composed as people type them: some
    lists ship decomposed, ``e`` and a combining accent, Korean as jamo; also without accents)."""
    lists = []
    for path in sorted(_LISTS.glob("*.txt")):
        index: dict[str, int] = {}
        for number, word in enumerate(path.read_text(encoding="utf-8").split()):
            for form in {unicodedata.normalize("NFC", word.lower()), _plain(word.lower())}:
                index[form] = number
        lists.append(index)
    return tuple(lists)


@functools.cache
def _words() -> dict[str, int]:
    """Every word of every list, with a bit per list it is in."""
    found: dict[str, int] = {}
    for bit, index in enumerate(_lists()):
        for form in index:
            found[form] = found.get(form, 0) | 1 << bit
    return found


def _plain(word: str) -> str:
    """``word`` without accents (``récupérer`` → ``recuperer``), as people often type them."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _spaced(text: str) -> bool:
    """Whether ``text`` has enough separators to hold :data:`MIN_WORDS` words (a cheap test)."""
    return text.count(" ") + text.count("\n") + text.count(",") + text.count("\u3000") + text.count("、") \
        >= MIN_WORDS - 1


#: Separators made spaces, for the first look at a text's tokens.
_AS_SPACES: Final = str.maketrans({c: " " for c in ",，、;；:：|"})


def _word(token: str) -> str:
    """A token as a list word would be looked up: lower case, composed, its numbering and
    edges off."""
    numbered = _NUMBERED.match(token) if token[:1].isdigit() else None
    word = token[numbered.end() if numbered else 0:].strip(_EDGES).lower()
    return word if word.isascii() else unicodedata.normalize("NFC", word)


def _member(token: str, words: dict[str, int]) -> bool:
    return _word(token) in words or token.lower() in _AND or _NUMBERING.fullmatch(token) is not None


def _may_hold_run(text: str, words: dict[str, int]) -> bool:
    """Whether ``text`` has :data:`MIN_WORDS` tokens in a row that are list words or numbers
    (any lists): the token :data:`MIN_WORDS` ahead is looked up first, and a miss skips
    past it, so ordinary prose costs a few lookups."""
    tokens = text.translate(_AS_SPACES).split()
    i = MIN_WORDS - 1
    while i < len(tokens):
        if not _member(tokens[i], words):
            i += MIN_WORDS
            continue
        j = i - 1
        while j > i - MIN_WORDS and _member(tokens[j], words):
            j -= 1
        if j == i - MIN_WORDS:
            return True
        i = j + MIN_WORDS
    return False


#: A run of list words: each word with its start, its end and what separates it from the word
#: before, and the lists all of them are in.
_Run = tuple[list[tuple[str, int, int, str]], int]
_DIGIT: Final = re.compile(r"\d")
#: Most words of prose a run may hold beside its phrase (the run read as the phrase plus them).
_PROSE_AROUND: Final = 2
#: Numbering that starts a list (``1.``, ``1)``, ``#1``, ``1 -``) at the end of a separator.
_NUMBERED_ONE: Final = re.compile(r"(?<![\w])#?1[ \t]*[.):–—-]?\s*$")


def _runs(text: str) -> list[_Run]:
    """The runs of :data:`MIN_WORDS` or more words of one list in ``text`` (numbering and
    "and" skipped); a word that ends a sentence ends its run."""
    words = _words()
    runs: list[_Run] = []
    run: list[tuple[str, int, int, str]] = []
    mask = 0
    for token in _TOKEN.finditer(text):
        raw = token.group()
        if _NUMBERING.fullmatch(raw) or (run and raw.lower() in _AND and not words.get(_word(raw), 0) & mask):
            continue  # numbering, or an "and" that is no word of the run's list (和 is a Chinese list's)
        word = _word(raw)
        # a word before a colon is the phrase's label ("seed: …"), not one of its words
        own = 0 if text.startswith((":", "："), token.end()) else words.get(word, 0)
        bits = own & (mask if run else -1)
        if not bits:
            if len(run) >= MIN_WORDS:
                runs.append((run, mask))
            run, bits = [], own
        if bits:
            numbered = _NUMBERED.match(raw)
            start = token.start() + (numbered.end() if numbered else len(raw) - len(raw.lstrip(_EDGES)))
            gap = text[run[-1][2]:start] if run else ""
            run.append((word, start, token.start() + len(raw.rstrip(_EDGES)), gap))
            mask = bits
            if raw.endswith((".", "!", "?")) and len(raw) > 1:
                if len(run) >= MIN_WORDS:
                    runs.append((run, mask))
                run = []
    if len(run) >= MIN_WORDS:
        runs.append((run, mask))
    return runs


def _checksum_holds(words: list[str], index: dict[str, int]) -> bool:
    """Whether ``words`` (a mnemonic's length) pass BIP39's checksum in the list ``index``."""
    number = 0
    for word in words:
        number = number << 11 | index[word]
    bits = len(words) // 3  # checksum bits: one for every 32 bits of entropy
    entropy = (number >> bits).to_bytes((len(words) * 11 - bits) // 8, "big")
    return hashlib.sha256(entropy).digest()[0] >> (8 - bits) == number & ((1 << bits) - 1)


def _phrase(run: list[tuple[str, int, int, str]], mask: int) -> tuple[int, int] | None:
    """The first and last word (indices into ``run``) of the longest seed phrase that is the
    run, or begins or ends it, in one of the lists of ``mask``. A phrase inside a longer run
    is read where the run shows a phrase's edge: a word or two of prose around it ("my
    wallet … please keep"; the phrase's words apart as prose's are, so a list of tags
    separated by commas is not cut), a change of separator (a line break after words apart), or
    numbering that starts again at 1; a list of words goes on alike, and is not cut into
    many phrases to try."""
    lists = _lists()
    for length in LENGTHS:
        if length > len(run):
            continue
        for first in dict.fromkeys((0, len(run) - length)):
            if length < len(run) and not _edge(run, first, length):
                continue
            words = [w for w, _, _, _ in run[first:first + length]]
            if 4 * len(set(words)) < 3 * length:
                continue  # the standard's test vectors: abandon ×11 about, zoo ×11 wrong
            if any(mask >> bit & 1 and _checksum_holds(words, index) for bit, index in enumerate(lists)):
                return first, first + length - 1
    return None


def _edge(run: list[tuple[str, int, int, str]], first: int, length: int) -> bool:
    """Whether the words ``first`` to ``first + length`` of ``run`` stand apart from the rest."""
    inside = {_DIGIT.sub("#", gap) for _, _, _, gap in run[first + 1:first + length]}
    gap = run[first][3] if first else run[first + length][3]
    if len(run) - length <= _PROSE_AROUND and all(not g.strip() for g in inside):
        return True  # words apart as in prose: "my wallet abandon … about"
    return _DIGIT.sub("#", gap) not in inside or (first > 0 and _NUMBERED_ONE.search(gap) is not None)


#: The number a word is given right before it: ``13. word``, ``| 13 | word``, ``13\tword``.
_ORDINAL: Final = re.compile(r"(?<!\d)(\d{1,2})[.):-]?[\s|]*$")


def _numbered(text: str, run: list[tuple[str, int, int, str]], mask: int) -> tuple[int, int] | None | bool:
    """A phrase whose words are numbered, perhaps out of their order on the page (a grid
    numbered down its columns: ``1. a   5. e`` on one line): the run's numbered words,
    when their numbers are 1 to a mnemonic's length, put in their numbers' order and
    checked. The span, in the text, from the first of them to the last; ``None`` when the
    numbers say the words are no phrase; ``False`` when the run is not numbered so."""
    numbered = []
    for word, start, end, _ in run:
        number = _ORDINAL.search(text, max(0, start - 8), start)
        if number is not None:
            numbered.append((int(number.group(1)), word, start, end))
    if len(numbered) not in LENGTHS or sorted(n for n, *_ in numbered) != list(range(1, len(numbered) + 1)):
        return False
    words = [w for _, w, _, _ in sorted(numbered)]
    if any(mask >> bit & 1 and _checksum_holds(words, index) for bit, index in enumerate(_lists())):
        return min(s for _, _, s, _ in numbered), max(e for *_, e in numbered)
    return None


def seed_phrases(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "seed_phrase")`` of each seed phrase in ``text`` (its checksum holds),
    from its first word to its last; numbered words are read in their numbers' order."""
    if len(text) < 2 * MIN_WORDS - 1 or not _spaced(text) or not _may_hold_run(text, _words()):
        return []
    found = []
    for run, mask in _runs(text):
        span = _numbered(text, run, mask)
        if span is False:  # not numbered 1 to n: read in the text's order
            phrase = _phrase(run, mask)
            span = None if phrase is None else (run[phrase[0]][1], run[phrase[1]][2])
        if not span and _labelled(text, run[0][1]):
            span = run[0][1], run[min(len(run), LENGTHS[0]) - 1][2]
        if span:
            found.append((*span, KIND))
    return found


#: How far before a run its label may stand ("my wallet's recovery phrase is: …").
_LABEL_REACH: Final = 80


def _labelled(text: str, start: int) -> bool:
    """Whether words naming a seed phrase stand just before ``start`` (then a run of list
    words is the phrase whatever its checksum: a typo, a misheard word)."""
    before = text[max(0, start - _LABEL_REACH):start].lower()
    return any(label in before for label in load_rules().seed_labels)


def split_phrase(previous: str, current: str) -> tuple[int, int] | None:
    """A seed phrase given in two messages: where its words start in ``previous`` and end in
    ``current``, when the words that end one and start the other make a phrase together.

    Example:
        >>> split_phrase("first half: legal winner thank year wave sausage",
        ...              "worth useful legal winner thank yellow")
        (12, 38)
        >>> split_phrase("I like the lake", "and the woods")
    """
    words = _words()
    label = _HALF_LABEL.match(current)  # "and the rest: …", "后半部分：…"
    skipped = label.end() if label else 0
    last = [t for t in _TOKEN.findall(previous[-_EDGE_REACH:]) if not _NUMBERING.fullmatch(t)][-1:]
    first = [t for t in _TOKEN.findall(current[skipped:skipped + _EDGE_REACH]) if not _NUMBERING.fullmatch(t)][:1]
    if not last or not first or _word(last[0]) not in words or _word(first[0]) not in words:
        return None  # most pairs of messages: two lookups (numbering and commas aside: "07 roof", "aunt,")
    tail, head = previous[-_HALF_PHRASE:], current[skipped:skipped + _HALF_PHRASE]
    offset = len(previous) - len(tail)
    joined = f"{tail}\n{head}"
    for start, end, _ in seed_phrases(joined):
        if start < len(tail) < end:
            return offset + start, end - len(tail) - 1 + skipped
    return None


#: Characters read at the end of one message and the start of the next for their edge words.
_EDGE_REACH: Final = 80
#: Words naming the second half before it ("and the rest:", "second half:", "后半部分："): a
#: short clause ending in a colon at the start of a message.
_HALF_LABEL: Final = re.compile(r"[ \t]*[^\n:：]{1,40}[:：][ \t]*")
