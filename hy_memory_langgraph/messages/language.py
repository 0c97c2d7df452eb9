"""Prompt-language detection (zh / en) from the first effective language characters.

Rule (documented contract):

1. Only the NEW user text is looked at (for a message list: ``role="user"`` content).
2. Removed before counting: fenced code blocks (```` ``` ```` / ``~~~``, an unterminated
   fence runs to the end), inline ``code``, URLs, file paths (runs without whitespace or
   CJK that contain ``/`` or ``\\`` or a dot-extension such as ``foo.py``) and code
   identifiers (``snake_case``, ``camelCase``/``TypeError``, ``call()``).
3. The first 10 remaining "effective" characters are taken: CJK ideographs, or letters
   (``str.isalpha``: Latin, Cyrillic, kana, …), one per character. Digits, punctuation,
   symbols and whitespace are skipped.
4. ``"zh"`` when CJK ideographs make at least half of those characters, or when the first
   effective character is a CJK ideograph and at least 2 of them are CJK (a Chinese
   opening followed by an English error message or identifier stays Chinese).
   Otherwise (including no effective character at all) ``"en"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.turns import user_text

WINDOW = 10
_MIN_CJK_AFTER_CJK_START = 2

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:[a-zA-Z][a-zA-Z0-9+.-]{0,15}://|www\.)\S+")
_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# one CJK ideograph, or a run of non-space non-CJK characters (where paths/identifiers live)
_TOKEN = re.compile(rf"[{_CJK_CLASS}]|([^\s{_CJK_CLASS}]+)")
_DOT_EXT = re.compile(r"\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_WORD = re.compile(r"\w+(\()?")
_CAMEL = re.compile(r"[a-z][A-Z]")


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is a CJK unified ideograph (incl. extensions and compatibility)."""
    o = ord(ch)
    return (
        0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x3134F
    )


def _strip_code_and_urls(text: str) -> str:
    text = _FENCE.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    return _URL.sub(" ", text)


def _run_is_path(run: str) -> bool:
    return "/" in run or "\\" in run or _DOT_EXT.search(run) is not None


def _is_identifier(match: re.Match[str]) -> bool:
    """``snake_case``, ``camelCase``/``TypeError`` or a call such as ``run(``."""
    word = match.group(0)
    return bool(match.group(1)) or "_" in word or _CAMEL.search(word) is not None


def _effective_chars(text: str) -> Iterator[bool]:
    """Yield ``True`` for each CJK ideograph and ``False`` for each other letter, lazily."""
    for token in _TOKEN.finditer(_strip_code_and_urls(text)):
        run = token.group(0)
        if token.group(1) is None:  # one CJK ideograph
            yield True
            continue
        if _run_is_path(run):
            continue
        for word in _WORD.finditer(run):
            if not _is_identifier(word):
                yield from (False for ch in word.group(0) if ch.isalpha())


def detect_text_language(text: str) -> Literal["zh", "en"]:
    """Apply the module rule to one text."""
    window: list[bool] = []
    for flag in _effective_chars(text):
        window.append(flag)
        if len(window) == WINDOW:
            break
    if not window:
        return "en"
    cjk = sum(window)
    if 2 * cjk >= len(window):
        return "zh"
    if window[0] and cjk >= _MIN_CJK_AFTER_CJK_START:
        return "zh"
    return "en"


def detect_language(msgs_or_text: str | Sequence[Any]) -> Literal["zh", "en"]:
    """Prompt language of the new user input: ``"zh"`` or ``"en"``.

    A string is used as is. For a message list (``Msg`` or anything
    :func:`normalize_messages` accepts), only ``role="user"`` content counts: tool
    results, assistant text and system prompts never decide the language.

    Rule: code (fenced blocks, inline code, identifiers), URLs, file paths, digits,
    punctuation and whitespace are ignored; of the first 10 remaining letters / CJK
    ideographs, ``"zh"`` when CJK make at least half, or when the first one is CJK and
    at least 2 are CJK; otherwise (including empty input) ``"en"``.
    """
    if isinstance(msgs_or_text, str):
        return detect_text_language(msgs_or_text)
    msgs = normalize_messages(list(msgs_or_text))
    return detect_text_language(user_text(msgs))
