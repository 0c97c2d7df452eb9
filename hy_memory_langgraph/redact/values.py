"""Redact text and JSON-like values: strings scanned, values under secret-named keys replaced.

A value's key says what it is: under ``password`` / ``db_pass`` / ``密码`` any value is a
secret; under ``api_key`` / ``token`` / ``credentials`` any string that does not read as
prose is;
under a lone ``key`` only a random-looking one. Everything else is scanned as text, so a
key pasted into a note is still found. A JSON document held in a string (a tool call's
arguments as OpenAI sends them) is parsed and redacted as a value, then written back.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Callable, Collection, Sequence
from contextvars import ContextVar
from typing import Any, Final

from hy_memory_langgraph.redact.rules import NameClass, describes_member, group_kind, name_class, session_name
from hy_memory_langgraph.redact.judge import looks_random
from hy_memory_langgraph.redact.dialogue import answered_spans
from hy_memory_langgraph.redact.scan import Span, scan

#: Deepest nesting redacted structurally; deeper parts are scanned as text (JSON dumped).
MAX_DEPTH: Final = 64
#: Recent texts known to hold no secret (scanned clean, or a redaction's own output),
#: so the second pass over what a caller redacted before handing it on costs a lookup:
#: short texts kept as they are, longer ones (a tool's output) by a 128-bit digest. The
#: memo is emptied when full.
_CLEAN: dict[str | bytes, None] = {}
_CLEAN_SIZE: Final = 1024
_KEPT_CHARS: Final = 512
#: Most scans of one text (a fixed point is reached in two; a text built to need more is
#: left with what the last pass found).
_MAX_PASSES: Final = 4
_NULLISH: Final = frozenset({"", "none", "null", "nil", "xxx", "***", "******", "n/a", "redacted"})


def placeholder(kind: str) -> str:
    """What a secret of ``kind`` becomes: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


def redact_text(text: str) -> str:
    """``text`` with every detected secret replaced by ``[REDACTED:<kind>]``.

    Example:
        >>> redact_text("我的key是sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB，别外传")
        '我的key是[REDACTED:openai_key]，别外传'
        >>> redact_text("password: correct horse battery staple")
        'password: [REDACTED:password]'
        >>> redact_text("passengers: Anna and Ben Ortiz")
        'passengers: Anna and Ben Ortiz'
    """
    if not text:
        return text
    if _memo_key(text) in _CLEAN:
        return text
    # Until nothing more is found: a span that swallowed the start of another secret's
    # marker (``sshpass -p a<td>sshpass -p b``) hid it, and its placeholder shows it. So
    # redacting the result changes nothing (an update re-redacts stored text).
    if '"' in text:
        text = _structured(text)
    for _ in range(_MAX_PASSES):
        spans = _merged(scan(text), answered_spans(text) if "?" in text or "？" in text else [])
        if not spans:
            _remember_clean(_memo_key(text))
            return text
        text = replace_spans(text, spans)
    return text


#: Most places of a text where a JSON document is tried and none found (a document found is
#: read once and passed over: the reading stays linear).
_MAX_JSON_TRIES: Final = 64
#: Where a JSON object or array may begin: ``{"``, ``[{``, ``[[``, ``["``.
_JSON_START: Final = re.compile(r"[{\[][ \t\r\n]*[\"{\[]")
#: How many documents inside documents' strings are read as structure (JSON escaped in a
#: string: two); deeper ones are scanned as text.
_MAX_NESTED_DOCUMENTS: Final = 3
_nesting: ContextVar[int] = ContextVar("hy_redact_json_nesting", default=0)


def _structured(text: str) -> str:
    """``text`` with each JSON document it holds (a HAR file's cookies, a request's headers
    pasted into prose) redacted as a value (:func:`redact_value`: a ``{"name": "JSESSIONID",
    "value": …}`` pair, a value under a secret's key) and written back in its place when that
    changed it; documents without a secret stay as written, byte for byte. Each document is
    parsed once and written whole, so a redaction cannot land on another string of the same
    text, and escapes (``\\u00e9``, ``\\/``) do not hide a value."""
    depth = _nesting.get()
    if depth >= _MAX_NESTED_DOCUMENTS:
        return text
    token = _nesting.set(depth + 1)
    try:
        return _rewrite_documents(text)
    finally:
        _nesting.reset(token)


