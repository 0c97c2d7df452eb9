"""Wallet seed phrases: twelve or more words in a row from one BIP39 word list.

A BIP39 mnemonic is 12, 15, 18, 21 or 24 words of a list of 2,048 (one list per
language: English, Spanish, French, Italian, Portuguese, Czech, Japanese, Korean, Chinese
simplified and traditional; Russian and Turkish lists are in use too); whoever holds the
words holds the wallet. The lists ship as data (``bip39/``, see its ``NOTICE``).

A phrase is a run of at least :data:`MIN_WORDS` words all in one language's list, written
one after another with nothing but spaces, line breaks, commas or numbering between them
(``1. word 2. word``, ``1) word`` a line), three quarters of them different (a seed
repeats few words; ``True, False, True, …`` in code is a list of flags). No checksum is asked for (a phrase copied with
a typo is still a secret). Prose does not make such runs: its function words (``the``,
``and``, ``I``, ``de``, ``的``…) are not in the lists, and a list of Chinese or Japanese words
counts only written apart (the lists' single characters are everywhere in running text).
The longest run in LoCoMo's, τ-bench's and BFCL's messages is 8 words.

Example:
    >>> words = "abandon ability able about above absent absorb abstract absurd abuse access accident"
    >>> text = f"seed: {words} thanks"
    >>> [(text[s:e].split()[0], len(text[s:e].split()), kind) for s, e, kind in seed_phrases(text)]
    [('abandon', 12, 'seed_phrase')]
    >>> seed_phrases("We went hiking near the lake and saw a deer, then had coffee")
    []
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path
from typing import Final

KIND: Final = "seed_phrase"
#: Fewest words of a phrase (BIP39's shortest mnemonic).
MIN_WORDS: Final = 12
_LISTS: Final = Path(__file__).with_name("bip39")
#: A token between separators: spaces (the ideographic one too), commas, semicolons, colons, 、.
_TOKEN: Final = re.compile(r"[^\s,，、;；:：]+")
#: A number that numbers the words (``1.``, ``12)``, ``#3``, ``(4)``): it neither counts nor
#: breaks a run.
_NUMBERING: Final = re.compile(r"[#(]?\d{1,2}[.):]?")
#: Punctuation a word may carry at either end ("words: abandon, … about.").
_EDGES: Final = "\"'“”‘’()[]{}.:!?*`"


@functools.cache
def _words() -> dict[str, int]:
    """Every word of every list (lower case, also without accents), with a bit per list."""
    found: dict[str, int] = {}
    for bit, path in enumerate(sorted(_LISTS.glob("*.txt"))):
        for word in path.read_text(encoding="utf-8").split():
            for form in {word.lower(), _plain(word.lower())}:
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
_AS_SPACES: Final = str.maketrans({c: " " for c in ",，、;；:："})


def _member(token: str, words: dict[str, int]) -> bool:
    return token.strip(_EDGES).lower() in words or _NUMBERING.fullmatch(token) is not None


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


def seed_phrases(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "seed_phrase")`` of each run of :data:`MIN_WORDS` or more words of one
    BIP39 list in ``text``, from its first word to its last."""
    if len(text) < 2 * MIN_WORDS - 1 or not _spaced(text):
        return []
    words = _words()
    if not _may_hold_run(text, words):
        return []
    found: list[tuple[int, int, str]] = []
    run_start = run_end = count = 0
    mask = 0
    seen: set[str] = set()
    for token in _TOKEN.finditer(text):
        raw = token.group()
        if _NUMBERING.fullmatch(raw):
            continue
        word = raw.strip(_EDGES).lower()
        # a word before a colon is the phrase's label ("seed: …"), not one of its words
        own = 0 if text.startswith((":", "："), token.end()) else words.get(word, 0)
        bits = own & (mask if count else -1)
        if not bits:
            if _phrase(count, seen):
                found.append((run_start, run_end, KIND))
            bits = own
            count = 0
            seen = set()
        if bits:
            if not count:
                run_start = token.start() + len(raw) - len(raw.lstrip(_EDGES))
            count += 1
            seen.add(word)
            mask = bits
            run_end = token.start() + len(raw.rstrip(_EDGES))
    if _phrase(count, seen):
        found.append((run_start, run_end, KIND))
    return found


def _phrase(count: int, seen: set[str]) -> bool:
    """Whether a run of ``count`` list words, ``seen`` among them, is a phrase: long enough,
    and three quarters of its words different (``True, False, True, …`` is a list of flags)."""
    return count >= MIN_WORDS and 4 * len(seen) >= 3 * count
