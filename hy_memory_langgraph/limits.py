"""What one call may ask of the memory: sizes, counts and nesting depth, the same at every
entry point (client methods sync and async, memory tools, MCP tools, the command line).

Each limit is a field of :class:`Limits` (``MemoryConfig.limits``), set by an environment
variable or a configuration override; an input over a limit is refused with an
:class:`~hy_memory_langgraph.errors.InvalidInputError` naming the limit, its value and its
setting, before any model, store or recursive code sees it. The checks walk an input
once, without recursion, and stop at the first excess, so a refusal costs at most what
the limit allows (a 100,000-level nesting is refused after 64 levels, a 10 MB query
after its length):

| limit | setting | default | what it bounds |
|---|---|---|---|
| ``max_depth`` | ``MEMORY_MAX_DEPTH`` | 64 (at most 64) | nesting of messages, metadata, tool arguments, rows, and of JSON text inside any of their strings |
| ``max_messages`` | ``MEMORY_MAX_MESSAGES`` | 10,000 | messages of one write (``add``, ``record_work``, ``memory_extract``) |
| ``max_write_bytes`` | ``MEMORY_MAX_WRITE_BYTES`` | 16,000,000 | UTF-8 bytes of one write's messages (each message is then cut to ``MEMORY_MAX_MESSAGE_BYTES``) |
| ``max_metadata_bytes`` | ``MEMORY_MAX_METADATA_BYTES`` | 65,536 | UTF-8 bytes of the keys and strings of ``metadata`` (and workflow ``dynamic_context``) |
| ``max_query_bytes`` | ``MEMORY_MAX_QUERY_BYTES`` | 65,536 | UTF-8 bytes of a search's ``query`` and ``queries`` together |
| ``max_queries`` | ``MEMORY_MAX_QUERIES`` | 100 | items of ``queries`` |
| ``max_user_ids`` | ``MEMORY_MAX_USER_IDS`` | 1,000 | users of one search, export or import |
| ``max_search_limit`` | ``MEMORY_MAX_SEARCH_LIMIT`` | 10,000 (20 to 10,000) | a search's ``limit`` |
| ``max_row_bytes`` | ``MEMORY_MAX_IMPORT_ROW_BYTES`` | 32,000,000 | UTF-8 bytes of one imported row |

The content of one memory is bounded by ``MEMORY_MAX_MESSAGE_BYTES`` (a
:class:`~hy_memory_langgraph.config.MemoryConfig` field): ``add`` cuts a longer message
around a ``…[cut N bytes]…`` marker, ``update`` refuses longer content (it sets a memory's
text exactly). Ids are bounded by :data:`~hy_memory_langgraph.ids.MAX_ID_BYTES`.

Example:
    >>> check_search(Limits(max_queries=2), query="tea", queries=["a", "b", "c"])
    Traceback (most recent call last):
    ...
    hy_memory_langgraph.errors.InvalidInputError: queries has 3 items: more than MEMORY_MAX_QUERIES=2; ...
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from pydantic import BaseModel

from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.values import MAX_JSON_DEPTH

#: The most results one search may return (bounds the statements' ``LIMIT`` values).
_SEARCH_LIMIT_CEILING: Final = 10_000
#: The least ``max_search_limit`` (a search's default ``limit`` is 10, a memory tool's most 20).
_SEARCH_LIMIT_FLOOR: Final = 20
# JSON text: a string literal (skipped whole), or a bracket.
_JSON_TOKEN: Final = re.compile(r'"(?:[^"\\]+|\\.)*"?|[\[\]{}]', re.DOTALL)
_JSON_HEAD: Final = re.compile(r"\s*[\[{]")
_END: Final = object()


def _limit(default: int, env: str, maximum: int | None = None, minimum: int = 1) -> Any:
    return field(default=default, metadata={"env": env, "minimum": minimum, "maximum": maximum})


@dataclass(frozen=True)
class Limits:
    """The limits of one client (see the module docstring for what each bounds).

    Values are validated on construction (strings such as ``"4096"`` are converted); an
    invalid one raises :class:`~hy_memory_langgraph.errors.ConfigError` naming the field.

    Attributes:
        max_depth: ``MEMORY_MAX_DEPTH`` (1..64).
        max_messages: ``MEMORY_MAX_MESSAGES``.
        max_write_bytes: ``MEMORY_MAX_WRITE_BYTES``.
        max_metadata_bytes: ``MEMORY_MAX_METADATA_BYTES``.
        max_query_bytes: ``MEMORY_MAX_QUERY_BYTES``.
        max_queries: ``MEMORY_MAX_QUERIES``.
        max_user_ids: ``MEMORY_MAX_USER_IDS``.
        max_search_limit: ``MEMORY_MAX_SEARCH_LIMIT`` (20..10,000).
        max_row_bytes: ``MEMORY_MAX_IMPORT_ROW_BYTES``.

    Example:
        >>> Limits(max_queries="8").max_queries
        8
    """

    max_depth: int = _limit(MAX_JSON_DEPTH, "MEMORY_MAX_DEPTH", MAX_JSON_DEPTH)
    max_messages: int = _limit(10_000, "MEMORY_MAX_MESSAGES")
    max_write_bytes: int = _limit(16_000_000, "MEMORY_MAX_WRITE_BYTES")
    max_metadata_bytes: int = _limit(65_536, "MEMORY_MAX_METADATA_BYTES")
    max_query_bytes: int = _limit(65_536, "MEMORY_MAX_QUERY_BYTES")
    max_queries: int = _limit(100, "MEMORY_MAX_QUERIES")
    max_user_ids: int = _limit(1_000, "MEMORY_MAX_USER_IDS")
    max_search_limit: int = _limit(_SEARCH_LIMIT_CEILING, "MEMORY_MAX_SEARCH_LIMIT", _SEARCH_LIMIT_CEILING,
                                   _SEARCH_LIMIT_FLOOR)
    max_row_bytes: int = _limit(32_000_000, "MEMORY_MAX_IMPORT_ROW_BYTES")

    def __post_init__(self) -> None:
        for spec in fields(self):
            parse = limit_parser(spec.name)
            object.__setattr__(self, spec.name, parse(f"Limits.{spec.name}", getattr(self, spec.name)))

    @staticmethod
    def setting(name: str) -> str:
        """The environment variable of the limit ``name`` (``"max_depth"`` → ``MEMORY_MAX_DEPTH``)."""
        return str(_SPECS[name].metadata["env"])

    def refuse(self, name: str, what: str, fix: str, unit: str = "") -> InvalidInputError:
        """The error for an input over the limit ``name``: ``what`` is wrong, the limit
        with its setting, and ``fix`` (raising the setting too, while it can go higher).

        Example:
            >>> str(Limits().refuse("max_queries", "queries has 300 items", "send the latest ones"))
            'queries has 300 items: more than MEMORY_MAX_QUERIES=100; send the latest ones, or raise MEMORY_MAX_QUERIES'
        """
        setting, value, maximum = self.setting(name), getattr(self, name), _SPECS[name].metadata["maximum"]
        higher = maximum is None or value < maximum
        return InvalidInputError(f"{what}: more than {setting}={value}{unit}; {fix}"
                                 + (f", or raise {setting}" if higher else ""))


_SPECS: Final = {spec.name: spec for spec in fields(Limits)}


def limit_parser(name: str) -> Any:
    """The parser of the limit ``name`` (``(source, value) -> int``; ``ConfigError`` naming
    ``source`` for anything but a whole number in the limit's range)."""
    minimum, maximum = _SPECS[name].metadata["minimum"], _SPECS[name].metadata["maximum"]
    accepted = f"an integer >= {minimum}{'' if maximum is None else f' and <= {maximum}'}"

    def parse(source: str, value: object) -> int:
        number = value
        if isinstance(value, str) and value.strip().isdigit():
            number = int(value.strip())
        if isinstance(number, bool) or not isinstance(number, int) or number < minimum \
                or (maximum is not None and number > maximum):
            raise ConfigError(f"{source}={value!r} is invalid: expected {accepted}.")
        return number

    return parse


# --------------------------------------------------------------------------- measures


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def json_text_depth(text: str, limit: int) -> int:
    """How deep the JSON arrays and objects of ``text`` nest (brackets inside string
    literals do not count); ``limit + 1`` as soon as it is deeper. Linear, no recursion.

    Example:
        >>> json_text_depth('{"a": [1, {"b": "]]]"}]}', 64), json_text_depth("[" * 500, 64)
        (3, 65)
    """
    depth = deepest = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return limit + 1
            deepest = max(deepest, depth)
        elif bracket in "]}":
            depth = max(0, depth - 1)
    return deepest


def _children(item: Any) -> Iterable[Any] | None:
    """The parts of a container, lazily (``None`` for a leaf): dict keys and values,
    sequence items, the fields of a pydantic model (a LangChain message) or a dataclass."""
    if isinstance(item, Mapping):
        return itertools.chain(item.keys(), item.values())
    if isinstance(item, (list, tuple)):
        return item
    if isinstance(item, BaseModel):
        return (value for _, value in item)
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return (getattr(item, spec.name) for spec in fields(item))
    return None


def check_nesting(limits: Limits, value: Any, what: str, *, bytes_limit: str | None = None,
                  wrapping: int = 0) -> int:
    """Refuse ``value`` when it nests deeper than ``limits.max_depth`` (JSON text inside its
    strings counts from where the string is) or, with ``bytes_limit`` (the name of a
    limit), when it is larger than that limit; else return its size: the UTF-8 bytes of
    its strings and keys, plus one for every other value (a number, a list, a dict...). ``wrapping`` levels are allowed
    on top of the limit (a stored row around what a write accepted). One walk, no
    recursion, memory in proportion to the depth, stopping at the first excess.

    Raises:
        InvalidInputError: naming ``what``, the limit and its setting.
    """
    depth_limit = limits.max_depth + wrapping
    most = None if bytes_limit is None else int(getattr(limits, bytes_limit))
    total = 0
    stack: list[tuple[Iterator[Any], int]] = [(iter((value,)), 0)]
    while stack:
        parts, depth = stack[-1]
        item = next(parts, _END)
        if item is _END:
            stack.pop()
            continue
        if isinstance(item, str):  # its characters bound its bytes from below: no encoding to refuse
            total += len(item) if most is not None and total + len(item) > most else _utf8_size(item)
        else:
            total += 1
        if bytes_limit is not None and most is not None and total > most:
            raise limits.refuse(bytes_limit, f"{what} is too large", "send less at once", " bytes")
        if isinstance(item, str):
            if _JSON_HEAD.match(item) and depth + json_text_depth(item, depth_limit - depth) > depth_limit:
                raise _too_deep(limits, f"{what} holds JSON text that", wrapping)
            continue
        inner = _children(item)
        if inner is None:
            continue
        if depth + 1 > depth_limit:
            raise _too_deep(limits, what, wrapping)
        stack.append((iter(inner), depth + 1))
    return total


def _too_deep(limits: Limits, what: str, wrapping: int = 0) -> InvalidInputError:
    around = f" (+{wrapping} around it)" if wrapping else ""
    return limits.refuse("max_depth", f"{what} nests too deeply", "flatten it", f" levels{around}")


def check_json_text(limits: Limits, text: str, what: str, *, wrapping: int = 0) -> None:
    """Refuse JSON ``text`` nesting deeper than ``limits.max_depth`` plus ``wrapping``
    (before it is parsed)."""
    if json_text_depth(text, limits.max_depth + wrapping) > limits.max_depth + wrapping:
        raise _too_deep(limits, what, wrapping)


# --------------------------------------------------------------------------- entry points


def check_write(limits: Limits, messages: Any, metadata: Any = None, *, what: str = "messages",
                metadata_field: str = "metadata") -> None:
    """Refuse a write over the limits: more than ``max_messages`` messages, more than
    ``max_write_bytes`` of text, nesting deeper than ``max_depth``, ``metadata`` over
    ``max_metadata_bytes`` or too deep. Other checks (types, roles) are the write's."""
    if isinstance(messages, (list, tuple)) and len(messages) > limits.max_messages:
        raise limits.refuse("max_messages", f"{what} has {len(messages)} messages", "write them in several calls")
    check_nesting(limits, messages, what, bytes_limit="max_write_bytes")
    if metadata is not None:
        check_nesting(limits, metadata, metadata_field, bytes_limit="max_metadata_bytes")


def check_extract(limits: Limits, msg_list: Any, user_message: Any, assistant_message: Any,
                  dynamic_context: Any) -> None:
    """:func:`check_write` for workflow ``memory_extract``: ``msg_list``, or the user and
    assistant messages together, and ``dynamic_context`` as metadata."""
    pair = [m for m in (user_message, assistant_message) if isinstance(m, (list, tuple))]
    messages = msg_list if msg_list is not None else [text for texts in pair for text in texts]
    check_write(limits, messages, dynamic_context, what="msg_list" if msg_list is not None else "the messages",
                metadata_field="dynamic_context")


def check_content(limits: Limits, content: Any, max_bytes: int, metadata: Any = None) -> None:
    """Refuse the new content of one memory over ``max_bytes`` (``MEMORY_MAX_MESSAGE_BYTES``)
    and ``metadata`` over its limits."""
    if isinstance(content, str) and (len(content) > max_bytes or _utf8_size(content) > max_bytes):
        raise InvalidInputError(
            f"content is too large: more than MEMORY_MAX_MESSAGE_BYTES={max_bytes} bytes; a memory's "
            "text is set exactly (add cuts a longer message, update does not), so shorten it, or raise "
            "MEMORY_MAX_MESSAGE_BYTES")
    if metadata is not None:
        check_nesting(limits, metadata, "metadata", bytes_limit="max_metadata_bytes")


def check_user_ids(limits: Limits, user_ids: Any) -> None:
    """Refuse more than ``max_user_ids`` users (a string is one user)."""
    if isinstance(user_ids, (list, tuple)) and len(user_ids) > limits.max_user_ids:
        raise limits.refuse("max_user_ids", f"user_ids has {len(user_ids)} users", "name fewer users at once")


def check_search(limits: Limits, *, query: Any = None, queries: Any = None, user_ids: Any = None,
                 limit: Any = None) -> None:
    """Refuse a search over the limits: ``queries`` count, the bytes of ``query`` and
    ``queries`` together, the number of ``user_ids``, ``limit``. Types are the search's
    to check."""
    if isinstance(queries, (list, tuple)) and len(queries) > limits.max_queries:
        raise limits.refuse("max_queries", f"queries has {len(queries)} items", "send the latest ones")
    texts = [q for q in [*(queries if isinstance(queries, (list, tuple)) else ()), query] if isinstance(q, str)]
    size = 0
    for text in texts:
        size += len(text)  # characters: a lower bound of the bytes, free to compute
        if size > limits.max_query_bytes:
            break
    else:
        size = sum(_utf8_size(text) for text in texts)
    if size > limits.max_query_bytes:
        raise limits.refuse("max_query_bytes", "the query text is too long", "search with a shorter question",
                            " bytes")
    check_user_ids(limits, user_ids)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > limits.max_search_limit:
        raise limits.refuse("max_search_limit", f"limit={limit} asks for too many results",
                            "page with list_memories, or read everything with export_memories")


#: Levels a document adds around what a write accepts: an exported row and its value,
#: a command-line file's list of writes and their object.
WRAPPING: Final = 2


def check_import_row(limits: Limits, row: Any, line: int) -> None:
    """Refuse one imported row over ``max_row_bytes`` or nesting deeper than
    ``max_depth`` plus :data:`WRAPPING` (no export of accepted writes does)."""
    check_nesting(limits, row, f"row {line}", bytes_limit="max_row_bytes", wrapping=WRAPPING)
