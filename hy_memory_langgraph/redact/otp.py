"""Two-factor secrets: setup keys in a two-factor context, and lists of backup codes.

A TOTP or HOTP setup key is base32 (``A``-``Z`` and ``2``-``7``), 16 characters or more,
shown upper case, lower case or in groups of four ("jbsw y3dp ehpk 3pxp"); an app that
cannot scan the QR code is given it to type. Alone it is a string of capitals, so it is
read as a key where the text speaks of two-factor setup: a word of ``patterns.toml``'s
``two_factor`` list (``2FA``, ``TOTP``, ``authenticator``, ``two-factor``, ``setup key``,
``Zwei-Faktor``, ``二段階認証``, ``двухфактор`` …) at most :data:`CONTEXT` characters
before it. A key holds a digit (a word of capitals does not); one made only of letters
(under 4 % of 16-character keys) is left to the labels.

Backup codes come as a list after their label (``backup codes``, ``recovery codes``,
``Backup-Codes``, ``codes de secours``, ``резервные коды``, ``バックアップコード`` …: the
``code_lists`` of ``patterns.toml``): every code of the list goes, one a line, after
commas or spaces, numbered or not, after a colon or on the lines below the label's; the
list ends at the first token that is no code (a code is 4 to 12 letters and digits, or two
such groups joined by a space or a dash, holding a digit unless it has the shape of the
list's first code; a list of letters alone, ``abcd-efgh``, needs four such codes of one shape).

Example:
    >>> text = "2FA setup — can't scan? enter jbsw y3dp ehpk 3pxp kd4q"
    >>> [text[s:e] for s, e, _ in otp_spans(text, text.lower())]
    ['jbsw y3dp ehpk 3pxp kd4q']
    >>> text = "backup codes: 1234 5678, 9012 3456 (keep them safe)"
    >>> [text[s:e] for s, e, _ in otp_spans(text, text.lower())]
    ['1234 5678, 9012 3456']
    >>> otp_spans("order JBSWY3DPEHPK3PXP shipped", "order jbswy3dpehpk3pxp shipped")
    []
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Final

from hy_memory_langgraph.redact.rules import load_rules, trie

Span = tuple[int, int, str]
#: Most characters between a two-factor word and the key it speaks of.
CONTEXT: Final = 300
#: A base32 key: 16 or more characters of one case, or groups of four (a space or a dash
#: between them), four groups or more.
_BASE32: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])(?:[A-Z2-7]{16,128}|[a-z2-7]{16,128}"
                            r"|[A-Z2-7]{4}(?:[ -][A-Z2-7]{4}){3,31}|[a-z2-7]{4}(?:[ -][a-z2-7]{4}){3,31})"
                            r"={0,6}(?![A-Za-z0-9+/_-])")
_DIGIT: Final = re.compile(r"[2-7]")
_ANY_DIGIT: Final = re.compile(r"\d")
#: Two codes of letters alone in a row (``abcd-efgh, ijkl-mnop``): a text without a digit is
#: read for a list only when it has them (hyphenated words in prose seldom come in a row).
_LETTER_CODES_IN_A_ROW: Final = re.compile(r"[A-Za-z]{4}-[A-Za-z]{4}[\s,;]+(?:\d{1,2}[.)][ \t]*)?"
                                           r"[A-Za-z]{4}-[A-Za-z]{4}")
#: A backup code: letters and digits, groups of them joined by dashes (``92LO6-9EQM0-Q8ADY``),
#: or two groups joined by a space.
_CODE: Final = r"[A-Za-z0-9]{4,12}(?:(?:-[A-Za-z0-9]{4,12}){1,7}|[ ](?=[A-Za-z]*\d)[A-Za-z0-9]{4,12})?"
#: What may stand between two codes: commas, spaces, line breaks, numbering, "and".
_BETWEEN: Final = re.compile(r"(?:[ \t]*[,;][ \t]*|[ \t]*\n[ \t]*(?:\d{1,2}[.)][ \t]*)?|[ \t]+(?:\d{1,2}[.)][ \t]*)?)"
                             r"(?:(?:and|or|und|oder|et|ou|y|o|e|i|и|или|ve|en|och|og)[ \t]+)?")
_CODE_TOKEN: Final = re.compile(_CODE + r"(?![A-Za-z0-9])")
_SHAPE: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                              "A" * 26 + "a" * 26 + "0" * 10)
#: Between a list's label and its first code: a few words ("(each works once)") and a colon,
#: or nothing; then spaces, a line break, numbering.
_ENDING: Final = re.compile(r"[^\W\d_]{0,4}")
_COLON: Final = re.compile(r"[^\n:：]{0,40}?[:：]|[^\n:：]{0,40}?(?=\n)")
_BEFORE_CODE: Final = re.compile(r"[ \t]*\n?[ \t]*(?:\d{1,2}[.)][ \t]*)?")
#: A copula between a list's label and its first code ("der Code lautet …", "is", "est").
_COPULA: Final = re.compile(r"[ \t]+(?:is|are|ist|sind|lautet|lauten|est|sont|es|son|è|sono|é|são|to|je|on|är|er)(?=[ \t])")


@functools.cache
def _words() -> tuple[re.Pattern[str], re.Pattern[str], frozenset[str]]:
    """The two-factor words and the list labels as two patterns, those in ASCII to find in
    the case-folded text, the others in any case (a trie each: :func:`~.rules.trie`), and
    the list labels (lower case)."""
    rules = load_rules()
    words = {*rules.two_factor, *rules.code_lists}
    ascii_words = {w for w in words if w.isascii()}
    return (re.compile(trie(ascii_words)), re.compile(trie(words - ascii_words), re.IGNORECASE),
            frozenset(rules.code_lists))


def otp_spans(text: str, folded: str) -> list[Span]:
    """``(start, end, kind)`` of the setup keys (``otp_secret``) and backup codes
    (``password``) in ``text``; ``folded`` is its case-folded form (:mod:`.scan`'s)."""
    if _ANY_DIGIT.search(text) is None and ("-" not in text or _LETTER_CODES_IN_A_ROW.search(text) is None):
        return []  # a key holds a digit, a list's codes too unless they are letters and a dash
    ascii_words, others, lists = _words()
    found = [*ascii_words.finditer(folded), *(() if text.isascii() else others.finditer(text))]
    if not found:
        return []
    labels = sorted((m for m in found if m.group().lower() in lists), key=lambda m: m.start())
    context = sorted(m.end() for m in found if m.group().lower() not in lists)
    return _setup_keys(text, context) + _code_lists(text, labels)


def _setup_keys(text: str, context: list[int]) -> list[Span]:
    """The base32 keys at most :data:`CONTEXT` characters after a two-factor word (its end
    in ``context``)."""
    if not context:
        return []
    found = []
    for key in _BASE32.finditer(text):
        i = bisect.bisect_right(context, key.start())  # the two-factor words that end before the key
        if i and context[i - 1] >= key.start() - CONTEXT and _DIGIT.search(key.group()) and any(c.isalpha() for c in key.group()):
            found.append((key.start(), key.end(), "otp_secret"))
    return found


def _code_lists(text: str, labels: list[re.Match[str]]) -> list[Span]:
    """The codes listed after each of the ``labels``."""
    found: list[Span] = []
    for label in labels:
        if found and label.start() < found[-1][1]:
            continue  # a label inside a list already taken
        after = _ENDING.match(text, label.end()).end()  # type: ignore[union-attr]
        colon = _COLON.match(text, after)
        copula = _COPULA.match(text, after) if colon is None else None
        at = colon.end() if colon else copula.end() if copula else label.end()
        start = _BEFORE_CODE.match(text, at).end()  # type: ignore[union-attr]
        end = _list_end(text, start)
        if end > start:
            found.append((start, end, "password"))
    return found


#: Fewest codes of one shape in a list of letters alone (``abcd-efgh``): prose's hyphenated
#: words are seldom so many of one shape in a row.
_LETTER_CODES: Final = 4


#: Fewest characters of a code of letters alone that goes on a sheet of codes with digits
#: (``g03v30oc39  qkshuylowf``).
_LONG_CODE: Final = 8


def _laid_out(between: str, code: str, first: str) -> bool:
    """Whether ``code``, of letters alone, stands in a sheet of codes as the ``first`` does:
    :data:`_LONG_CODE` characters or more, its layout (length, dashes), apart by a line
    break or two spaces ("1234, 5678 and remember" ends at "remember")."""
    layout = "".join("x" if c.isalnum() else c for c in code)
    return len(code) >= _LONG_CODE and layout == "".join("x" if c.isalnum() else c for c in first) \
        and (("\n" in between or "  " in between) and not between.strip())


def _list_end(text: str, pos: int) -> int:
    """Where the list of codes that starts at ``pos`` ends (``pos``: no code there): at
    the first token that is no code, or a code of letters alone of another shape (unless
    laid out as the first: :func:`_laid_out`). A list of
    letters alone counts when it has :data:`_LETTER_CODES` codes of one shape, two groups
    joined by a dash (``abcd-efgh``)."""
    first = _CODE_TOKEN.match(text, pos)
    if first is None:
        return pos
    shape = first.group().translate(_SHAPE)
    end, count = first.end(), 1
    while True:
        between = _BETWEEN.match(text, end)
        code = _CODE_TOKEN.match(text, between.end()) if between and between.end() > end else None
        if code is None or not (any(c.isdigit() for c in code.group()) or code.group().translate(_SHAPE) == shape
                                or _laid_out(between.group(), code.group(), first.group())):
            break
        end, count = code.end(), count + 1
    if any(c.isdigit() for c in first.group()):
        return end
    lettered = count >= _LETTER_CODES and "-" in shape
    return end if lettered else pos
