"""Errors of the workflow memory."""

from __future__ import annotations

from hy_memory_langgraph.errors import InvalidInputError, StoreError


class CredentialsRefusedError(InvalidInputError):
    """The input carries credentials (Cookie, ETEAMSID, Token, ``header.operator``).

    Nothing is saved. The message names where the credential was found, never its value.
    """


class WorkflowStorageError(StoreError):
    """A workflow memory file could not be read or written."""


class MemoryNotSupportedError(Exception):
    """Raised by an OA context provider when the environment does not support memory."""
