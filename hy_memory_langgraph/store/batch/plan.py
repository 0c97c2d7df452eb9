"""Validate and plan a batch of langgraph store operations before touching storage.

Planning does everything that can fail on bad input (namespace labels, JSON
values, filters, limits, TTLs) so an invalid op raises before any write. It
also gathers the texts to embed for puts (langgraph's ``index`` semantics: the
store's ``fields`` by default, ``False`` for none, or explicit paths; a path
yielding several texts gets one vector per text, named ``"path.i"``) and the
distinct search queries.

Like langgraph's stores, reads in a batch see the state before the batch's
writes, and when a batch puts the same key twice the last put wins.

Example:
    >>> from langgraph.store.base import PutOp
    >>> plan = plan_batch([PutOp(("docs",), "a", {"text": "hi"})], fields=[("text", ["text"])],
    ...                   compile_filter=lambda f: None, default_ttl=None)
    >>> plan.puts[("docs", "a")].texts
    [('text', 'hi')]
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store.batch.guards import GuardOp
from hy_memory_langgraph.store.batch.serialise import dumps
from hy_memory_langgraph.store.postings.ops import LexicalOp
from hy_memory_langgraph.store.namespaces import encode, require_namespace
from hy_memory_langgraph.store.schema.tables import scope_of
from hy_memory_langgraph.store.vector.settings import MAX_VECTORS_PER_ITEM

TokenizedField = tuple[str, list[str] | str]


def _require_unicode(op: Op) -> None:
    """Namespace labels and keys must be valid Unicode text (no lone surrogate)."""
    namespace = getattr(op, "namespace", None) or getattr(op, "namespace_prefix", None) or ()
    for text in (*namespace, getattr(op, "key", "")):
        if isinstance(text, str) and not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(f"namespace label or key {text!r} contains a lone surrogate (not "
                                        "valid Unicode text); remove the broken characters") from None


def tokenize_fields(fields: Iterable[str]) -> list[TokenizedField]:
    """Pre-tokenise index field paths (``"$"`` = the whole value)."""
    return [(path, path if path == "$" else tokenize_path(path)) for path in fields]


@dataclasses.dataclass
class PutPlan:
    """One put (``value_json is None`` = delete) with its texts to embed."""

    namespace: str
    key: str
    value_json: str | None
    ttl_minutes: float | None
    texts: list[tuple[str, str]]


@dataclasses.dataclass
class BatchPlan:
    """A validated batch: read ops by result index, deduplicated writes."""

    results: list[Result]
    gets: list[tuple[int, GetOp]] = dataclasses.field(default_factory=list)
    searches: list[tuple[int, SearchOp, sa.ColumnElement[bool] | None]] = dataclasses.field(
        default_factory=list
    )
    lists: list[tuple[int, ListNamespacesOp]] = dataclasses.field(default_factory=list)
    puts: dict[tuple[str, str], PutPlan] = dataclasses.field(default_factory=dict)
    guards: list[tuple[str, str, Mapping[str, Any] | None]] = dataclasses.field(default_factory=list)
    lexical: dict[tuple[str, str], LexicalOp] = dataclasses.field(default_factory=dict)
    #: The ops are one-operation calls of several callers, grouped (no shared snapshot owed).
    grouped: bool = False

    @property
    def has_reads(self) -> bool:
        return bool(self.gets or self.searches or self.lists)

    @property
    def has_writes(self) -> bool:
        """Whether the batch changes anything (items or the lexical index)."""
        return bool(self.puts or self.lexical)

    def scopes(self) -> set[str]:
        """The scopes whose rows the writes of the batch change (their locks, :mod:`..db.locks`)."""
        names = {ns for ns, _ in self.puts} | {ns for ns, _, _ in self.guards}
        names |= {ns for ns, _ in self.lexical}
        return {scope_of(ns) for ns in names}

    def texts(self) -> list[str]:
        """Distinct texts to embed for the puts."""
        return list(dict.fromkeys(t for p in self.puts.values() for _, t in p.texts))

    def queries(self) -> list[str]:
        """Distinct non-empty search queries."""
        return list(dict.fromkeys(op.query for _, op, _ in self.searches if op.query))


def _extract_texts(value: Mapping[str, Any], fields: list[TokenizedField]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path, tokens in fields:
        texts = get_text_at_path(value, tokens)
        if len(texts) == 1:
            out.append((path, texts[0]))
        else:
            out.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
    if len(out) > MAX_VECTORS_PER_ITEM:
        raise InvalidInputError(f"an item can have at most {MAX_VECTORS_PER_ITEM} indexed texts")
    return out


def _ttl(op: PutOp, default_ttl: float | None) -> float | None:
    ttl = default_ttl if isinstance(op.ttl, NotProvided) else op.ttl
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl < 0:
        raise InvalidInputError(f"ttl must be a non-negative number of minutes, got {ttl!r}")
    return float(ttl)


def _plan_put(
    op: PutOp, fields: list[TokenizedField] | None, default_ttl: float | None
) -> PutPlan:
    require_namespace(op.namespace)
    namespace = encode(op.namespace)
    if op.value is None:
        return PutPlan(namespace, op.key, None, None, [])
    if not isinstance(op.value, Mapping):
        raise InvalidInputError(f"PutOp.value must be a mapping or None, got {type(op.value).__name__}")
    texts: list[tuple[str, str]] = []
    if fields is not None and op.index is not False:
        chosen = fields if op.index is None else tokenize_fields(op.index)
        texts = _extract_texts(op.value, chosen)
    return PutPlan(namespace, op.key, dumps(op.value), _ttl(op, default_ttl), texts)


_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")  # an unescaped \u0000 in JSON text


def _refuse_nul(put: PutPlan) -> None:
    """PostgreSQL text (and jsonb) cannot hold U+0000; say so instead of a driver error."""
    texts = [put.namespace, put.key, *(t for _, t in put.texts)]
    escaped = put.value_json is not None and "\\u0000" in put.value_json and _NUL_ESCAPE.search(put.value_json)
    if escaped or any("\x00" in t for t in texts):
        raise InvalidInputError(
            f"item {put.key!r}: PostgreSQL cannot store the NUL character (U+0000); remove it "
            "from the key, namespace and value (or keep this store on SQLite: unset MEMORY_DB_URL)"
        )


def _terms(value: object, what: str) -> None:
    if value is None and what == "tail":
        return
    if not isinstance(value, Mapping) or not all(
        isinstance(t, str) and t and isinstance(n, int) and not isinstance(n, bool) and n > 0
        for t, n in value.items()
    ):
        raise InvalidInputError(f"LexicalOp.{what} must map non-empty terms to positive counts")


def _check_lexical(op: LexicalOp, forbid_nul: bool) -> None:
    """Refuse a lexical op that cannot be stored as given."""
    require_namespace(op.namespace)
    if not isinstance(op.key, str):
        raise InvalidInputError(f"item keys must be strings, got {op.key!r}")
    _terms(op.terms, "terms")
    _terms(op.tail, "tail")
    window = tuple(op.window)
    if len(window) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in window):
        raise InvalidInputError(f"LexicalOp.window must be two non-negative ints, got {op.window!r}")
    at, position = op.order
    if not isinstance(at, str) or isinstance(position, bool) or not isinstance(position, (int, float)):
        raise InvalidInputError(f"LexicalOp.order must be (str, number), got {op.order!r}")
    if op.group is not None and not isinstance(op.group, str):
        raise InvalidInputError(f"LexicalOp.group must be a string or None, got {op.group!r}")
    if op.ts is not None and (isinstance(op.ts, bool) or not isinstance(op.ts, (int, float))
                              or not math.isfinite(op.ts)):
        raise InvalidInputError(f"LexicalOp.ts must be a finite number or None, got {op.ts!r}")
    texts = [op.key, op.group or "", at, *op.terms, *(op.tail or ())]
    if forbid_nul and any("\x00" in t for t in texts):
        raise InvalidInputError(f"lexical document {op.key!r}: PostgreSQL cannot store the NUL character")


def _check_page(limit: object, offset: object, what: str) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise InvalidInputError(f"{what} {name} must be a non-negative int, got {number!r}")


def plan_batch(
    ops: Iterable[Op],
    *,
    fields: list[TokenizedField] | None,
    compile_filter: Callable[[Mapping[str, Any]], sa.ColumnElement[bool] | None],
    default_ttl: float | None,
    forbid_nul: bool = False,
) -> BatchPlan:
    """Validate ``ops`` and plan them.

    Args:
        ops: The batch.
        fields: Tokenised default index fields, or ``None`` when the store has no index.
        compile_filter: Turns a filter mapping into SQL (raises on a bad filter).
        default_ttl: TTL for puts whose ``ttl`` is ``NOT_PROVIDED``.
        forbid_nul: Refuse puts holding U+0000 (PostgreSQL cannot store it).
    """
    op_list = list(ops)
    plan = BatchPlan(results=[None] * len(op_list))
    for i, op in enumerate(op_list):
        _require_unicode(op)
        if isinstance(op, GuardOp):
            require_namespace(op.namespace)
            plan.guards.append((encode(op.namespace), op.key, op.expect))
            continue
        if isinstance(op, LexicalOp):
            _check_lexical(op, forbid_nul)
            plan.lexical[(encode(op.namespace), op.key)] = op
            continue
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise InvalidInputError(f"unknown store operation: {type(op).__name__}")
        validate_op_namespace(op)
        if isinstance(op, (GetOp, PutOp)) and not isinstance(op.key, str):
            raise InvalidInputError(f"item keys must be strings, got {op.key!r}")
        if isinstance(op, GetOp):
            plan.gets.append((i, op))
        elif isinstance(op, PutOp):
            put = _plan_put(op, fields, default_ttl)
            if forbid_nul:
                _refuse_nul(put)
            plan.puts[(put.namespace, op.key)] = put
        elif isinstance(op, SearchOp):
            _check_page(op.limit, op.offset, "search")
            where = compile_filter(op.filter) if op.filter else None
            plan.searches.append((i, op, where))
        else:
            _check_page(op.limit, op.offset, "list_namespaces")
            plan.lists.append((i, op))
    return plan
