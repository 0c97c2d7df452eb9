"""Which turns of a lite chat write become memories: a pure plan, stored by ``store_turns``.

Rules (``docs/design.md#chat-memory``), per user or assistant message with text, in order:

* **Trivial** (:func:`~hy_memory_langgraph.messages.is_trivial`: acknowledgements,
  pleasantries, emoji, function words only): not a memory (``SKIP``, reason
  ``"trivial"``). Its text is carried into the next stored turn of the same session
  (``carried``), so lexical search still sees it there.
* **Question** (:func:`~hy_memory_langgraph.messages.is_question_only`: every sentence
  with content asks, ``"What is my cat called?"``): not a memory either (``SKIP``,
  reason ``"question"``), carried like a trivial turn. Measured on LoCoMo
  (``python -m bench.locomo_recall cv --section reactions``): held-out recall is not
  lower than storing such turns and ranking them lower, and they no longer fill the
  top hits.
* **Duplicate**: the same owner already said the same text (once matched) in the same
  session, in an earlier write or earlier in this one, and that memory is still active:
  ``SKIP`` with reason ``"duplicate"`` and the id of that memory.
* Otherwise a new memory (``ADD``), with ``context`` = the last message with content
  before it (trivial and question turns skipped) and ``carried`` = the trivial and
  question turns since then, both cut to their last :data:`CONTEXT_CHARS` characters.

The history (the session's recent window) gives the context and carried turns of the
write's first turn, so a trivial turn at the end of one write is carried into the next.

Example:
    >>> from hy_memory_langgraph.messages.types import Msg
    >>> plan = plan_turns([Msg(role="user", content="ok"), Msg(role="user", content="Do you like tea?"),
    ...                    Msg(role="user", content="I like tea")], history=[], session_id="s", stored={})
    >>> [(t.op, t.reason, t.carried.splitlines()) for t in plan]
    [('SKIP', 'trivial', []), ('SKIP', 'question', []), ('ADD', None, ['ok', 'Do you like tea?'])]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages.signal import is_question_only, is_trivial
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.prompts.replies import OWNERS
from hy_memory_langgraph.repos.chat import turn_hash
from hy_memory_langgraph.repos.records import ChatMemory

#: Characters kept of ``context`` and of ``carried`` (the end of each).
CONTEXT_CHARS: Final = 1000


@dataclass(frozen=True)
class _PlannedTurn:
    """What happens to one message.

    Attributes:
        op: ``"ADD"`` (a new memory) or ``"SKIP"``.
        role: ``"user"`` or ``"assistant"`` (the memory's owner).
        text: The message text, stripped.
        memory_id: ADD: the new memory's id; SKIP duplicate: the memory it repeats;
            SKIP trivial or question: ``None``.
        reason: ``None``, ``"duplicate"``, ``"trivial"`` or ``"question"``.
        key: The turn key (ADD).
        context: The last message with content before it (ADD).
        carried: The trivial and question turns said since that message, one per line (ADD).
    """

    op: Literal["ADD", "SKIP"]
    role: str
    text: str
    memory_id: str | None = None
    reason: str | None = None
    key: str = ""
    context: str = ""
    carried: str = ""


def _cut(text: str) -> str:
    return text if len(text) <= CONTEXT_CHARS else text[-CONTEXT_CHARS:]


def _turn_texts(msgs: Iterable[Msg]) -> list[tuple[str, str]]:
    return [(m.role, m.content.strip()) for m in msgs if m.role in OWNERS and m.content.strip()]


def _unstored(text: str) -> str | None:
    """Why a turn is never a memory (``"trivial"``, ``"question"``), or ``None``."""
    if is_trivial(text):
        return "trivial"
    return "question" if is_question_only(text) else None


def turn_hashes(msgs: Sequence[Msg], session_id: str | None) -> list[str]:
    """The keys of the write's turns that may be stored (trivial and question turns never are)."""
    return list(dict.fromkeys(turn_hash(role, session_id, text) for role, text in _turn_texts(msgs)
                              if _unstored(text) is None))


def _open_context(history: Sequence[Msg]) -> tuple[str, list[str]]:
    """The last turn text in ``history`` that could be a memory and the trivial and question
    turns after it (read from the end: a window of several turns costs a test or two, not
    one a turn)."""
    carried: list[str] = []
    for _, text in reversed(_turn_texts(history)):
        if _unstored(text) is None:
            return text, carried[::-1]
        carried.append(text)
    return "", carried[::-1]


def plan_turns(msgs: Sequence[Msg], *, history: Sequence[Msg], session_id: str | None,
               stored: Mapping[str, ChatMemory]) -> list[_PlannedTurn]:
    """The fate of each user/assistant message with text (see the module docstring).

    Args:
        msgs: The write's messages (other roles and empty messages are left out).
        history: The session's recent messages written before (context of the first turn).
        session_id: The write's session (part of a turn's identity).
        stored: Active memories already holding some of the write's turn keys.

    Returns:
        One :class:`_PlannedTurn` per user/assistant message with text, in order.
    """
    context, carried = _open_context(history)
    seen = {key: memory.memory_id for key, memory in stored.items()}
    out: list[_PlannedTurn] = []
    for role, text in _turn_texts(msgs):
        reason = _unstored(text)
        if reason is not None:
            out.append(_PlannedTurn("SKIP", role, text, reason=reason))
            carried.append(text)
            continue
        key = turn_hash(role, session_id, text)
        if key in seen:
            out.append(_PlannedTurn("SKIP", role, text, memory_id=seen[key], reason="duplicate"))
        else:
            memory_id = seen[key] = random_id()
            out.append(_PlannedTurn("ADD", role, text, memory_id=memory_id, key=key,
                                   context=_cut(context), carried=_cut("\n".join(carried))))
        context, carried = text, []
    return out
