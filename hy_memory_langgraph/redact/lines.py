"""Secrets in configuration lines: a value on its own line under a name that names a secret.

An environment dump (``env``, ``printenv``, ``docker inspect``'s ``Env``), a ``.env`` file,
Java properties, INI and TOML files, YAML, ``heroku config`` and ``vault kv get`` print one
setting a line: ``NAME=value``, ``name = value``, ``name: value``, ``"NAME=value",``,
``name    value``. Such a line is structured data written as text, and is judged as
structured data is (:mod:`.values`), not as prose: under a name of a password (``DB_PASSWORD``,
``smtp.pass``) any value; under a name of a secret (``STRIPE_SECRET``, ``api_key``,
``aws_secret_access_key``) any value of six characters or more that is one
token and no reference, name made of words (``token_counter``, ``vault``), number, address,
path or code; under a lone ``key`` a random-looking one (:func:`~.judge.setting_value`). A name with a qualifier describes a secret and holds none
(``TOKEN_TTL=3600``, ``password_min_length: 12``).

Example:
    >>> text = "HOME=/home/app\\nSTRIPE_SECRET=HaK6HN6Jd0\\nTOKEN_TTL=3600\\nSECRET_BACKEND=vault"
    >>> [text[s:e] for s, e, _ in line_spans(text)]
    ['HaK6HN6Jd0']
"""

from __future__ import annotations

import re
from typing import Final

from hy_memory_langgraph.redact.judge import looks_random, setting_value
from hy_memory_langgraph.redact.rules import load_rules, name_class, split_name

Span = tuple[int, int, str]
#: A setting on its own line: perhaps ``export``/``set``/a list's dash, perhaps a quote
#: around the whole (``"NAME=value",`` in a JSON array), a name, ``=``, ``:`` or a run of
#: spaces of a table (``api_key     …``), and the value to the line's end.
_LINE: Final = re.compile(r"(?m)^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?(?P<q>[\"']?)"
                          r"(?P<name>[A-Za-z_][\w.-]{0,80})[\"']?(?:[ \t]*(?P<sep>[=:])[ \t]*|[ \t]{2,})"
                          r"(?P<value>[^\n]*)$")
_QUOTED: Final = re.compile(r"""(?P<quote>["'])(?P<inner>[^"'\n]*)(?P=quote)""")
def line_spans(text: str) -> list[Span]:
    """``(start, end, kind)`` of the values of secret-named settings on lines of ``text``."""
    if "=" not in text and ":" not in text and "  " not in text:
        return []
    found = []
    for line in _LINE.finditer(text):
        kind = name_class(line.group("name"))
        if kind is None or load_rules().loose.issuperset(split_name(line.group("name"))):
            continue  # PIN:, Pass: the labelled-value grammar's (a pass's number is its price)
        span = _value(text, line, kind)
        if span is not None:
            found.append(span)
    return found


def _value(text: str, line: re.Match[str], kind: str) -> Span | None:
    start, raw = line.start("value"), line.group("value")
    if line.group("q"):  # "NAME=value", in an array: the value ends at the closing quote
        raw = raw.split(line.group("q"), 1)[0]
    quoted = _QUOTED.match(raw)
    if quoted is not None:
        value, start = quoted.group("inner"), start + 1
    else:
        value = raw.split(" #", 1)[0].rstrip().rstrip(",;")
    if not value or (quoted is None and value.startswith(("|", ">", "{", "[", "!", "&", "*"))) \
            or (line.group("sep") is None and kind != "password" and not looks_random(value)):
        return None  # unquoted: a block, a structure, a YAML tag or anchor; a table's value that is a word
    if kind == "password" and quoted is None and " " in value:
        return None
    return (start, start + len(value), "password" if kind == "password" else "secret_value") \
        if setting_value(value, kind) else None
