"""Secrets in text and values: find them and replace them with typed placeholders.

Every write path runs what it will store, embed or send to a model through
:func:`redact_text` / :func:`redact_value` (on by default; ``MEMORY_REDACT_SECRETS=false``
turns it off), so an API key pasted into a conversation becomes ``[REDACTED:openai_key]``
while the rest of the message is kept. Workflow memory refuses inputs carrying
credentials instead (:func:`find_secret`).

What counts as a secret is data (``patterns.toml``, compiled by :mod:`.rules`): provider
credentials by their shape, values behind markers (``Authorization`` of any scheme,
cookies, URLs, command lines, connect calls, configuration lines), seed phrases
(:mod:`.seeds`), tables and lists of accounts (:mod:`.tables`), codes that open a door, a
safe or a phone (:mod:`.pins`), private key blocks in any disguise (:mod:`.keys`), values after labels
that name a secret in many languages, with or without a separator (:mod:`.scan`,
:mod:`.bridge`), values under secret-named keys of structured data (:mod:`.values`), and
a value whose label ends the message before it (:mod:`.dialogue`). Words alone are never
secrets: "the token field is the invoice number" is kept as written, and so are
references, quantities and prose after a label ("password: see the onboarding doc",
"Season pass: $129").

The names below load the detectors on first access (``from hy_memory_langgraph.redact
import redact_text``); the privacy gate (:mod:`.gate`) imports none of them until it seals.

Example:
    >>> from hy_memory_langgraph.redact import redact_text
    >>> redact_text("my key is sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB")
    'my key is [REDACTED:openai_key]'
    >>> redact_text("postgres://app:hunter22@db:5432/main")
    'postgres://app:[REDACTED:url_password]@db:5432/main'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hy_memory_langgraph.redact.dialogue import carried_spans, split_spans
    from hy_memory_langgraph.redact.rules import name_class
    from hy_memory_langgraph.redact.values import (
        find_secret,
        placeholder,
        redact_json_text,
        redact_text,
        redact_value,
        replace_spans,
    )

#: Where each name of the package lives: a module importing one of them loads the
#: detectors then; importing :mod:`.gate` (every store does) loads none.
_HOMES = {"carried_spans": "dialogue", "split_spans": "dialogue", "name_class": "rules",
          **dict.fromkeys(("find_secret", "placeholder", "redact_json_text", "redact_text",
                           "redact_value", "replace_spans"), "values")}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
