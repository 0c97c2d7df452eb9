"""Identifiers passed by callers (user, session, workspace, memory, workflow ids), and
the ids this package makes (:func:`random_id`).

Ids are taken exactly as given: ``"Alice"`` and ``"alice"`` are two users. An id with
leading or trailing whitespace, a control character (C0 or C1, NUL included), an
invisible character that makes one id print like another (zero-width spaces, word
joiners, byte-order marks, tag characters, bidirectional overrides and isolates: ``u1``
followed by U+200B prints as ``u1`` yet would be another user), a lone UTF-16 surrogate or
more than :data:`MAX_ID_BYTES` UTF-8 bytes is refused with an error naming the field,
never silently changed into another id. The zero-width joiner and non-joiner stay
allowed: Persian spelling and emoji sequences need them. Validation lives here so every
entry point (client, graphs, workflow memory, CLI) accepts the same ids.

Example:
    >>> require_id("user_123", "user_id")
    'user_123'
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.redact import find_secret, redact_text
from hy_memory_langgraph.redact.gate import carries_secret

__all__ = ["MAX_ID_BYTES", "optional_id", "random_id", "require_clean_label", "require_id", "scope_id"]

#: Longest id accepted, in UTF-8 bytes.
MAX_ID_BYTES: Final = 512
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Invisible characters that let two different ids print alike: zero-width space, marks and
# overrides of text direction, word joiner and invisible operators, the byte-order mark,
# interlinear annotation, tag characters, Mongolian vowel separator, soft hyphen, Arabic
# letter mark (the zero-width joiner and non-joiner, U+200C/U+200D, are spelling).
_INVISIBLE: Final = re.compile(
    "[\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u206f\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f]")
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


def _check(value: str, field: str) -> str:
    if value != value.strip():
        raise InvalidInputError(
            f"{field}={value!r} has leading or trailing whitespace; ids are taken as given, "
            f"so pass {value.strip()!r} if that is the id you mean")
    if _CONTROL.search(value):
        raise InvalidInputError(f"{field}={value!r} contains a control character; "
                                f"pass {_hint(field)}")
    if (invisible := _INVISIBLE.search(value)) is not None:
        raise InvalidInputError(
            f"{field}={value!r} contains the invisible character U+{ord(invisible.group()):04X}, "
            f"which would make it print like another id; pass {_hint(field)}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInputError(f"{field} contains a lone surrogate (not valid Unicode text); "
                                f"pass {_hint(field)}") from None
    if size > MAX_ID_BYTES:
        raise InvalidInputError(f"{field} is {size} bytes long; ids may have at most "
                                f"{MAX_ID_BYTES} UTF-8 bytes (use a shorter id or a hash of it)")
    return value


def require_id(value: object, field: str) -> str:
    """Return ``value`` unchanged if it is a valid id, else raise naming ``field`` and the fix."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{field} must be a non-empty string (got {value!r}); "
                                f"pass {_hint(field)}")
    return _check(value, field)


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
    return redact_text(checked) if redact and checked else checked


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
