"""Which turns of a lite chat write become memories: a pure plan, stored by ``store_turns``.

Rules (``docs/design.md#chat-memory``), per user or assistant message with text, in order:

* **Trivial** (:func:`~hy_memory_langgraph.messages.is_trivial`: acknowledgements,
  pleasantries, emoji, function words only): not a memory (``SKIP``, reason
  ``"trivial"``). Its text is carried into the next stored turn of the same session
  (``carried``), so lexical search still sees it there.
* **Duplicate**: the same owner already said the same text (once matched) in the same
  session, in an earlier write or earlier in this one, and that memory is still active:
  ``SKIP`` with reason ``"duplicate"`` and the id of that memory.
* Otherwise a new memory (``ADD``), with ``context`` = the last message with content
  before it (trivial ones skipped) and ``carried`` = the trivial turns since then, both cut
  to their last :data:`CONTEXT_CHARS` characters, and ``question`` = whether the turn only
  asks (:func:`~hy_memory_langgraph.messages.is_question_only`; search ranks such turns
  below statements when ``ChatRanking.question_weight`` < 1).

The history (the session's recent window) gives the context and carried turns of the
write's first turn, so a trivial turn at the end of one write is carried into the next.

Example:
    >>> from hy_memory_langgraph.messages import Msg
    >>> plan = plan_turns([Msg(role="user", content="ok"), Msg(role="user", content="I like tea")],
    ...                   history=[], session_id="s", stored={})
    >>> [(t.op, t.reason, t.carried) for t in plan]
    [('SKIP', 'trivial', ''), ('ADD', None, 'ok')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from hy_memory_langgraph.ids import random_id
from hy_memory_langgraph.messages import Msg, is_question_only, is_trivial
from hy_memory_langgraph.repos.chat import turn_hash
from hy_memory_langgraph.repos.records import ChatMemory

__all__ = ["CONTEXT_CHARS", "OWNERS", "PlannedTurn", "plan_turns", "turn_hashes"]

#: Roles whose messages are chat memories.
OWNERS: Final = ("user", "assistant")
#: Characters kept of ``context`` and of ``carried`` (the end of each).
CONTEXT_CHARS: Final = 1000


@dataclass(frozen=True)
class PlannedTurn:
    """What happens to one message.

    Attributes:
        op: ``"ADD"`` (a new memory) or ``"SKIP"``.
        role: ``"user"`` or ``"assistant"`` (the memory's owner).
        text: The message text, stripped.
        memory_id: ADD: the new memory's id; SKIP duplicate: the memory it repeats;
            SKIP trivial: ``None``.
        reason: ``None``, ``"duplicate"`` or ``"trivial"``.
        key: The turn key (ADD).
        context: The last message with content before it (ADD).
        carried: The trivial turns said since that message, one per line (ADD).
        question: The turn only asks a question (ADD).
    """

    op: Literal["ADD", "SKIP"]
    role: str
    text: str
    memory_id: str | None = None
    reason: str | None = None
    key: str = ""
    context: str = ""
    carried: str = ""
    question: bool = False


def _cut(text: str) -> str:
    return text if len(text) <= CONTEXT_CHARS else text[-CONTEXT_CHARS:]


def _turn_texts(msgs: Iterable[Msg]) -> list[tuple[str, str]]:
    return [(m.role, m.content.strip()) for m in msgs if m.role in OWNERS and m.content.strip()]


def turn_hashes(msgs: Sequence[Msg], session_id: str | None) -> list[str]:
    """The keys of the write's turns that may be stored (the trivial ones never are)."""
    return list(dict.fromkeys(turn_hash(role, session_id, text) for role, text in _turn_texts(msgs)
                              if not is_trivial(text)))


def _open_context(history: Sequence[Msg]) -> tuple[str, list[str]]:
    """The last non-trivial turn text in ``history`` and the trivial turns after it (read
    from the end: a window of several turns costs one triviality test, not one a turn)."""
    carried: list[str] = []
    for _, text in reversed(_turn_texts(history)):
        if not is_trivial(text):
            return text, carried[::-1]
        carried.append(text)
    return "", carried[::-1]


def plan_turns(msgs: Sequence[Msg], *, history: Sequence[Msg], session_id: str | None,
               stored: Mapping[str, ChatMemory]) -> list[PlannedTurn]:
    """The fate of each user/assistant message with text (see the module docstring).

    Args:
        msgs: The write's messages (other roles and empty messages are left out).
        history: The session's recent messages written before (context of the first turn).
        session_id: The write's session (part of a turn's identity).
        stored: Active memories already holding some of the write's turn keys.

    Returns:
        One :class:`PlannedTurn` per user/assistant message with text, in order.
    """
    context, carried = _open_context(history)
    seen = {key: memory.memory_id for key, memory in stored.items()}
    out: list[PlannedTurn] = []
    for role, text in _turn_texts(msgs):
        if is_trivial(text):
            out.append(PlannedTurn("SKIP", role, text, reason="trivial"))
            carried.append(text)
            continue
        key = turn_hash(role, session_id, text)
        if key in seen:
            out.append(PlannedTurn("SKIP", role, text, memory_id=seen[key], reason="duplicate"))
        else:
            memory_id = seen[key] = random_id()
            out.append(PlannedTurn("ADD", role, text, memory_id=memory_id, key=key,
                                   context=_cut(context), carried=_cut("\n".join(carried)),
                                   question=is_question_only(text)))
        context, carried = text, []
    return out
