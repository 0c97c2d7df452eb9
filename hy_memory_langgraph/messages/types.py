"""Value types of normalised messages: :class:`Msg` and :class:`ToolCall`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]

ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One tool/function call requested by an assistant message.

    ``arguments`` is the parsed argument object. When the caller sent arguments that are
    not a JSON object, ``arguments`` is ``{"_raw": raw_arguments}``. ``raw_arguments`` is
    the argument text as sent (or the JSON dump of an argument dict).

    Example:
        >>> ToolCall(id="call_1", name="read_file", arguments={"path": "a.py"},
        ...          raw_arguments='{"path": "a.py"}').name
        'read_file'
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = ""


@dataclass(frozen=True)
class Msg:
    """One message in the package's single internal format.

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: Text only; several text blocks are joined with ``"\\n"``.
        tool_calls: Calls requested by an assistant message.
        tool_call_id: For ``role="tool"``: the id of the call this result answers.
        name: For ``role="tool"``: the tool name (resolved from the matching call id
            when the source message did not carry it).
        is_error: The tool result reported a failure (Anthropic ``is_error`` or
            LangChain ``ToolMessage(status="error")``).

    Example:
        >>> Msg(role="user", content="Fix the timeout").content
        'Fix the timeout'
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):  # read back from a checkpoint as a list
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
