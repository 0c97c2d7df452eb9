"""Which writers of one PostgreSQL store wait for each other.

Each store (a schema) has two kinds of transaction-level advisory locks:

* one **scope lock** per scope (a user's namespaces, :func:`~..schema.tables.scope_of`):
  a writer takes the locks of every scope whose rows it will change, in sorted order,
  before it reads or writes them. Writers of different users run side by side; two
  writers of one scope take turns, so a memory, its id index and its namespace's lexical
  statistics are read and changed by one writer at a time;
* the **log lock**, taken last, just before a writer appends to the change log, and held
  to its commit. Change-log positions are therefore handed out in commit order: a reader
  that sees position ``n`` has seen every change before it.

No writer waits for a lock while holding the log lock, and scope locks are taken in one
order, so the locks cannot deadlock; rows outside the locked scopes are only touched with
``SKIP LOCKED`` (TTL refreshes). Writers of the other tables of a schema (version chain,
workflow documents, pipeline log) take the log lock at their start, as every writer did
before scope locks. SQLite has a single writer: every function here is a no-op there.

Example:
    >>> scope_keys(["u1", "u2", "u1"]) == sorted(set(scope_keys(["u2", "u1"])))
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

#: Execution option of a PostgreSQL engine: its store's log-lock key (bigint).
LOCK_OPTION = "hy_lock_key"

_LOG_LOCK = sa.text("SELECT pg_advisory_xact_lock(:key)")
# The scope locks of a store whose log key is ``log``: the two-key form lives in its own
# key space (a scope never collides with a log lock); the subquery sorts the keys before
# the locks are taken, one after another.
_SCOPE_LOCKS = sa.text(
    "SELECT count(pg_advisory_xact_lock(CAST(:log AS integer), k)) FROM "
    "(SELECT k FROM unnest(CAST(:keys AS integer[])) AS k ORDER BY k) AS ordered")


def advisory_key(text: str, size: int = 8) -> int:
    """The PostgreSQL advisory-lock key named by ``text``: a signed integer of ``size``
    bytes (8: a ``bigint`` key; 4: one half of a two-key lock)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).digest()
    return int.from_bytes(digest, "big", signed=True)


def store_lock_key(schema: str) -> int:
    """The log-lock key of a store's schema (a signed 64-bit integer)."""
    return advisory_key(f"hy_memory:{schema}")


def scope_keys(scopes: Iterable[str]) -> list[int]:
    """The sorted, distinct 32-bit lock keys of ``scopes`` (two scopes may share one:
    they then take turns, which is safe)."""
    return sorted({advisory_key(f"scope:{scope}", 4) for scope in scopes})


def log_key(conn: Connection) -> int | None:
    """The log-lock key of ``conn``'s store (``None`` on SQLite), for statements that
    take the lock themselves (the change-log append)."""
    return conn.get_execution_options().get(LOCK_OPTION)


def lock_scopes(conn: Connection, scopes: Iterable[str]) -> None:
    """Wait for, then hold to the end of the transaction, the locks of ``scopes``.

    Call it before reading the rows of those scopes the transaction will change, at
    most once per transaction and only in one that locked no scopes when it began (two
    sets could take keys out of order).
    """
    key = log_key(conn)
    keys = scope_keys(scopes)
    if key is None or not keys:
        return
    conn.execute(_SCOPE_LOCKS, {"log": key & 0x7FFFFFFF, "keys": keys})


def lock_log(conn: Connection) -> None:
    """Wait for, then hold to the commit, the store's log lock (call it last)."""
    key = log_key(conn)
    if key is not None:
        conn.execute(_LOG_LOCK, {"key": key})
