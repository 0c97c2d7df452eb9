"""Several accounts at once: a table with a password column, and a list of accounts.

A table is structured data written as text, and is read as such: a header row (its
table's first line; a markdown table's has its rule below it) whose cells
are split by ``|`` (markdown), tabs, commas (CSV, a password manager's export, quoted or
not) or runs of spaces (aligned columns), one of whose cells names a password in any
language (``Password``, ``login_password``, ``Passwort``, ``Пароль``, ``パスワード``, ``密码``
…: :func:`~.rules.mentions_password`); every row below it split alike, to a blank line,
gives the cell of that column, whatever it holds (unless a reference or a mask, ``yes``
or ``no``, or words of prose). A list of accounts is lines of one shape, ``- site: user /
password`` (two or more), the part after the slash a credential
(:func:`~.judge.credential_like`).

Example:
    >>> text = "site,user,password\\nvk.com,bob,Gavo-989ru\\nsteam,ann,Cajo*rake62"
    >>> [text[s:e] for s, e, _ in table_spans(text)]
    ['Gavo-989ru', 'Cajo*rake62']
    >>> table_spans("| Field | Required |\\n|---|---|\\n| password | yes |")
    []
"""

from __future__ import annotations

import re
from typing import Final

from hy_memory_langgraph.redact.judge import credential_like, reference
from hy_memory_langgraph.redact.rules import load_rules, mentions_password, name_class, split_name


Span = tuple[int, int, str]
#: A cell: ``(start, end)`` in the text, quotes and spaces off.
_Cell = tuple[int, int]
#: Longest header cell that names a column (``login_password``, ``Mot de passe``).
_HEADER_CELL: Final = 30
#: A markdown table's rule (``|---|:--:|``).
_RULE: Final = re.compile(r"[\s|:+-]*-{3,}[\s|:+-]*")
#: How each kind of table splits a row: bars, tabs, commas outside quotes (a quoted field
#: is matched whole and passed over), runs of spaces.
_SPLITS: Final = {"|": re.compile(r"\|"), "\t": re.compile(r"\t"), ",": re.compile(r"\"[^\"\n]*\"|,"),
                  "  ": re.compile(r" {2,}")}
#: Longest line read as a header (a header names a few columns).
_HEADER_LINE: Final = 1_000
#: Cell values that hold no password.
_NO_VALUE: Final = frozenset({"", "-", "—", "yes", "no", "true", "false", "none", "null", "n/a", "na", "x"})
#: A list's line of an account: a bullet, a site, a colon or a dash, a user, a slash, the password.
_ACCOUNT: Final = re.compile(r"(?m)^[ \t]*(?:[-*•·]|\d{1,2}[.)])[ \t]*[^\s:：/|][^:：/|\n]{0,60}?[ \t]*[:：—–][ \t]*"
                             r"[^\s/|]{1,80}[ \t]+/[ \t]+(?P<pw>[^\s|]{3,200})[ \t]*$")


#: An export's row without its header: a site's address, the user, the password (commas
#: or tabs between, quoted or not), as browsers and password managers write a login.
_EXPORT_ROW: Final = re.compile(r"(?m)(?:^|[,\t])\"?https?://[^\s,\"]{1,200}\"?(?P<d>[,\t])\"?[^\s,\"]{1,80}\"?(?P=d)"
                                r"\"?(?P<pw>[^\s,\"]{3,200})\"?(?=[,\t]|$)")


def table_spans(text: str) -> list[Span]:
    """``(start, end, "password")`` of each password in a table or a list of accounts in ``text``."""
    found = _table_cells(text) if "\n" in text else []
    if "://" in text:
        found += [(m.start("pw"), m.end("pw"), "password") for m in _EXPORT_ROW.finditer(text)
                  if credential_like(m.group("pw"))]
    if "\n" not in text or "/" not in text:
        return found
    accounts = [m for m in _ACCOUNT.finditer(text) if credential_like(m.group("pw"))]
    if len(accounts) >= 2:
        found += [(m.start("pw"), m.end("pw"), "password") for m in accounts]
    return found


def _cells(text: str, start: int, end: int, delimiter: str) -> list[_Cell]:
    """The cells of the line ``text[start:end]`` split at ``delimiter``, trimmed."""
    cells = []
    pos = start
    cuts = [m.start() for m in _SPLITS[delimiter].finditer(text, start, end) if m.group()[0] != '"']
    for cut in [*cuts, end]:
        a, b = pos, cut
        while a < b and text[a] in " \t\"'":
            a += 1
        while b > a and text[b - 1] in " \t\"'":
            b -= 1
        cells.append((a, b))
        pos = cut + (1 if delimiter != "  " else 0)
        while delimiter == "  " and pos < end and text[pos] == " ":
            pos += 1
    if delimiter == "|":  # a markdown row's outer bars leave an empty cell at each end
        cells = cells[1:] if cells and text[start:end].lstrip().startswith("|") else cells
        cells = cells[:-1] if cells and text[start:end].rstrip().endswith("|") else cells
    return cells


def _password_column(text: str, cells: list[_Cell]) -> int | None:
    """Which header cell names a password (``None``: none, or no header: a header's cells
    are names, without digits, and none ends in a separator as a label does, ``password:``)."""
    if any(any(c.isdigit() for c in text[a:b]) or text[a:b].endswith((":", "=", "：")) for a, b in cells):
        return None
    for index, (a, b) in enumerate(cells):
        name = text[a:b]
        if 0 < len(name) <= _HEADER_CELL and (name_class(name) == "password" or mentions_password(name)):
            return index
    return None


def _indented(text: str, start: int, end: int) -> int:
    """Where the line ``text[start:end]`` begins after its indentation (spaces that indent a
    line of YAML or code align no column)."""
    while start < end and text[start] in " \t":
        start += 1
    return start


def _table_cells(text: str) -> list[Span]:
    found: list[Span] = []
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    i = 0
    while i < len(lines):
        line_start, end = lines[i]
        i += 1
        start = _indented(text, line_start, end)
        delimiter = next((d for d in ("|", "\t", ",", "  ") if d in text[start:end]), None)
        if delimiter is None or end - start > _HEADER_LINE:
            continue
        if i > 1 and lines[i - 2][1] + 1 == line_start and delimiter in text[lines[i - 2][0]:lines[i - 2][1]]:
            continue  # a row inside a table: its header is the table's first line
        if delimiter == "|" and (i >= len(lines) or _RULE.fullmatch(text, *lines[i]) is None):
            continue  # a markdown table's header has its rule below it
        header = _cells(text, start, end, delimiter)
        column = _password_column(text, header) if len(header) >= 2 else None
        if column is None:
            continue
        # a column named by a loose word ("pass", "PIN") holds codes or passwords, not words: | pass | price |
        loose = load_rules().loose.issuperset(split_name(text[slice(*header[column])]))
        while i < len(lines) and lines[i][0] == lines[i - 1][1] + 1:  # rows to a blank line
            row_start, row_end = lines[i]
            row_start = _indented(text, row_start, row_end)
            row = _cells(text, row_start, row_end, delimiter)
            if _RULE.fullmatch(text, row_start, row_end) is None:
                if len(row) != len(header):
                    break
                a, b = row[column]
                value = text[a:b]
                if value.lower() not in _NO_VALUE and " " not in value.strip() and not reference(value) \
                        and (not loose or value.isdigit() or credential_like(value)):
                    found.append((a, b, "password"))
            i += 1
    return found
