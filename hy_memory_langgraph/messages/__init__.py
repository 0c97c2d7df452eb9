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
    >>> msgs = normalize_messages(["Fix the timeout in search.py"])
    >>> has_tool_trace(msgs), detect_language(msgs)
    (False, 'en')
"""

from __future__ import annotations

from hy_memory_langgraph.messages.codec import messages_from_dicts, messages_to_dicts
from hy_memory_langgraph.messages.compression import (
    cap_message_bytes,
    compact_json,
    compress_for_prompt,
    cut_marker,
    truncate_bytes_head_tail,
    truncate_chars_head_tail,
)
from hy_memory_langgraph.messages.files import files_from_text, files_from_tool_calls
from hy_memory_langgraph.messages.language import (
    detect_language,
    detect_text_language,
    is_cjk,
)
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.render import judge_summary, transcript_rows
from hy_memory_langgraph.messages.signal import MIN_QUOTE_CHARS, is_question_only, is_trivial, match_text, quotes
from hy_memory_langgraph.messages.turns import (
    has_tool_trace,
    last_user_turns,
    redact_after,
    redact_messages,
    split_user_turns,
    strip_tool_trace,
    tool_names,
    user_text,
)
from hy_memory_langgraph.messages.types import Msg, Role, ToolCall

