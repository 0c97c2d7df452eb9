"""The chain store: ``hy_code_chain/hy_code.db`` through SQLAlchemy Core.

Tables (portable SQL; SQLite gets WAL and a busy timeout from
:func:`hy_memory_langgraph.store.db.engine.create_store_engine`; on PostgreSQL they live
in the store's schema, ``hy_code`` for a client; versioned by :data:`MIGRATIONS`):

* ``threads(id, owner, branch, branch_key, file, symbol, created_at)``: one function /
  block of one file on one branch of one owner (``"user_id|workspace_id"``);
  ``branch_key`` (branch or ``""``) makes ``(owner, branch_key, file, symbol)`` unique.
* ``rounds(id, thread_id, number, request_id, fact_id, asked, removed, added, reverts,
  hunks, source, at)``: one revision, numbered 1, 2, 3… per thread; ``removed`` /
  ``added`` / ``reverts`` are JSON lists.
* ``snapshots(owner, branch_key, root, file, head, text)``: the work-tree text of a
  file last read by the git source, so the next read diffs from it (not from HEAD).

Example:
    >>> import tempfile, os
    >>> store = ChainStore(os.path.join(tempfile.mkdtemp(), "hy_code.db"))
    >>> from hy_memory_langgraph.chain.edits import Edit
    >>> rec = store.record("u|ws", "main", [Edit("a.py", "f", ("x",), ("y",), "edit", 0, "go")],
    ...                    request_id="r1", fact_id=None, at="2024-05-01T00:00:00+00:00")
    >>> rec.hunks, [t.rounds[0].number for t in store.threads_for("u|ws", "main", files=["a.py"])]
    (1, [1])
    >>> store.close()
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hy_memory_langgraph.chain.edits import Edit
from hy_memory_langgraph.chain.rounds import find_reverts, group_rounds
from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.store.db.engine import checkpoint, read_tx, release_engine, write_tx
from hy_memory_langgraph.store.db.migrations import Migration, open_database
from hy_memory_langgraph.store.db.timeouts import DEFAULT_TIMEOUT_S

_META = sa.MetaData()
THREADS: Final = sa.Table(
    "threads", _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("owner", sa.String(512), nullable=False),
    sa.Column("branch", sa.String(512), nullable=True),
    sa.Column("branch_key", sa.String(512), nullable=False),
    sa.Column("file", sa.String(2048), nullable=False),
    sa.Column("symbol", sa.String(512), nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("owner", "branch_key", "file", "symbol", name="uq_thread"),
)
ROUNDS: Final = sa.Table(
    "rounds", _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("thread_id", sa.Integer, sa.ForeignKey("threads.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("request_id", sa.String(128), nullable=True),
    sa.Column("fact_id", sa.String(128), nullable=True),
    sa.Column("asked", sa.Text, nullable=False, default=""),
    sa.Column("removed", sa.Text, nullable=False),
    sa.Column("added", sa.Text, nullable=False),
    sa.Column("reverts", sa.Text, nullable=False),
    sa.Column("hunks", sa.Integer, nullable=False, default=1),
    sa.Column("source", sa.String(64), nullable=False, default=""),
    sa.Column("at", sa.String(40), nullable=False),
    sa.UniqueConstraint("thread_id", "number", name="uq_round"),
)
SNAPSHOTS: Final = sa.Table(
    "snapshots", _META,
    sa.Column("owner", sa.String(512), primary_key=True),
    sa.Column("branch_key", sa.String(512), primary_key=True),
    sa.Column("root", sa.String(2048), primary_key=True),
    sa.Column("file", sa.String(2048), primary_key=True),
    sa.Column("head", sa.String(64), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
)
sa.Index("ix_rounds_fact", ROUNDS.c.fact_id)
sa.Index("ix_threads_owner_file", THREADS.c.owner, THREADS.c.file)


def _owned(column: sa.ColumnElement[str], prefix: str) -> sa.ColumnElement[bool]:
    """``column`` starts with ``prefix``, compared exactly (case and ``%``/``_`` included;
    ``LIKE`` would ignore case on SQLite)."""
    return sa.func.substr(column, 1, len(prefix)) == prefix


MIGRATIONS: Final = (Migration(1, "threads, rounds, snapshots", lambda ctx: ctx.create_all(_META)),)


def owner_of(user_id: str, workspace_id: str | None) -> str:
    """The chain owner: ``"user_id|workspace_id"`` (empty workspace → ``"user_id|"``).

    ``%`` and ``|`` inside the user id are percent-encoded, so the user part is
    unambiguous (``"a|b"`` and ``"a"`` with workspace ``"b"`` never meet) and
    ``f"{owner_of(user, None)}"`` is a safe prefix of all of a user's owners.
    """
    user = user_id.replace("%", "%25").replace("|", "%7C")
    return f"{user}|{workspace_id or ''}"


@dataclass(frozen=True)
class Round:
    number: int
    request_id: str | None
    fact_id: str | None
    asked: str
    removed: list[str]
    added: list[str]
    reverts: list[int]
    hunks: int
    source: str
    at: str


@dataclass
class Thread:
    id: int
    owner: str
    branch: str | None
    file: str
    symbol: str
    created_at: str
    rounds: list[Round] = field(default_factory=list)


@dataclass
class Recorded:
    """What one :meth:`ChainStore.record` stored: hunks and ``(thread id, number)``s."""

    hunks: int = 0
    rounds: list[tuple[int, int]] = field(default_factory=list)


class ChainStore:
    """Threads and rounds of the version-evolution chain in one database.

    Args:
        path: A SQLite file path, or a SQLAlchemy URL (contains ``"://"``).
        schema: On PostgreSQL, the schema of the tables (ignored on SQLite).
        timeout_s: The longest wait on the database, in seconds (``MEMORY_DB_TIMEOUT_S``).
    """

    def __init__(self, path: str | os.PathLike[str], *, schema: str | None = None,
                 sealed: Seal = seal, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        #: The privacy gate every text of a row passes before it is written.
        self.seal = sealed
        self.engine, self.local_path = open_database(path, "version_chain", MIGRATIONS, schema=schema,
                                                        timeout_s=timeout_s)

    def close(self) -> None:
        release_engine(self.engine)

    # ------------------------------------------------------------------ writes
    def record(self, owner: str, branch: str | None, edits: Sequence[Edit], *,
               request_id: str | None, fact_id: str | None, at: str) -> Recorded:
        """Store the edits of one write: one new round per touched thread.

        A round identical (same removed and added lines) to the thread's latest round
        is skipped (a retried write); when that round is this request's own (a background
        run resumed after a crash), it counts as recorded. Returns the hunks and rounds.
        """
        out = Recorded()
        drafts = [d for d in group_rounds(edits) if d.removed or d.added]
        if not drafts:
            return out
        branch = branch or None
        with write_tx(self.engine) as conn:
            for draft in drafts:
                file, symbol, asked, removed, added = self.seal(
                    [draft.file, draft.symbol, draft.asked_text, list(draft.removed), list(draft.added)])
                thread_id = self._thread_id(conn, owner, branch, file, symbol, at)
                earlier = self._round_rows(conn, [thread_id])
                if earlier and (earlier[-1]["removed"], earlier[-1]["added"]) == (removed, added):
                    if request_id is not None and earlier[-1]["request_id"] == request_id:
                        out.hunks += draft.hunks  # this request's own round, recorded before a crash
                        out.rounds.append((thread_id, earlier[-1]["number"]))
                    continue
                number = (earlier[-1]["number"] if earlier else 0) + 1
                reverts = find_reverts(removed, added,
                                       [(r["number"], r["removed"], r["added"]) for r in earlier])
                conn.execute(ROUNDS.insert().values(
                    thread_id=thread_id, number=number, request_id=request_id, fact_id=fact_id,
                    asked=asked, removed=_dump(removed), added=_dump(added),
                    reverts=_dump(reverts), hunks=draft.hunks, source=",".join(draft.sources),
                    at=at))
                out.hunks += draft.hunks
                out.rounds.append((thread_id, number))
        return out

    def _thread_id(self, conn: Connection, owner: str, branch: str | None, file: str,
                   symbol: str, at: str) -> int:
        key = branch or ""
        where = sa.and_(THREADS.c.owner == owner, THREADS.c.branch_key == key,
                        THREADS.c.file == file, THREADS.c.symbol == symbol)
        found = conn.execute(sa.select(THREADS.c.id).where(where)).scalar()
        if found is not None:
            return int(found)
        result = conn.execute(THREADS.insert().values(
            owner=owner, branch=branch, branch_key=key, file=file, symbol=symbol, created_at=at))
        return int(result.inserted_primary_key[0])

    def delete_user(self, user_id: str) -> int:
        """Delete every thread (with its rounds) and snapshot of ``user_id``, in every
        workspace; returns the threads removed (for ``client.delete_all``)."""
        prefix = owner_of(user_id, None)
        with write_tx(self.engine) as conn:
            ids = [r[0] for r in conn.execute(
                sa.select(THREADS.c.id).where(_owned(THREADS.c.owner, prefix)))]
            if ids:
                conn.execute(ROUNDS.delete().where(ROUNDS.c.thread_id.in_(ids)))
                conn.execute(THREADS.delete().where(THREADS.c.id.in_(ids)))
            conn.execute(SNAPSHOTS.delete().where(_owned(SNAPSHOTS.c.owner, prefix)))
        return len(ids)

    def forget_fact(self, user_id: str, fact_id: str) -> int:
        """Erase the user's words kept with the rounds of a deleted fact (the code changes
        stay: they are the history of the code, not of the memory); returns the rounds."""
        prefix = owner_of(user_id, None)
        threads = sa.select(THREADS.c.id).where(_owned(THREADS.c.owner, prefix))
        with write_tx(self.engine) as conn:
            result = conn.execute(ROUNDS.update().where(ROUNDS.c.fact_id == fact_id,
                                                        ROUNDS.c.thread_id.in_(threads))
                                  .values(asked="", fact_id=None))
        return int(result.rowcount or 0)

    def flush_erasure(self) -> None:
        """Fold the write-ahead log into the database after deletes (erasure)."""
        checkpoint(self.engine)
    # ------------------------------------------------------------------ export / import
    def dump(self) -> Iterator[dict[str, Any]]:
        """Every thread with its rounds, oldest thread first (git snapshots are not
        included: they are caches of work-tree files, re-read on the next write)."""
        with read_tx(self.engine) as conn:
            threads = conn.execute(sa.select(THREADS).order_by(THREADS.c.id)).mappings().all()
            rounds = self._round_rows(conn, [t["id"] for t in threads])
        by_thread: dict[int, list[dict[str, Any]]] = {}
        for r in rounds:
            by_thread.setdefault(r["thread_id"], []).append(
                {k: v for k, v in r.items() if k not in ("id", "thread_id")})
        for t in threads:
            yield {"owner": t["owner"], "branch": t["branch"], "file": t["file"], "symbol": t["symbol"],
                   "created_at": t["created_at"], "rounds": by_thread.get(t["id"], [])}

    def restore(self, threads: Iterable[dict[str, Any]]) -> int:
        """Write threads as :meth:`dump` gave them; rounds a thread already has (same
        number) are kept. Returns the rounds written."""
        written = 0
        with write_tx(self.engine) as conn:
            for t in map(self.seal, threads):
                thread_id = self._thread_id(conn, t["owner"], t["branch"] or None, t["file"], t["symbol"],
                                            t["created_at"])
                have = {r["number"] for r in self._round_rows(conn, [thread_id])}
                for r in t["rounds"]:
                    if int(r["number"]) in have:
                        continue
                    conn.execute(ROUNDS.insert().values(
                        thread_id=thread_id, number=int(r["number"]), request_id=r["request_id"],
                        fact_id=r["fact_id"], asked=r["asked"] or "", removed=_dump(r["removed"]),
                        added=_dump(r["added"]), reverts=_dump(r["reverts"]), hunks=int(r["hunks"]),
                        source=r["source"] or "", at=r["at"]))
                    written += 1
        return written

    # ------------------------------------------------------------------ git snapshots
    def snapshot(self, owner: str, branch: str | None, root: str, file: str) -> tuple[str, str] | None:
        """``(head, text)`` last seen for a work-tree file, or ``None``."""
        with read_tx(self.engine) as conn:
            row = conn.execute(sa.select(SNAPSHOTS.c.head, SNAPSHOTS.c.text).where(
                SNAPSHOTS.c.owner == owner, SNAPSHOTS.c.branch_key == (branch or ""),
                SNAPSHOTS.c.root == root, SNAPSHOTS.c.file == self.seal(file))).first()
        return (row[0], row[1]) if row else None

    def save_snapshot(self, owner: str, branch: str | None, root: str, file: str, head: str,
                      text: str) -> None:
        key = {"owner": owner, "branch_key": branch or "", "root": root, "file": self.seal(file)}
        text = self.seal(text)
        with write_tx(self.engine) as conn:
            conn.execute(SNAPSHOTS.delete().where(*(SNAPSHOTS.c[k] == v for k, v in key.items())))
            conn.execute(SNAPSHOTS.insert().values(**key, head=head, text=text))

    # ------------------------------------------------------------------ reads
    def threads_for(self, owner: str, branch: str | None, *, files: Iterable[str] = (),
                    fact_ids: Iterable[str] = (), any_file: bool = False) -> list[Thread]:
        """Threads of ``owner`` on ``branch`` or on no branch, with their rounds.

        Selected by file (exact, or either path ending with ``/`` + the other), by a
        round written by one of ``fact_ids``, or every thread when ``any_file``.
        """
        files = [f for f in files if f]
        fact_ids = [f for f in fact_ids if f]
        if not (files or fact_ids or any_file):
            return []
        keys = [""] if not branch else ["", branch]
        with read_tx(self.engine) as conn:
            rows = conn.execute(sa.select(THREADS).where(
                THREADS.c.owner == owner, THREADS.c.branch_key.in_(keys)).order_by(THREADS.c.id)
            ).mappings().all()
            linked: set[int] = set()
            if fact_ids and rows:
                linked = {int(r[0]) for r in conn.execute(
                    sa.select(ROUNDS.c.thread_id).where(
                        ROUNDS.c.fact_id.in_(fact_ids),
                        ROUNDS.c.thread_id.in_([r["id"] for r in rows])))}
            chosen = [r for r in rows
                      if any_file or r["id"] in linked or any(same_file(r["file"], f) for f in files)]
            rounds = self._round_rows(conn, [r["id"] for r in chosen])
        by_thread: dict[int, list[Round]] = {}
        for r in rounds:
            by_thread.setdefault(r["thread_id"], []).append(_round(r))
        return [Thread(r["id"], r["owner"], r["branch"], r["file"], r["symbol"], r["created_at"],
                       by_thread.get(r["id"], [])) for r in chosen]

    @staticmethod
    def _round_rows(conn: Connection, thread_ids: list[int]) -> list[dict[str, Any]]:
        if not thread_ids:
            return []
        rows = conn.execute(sa.select(ROUNDS).where(ROUNDS.c.thread_id.in_(thread_ids))
                            .order_by(ROUNDS.c.thread_id, ROUNDS.c.number)).mappings().all()
        return [{**r, "removed": _load(r["removed"]), "added": _load(r["added"]),
                 "reverts": _load(r["reverts"])} for r in rows]


def same_file(a: str, b: str) -> bool:
    """Same path, or one is a suffix of the other at a ``/`` boundary."""
    a, b = _bare(a), _bare(b)
    if not a or not b:
        return False
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _bare(path: str) -> str:
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def _round(r: dict[str, Any]) -> Round:
    return Round(number=int(r["number"]), request_id=r["request_id"], fact_id=r["fact_id"],
                 asked=r["asked"] or "", removed=list(r["removed"]), added=list(r["added"]),
                 reverts=[int(n) for n in r["reverts"]], hunks=int(r["hunks"] or 0),
                 source=r["source"] or "", at=r["at"])


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _load(text: str | None) -> Any:
    return json.loads(text) if text else []
