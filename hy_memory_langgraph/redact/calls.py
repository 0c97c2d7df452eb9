"""Credentials passed positionally to connect, login and auth calls, in any language's syntax.

``smtp.login("me@example.com", "…")``, ``new SshClient("10.0.0.5", "root", "…")``,
``ftp_login($conn, 'deploy', '…')``, ``smtp.PlainAuth("", "bob@x.com", "…", host)``,
``req.SetBasicAuth("admin", "…")``, ``session.setPassword("…")``, ``$redis->auth('…')``,
``Net::FTP.new(host, 'deploy', '…')``, ``req.basic_auth 'admin', '…'``: the password has no
label, only a place among the call's arguments. A call counts by its name's words
(:func:`~.rules.split_name`; ``patterns.toml``'s ``[calls]``):

* a *setter* names a password or a secret (``setPassword``, ``set_password``,
  ``withPassword``, ``Password``, ``auth``, ``setApiKey``) and takes it alone, or last
  (``keyring.set_password(service, user, …)``);
* a *keyed* setter (``define``, ``setItem``, ``setenv``, ``setProperty``, ``res.cookie``) takes
  a setting's name and its value: the value, when the name names a secret or a session
  (:func:`~.judge.setting_value`); getters' defaults stay (``os.getenv("TOKEN", "…")``);
* a *client* of a service (``cohere.Client('…')``, ``WebClient('…')``) takes its key first:
  a random-looking literal of 20 characters or more;
* an *auth* call names a login (``login``, ``auth``, ``authenticate``, ``credentials``,
  ``simple_bind_s``…) and a *connect* call a connection (``connect``, ``getConnection``,
  ``FTP``, ``SshClient``, ``PDO``, ``Sequelize``…): its password follows its user. The
  user is the first argument, or the second when the first is a host, a URL, a DSN or a
  handle (a variable, in a call of three or more: ``ftp_login($conn, user, …)``); numbers
  (a port) and empty strings (an identity) do not count. A user's place holding a name
  that reads as no password (``'app'`` in ``Sequelize('shop', 'app', '…')``) passes the
  password's place on to the next literal.

Any other call (``Github('backup', '…')``, ``cn.Open "DSN=…", "sa", "…"``) counts by its
literals alone: a user's literal, a comma, then a literal that reads as nothing but a password
(letters of both cases, a digit and a symbol names and formats do not join words with:
``Modula-2``, ``Python+UL4`` and ``datetime64[Y]`` stay).

The value is a string literal that reads as a password (letters with a digit or a symbol,
or random letters: :func:`~.judge.literal_password`), not a host, an address or a reference;
a setter named for a secret takes only a random-looking one. Variables are never values:
``login(user, password)`` keeps all it has. Keyword arguments (``password="…"``) are the
labelled-value grammar's.

Example:
    >>> text = 'auth := smtp.PlainAuth("", "bob@example.com", "Nupa#641", "smtp.example.com")'
    >>> [text[s:e] for s, e, _ in call_spans(text, text.lower())]
    ['Nupa#641']
    >>> call_spans("server.login(SMTP_USER, SMTP_PASSWORD)", "server.login(smtp_user, smtp_password)")
    []
"""

from __future__ import annotations

import functools
import re
from typing import Final, Literal

from hy_memory_langgraph.redact.judge import PUBLIC_SUFFIXES, literal_password, looks_random, reference, setting_value
from hy_memory_langgraph.redact.rules import load_rules, name_class, session_name, split_name

Span = tuple[int, int, str]
_CallKind = Literal["setter", "auth", "connect", "client", "keyed"]
#: A call: its name (dotted, ``::`` or ``->`` paths; ``new X(``, ``X.new(``), then ``(`` or,
#: in Ruby, spaces and a quote; also a keyword argument given a tuple (``auth=("bob", …)``).
_CALL: Final = re.compile(r"(?<![\w$])(?:new\s+)?(?P<name>[A-Za-z_]\w{0,60})(?:\.new)?"
                          r"(?:\s*(?:=\s*)?[(\[]|[ \t]+(?=[\"']))")
#: Most characters of an argument list read.
_MAX_ARGS: Final = 600
_QUOTES: Final = "\"'`"
_OPEN: Final = {"(": ")", "[": "]", "{": "}"}
#: A keyword argument (``password="…"``, ``host: "db"``): not positional.
_KEYWORD: Final = re.compile(r"\s*[A-Za-z_]\w*\s*(?:=(?!=)|:(?!:))")
_NUMBER: Final = re.compile(r"\s*\d{1,6}\s*")
#: A host: ``localhost``, a name under a public or an internal suffix, an IP address (a dotted
#: name of other words, ``velvet.tango.ember``, ``yuki.npvl``, is a user or a password).
_HOST: Final = re.compile(r"localhost|(?:[\w-]+\.)+(?i:" + PUBLIC_SUFFIXES + r"|local|localdomain|internal|lan|corp|home"
                          r"|intra|svc|cluster|test|example|invalid)|\d{1,3}(?:\.\d{1,3}){3}")
