"""Whether a value found after a label is a secret: random-looking, prose, or code.

A label says a value *may* be a secret; these tests look at the value itself. A ``secret``
label's value counts only when it looks random (:func:`looks_random`): keys, tokens and
hashes do, words and code do not (``CONFIG_KEY_NS``, ``ctx.set(config)``). A password
label's value counts unless it reads as prose after ``is`` (:func:`plain_word`) or is
code (:func:`code_value`: ``password: Optional[str] = None``, ``password=self.password``,
``pwd = keys.pop(``), which the coding scene stores by the thousand.

Example:
    >>> looks_random("mB4vC7xZ1nQ9wE3rT6yU"), looks_random("CONFIG_KEY_CHECKPOINT_NS")
    (True, False)
    >>> code_value("Optional[str] = None", "="), code_value("Tr0ub4dor&3", ":")
    (True, False)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final

from hy_memory_langgraph.redact.rules import CASE_CHANGE, mentions_password, name_class

__all__ = ["code_value", "entropy", "looks_random", "plain_word", "wordy"]

_CLASSES: Final = tuple(re.compile(p) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
_NON_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")
#: A part of a name: letters with at most four digits after them, or a small number (an index).
_WORD_PART: Final = re.compile(r"[A-Za-z]+[0-9]{0,4}|[0-9]{1,3}")
_LOWER_RUN: Final = re.compile(r"[a-z]+")
#: A value that is code: a generic or bare type (an annotation), a call or subscript, a
#: role of reStructuredText (``:class:`…```), a list or dict of names, an attribute
#: (``self.password``), a statement (``raise …``).
_CODE: Final = re.compile(
    r"(?:Optional|Union|List|Dict|Tuple|Set|Sequence|Mapping|Literal|Annotated|Callable|list|dict|tuple|set|type)\["
    r"|\(?(?:str|bytes|bool|int|float|None|Any|object|SecretStr|SecretBytes|string|number|boolean|any|unknown)"
    r"(?:\s*$|\s*[=,|)\];]|\s+\|)"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[(\[]"
    r"|(?:class|func|meth|attr|paramref|ref|obj|mod|data|exc):`"
    r"|[\[{][A-Za-z_'\"][\w.'\"]*(?:[\]},:(]|$)"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
    r"|(?:raise|return|yield|await|lambda)\b")
_IDENTIFIER_PATH: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def entropy(text: str) -> float:
    """Shannon entropy of ``text``, in bits a character."""
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def looks_random(value: str, min_length: int = 10) -> bool:
    """A token long enough, with two or more character classes and high Shannon entropy
    (keys, tokens, hashes; not words, numbers or names: :func:`wordy`)."""
    if len(value) < min_length:
        return False
    classes = sum(bool(p.search(value)) for p in _CLASSES)
    return classes >= 2 and entropy(value) >= 3.0 and not wordy(value)


def wordy(value: str) -> bool:
    """Whether ``value`` is made of words, as names and code are (``CONFIG_KEY_NS``,
    ``ctx.set(config)``, ``getUserProfileById2``): split at every non-alphanumeric and at
    case changes, each part is letters with at most four digits after them (``X509``) or
    a number of up to three digits; and the lower-case runs are 2.5 letters long or more on
    average, or the parts three letters on average with at most a third shorter (random
    text changes case every letter or two: ``wJalrXUtnFEMI``). Without lower case, at most
    one part holds a digit and at most a third are shorter than three letters."""
    parts = [p for chunk in _NON_ALNUM.split(value) for p in CASE_CHANGE.split(chunk) if p]
    if not parts or not all(_WORD_PART.fullmatch(p) for p in parts):
        return False
    letters = [len(p.rstrip("0123456789")) for p in parts]
    few_short = sum(n < 3 for n in letters) * 3 <= len(parts)
    lower = _LOWER_RUN.findall(value)
    if lower:
        return sum(map(len, lower)) / len(lower) >= 2.5 or (few_short and sum(letters) >= 3 * len(parts))
    return few_short and sum(any(c.isdigit() for c in p) for p in parts) <= 1


def plain_word(value: str) -> bool:
    """Letters only, of one case (or of a script without case): after ``is`` that reads
    as prose, not as a password."""
    if not value.isalpha():
        return False
    return value.islower() or value.isupper() or value.istitle() or \
        not any(c.islower() or c.isupper() for c in value)


def code_value(value: str, sep: str) -> bool:
    """Whether a password label's ``value`` is code rather than a password: a type, a call,
    a subscript, a reStructuredText role, a list or dict of names or an attribute; after
    ``=`` or ``:``, also a name without digits that itself names a password
    (``password=password``, ``shrink_pass: ShrinkPass``; ``Wg3tPass`` is a password)."""
    if _CODE.match(value):
        return True
    if sep in ("=", ":") and _IDENTIFIER_PATH.fullmatch(value) and not any(c.isdigit() for c in value):
        name = value.rsplit(".", 1)[-1]
        return name_class(name) == "password" or mentions_password(name)
    return False
