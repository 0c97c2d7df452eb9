"""Database plumbing shared by every store of the package.

The memory store, the pipeline log, the coding version chain and workflow memory on
PostgreSQL all open their databases here:

* :mod:`.engine`: SQLAlchemy engines for SQLite files or one PostgreSQL database,
  transactions, read-only and absent files;
* :mod:`.locks`: which writers of one PostgreSQL store wait for each other;
* :mod:`.migrations`: versioned schema migrations, the same on both backends;
* :mod:`.wal`: checkpointing a SQLite write-ahead log off the writers' path;
* :mod:`.faults`: database failures turned into the package's errors.
"""
