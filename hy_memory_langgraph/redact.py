"""Secrets in text: find them and replace them with typed placeholders.

Every write path runs what it will store, embed or send to a model through
:func:`redact_text` (on by default; ``MEMORY_REDACT_SECRETS=false`` turns it off), so an
API key pasted into a conversation becomes ``[REDACTED:openai_key]`` while the rest of
the message is kept. Workflow memory refuses inputs carrying credentials instead
(:func:`find_secret`).

Detected: private key blocks, provider keys (OpenAI, Anthropic, AWS access keys, GitHub,
GitLab, Slack, Google, Stripe), JSON web tokens, bearer / basic ``Authorization``
values, cookie headers and ``ETEAMSID=`` cookies, passwords inside URLs, and values
assigned to secret-named keys (``password=…`` always; ``api_key``, ``token``,
``secret``, … when the value looks random). Words alone are never secrets: "the token
field is the invoice number" is kept as written.

Example:
    >>> redact_text("my key is sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB")
    'my key is [REDACTED:openai_key]'
    >>> redact_text("postgres://app:hunter22@db:5432/main")
    'postgres://app:[REDACTED:url_password]@db:5432/main'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

__all__ = ["find_secret", "redact_text", "redact_value"]


def _placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# (kind, pattern); the whole match is replaced. Order matters: specific before general.
_TOKENS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("private_key", re.compile(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)")),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
)
# (kind, pattern with a ``secret`` group); only that group is replaced.
_VALUES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("url_password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]+:(?P<secret>[^\s@/]+)@")),
    ("authorization", re.compile(
        r"(?i)\b(?:authorization\s*[:=]\s*[\"']?\s*(?:bearer|basic|token)?|bearer)\s+"
        r"(?P<secret>[A-Za-z0-9._~+/=-]{12,})")),
    ("cookie", re.compile(r"(?i)\b(?:set-)?cookie\s*:\s*(?P<secret>[^\r\n]+)")),
    ("cookie", re.compile(
        r"(?i)\beteamsid\s*(?:[=:：]|是|为|\bis\b)\s*[\"']?(?P<secret>[A-Za-z0-9._%+/=-]+)")),
    ("password", re.compile(
        r"(?i)(?:\b(?:password|passwd|pwd)|密码)\s*(?:\bis\b|是|为|[:=：])\s*[\"']?(?P<secret>[^\s\"',;]{4,})")),
)
# ``…token: <value>`` headers, e.g. ``X-Auth-Token: abc``: the key is a word that ends in
# ``token``/``authorization`` and has at least one letter before it. The pattern below is
# the definition; :func:`_header_tokens` finds the same values in linear time.
_HEADER_TOKEN: Final = re.compile(
    r"(?i)\b[A-Za-z][\w-]*(?:token|authorization)\s*:\s*(?P<secret>[A-Za-z0-9._~+/=-]+)")
_HEADER_KEY_END: Final = re.compile(r"(?i)(?:token|authorization)\s*:")
_HEADER_VALUE: Final = re.compile(r"(?i)\s*(?P<secret>[A-Za-z0-9._~+/=-]+)")
_WORD_OR_DASH: Final = re.compile(r"[\w-]")
_WORD_CHAR: Final = re.compile(r"\w")
_LETTER: Final = re.compile(r"(?i)[A-Za-z]")
# ``<key><sep><value>`` with a secret-named key (``db_password = …``, ``"apiKey": "…"``).
# The pattern is the definition; :func:`_assignments` finds the same matches in linear time.
_ASSIGNMENT: Final = re.compile(
    r"(?i)(?P<key>[A-Za-z0-9_.-]*(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?secret|credential|auth)[A-Za-z0-9_.-]*)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<secret>[^\s\"',;&}{)\]]{4,})")
_KEY_WORD: Final = re.compile(
    r"(?i)pass|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth")
_KEY_CHAR: Final = re.compile(r"(?i)[A-Za-z0-9_.-]")
_KEY_RUN: Final = re.compile(r"(?i)[A-Za-z0-9_.-]*")
_SEP_VALUE: Final = re.compile(r"(?i)(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<secret>[^\s\"',;&}{)\]]{4,})")
_PASSWORD_KEY: Final = re.compile(r"(?i)pass(?:word|wd)?|pwd")
_ALREADY: Final = re.compile(r"\[REDACTED:[a-z_]+\]")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def _looks_random(value: str) -> bool:
    """A long token with mixed character classes and high Shannon entropy."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return len(value) >= 12 and classes >= 2 and _entropy(value) >= 3.0


