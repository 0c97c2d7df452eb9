"""The tables migration 3 adds (the persistent lexical index), frozen.

Migration 3 creates exactly these tables; never edit this module. Later changes
to them are new migrations in :mod:`.schema`, whose current definitions start
out equal to these.

* ``hy_lexical_spaces``: one row per namespace holding lexical documents: the
  BM25 statistics (documents, total length), the neighbour window its grouped
  documents were built with, and whether every live record of the namespace
  has its document (``complete``).
* ``hy_lexical_docs``: one row per item with a lexical document: its own terms
  and the terms it lends its neighbours (JSON ``{term: count}``), its group and
  position in the group, a time (``ts``) and its indexed length.
* ``hy_lexical_postings``: ``(space, term, item) -> tf`` of each document's
  indexed terms (its own plus its neighbours'), with the document length, so a
  search reads only the postings of the query terms.

Example:
    >>> sorted(metadata.tables)
    ['hy_lexical_docs', 'hy_lexical_postings', 'hy_lexical_spaces']
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["metadata"]

metadata = sa.MetaData()
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TEXT_C = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")

sa.Table(
    "hy_lexical_spaces",
    metadata,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("namespace", _TEXT_C, nullable=False),
    sa.Column("docs", sa.BigInteger, nullable=False),
    sa.Column("total_len", sa.BigInteger, nullable=False),
    sa.Column("ctx_before", sa.Integer, nullable=False),
    sa.Column("ctx_after", sa.Integer, nullable=False),
    sa.Column("complete", sa.Boolean, nullable=False),
    sa.UniqueConstraint("namespace", name="uq_hy_lexical_spaces_ns"),
    sqlite_autoincrement=True,
)
sa.Table(
    "hy_lexical_docs",
    metadata,
    sa.Column("item_id", _ID, primary_key=True, autoincrement=False),
    sa.Column("space_id", sa.BigInteger, nullable=False),
    sa.Column("key", _TEXT_C, nullable=False),
    sa.Column("grp", _TEXT_C, nullable=True),
    sa.Column("order_at", _TEXT_C, nullable=False),
    sa.Column("order_ts", sa.Double, nullable=False),
    sa.Column("ts", sa.Double, nullable=True),
    sa.Column("length", sa.Integer, nullable=False),
    sa.Column("terms", sa.Text, nullable=False),
    sa.Column("tail", sa.Text, nullable=True),
    sa.Index("ix_hy_lexical_docs_group", "space_id", "grp", "order_at", "order_ts", "key"),
    sa.Index("ix_hy_lexical_docs_ts", "space_id", "ts"),
)
sa.Table(
    "hy_lexical_postings",
    metadata,
    sa.Column("space_id", sa.BigInteger, nullable=False),
    sa.Column("term", _TEXT_C, nullable=False),
    sa.Column("item_id", sa.BigInteger, nullable=False),
    sa.Column("tf", sa.Integer, nullable=False),
    sa.Column("doc_len", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("space_id", "term", "item_id", name="pk_hy_lexical_postings",
                            postgresql_include=["tf", "doc_len"]),
    sa.Index("ix_hy_lexical_postings_item", "item_id"),
    sqlite_with_rowid=False,
)