def _rewrite_documents(text: str) -> str:
    decoder, parts, copied, read, tries = json.JSONDecoder(), [], 0, 0, 0
    for start in _JSON_START.finditer(text):
        if start.start() < read:
            continue
        if tries >= _MAX_JSON_TRIES:
            break
        try:
            document, end = decoder.raw_decode(text, start.start())
        except (ValueError, RecursionError):  # not a document, or one too deep to parse
            tries += 1
            continue
        read = end
        if _deeper_than(document, MAX_DEPTH):
            continue  # the scan reads it as text, as redact_value reads what lies that deep
        # structure only (values under secrets' keys, name/value pairs; documents in strings):
        # free text is left to the scan, which reads it in place with its context
        redacted = redact_value(document, _structured)
        if redacted != document:
            written = text[start.start():end]  # its layout kept: indented, spaced or compact
            indent = 2 if "\n" in written else None
            separators = (",", ": ") if indent else (", ", ": ") if '": ' in written else (",", ":")
            parts += [text[copied:start.start()],
                      json.dumps(redacted, ensure_ascii=False, indent=indent, separators=separators)]
            copied = end
    return text if not parts else "".join([*parts, text[copied:]])


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` deep (iteratively)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            stack += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return False


def _merged(spans: list[Span], more: list[Span]) -> list[Span]:
    """``spans`` (in order, not overlapping) with those of ``more`` that overlap none of
    them and no earlier one taken, in order."""
    if not more:
        return spans
    starts = [s for s, _, _ in spans]
    taken: list[Span] = []
    for extra in sorted(more):
        i = bisect.bisect_left(starts, extra[1])  # spans[:i] start before the extra ends
        if (i and spans[i - 1][1] > extra[0]) or (taken and taken[-1][1] > extra[0]):
            continue
        taken.append(extra)
    return sorted([*spans, *taken])


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, kind)`` span (in order, not overlapping) replaced
    by its placeholder."""
    out, pos = [], 0
    for start, end, kind in spans:
        out += [text[pos:start], placeholder(kind)]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _memo_key(text: str) -> str | bytes:
    if len(text) <= _KEPT_CHARS:
        return text
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _remember_clean(key: str | bytes) -> None:
    """Keep a text's memo key among the secret-free ones (redaction is idempotent: a
    tested property, so its output is one of them)."""
    if len(_CLEAN) >= _CLEAN_SIZE:
        _CLEAN.clear()  # one atomic step: threads may share the memo
    _CLEAN[key] = None


def find_secret(text: str) -> str | None:
    """The kind of the first secret in ``text`` (``"openai_key"``, …), or ``None``."""
    spans = scan(text) if text else []
    return spans[0][2] if spans else None


def _under(kind: NameClass, value: Any) -> Any:
    """A scalar value under a key of class ``kind``: replaced, or ``None`` when kept."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return placeholder("password") if kind == "password" else None
    if not isinstance(value, str) or value.strip().lower() in _NULLISH or value.startswith("[REDACTED:"):
        return None
    value = value.strip()
    opaque = not any(c.isspace() for c in value)
    if kind == "password" or (kind == "secret" and len(value) >= 6 and not _prose(value)) or \
            (kind == "weak" and opaque and looks_random(value, min_length=16)):
        return placeholder("password" if kind == "password" else "secret_value")
    return None


def _prose(value: str) -> bool:
    """Three or more words, most of them plain words: a description, not a credential
    (``"the invoice number field"``; ``"sessionid=…; csrftoken=…"`` is not prose)."""
    words = value.split()
    return len(words) >= 3 and sum(w.strip(".,;:!?").isalpha() for w in words) >= 0.6 * len(words)


def redact_value(value: Any, redact: Callable[[str], str] = redact_text, *, keep: Collection[str] = (),
                 _kind: NameClass | None = None, _members: NameClass | None = None, _depth: int = 0) -> Any:
    """A copy of a JSON-like value with secrets redacted (see the module docstring);
    values under a key of ``keep`` (at any depth) are copied as they are.

    Example:
        >>> redact_value({"db": {"password": "hunter22", "host": "db.local"}, "max_tokens": 512})
        {'db': {'password': '[REDACTED:password]', 'host': 'db.local'}, 'max_tokens': 512}
        >>> redact_value({"user_id": "usr_8fK2mQ9xL3pR7tV1wY5zB4nC6", "pin": "4821"}, keep={"user_id"})
        {'user_id': 'usr_8fK2mQ9xL3pR7tV1wY5zB4nC6', 'pin': '[REDACTED:password]'}
    """
    if _kind is not None:
        replaced = _under(_kind, value)
        if replaced is not None:
            return replaced
    if isinstance(value, str):
        return redact(value)
    if _depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        return redact(json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, dict):
        named = _named_kind(value)  # {"name": "DB_PASSWORD", "value": "…"}: the name says
        private = _JWK_PRIVATE if isinstance(value.get("kty"), str) else frozenset()
        out: dict[Any, Any] = {}
        for k, v in value.items():
            kind = named if named and isinstance(k, str) and k.lower() in _PAIR_VALUES else "secret" if k in private else \
                name_class(k) if isinstance(k, str) else None
            member = _members if _members and kind is None and isinstance(k, str) and not describes_member(k) \
                else None
            kept = v if k in keep else redact_value(v, redact, keep=keep, _depth=_depth + 1, _kind=kind or member,
                                                    _members=member or group_kind(k))
            out[_key(k, redact, out)] = kept
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redact, keep=keep, _kind=_kind, _members=_members, _depth=_depth + 1) for v in value]
    return value


def _key(key: Any, redact: Callable[[str], str], taken: dict[Any, Any]) -> Any:
    """A key as stored: a secret used as a key (``{"ghp_…": {"scopes": …}}``) is redacted
    too, numbered when two become the same placeholder, so no value is lost."""
    if not isinstance(key, str):
        return key
    new = redact(key)
    if new == key:
        return key
    n, unique = 1, new
    while unique in taken:
        n += 1
        unique = f"{new} ({n})"
    return unique


#: A JSON web key's private members (``{"kty": "RSA", "d": …}``): RSA's private exponent and
#: factors, an elliptic curve's private scalar, a symmetric key's ``k``.
_JWK_PRIVATE: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "k"})


#: The members of a name/value pair, in any case: ``name``/``value``, ``Key``/``Value`` (AWS
#: tags, Postman), ``ParameterKey``/``ParameterValue`` (CloudFormation).
_PAIR_NAMES: Final = ("name", "key", "parameterkey", "parametername")
_PAIR_VALUES: Final = ("value", "parametervalue")


def _named_kind(value: dict[Any, Any]) -> NameClass | None:
    """The class of a name/value pair's name (an environment variable, a cookie in a
    browser's export, a request's header: ``{"name": "DB_PASSWORD", "value": "…"}``,
    ``{"key": "X-API-Key", "value": "…"}``; a session cookie's value
    counts when it looks random: ``{"name": "sessionid", "value": "…"}``)."""
    keys = {k.lower(): k for k in value if isinstance(k, str)}
    named = next((keys[k] for k in _PAIR_NAMES if k in keys), None)
    name = value[named] if named is not None and any(k in keys for k in _PAIR_VALUES) else None
    if not isinstance(name, str):
        return None
    return name_class(name) or ("weak" if session_name(name) else None)


def redact_json_text(text: str, redact: Callable[[str], str] = redact_text) -> str:
    """A JSON object or array held in ``text`` redacted as a value and written back
    (key order kept); any other text scanned as text."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):
            return redact(text)
        redacted = redact_value(parsed, redact)
        return text if redacted == parsed else json.dumps(redacted, ensure_ascii=False)
    return redact(text)