#: A place before a user: a host, a URL, a DSN (``mysql:host=db``), a mailbox
#: (``{imap.example.com:993}INBOX``), a path.
_PLACE: Final = re.compile(r".*[:/=;{\\].*")
_EMAIL: Final = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@functools.lru_cache(maxsize=4096)
def _call_kind(name: str) -> _CallKind | None:
    """What a call named ``name`` takes: a secret alone (``setter``), a login's user and
    password (``auth``), a connection's (``connect``), or nothing of ours (``None``)."""
    calls = load_rules().calls
    words = split_name(name)
    if not words:
        return None
    if name.lower() in calls["setter_names"]:
        return "setter"
    if words[-1] in calls["auth_words"] or name.lower() in calls["auth_names"]:
        return "auth"  # SetBasicAuth, PlainAuth, NewStaticCredentials
    rest = "_".join(words[1:] if len(words) > 1 and words[0] in calls["setter_verbs"] else words)
    if (len(words) == 1 or rest != name.lower()) and name_class(rest) in ("password", "secret") \
            and rest not in calls["not_setters"]:
        return "setter"  # setPassword, set_password, withApiKey, Password
    if not calls["auth_words"].isdisjoint(words):
        return "auth"
    if name.lower() in calls["connect_names"] or not calls["connect_words"].isdisjoint(words):
        return "connect"
    if words[-1] in calls["client_words"]:
        return "client"  # cohere.Client('…'), a service's client made with its key
    if not calls["keyed_verbs"].isdisjoint(words):
        return "keyed"  # define('DB_PASSWORD', '…'), localStorage.setItem('auth_token', '…'), os.Setenv(…)
    return None


def call_spans(text: str, folded: str) -> list[Span]:
    """``(start, end, "password")`` of the credentials passed to calls in ``text`` by their
    place; ``folded`` is its case-folded form (:mod:`.scan`'s)."""
    if not ("(" in text or "[" in text or " '" in text or ' "' in text):
        return []
    found = _paired(text) if "," in text else []
    if not any(needle in folded for needle in load_rules().calls["needles"]):
        return found  # most texts: a few substring tests
    read = 0  # a call inside an argument list already read is not read again (linear time)
    for call in _CALL.finditer(text):
        kind = _call_kind(call.group("name")) if call.start() >= read else None
        if kind is not None:
            named = "password" if call.group("name").lower() in load_rules().calls["setter_names"] \
                else name_class(call.group("name"))
            span, read = _credential(text, call.end(), kind, named)
            if span is not None and span not in found:
                found.append(span)
    return found


def _credential(text: str, pos: int, kind: _CallKind, named: str | None) -> tuple[Span | None, int]:
    """The credential among the arguments of a call of ``kind`` whose list starts at ``pos``
    (``named``: the class of a setter's name), and where the list read ends."""
    args, end = _arguments(text, pos, ruby=text[pos - 1] in _QUOTES or text[pos - 1] in " \t")
    return (_placed(args, kind, named) if args else None), end


def _placed(args: list[tuple[int, int, str] | None], kind: _CallKind, named: str | None) -> Span | None:
    """The argument that holds the credential, by its place (the module's rules)."""
    if kind == "client":
        value = args[0]
        return (value[0], value[1], "secret_value") if value and looks_random(value[2], min_length=20) \
            and not _PLACE.fullmatch(value[2]) else None
    if kind == "setter":  # its value alone, or last: keyring.set_password(service, user, "…")
        value = args[0] if len(args) == 1 else args[-1]
        if value is None or not _secret(value[2], "password" if named == "password" else "secret"):
            return None
        return value[0], value[1], "password"
    if kind == "keyed":  # a setting's name, then its value: setItem("auth_token", "…")
        key, value = args[0], args[1] if len(args) > 1 else None
        named = (name_class(key[2]) or ("weak" if session_name(key[2]) else None)) if key else None
        if named is None or value is None or not setting_value(value[2], named):
            return None
        return value[0], value[1], "password" if named == "password" else "secret_value"
    places = [a for a in args if a is None or (a[2] and not _NUMBER.fullmatch(a[2]))]
    first = places[0] if places else None
    host = first is None or _host(first[2]) or (_EMAIL.fullmatch(first[2]) is None
                                                and _PLACE.fullmatch(first[2]) is not None)
    if kind == "auth" and len(places) == 2:
        host = False  # login(EMAIL, "…"): a user and a password
    for value in places[2 if host else 1:]:
        if value is None:
            return None  # a variable: no literal password here
        if _secret(value[2], "password"):
            return value[0], value[1], "password"
        if _host(value[2]):
            return None
    return None


