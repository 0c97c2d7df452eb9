"""Namespace encoding and matching.

A namespace tuple is stored as its labels joined by ``"."``; langgraph forbids
periods in labels (``validate_op_namespace``), so the encoding is lossless and a
prefix ``("a", "b")`` covers exactly the strings ``"a.b"`` and those in the
half-open range ``["a.b.", "a.b/")`` (``"/"`` follows ``"."`` in byte order).
That range is an index-friendly SQL condition with bind parameters only.

Example:
    >>> encode(("users", "42"))
    'users.42'
    >>> matches(("a", "b", "c"), [MatchCondition("suffix", ("*", "c"))])
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.store.base import InvalidNamespaceError, ListNamespacesOp, MatchCondition

SEP = "."
_AFTER_SEP = chr(ord(SEP) + 1)  # "/"


def encode(namespace: Sequence[str]) -> str:
    """Join labels with ``"."``."""
    return SEP.join(namespace)


def decode(text: str) -> tuple[str, ...]:
    """Inverse of :func:`encode`."""
    return tuple(text.split(SEP)) if text else ()


def require_namespace(namespace: tuple[str, ...]) -> None:
    """Reject the empty namespace for item operations."""
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")


def prefix_range(prefix: str) -> tuple[str, str]:
    """The half-open range of encoded namespaces strictly below ``prefix``."""
    return prefix + SEP, prefix + _AFTER_SEP


def _match_one(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type!r}")
    return all(want == "*" or have == want for have, want in pairs)


def matches(namespace: tuple[str, ...], conditions: Iterable[MatchCondition]) -> bool:
    """Whether ``namespace`` satisfies every condition (``"*"`` matches any label)."""
    return all(_match_one(condition, namespace) for condition in conditions)


def literal_prefix(conditions: Iterable[MatchCondition] | None) -> tuple[str, ...]:
    """The longest wildcard-free leading labels required by the prefix conditions."""
    best: tuple[str, ...] = ()
    for condition in conditions or ():
        if condition.match_type != "prefix":
            continue
        labels: list[str] = []
        for label in condition.path:
            if label == "*":
                break
            labels.append(label)
        if len(labels) > len(best):
            best = tuple(labels)
    return best


def list_namespaces(encoded: Iterable[str], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """Apply a :class:`ListNamespacesOp` to encoded namespaces (langgraph semantics)."""
    conditions = tuple(op.match_conditions or ())
    found = {ns for ns in map(decode, encoded) if matches(ns, conditions)}
    if op.max_depth is not None:
        found = {ns[: op.max_depth] for ns in found}
    ordered = sorted(found)
    return ordered[op.offset : op.offset + op.limit]
