"""Version 1 of the memory store's tables, frozen (the layout before versioning).

Migration 1 creates exactly these tables, so a database written before schema
versions existed is adopted unchanged and then migrated like any other. Never
edit this module; later changes are new migrations in :mod:`.schema`.

Example:
    >>> sorted(metadata.tables)
    ['hy_store_changes', 'hy_store_items', 'hy_store_meta', 'hy_store_vectors']
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["metadata"]

metadata = sa.MetaData()
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TEXT_C = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")

sa.Table(
    "hy_store_items",
    metadata,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("namespace", _TEXT_C, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("ttl_minutes", sa.Float, nullable=True),
    sa.Column("expires_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("namespace", "key", name="uq_hy_store_items_ns_key"),
    sa.Index("ix_hy_store_items_ns_updated", "namespace", "updated_at", "expires_at"),
    sa.Index("ix_hy_store_items_updated", "updated_at"),
    sa.Index("ix_hy_store_items_expires", "expires_at"),
    sqlite_autoincrement=True,
)
sa.Table(
    "hy_store_vectors",
    metadata,
    sa.Column("item_id", _ID, sa.ForeignKey("hy_store_items.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("pos", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("field", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("embedding", sa.LargeBinary, nullable=False),
)
sa.Table(
    "hy_store_changes",
    metadata,
    sa.Column("seq", _ID, primary_key=True, autoincrement=True),
    sa.Column("item_id", sa.BigInteger, nullable=False),
    sa.Column("op", sa.String(8), nullable=False),
    sa.Column("namespace", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sqlite_autoincrement=True,
)
sa.Table(
    "hy_store_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