#: Two string literals side by side among a call's arguments: a user's, then a password's
#: (``Github('backup', '…')``, ``cn.Open "DSN=…", "sa", "…"``).
_PAIR: Final = re.compile(r"""(?<=[(,\s])(?P<q>["'])(?P<user>[A-Za-z][\w.@+-]{1,63})(?P=q)[ \t]*,[ \t]*"""
                          r"""(?P<p>["'])(?P<password>[^\s"'\\]{8,64})(?P=p)(?=[ \t]*[,)\]]|[ \t]*$)""", re.M)


def _paired(text: str) -> list[Span]:
    """The password of a user and password passed side by side to any call (:data:`_PAIR`)."""
    return [(m.start("password"), m.end("password"), "password") for m in _PAIR.finditer(text)
            if _strong_password(m.group("password")) and (_EMAIL.fullmatch(m.group("user")) or "@" not in m.group("user"))]


def _strong_password(value: str) -> bool:
    """A literal that reads as nothing but a password: letters of both cases, a digit and a
    symbol prose and names do not join words with (``Liverpool1138$``, ``RDM>yilPL;1Fbt<9``;
    not ``Modula-2``, ``Python+UL4``, ``datetime64[Y]``, ``Zm9vYmFyMQ==``, ``=Sheet2!A1*2``,
    ``#Chapter10``, a name, a format, a colour, a path, a version, a reference)."""
    return any(c.isdigit() for c in value) and any(c.islower() for c in value) \
        and any(c.isupper() for c in value) and not _PAIR_SYMBOLS.isdisjoint(value) \
        and not any(c in value for c in "%/{}[]().:=") and not value.startswith("#") \
        and literal_password(value) and not reference(value)


#: Symbols of a password that do not join the words of a name (``-``, ``+``, ``_``); no
#: ``=`` (base64's padding, a formula, a query) and no leading ``#`` (an anchor).
_PAIR_SYMBOLS: Final = frozenset("!#$&*?@~|<>;^")


def _secret(value: str, kind: str) -> bool:
    if not value or reference(value) or _host(value) or _EMAIL.fullmatch(value):
        return False
    return literal_password(value) if kind == "password" else looks_random(value, min_length=12)


def _host(value: str) -> bool:
    return _EMAIL.fullmatch(value) is None and _HOST.fullmatch(value) is not None


def _arguments(text: str, pos: int, ruby: bool) -> tuple[list[tuple[int, int, str] | None], int]:
    """The positional arguments of the call whose list starts at ``pos`` (after its ``(``,
    or after the name and spaces in Ruby): each a string literal's ``(start, end, value)``
    (a number as its digits, an empty string as ``""``), ``None`` for anything else;
    keyword arguments are left out; and where the list read ends. At most :data:`_MAX_ARGS`
    characters are read."""
    args: list[tuple[int, int, str] | None] = []
    end = min(len(text), pos + _MAX_ARGS)
    i = pos
    while i < end:
        while i < end and text[i] in " \t\r\n":
            i += 1
        if i >= end or text[i] in ")]}" or (ruby and text[i] == "\n"):
            break
        keyword = _KEYWORD.match(text, i)
        literal = None
        if text[i] in _QUOTES:
            close = _closing(text, i, end)
            if close is None:
                break
            literal = (i + 1, close, text[i + 1:close])
            i = close + 1
        number = _NUMBER.match(text, i) if literal is None else None
        if number is not None and text[number.end():number.end() + 1] in (",", ")", ""):
            literal = (i, number.end(), number.group().strip())
        i = _argument_end(text, i, end)
        if keyword is None:
            args.append(literal)
        if i >= end or text[i] != ",":
            break
        i += 1
    return args, i


def _closing(text: str, start: int, end: int) -> int | None:
    """Where the string literal opened at ``start`` closes (a backslash escapes)."""
    quote, i = text[start], start + 1
    while i < end:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        if text[i] == "\n":
            return None
        i += 1
    return None


def _argument_end(text: str, i: int, end: int) -> int:
    """Where the argument at ``i`` ends: at a ``,`` or a closing bracket of its level."""
    depth = 0
    while i < end:
        c = text[i]
        if c in _QUOTES:
            close = _closing(text, i, end)
            i = end if close is None else close + 1
            continue
        if c in _OPEN:
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif c == "," and depth == 0:
            return i
        elif c == "\n" and depth == 0 and text[i - 1:i] not in ",(":
            return i
        i += 1
    return i
