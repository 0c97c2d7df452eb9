"""A search made ready for the search graph, once, before the graph runs.

The client calls :func:`prepare_search` on the caller's arguments: it validates them and
redacts secrets in the queries and scopes (as writes store them, so a placeholder in a
query matches the stored one). The graph is handed the result, so no callback or tracer
of the run sees a secret, and the graph starts at routing.
"""

from __future__ import annotations

import math
import time
from typing import Any

from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.flows.contracts import PreparedSearch
from hy_memory_langgraph.flows.search.state import SEARCH_MODES, SearchArgs
from hy_memory_langgraph.ids import random_id, require_id, scope_id
from hy_memory_langgraph.limits import check_search
from hy_memory_langgraph.redact import redact_text
from hy_memory_langgraph.scenes import validate_scene
from hy_memory_langgraph.timeutil import coerce_datetime

def _queries(args: SearchArgs) -> list[str]:
    query, queries = args.get("query"), args.get("queries")
    if queries is not None and (not isinstance(queries, list) or not all(isinstance(q, str) for q in queries)):
        raise InvalidInputError("queries must be a list of strings, e.g. queries=['earlier', 'latest']")
    items = [q for q in (queries or []) if q.strip()]
    if query is not None:
        if not isinstance(query, str):
            raise InvalidInputError("query must be a string")
        if query.strip():
            items.append(query)
    if not items:
        raise InvalidInputError("search needs a non-empty query=... or queries=[...]")
    for text in items:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError("query contains a lone surrogate (not valid Unicode text); "
                                    "remove the broken characters") from None
    return items


def _user_ids(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidInputError(
            "user_ids must be a non-empty list of user ids, e.g. user_ids=['user_123']"
        )
    return list(dict.fromkeys(require_id(v, "user_ids[]") for v in value))


def _limits(args: SearchArgs) -> tuple[str, int, float | None]:
    mode = args.get("search_mode") or "default"
    if mode not in SEARCH_MODES:
        raise InvalidInputError(f"search_mode={mode!r} is not allowed; use 'default' or 'agentic'")
    limit = args.get("limit", 10)  # its largest value: MEMORY_MAX_SEARCH_LIMIT (check_search)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidInputError(f"limit must be an integer >= 1 (got {limit!r})")
    min_score = args.get("min_score")
    if min_score is not None and (not isinstance(min_score, (int, float))
                                  or isinstance(min_score, bool) or math.isnan(min_score)):
        raise InvalidInputError(f"min_score must be a number or None (got {min_score!r})")
    return mode, limit, min_score


def prepare_search(args: SearchArgs, config: MemoryConfig) -> PreparedSearch:
    """Validate ``args`` and redact secrets in its queries and scopes (unless
    ``MEMORY_REDACT_SECRETS=false``); the last query is the one answered.

    Raises:
        InvalidInputError: an argument is invalid; the message names it and the fix.

    Example:
        >>> from hy_memory_langgraph.config import MemoryConfig
        >>> search = prepare_search({"query": "is my password hunter2x still set?", "user_ids": ["u"]},
        ...                         MemoryConfig.from_env({}))
        >>> search["effective_query"]
        'is my password [REDACTED:password] still set?'
    """
    check_search(config.limits, query=args.get("query"), queries=args.get("queries"),
                 user_ids=args.get("user_ids"), limit=args.get("limit", 10))  # sizes first, bounded
    scene = validate_scene(args.get("scene"))
    mode, limit, min_score = _limits(args)
    redact = config.redact_secrets  # queries and scopes as writes store text
    queries = [redact_text(q) for q in _queries(args)] if redact else _queries(args)
    return {
        "request_id": args.get("request_id") or random_id(), "started": time.perf_counter(),
        "scene": scene, "search_mode": mode, "queries": queries, "effective_query": queries[-1],
        "user_ids": _user_ids(args.get("user_ids")), "limit": limit, "min_score": min_score,
        "created_after": coerce_datetime(args.get("created_after"), "created_after"),
        "created_before": coerce_datetime(args.get("created_before"), "created_before"),
        "rewrite": None, "time_range": {}, "analysis": None, "multi": bool(args.get("queries")),
        "workspace_id": scope_id(args.get("workspace_id"), "workspace_id", redact),
        "branch": scope_id(args.get("branch"), "branch", redact),
    }
