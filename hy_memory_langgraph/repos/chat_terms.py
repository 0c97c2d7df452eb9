"""What lexical search indexes of a chat memory, derived once, when the memory is written.

Chat search matches a memory's words with BM25 (``docs/design.md#chat-memory``). A lite
turn that belongs to a session is matched with the turns around it: its own text plus
the last :data:`~hy_memory_langgraph.retrieval.neighbours.NEIGHBOUR_MAX_CHARS` characters
of each of :data:`LEXICAL_WINDOW` previous and next turns of the session, in session
order (``created_at``, then ``memory_ts``, then id); any other memory is matched by its
:attr:`~hy_memory_langgraph.repos.records.ChatMemory.retrieval_text`. Only active
memories take part, as each other's neighbours too.

These definitions serve both ways of searching:

* stores with a persistent lexical index (``supports_lexical_index``) get one
  :class:`~hy_memory_langgraph.store.LexicalOp` per active memory in the batch that
  writes it (:func:`lexical_op`): its own terms, what it lends its neighbours, its
  session and position. The store adds the neighbours' terms itself and keeps them in
  step as turns arrive, change or go (in the same transaction);
* other stores (LangGraph's ``InMemoryStore``) build the same texts at search time
  (:func:`utterance`, with :func:`~hy_memory_langgraph.retrieval.neighbours.texts_with_neighbours`).

Example:
    >>> from hy_memory_langgraph.repos.records import ChatMemory
    >>> m = ChatMemory(memory_id="m1", user_id="u", content="Yes, last weekend!", session_id="s1",
    ...                source="turn", memory_at="2024-05-01T00:00:00+00:00", memory_ts=0.0)
    >>> op = lexical_op(("chat", "u"), m)
    >>> op.group, sorted(op.terms), op.window
    ('s1', ['last', 'weekend'], (2, 1))
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from hy_memory_langgraph.repos.records import ChatMemory
from hy_memory_langgraph.retrieval.bm25 import tokenize
from hy_memory_langgraph.retrieval.neighbours import NEIGHBOUR_MAX_CHARS, Utterance
from hy_memory_langgraph.store import LexicalOp

#: Previous and next session turns whose text a turn is matched with (chosen with the
#: chat ranking by cross-validation on LoCoMo: ``bench/RECALL_NOTES.md``).
LEXICAL_WINDOW: Final = (2, 1)


def session_of(memory: ChatMemory) -> str | None:
    """The session whose turns are ``memory``'s neighbours (``None``: it has none)."""
    return memory.session_id if memory.source == "turn" and memory.session_id else None


def _turn_order(memory: ChatMemory) -> tuple[str, float]:
    """Position of a turn in its session: when it was written, then its place among the
    turns written together (``turn_index``, zero-padded so it sorts as text), then its
    ``memory_ts``; ties are broken by memory id."""
    return (f"{memory.created_at}\x1f{memory.turn_index:09d}", memory.memory_ts)


def utterance(memory: ChatMemory) -> Utterance:
    """``memory`` as a turn for :func:`~hy_memory_langgraph.retrieval.neighbours.texts_with_neighbours`."""
    return Utterance(memory.memory_id, session_of(memory), _turn_order(memory), memory.own_text)


def _terms(text: str) -> dict[str, int]:
    return dict(Counter(tokenize(text)))


def lexical_op(namespace: tuple[str, ...], memory: ChatMemory) -> LexicalOp:
    """The lexical document of an active memory, for a store with a lexical index.

    Args:
        namespace: Where the memory is stored.
        memory: The memory as it is being written.
    """
    session = session_of(memory)
    if session is None:
        return LexicalOp(namespace, memory.memory_id, _terms(memory.retrieval_text), ts=memory.memory_ts,
                         window=LEXICAL_WINDOW)
    content = memory.own_text
    tail = _terms(content[-NEIGHBOUR_MAX_CHARS:]) if len(content) > NEIGHBOUR_MAX_CHARS else None
    return LexicalOp(namespace, memory.memory_id, _terms(content), tail, ts=memory.memory_ts,
                     group=session, order=_turn_order(memory), window=LEXICAL_WINDOW)
