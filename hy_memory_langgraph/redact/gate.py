"""The privacy gate: what every store of a client applies to what it persists.

Redaction runs early too (a write is redacted before any model, tracer or embedding sees
it), but early redaction covers the inputs a write path knows of. The gate covers what
reaches disk, whatever made it: a model's output (a fact the extraction model decoded from
base64), an imported row, a workflow document, a chain round read from a git work tree, a
pipeline-log text. Each store of the client passes every value it writes through
:func:`seal` at its one write boundary (:class:`~hy_memory_langgraph.store.SealedStore`
for the memory stores; the chain, pipeline-log and workflow stores in their write
methods), and refuses a row's place (a namespace label, a key, an id) that carries a
secret (:func:`carries_secret`, :func:`hy_memory_langgraph.ids.require_clean_label`): a
place is validated as an id, never redacted, so a row is never filed under a different
name than the one it was written with.

Sealing is :func:`~hy_memory_langgraph.redact.redact_value` (every string at any depth,
dict keys included, values under secret-named keys), except strings of the two shapes
this package makes for the places and times of its rows (a random id: 32 lowercase hex
digits; a SHA-256 digest: 64; an ISO-8601 UTC time), which no rule detects a secret in (a
tested property) and are not scanned. A text redaction already produced is found in a memo: the second pass
costs a lookup.

The detectors load on the first seal, not with the stores: a command that only reads
never loads them.

Example:
    >>> seal({"content": "the vault token is hvs.CAESIJ7x2Kp9QmZ4tR8wL3nB6vY1", "n": 3})
    {'content': 'the vault token is [REDACTED:api_token]', 'n': 3}
    >>> seal({"memory_id": "0f" * 16, "at": "2024-05-01T09:00:00+00:00"})["memory_id"] == "0f" * 16
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

#: What a store applies to each value it persists (:func:`seal`, or nothing when the
#: client's ``MEMORY_REDACT_SECRETS=false`` turned redaction off).
Seal = Callable[[Any], Any]

#: The shapes of the ids, hashes and times this package writes (``ids.random_id``, a
#: SHA-256 hex digest, ``timeutil.iso``).
_OWN_SHAPES: Final = re.compile(
    r"[0-9a-f]{32}|[0-9a-f]{64}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?\+00:00")


def seal_text(text: str) -> str:
    """``text`` as the gate lets it through: redacted, unless it has the shape of one of
    this package's own ids or times."""
    if _OWN_SHAPES.fullmatch(text):
        return text
    from hy_memory_langgraph.redact.values import redact_text  # the detectors load on first use

    return redact_text(text)


def seal(value: Any) -> Any:
    """``value`` (a JSON-like value: dicts, lists, strings, numbers) as the gate lets it
    through: every detected secret at any depth replaced by its placeholder."""
    if isinstance(value, str):
        return seal_text(value)
    from hy_memory_langgraph.redact.values import redact_value  # the detectors load on first use

    return redact_value(value, seal_text)


def _unsealed(value: Any) -> Any:
    return value


def gate(enabled: bool) -> Seal:
    """The seal a store applies: :func:`seal`, or none at all when redaction is off
    (``MEMORY_REDACT_SECRETS=false``: text is stored as given)."""
    return seal if enabled else _unsealed


def carries_secret(label: str) -> bool:
    """Whether ``label`` (an id, a key, a namespace label) holds a detected secret."""
    return seal_text(label) != label
