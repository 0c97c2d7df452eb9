"""Session neighbours as lexical context: what the lexical index sees for each chat turn.

A chat turn alone is often too short to match a question ("Yes, last weekend!"); the
turns around it in the same session carry the topic. :func:`texts_with_neighbours` gives
each turn the text of up to ``before`` previous and ``after`` following turns of its
session, in session order. Only the lexical side uses it; vectors embed the turn alone.

Example:
    >>> turns = [Utterance("a", "s1", (1,), "Did you go camping?"),
    ...          Utterance("b", "s1", (2,), "Yes, last weekend!")]
    >>> texts_with_neighbours(turns, before=1, after=0)["b"]
    'Yes, last weekend!\\nDid you go camping?'
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

#: Characters of a neighbour's text a turn is given (its last ones).
NEIGHBOUR_MAX_CHARS = 1000


@dataclass(frozen=True)
class Utterance:
    """One turn: ``session`` groups turns (None: no neighbours); ``order`` sorts them.

    Attributes:
        id: Memory id.
        session: Session key, or None for a turn outside any session.
        order: Any sortable key giving the turn's position within its session.
        text: The turn's own text.
    """

    id: str
    session: Hashable | None
    order: tuple[object, ...]
    text: str


def _cut(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[-max_chars:]


def texts_with_neighbours(
    turns: Sequence[Utterance], *, before: int, after: int, max_chars: int = NEIGHBOUR_MAX_CHARS
) -> dict[str, str]:
    """Each turn's text followed by its session neighbours' texts (previous, then next).

    Args:
        turns: Turns in any order.
        before: Previous turns of the same session to add (nearest first).
        after: Following turns of the same session to add (nearest first).
        max_chars: Each neighbour contributes at most its last ``max_chars`` characters.

    Returns:
        ``{id: own text, then the previous turns, then the following turns}``, lines joined
        by ``"\\n"``; a turn with no session (or no neighbours) keeps its own text.
    """
    if before < 0 or after < 0:
        raise ValueError("before and after must be >= 0")
    out = {t.id: t.text for t in turns}
    sessions: dict[Hashable, list[Utterance]] = defaultdict(list)
    for turn in turns:
        if turn.session is not None:
            sessions[turn.session].append(turn)
    for members in sessions.values():
        members.sort(key=lambda t: (t.order, t.id))
        for pos, turn in enumerate(members):
            previous = members[max(0, pos - before) : pos][::-1]
            following = members[pos + 1 : pos + 1 + after]
            if previous or following:
                out[turn.id] = "\n".join([turn.text, *(_cut(t.text, max_chars) for t in [*previous, *following])])
    return out
