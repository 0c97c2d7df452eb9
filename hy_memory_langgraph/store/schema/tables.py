"""SQLAlchemy Core tables of :class:`HyMemoryStore` (the source of truth).

* ``hy_store_items``: one row per item. ``namespace`` is the labels joined by
  ``"."`` (labels may not contain periods), ``scope`` its first
  :data:`SCOPE_DEPTH` labels (the unit of the in-memory vector indexes) when the item
  has vectors (``NULL`` when it has none), ``value`` is JSON text, times are integer
  microseconds since the Unix epoch (UTC), ``expires_at`` is ``NULL`` for items without
  a TTL.
* ``hy_store_vectors``: one row per embedded text of an item (``pos`` 0..n-1),
  with the field path, the text and the raw float32 vector as a blob.
* ``hy_store_changes``: an append-only change log (``seq`` never reused). Every
  write appends one row per touched item that has or may have had vectors, in the same
  transaction; store objects replay it to keep their in-memory FAISS indexes in step.
* ``hy_store_meta``: small key/value facts (store uid, vector dims).
* ``hy_lexical_spaces`` / ``hy_lexical_docs`` / ``hy_lexical_postings``: the
  persistent lexical index (see :mod:`..postings.write` and :mod:`..postings.read`):
  per-namespace BM25 statistics (documents, total length, the neighbour window its
  grouped documents were built with, documents still waiting for their postings),
  one document per indexed item (its own terms and those it lends its neighbours, its
  group and position, a time, its indexed length), and ``(space, term, item) -> tf``
  postings with the document length, so a search reads only its terms' postings.

:data:`MIGRATIONS` is the append-only history of these tables (see
:mod:`~hy_memory_langgraph.store.db.migrations`): version 1 creates them as defined
here, with, on PostgreSQL, the GIN index over the values read as jsonb. A change after
a release is a new migration; version 1 then stays as it was released.

Example:
    >>> import sqlalchemy as sa
    >>> engine = sa.create_engine("sqlite://")
    >>> metadata.create_all(engine)
    >>> sorted(metadata.tables)[0]
    'hy_lexical_docs'
    >>> [m.version for m in MIGRATIONS]
    [1]
"""

from __future__ import annotations

import sqlalchemy as sa

from hy_memory_langgraph.store.db.migrations import Migration, MigrationContext
from hy_memory_langgraph.store.sql.json_fields import PG_READER_SQL, quoted_reader

#: Labels of a namespace that make its scope: ``("chat", "user_1", "x")`` → ``"chat.user_1"``.
SCOPE_DEPTH = 2
COMPONENT = "memory_store"


def scope_of(namespace: str) -> str:
    """The scope of an encoded namespace (its first :data:`SCOPE_DEPTH` labels)."""
    return ".".join(namespace.split(".", SCOPE_DEPTH)[:SCOPE_DEPTH])

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
    sa.Column("scope", TEXT_C, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("ttl_minutes", sa.Float, nullable=True),
    sa.Column("expires_at", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("namespace", "key", name="uq_hy_store_items_ns_key"),
    # covering for "distinct live namespaces" and "newest first under a prefix"
    sa.Index("ix_hy_store_items_ns_updated", "namespace", "updated_at", "expires_at"),
    sa.Index("ix_hy_store_items_updated", "updated_at"),
    # only items with a TTL: most have none, and their entries cost every write
    sa.Index("ix_hy_store_items_expires", "expires_at", sqlite_where=sa.text("expires_at IS NOT NULL"),
             postgresql_where=sa.text("expires_at IS NOT NULL")),
    # a scope's live items (and their namespaces) without reading their rows: scope loads.
    # Only items with vectors have a scope: the others' entries would cost every write
    sa.Index("ix_hy_store_items_scope_live", "scope", "id", "namespace", "expires_at",
             sqlite_where=sa.text("scope IS NOT NULL"), postgresql_where=sa.text("scope IS NOT NULL")),
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


lexical_spaces = sa.Table(
    "hy_lexical_spaces",
    metadata,
    sa.Column("id", ID_TYPE, primary_key=True, autoincrement=True),
    sa.Column("namespace", TEXT_C, nullable=False),
    sa.Column("docs", sa.BigInteger, nullable=False),
    sa.Column("total_len", sa.BigInteger, nullable=False),
    sa.Column("ctx_before", sa.Integer, nullable=False),
    sa.Column("ctx_after", sa.Integer, nullable=False),
    sa.UniqueConstraint("namespace", name="uq_hy_lexical_spaces_ns"),
    sqlite_autoincrement=True,
)

lexical_docs = sa.Table(
    "hy_lexical_docs",
    metadata,
    sa.Column("item_id", ID_TYPE, primary_key=True, autoincrement=False),
    sa.Column("space_id", sa.BigInteger, nullable=False),
    sa.Column("key", TEXT_C, nullable=False),
    sa.Column("grp", TEXT_C, nullable=True),
    sa.Column("order_at", TEXT_C, nullable=False),
    sa.Column("order_ts", sa.Double, nullable=False),
    sa.Column("ts", sa.Double, nullable=True),
    sa.Column("length", sa.Integer, nullable=False),
    sa.Column("terms", sa.Text, nullable=False),
    sa.Column("tail", sa.Text, nullable=True),
    # neighbours of a position in a group; documents of a namespace within a time range
    sa.Index("ix_hy_lexical_docs_group", "space_id", "grp", "order_at", "order_ts", "key"),
    sa.Index("ix_hy_lexical_docs_ts", "space_id", "ts"),
)

lexical_postings = sa.Table(
    "hy_lexical_postings",
    metadata,
    sa.Column("space_id", sa.BigInteger, nullable=False),
    sa.Column("term", TEXT_C, nullable=False),
    sa.Column("item_id", sa.BigInteger, nullable=False),
    sa.Column("tf", sa.Integer, nullable=False),
    sa.Column("doc_len", sa.Integer, nullable=False),
    # clustered on SQLite (no rowid), covering on PostgreSQL: a term's postings are one range
    sa.PrimaryKeyConstraint("space_id", "term", "item_id", name="pk_hy_lexical_postings",
                            postgresql_include=["tf", "doc_len"]),
    sa.Index("ix_hy_lexical_postings_item", "item_id"),
    sqlite_with_rowid=False,
)


# ---------------------------------------------------------------- migrations


#: The PostgreSQL function every item value is read through for the containment index.
PG_VALUE_READER = "hy_jsonb_or_empty"


def _create(ctx: MigrationContext) -> None:
    """The tables; on PostgreSQL also a GIN index (``jsonb_path_ops``) over each item's
    value read as jsonb (through an immutable function that reads a damaged value as
    ``{}``, so one bad row cannot fail the index), which answers the containment test
    equality filters carry. SQLite's filters read the JSON text of the scope's rows."""
    ctx.create_all(metadata)
    if ctx.dialect != "postgresql":
        return
    reader = quoted_reader(f"{ctx.schema or 'public'}.{PG_VALUE_READER}")
    ctx.execute(PG_READER_SQL.format(name=reader))
    ctx.execute(f"CREATE INDEX ix_hy_store_items_value ON {ctx.table('hy_store_items')} "
                f"USING gin ({reader}(value) jsonb_path_ops)")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "items, vectors, change log, meta, lexical index; PostgreSQL: GIN index of the values", _create),
)
