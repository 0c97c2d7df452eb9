"""Exception hierarchy of hy_memory_langgraph.

Every error raised on purpose by the package derives from :class:`HyMemoryError`.
Errors about bad caller input also derive from :class:`ValueError`, so code that
already catches ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "HyMemoryError",
    "ConfigError",
    "MissingExtraError",
    "InvalidInputError",
    "InvalidSceneError",
    "MissingContextError",
    "ForeignUserError",
    "ModelUnavailableError",
    "StoreError",
    "StoreCorruptionError",
    "StoreFullError",
    "StoreBusyError",
    "StoreUnavailableError",
    "ConflictError",
    "ReadOnlyStoreError",
    "LLMCallError",
]


class HyMemoryError(Exception):
    """Base class of every error raised on purpose by hy_memory_langgraph.

    Messages often quote what the caller passed (``session_id=' x'``), and errors end up
    in logs and traces: a secret in a message is replaced as it would be in a memory.

    Example:
        >>> str(HyMemoryError("session_id='sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB ' has whitespace"))
        "session_id='[REDACTED:openai_key] ' has whitespace"
    """

    def __init__(self, *args: object) -> None:
        # Imported at the first error: the detectors' tables are not needed to import the
        # package faces (``hy-memory --help`` loads this module and no detector).
        from hy_memory_langgraph.redact import redact_text

        super().__init__(*(redact_text(a) if isinstance(a, str) else a for a in args))


class ConfigError(HyMemoryError, ValueError):
    """A configuration value (argument or environment variable) is invalid."""


class MissingExtraError(ConfigError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install``
    command of the package's extra that brings it (also an ``ImportError``)."""


class InvalidInputError(HyMemoryError, ValueError):
    """A caller passed an argument that cannot be used; the message names the fix."""


class InvalidSceneError(InvalidInputError):
    """``scene`` is not one of the allowed values."""


class MissingContextError(InvalidInputError):
    """A memory node or tool ran without a value it reads from the run (e.g. ``user_id``).

    Attributes:
        field: The missing value's name.
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ForeignUserError(InvalidInputError, PermissionError):
    """A call asked for the memory of another user than the one it is bound to: a run
    authenticated as one user (a LangGraph server run with auth), or a memory tool,
    retriever or middleware built for one user in a run of another."""


class ModelUnavailableError(HyMemoryError, RuntimeError):
    """No embedding or chat model could be loaded; the message names the fix."""


class StoreError(HyMemoryError):
    """The store could not complete an operation."""


class ConflictError(StoreError):
    """A guarded write found its record changed or deleted by a concurrent writer;
    nothing was written. Read the record again and retry."""


class ReadOnlyStoreError(StoreError, PermissionError):
    """The database can only be read here (read-only file, directory or file system):
    searches work, writes are refused before anything is written."""


class StoreCorruptionError(StoreError):
    """Stored data cannot be used as it is (a damaged database file, a stored vector of
    the wrong size); the message names the file and how to recover."""


class StoreFullError(StoreError):
    """The disk (or the database's size limit) is full; nothing of the failed write was
    stored. Free space and retry."""


class StoreBusyError(StoreError):
    """Another writer held the database longer than the busy timeout; retry."""


class StoreUnavailableError(StoreError):
    """The database server could not be reached or dropped the connection (a restart);
    an idempotent write was retried once before this was raised."""


class LLMCallError(HyMemoryError):
    """A chat-model call failed; the original exception is chained as ``__cause__``.

    Attributes:
        stage: The pipeline stage whose call failed (e.g. ``"judge"``), if known.
    """

    def __init__(self, message: str, *, stage: str | None = None) -> None:
        super().__init__(message)
        self.stage = stage
