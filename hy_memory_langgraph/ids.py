"""Identifiers passed by callers (user, session, workspace, memory, workflow ids), and
the ids this package makes (:func:`random_id`).

An id is taken as given, in its NFC form (Unicode's canonical composition: ``"e"`` plus
U+0301 COMBINING ACUTE ACCENT and ``"é"`` are one spelling of one id, so they are one
user). ``"Alice"`` and ``"alice"`` are two users. An id is refused, with an error naming
the field and the character (``U+200B ZERO WIDTH SPACE``), never silently changed into
another id, when it has leading or trailing whitespace, a control character (C0 or C1,
NUL included), a lone UTF-16 surrogate, more than :data:`MAX_ID_BYTES` UTF-8 bytes, or a
character that prints as nothing, so that two ids would print alike (``u1`` and ``u1``
followed by U+200B). What prints as nothing is decided by Unicode properties, not by a
list of examples (:func:`invisible_character`):

* every default-ignorable code point, as Unicode derives the property: format
  characters (category ``Cf``: zero-width spaces, bidirectional controls, word joiners,
  tag characters, the byte-order mark, the Mongolian vowel separator...), variation
  selectors (standard, ideographic and Mongolian), and the other default-ignorable code
  points (combining grapheme joiner, Hangul fillers, Khmer inherent vowels and the
  reserved ranges Unicode keeps ignorable);
* spaces other than U+0020 (category ``Zs``, ``Zl``, ``Zp``: a no-break space prints
  as a space), the Braille pattern with no dots (U+2800, blank by its definition:
  the pattern's dots are the bits of its offset from U+2800) and the two other
  characters whose definition is a blank (U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, U+16FE4
  KHITAN SMALL SCRIPT FILLER);
* code points with no meaning to draw: private use (``Co``: a font's own icons) and
  unassigned ones, noncharacters included (``Cn``, as this Python's Unicode knows them);
* a combining mark first (nothing to combine with).

The zero-width joiner and non-joiner (U+200D, U+200C) are spelling where they change
how the text is drawn, and are allowed exactly there: between two characters, after an
Arabic-script letter (bidirectional class ``AL``: Persian words), a virama (canonical
combining class 9: Indic conjuncts), or a symbol or modifier (category ``So`` / ``Sk``:
emoji sequences such as a family or a skin-toned worker). Anywhere else (after a Latin
letter, at either end) nothing is drawn differently, so ``al`` + U+200D + ``ice`` would
print as ``alice``: refused. Validation lives here so every entry point (client,
graphs, workflow memory, CLI) accepts the same ids.

Example:
    >>> require_id("user_123", "user_id")
    'user_123'
    >>> require_id("Zoe\\u0308", "user_id") == "Zo\\u00eb"
    True
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Final

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.redact.gate import carries_secret, seal_text

#: Longest id accepted, in UTF-8 bytes.
MAX_ID_BYTES: Final = 512
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Default-ignorable code points that are not format characters (Cf): Unicode's
# Other_Default_Ignorable_Code_Point and Variation_Selector properties, as ranges.
_IGNORABLE_RANGES: Final = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D), (0x180F, 0x180F),
    (0x2065, 0x2065), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF))
_JOINERS: Final = frozenset("\u200c\u200d")
#: Characters drawn blank by their definition that no property marks: the Braille pattern
#: whose dot bits are all zero, the musical null notehead, the Khitan script's filler.
_BLANK: Final = frozenset({0x2800, 0x1D159, 0x16FE4})
# The version (4) and variant (RFC 4122) bits of a random UUID, as a mask and their values.
_UUID4_MASK: Final = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_BITS: Final = (0x4000 << 64) | (0x8000 << 48)


def random_id() -> str:
    """A new random id (memory ids, request ids, key suffixes): what
    ``uuid.uuid4().hex`` gives (32 hex digits, 122 random bits from ``os.urandom``, a
    valid version 4 UUID), without building a ``UUID`` object (a lite add makes five).

    Example:
        >>> import uuid
        >>> uuid.UUID(random_id()).version
        4
    """
    return f"{(int.from_bytes(os.urandom(16), 'big') & _UUID4_MASK) | _UUID4_BITS:032x}"


def _hint(field: str) -> str:
    if field == "memory_id":
        return "an id returned by add() or search()"
    return f"the id exactly as your application knows it, e.g. {field}='user_123'"


def _joins(before: str, after: str) -> bool:
    """Whether a zero-width (non-)joiner between ``before`` and ``after`` changes how the
    text is drawn (see the module docstring)."""
    return bool(before and after) and (unicodedata.bidirectional(before) == "AL"
                                       or unicodedata.combining(before) == 9
                                       or unicodedata.category(before) in ("So", "Sk"))


def _prints_as_nothing(char: str) -> bool:
    code, category = ord(char), unicodedata.category(char)
    return (category in ("Cf", "Zs", "Zl", "Zp", "Co", "Cn") and char != " ") or code in _BLANK \
        or any(low <= code <= high for low, high in _IGNORABLE_RANGES)


def invisible_character(text: str) -> int | None:
    """The index of the first character of ``text`` that prints as nothing (see the
    module docstring: default-ignorable code points, spaces other than U+0020, the blank
    Braille pattern, a combining mark first, a joiner where it joins nothing), else ``None``.

    Example:
        >>> invisible_character("ali\\u3164ce"), invisible_character("Zo\\u00eb")
        (3, None)
    """
    if text and unicodedata.category(text[0]).startswith("M"):
        return 0
    for index, char in enumerate(text):
        if char in _JOINERS:
            if not _joins(text[index - 1] if index else "", text[index + 1:index + 2]):
                return index
        elif _prints_as_nothing(char):
            return index
    return None


def _described(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, '(unassigned)')}"


def _size(value: str, field: str) -> int:
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInputError(f"{field} contains a lone surrogate (not valid Unicode text); "
                                f"pass {_hint(field)}") from None
    if size > MAX_ID_BYTES:
        raise InvalidInputError(f"{field} is {size} bytes long; ids may have at most "
                                f"{MAX_ID_BYTES} UTF-8 bytes (use a shorter id or a hash of it)")
    return size


def _check(value: str, field: str) -> str:
    _size(value, field)
    if value != value.strip():
        raise InvalidInputError(
            f"{field}={value!r} has leading or trailing whitespace; ids are taken as given, "
            f"so pass {value.strip()!r} if that is the id you mean")
    if _CONTROL.search(value):
        raise InvalidInputError(f"{field}={value!r} contains a control character; "
                                f"pass {_hint(field)}")
    value = unicodedata.normalize("NFC", value)
    _size(value, field)  # a few characters grow under NFC
    if (at := invisible_character(value)) is not None:
        raise InvalidInputError(
            f"{field}={value!r} contains the invisible character {_described(value[at])} at "
            f"index {at}, which would make it print like another id; pass {_hint(field)}")
    return value


def require_id(value: object, field: str) -> str:
    """``value`` in its NFC form if it is a valid id, else raise naming ``field`` and the fix."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string (got {value!r}); "
                                f"pass {_hint(field)}")
    return _check(value, field)


