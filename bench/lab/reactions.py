"""Reactions: lite turns that only react to the message before them (measured, not shipped).

``"Miso is a lovely name!"`` after ``"I adopted a grey cat called Miso."`` says nothing
new. :func:`is_reaction` names such turns so ``bench/no_statement_turns.py`` can count
them and ``locomo_recall.py cv --section reactions`` can measure carrying or weighting
them; held out, neither beat storing them (``docs/benchmarks.md``), so the library keeps
them. It reuses the sentence and filler rules of
:mod:`hy_memory_langgraph.messages.signal` (their private helpers: this is the lab).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from hy_memory_langgraph.messages.signal import (
    _CJK_RUN,
    _EN_FILLER,
    _LABEL,
    _asks,
    _asks_unmarked,
    _is_filler_sentence,
    _sentences,
    is_trivial,
)

__all__ = ["REACTION_OWN_WORDS", "is_reaction"]

#: Words of its own (outside the filler vocabulary and the message reacted to) a sentence
#: of a reaction may have.
REACTION_OWN_WORDS: Final = 1
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def _word(token: str) -> str:
    """A token as reactions compare it: case-folded, a plural ``s`` dropped."""
    folded = token.casefold().replace("’", "'")
    return folded[:-1] if len(folded) > 3 and folded.endswith("s") and not folded.endswith("ss") else folded


def _own_words(sentence: str, said: frozenset[str]) -> int:
    """Words of ``sentence`` outside the filler vocabulary and ``said`` (a token with a
    digit is a word: ``"HAT169"``, ``"3"``)."""
    own = 0
    for token in _TOKEN.findall(sentence):
        folded = token.casefold().replace("’", "'")
        if folded in _EN_FILLER or folded.split("'")[0] in _EN_FILLER:
            continue
        own += _word(token) not in said
    return own


def is_reaction(text: str, previous: str) -> bool:
    """Whether a turn only reacts to ``previous``, the message it follows.

    The turn (its speaker label dropped) is cut into sentences as in
    :func:`~hy_memory_langgraph.messages.is_question_only`. It is a reaction when every sentence with content either
    asks a question or has at most :data:`REACTION_OWN_WORDS` word of its own (outside
    the filler vocabulary of :func:`is_trivial` and the words of ``previous``), and at
    least one sentence is of the second kind (a turn that only asks is question-only).
    Never a reaction: an answer to a message that asked something (``"Aisle, please"``
    repeats the question's words, but says what the speaker chose), a trivial turn, and
    any turn after an empty ``previous``. Chinese text always counts as words of its own.

    Args:
        text: A message's text.
        previous: The last message with content before it (any speaker).

    Returns:
        ``True`` for a turn that says nothing its predecessor did not.

    Example:
        >>> is_reaction("Miso is a lovely name!", "I adopted a grey cat called Miso.")
        True
        >>> is_reaction("Miso is a lovely name! How old is she?", "My cat is called Miso.")
        True
        >>> [is_reaction("I love cats too, I have two of them.", "My cat is called Miso."),
        ...  is_reaction("Miso, please.", "Should we call the cat Miso or Tofu?")]
        [False, False]
    """
    body = unicodedata.normalize("NFKC", _LABEL.sub("", text, count=1)).strip()
    before = unicodedata.normalize("NFKC", previous).strip()
    if not before or is_trivial(body) or _CJK_RUN.search(body) or _asks_anything(before):
        return False
    said = frozenset(_word(t) for t in _TOKEN.findall(before))
    reacted = False
    for sentence, ends in _sentences(body):
        if _is_filler_sentence(sentence, ends) or _asks(sentence, ends):
            continue
        if _own_words(sentence, said) > REACTION_OWN_WORDS:
            return False
        reacted = True
    return reacted


def _asks_anything(text: str) -> bool:
    """Some sentence of ``text`` asks (a question mark, or a marked-less question)."""
    return any(_asks(s, e) or _asks_unmarked(s, e) for s, e in _sentences(text))
