"""One administrative query on a PostgreSQL test database, on a connection of its own."""

from __future__ import annotations

import sqlalchemy as sa


def admin_scalar(url: str, query: str) -> int:
    """The integer ``query`` returns, run in autocommit outside every store's pool."""
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        value = conn.execute(sa.text(query)).scalar()
    admin.dispose()
    return int(value or 0)