def require_ids(value: object, field: str) -> list[str]:
    """A list of ids, each checked by :func:`require_id`, duplicates dropped; a string is
    one id (never its characters).

    Example:
        >>> require_ids("bob", "user_ids"), require_ids(["a", "b", "a"], "user_ids")
        (['bob'], ['a', 'b'])
    """
    if isinstance(value, str):
        return [require_id(value, field)]
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        raise InvalidInputError(f"{field} must be an id or a list of ids (got {type(value).__name__}), "
                                f"e.g. {field}=['user_123']")
    return list(dict.fromkeys(require_id(v, f"{field}[{i}]") for i, v in enumerate(value)))


def require_clean_label(label: str, what: str) -> str:
    """``label`` (an id, a namespace label or a key placing a row) when it carries no
    detected secret: ids are stored as they are, never redacted into another name.

    Raises:
        InvalidInputError: naming ``what`` and the kind of secret found.

    Example:
        >>> require_clean_label("user_123", "user_id")
        'user_123'
    """
    if not carries_secret(label):
        return label
    from hy_memory_langgraph.redact import find_secret  # the detectors load on first use

    raise InvalidInputError(
        f"{what} holds what looks like a secret ({find_secret(label) or 'credential'}); ids and keys "
        "place a row and are stored as they are, so use an id that carries no credential")


def scope_id(value: Any, field: str, redact: bool) -> str | None:
    """An optional scope id (``workspace_id``, ``branch``) as :func:`optional_id` checks
    it; with ``redact`` a credential inside it (a token in a repository URL such as
    ``https://x-access-token:ghs_…@github.com/org/repo``) becomes its placeholder, the
    same on writes and searches, so the scope still matches.

    Example:
        >>> scope_id("https://u:hunter22@git.example.com/org/repo", "workspace_id", True)
        'https://u:[REDACTED:url_password]@git.example.com/org/repo'
    """
    checked = optional_id(value, field)
    return seal_text(checked) if redact and checked else checked


def optional_id(value: Any, field: str) -> str | None:
    """``None`` for ``None`` or an empty string, else :func:`require_id`'s check.

    Raises:
        InvalidInputError: for a non-string (e.g. a filter dict passed as a workspace id)
            or an invalid id.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string or None (got {type(value).__name__}); "
                                "scopes are matched exactly, filters are not accepted here")
    return require_id(value, field)
