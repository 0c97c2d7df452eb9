"""Message handling: one internal format (:class:`Msg`) and pure helpers on it.

Every message format the public API accepts (OpenAI dicts, Anthropic content blocks,
LangChain ``BaseMessage``s, bare strings) is turned into :class:`Msg` by
:func:`normalize_messages`. The rest works on ``Msg`` lists, one concern per module:

* :mod:`.turns`: tool-trace detection and stripping, user-turn windows;
* :mod:`.compression`: UTF-8-safe head+tail cuts, prompt compression, the stored-size cap;
* :mod:`.signal`: text matching for duplicate turns, trivial (content-free) turns;
* :mod:`.render`: the transcript and the bounded scene-judge summary, as prompt rows;
* :mod:`.language`: zh / en routing from the first effective characters;
* :mod:`.files`: file paths touched by a trace;
* :mod:`.codec`: the JSON round-trip used to store traces.

Example:
    >>> from hy_memory_langgraph.messages.language import detect_language
    >>> from hy_memory_langgraph.messages.normalize import normalize_messages
    >>> from hy_memory_langgraph.messages.turns import has_tool_trace
    >>> msgs = normalize_messages(["Fix the timeout in search.py"])
    >>> has_tool_trace(msgs), detect_language(msgs)
    (False, 'en')
"""

from __future__ import annotations
