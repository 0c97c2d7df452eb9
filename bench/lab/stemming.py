"""The English Snowball (Porter 2) stemmer in place of the library's light one (not shipped).

:func:`snowball_tokenize` is the library's :func:`~hy_memory_langgraph.retrieval.bm25.tokenize`
with Snowball stems: the library's tokens unstemmed, then each plain ASCII word of more
than three letters stemmed by PyStemmer (the ``bench`` extra). Compounds (``auth.py``),
numbers and CJK tokens are never plain words, so they stay as they are, as in the
library's own stemming.

Example:
    >>> snowball_tokenize("The kids were running")
    ['kid', 'run']
"""

from __future__ import annotations

import functools
import threading

from hy_memory_langgraph.retrieval.bm25 import tokenize

__all__ = ["snowball_tokenize"]

_local = threading.local()


@functools.lru_cache(maxsize=1 << 15)
def _stem(word: str) -> str:
    """The Snowball stem of a plain ASCII word; others as they are (one stemmer per
    thread: PyStemmer's are not thread-safe)."""
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(word))


def snowball_tokenize(text: str, *, stopwords: bool = True) -> list[str]:
    """Tokens of ``text`` as :func:`~hy_memory_langgraph.retrieval.bm25.tokenize` gives
    them, stemmed by Snowball."""
    return [_stem(token) for token in tokenize(text, stem=False, stopwords=stopwords)]
