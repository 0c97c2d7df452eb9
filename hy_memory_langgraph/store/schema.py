"""SQLAlchemy Core tables of :class:`HyMemoryStore` (the source of truth).

* ``hy_store_items``: one row per item. ``namespace`` is the labels joined by
  ``"."`` (labels may not contain periods), ``value`` is JSON text, times are
  integer microseconds since the Unix epoch (UTC), ``expires_at`` is ``NULL``
  for items without a TTL.
* ``hy_store_vectors``: one row per embedded text of an item (``pos`` 0..n-1),
  with the field path, the text and the raw float32 vector as a blob.
* ``hy_store_changes``: an append-only change log (``seq`` never reused). Every
  write appends one row per touched item in the same transaction; store objects
  replay it to keep their in-memory FAISS index in step.
* ``hy_store_meta``: small key/value facts (store uid, vector dims).

Example:
    >>> import sqlalchemy as sa
    >>> engine = sa.create_engine("sqlite://")
    >>> metadata.create_all(engine)
    >>> sorted(metadata.tables)[0]
    'hy_store_changes'
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["metadata", "items", "vectors", "changes", "meta", "ID_TYPE", "TEXT_C"]

metadata = sa.MetaData()

# INTEGER PRIMARY KEY on SQLite (rowid alias, needed for AUTOINCREMENT); BIGINT elsewhere.
ID_TYPE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
# Byte-wise ordering on PostgreSQL, so namespace prefix ranges work like on SQLite.
TEXT_C = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")

items = sa.Table(
    "hy_store_items",
    metadata,
    sa.Column("id", ID_TYPE, primary_key=True, autoincrement=True),
    sa.Column("namespace", TEXT_C, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("ttl_minutes", sa.Float, nullable=True),
    sa.Column("expires_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("namespace", "key", name="uq_hy_store_items_ns_key"),
    # covering for "distinct live namespaces" and "newest first under a prefix"
    sa.Index("ix_hy_store_items_ns_updated", "namespace", "updated_at", "expires_at"),
    sa.Index("ix_hy_store_items_updated", "updated_at"),
    sa.Index("ix_hy_store_items_expires", "expires_at"),
    sqlite_autoincrement=True,
)

vectors = sa.Table(
    "hy_store_vectors",
    metadata,
    sa.Column(
        "item_id",
        ID_TYPE,
        sa.ForeignKey("hy_store_items.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("pos", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("field", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("embedding", sa.LargeBinary, nullable=False),
)

changes = sa.Table(
    "hy_store_changes",
    metadata,
    sa.Column("seq", ID_TYPE, primary_key=True, autoincrement=True),
    sa.Column("item_id", sa.BigInteger, nullable=False),
    sa.Column("op", sa.String(8), nullable=False),
    sa.Column("namespace", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Index("ix_hy_store_changes_item", "item_id"),
    sqlite_autoincrement=True,
)

meta = sa.Table(
    "hy_store_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