def _assigned_secret(key: str, value: str) -> bool:
    if _ALREADY.fullmatch(value) or value.lower() in {"none", "null", "true", "false", "xxx"}:
        return False
    if _PASSWORD_KEY.search(key):
        return True
    return _looks_random(value)


def _assignments(text: str) -> list[tuple[str, int, int]]:
    """``(key, secret start, secret end)`` of each :data:`_ASSIGNMENT` match, linear time.

    The regex, run as it is, backtracks over every run of key characters at every
    position of it (minutes on a megabyte of base64). Its matches are known without
    that: the key is a whole run of key characters (the separator cannot follow a key
    character) that holds a key word, and the value follows the run. So each run
    holding a key word is found once, from its key words, and only the separator and
    value are matched after it; the matches are the same, in the same order.
    """
    found: list[tuple[str, int, int]] = []
    end = run_end = 0
    for hit in _KEY_WORD.finditer(text):
        if hit.start() < run_end:
            continue  # a key word of the run just looked at
        start = hit.start()
        while start > 0 and _KEY_CHAR.match(text, start - 1):
            start -= 1  # back to the start of the run (the previous run ended before it)
        run_end = _KEY_RUN.match(text, hit.end()).end()  # type: ignore[union-attr]
        if start < end:
            continue
        tail = _SEP_VALUE.match(text, run_end)
        if tail is not None:
            found.append((text[start:run_end], tail.start("secret"), tail.end("secret")))
            end = tail.end()
    return found


def _header_tokens(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the ``secret`` of each :data:`_HEADER_TOKEN` match, linear time.

    A match ends its key with ``token``/``authorization`` right before ``\\s*:`` (so at
    the end of a run of word characters and dashes) and starts at a word boundary with
    a letter somewhere earlier in that run; only its value is needed.
    """
    found: list[tuple[int, int]] = []
    end, pos = 0, 0
    while (hit := _HEADER_KEY_END.search(text, pos)) is not None:
        pos = hit.start() + 1
        if hit.start() < end or not _header_key_starts(text, end, hit.start()):
            continue
        value = _HEADER_VALUE.match(text, hit.end())
        if value is not None:
            found.append((value.start("secret"), value.end("secret")))
            end = pos = value.end()
    return found


def _header_key_starts(text: str, floor: int, key_word: int) -> bool:
    """Whether a key ``[A-Za-z][\\w-]*`` can start at a word boundary in ``[floor, key_word)``
    and run (over word characters and dashes) up to the key word at ``key_word``."""
    p = key_word - 1
    while p >= floor and _WORD_OR_DASH.match(text, p):
        if _LETTER.match(text, p) and (p == 0 or not _WORD_CHAR.match(text, p - 1)):
            return True
        p -= 1
    return False


def _scan(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` spans of secrets in ``text``, in order."""
    spans: list[tuple[int, int, str]] = []
    for kind, pattern in _TOKENS:
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(text)]
    for kind, pattern in _VALUES:
        spans += [(m.start("secret"), m.end("secret"), kind) for m in pattern.finditer(text)]
    spans += [(start, end, "token") for start, end in _header_tokens(text)]
    spans += [(start, end, "secret_value") for key, start, end in _assignments(text)
              if _assigned_secret(key, text[start:end])]
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def redact_text(text: str) -> str:
    """``text`` with every detected secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    spans = _scan(text)
    if not spans:
        return text
    out, pos = [], 0
    for start, end, kind in spans:
        out += [text[pos:start], _placeholder(kind)]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def find_secret(text: str) -> str | None:
    """The kind of the first secret in ``text`` (``"openai_key"``, …), or ``None``."""
    spans = _scan(text) if text else []
    return spans[0][2] if spans else None


def redact_value(value: Any, redact: Callable[[str], str] = redact_text) -> Any:
    """A copy of a JSON-like value with every string (keys excluded) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redact) for v in value]
    return value
