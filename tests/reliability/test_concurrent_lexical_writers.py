"""The lexical index under concurrent writers (``store/postings/write.py``).

Three processes add turns, one per batch, to the same user's session on one database,
their positions interleaved so each write re-derives neighbours another process wrote;
each searches for the turn it has just written and finds it. The postings end exactly as
one store writing the same documents in one batch leaves them, and the statistics row
counts every document. SQLite (a file) and PostgreSQL (the namespace's scope lock
serialises the statistics row).
"""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from langgraph.store.base import PutOp

from hy_memory_langgraph.retrieval.bm25 import tokenize
from hy_memory_langgraph.store import HyMemoryStore, LexicalOp
from hy_memory_langgraph.store.schema.tables import lexical_docs, lexical_postings, lexical_spaces

DEADLINE_S = 180  # a hang guard only: the test waits on the children's results
WRITERS = 3
TURNS = 40
WINDOW = (2, 1)
WORDS = "tea cat berlin marathon sister guitar painting beach dog camping 喜欢 喝茶 周末 爬山 妹妹".split()


def _turn(me: int, i: int) -> tuple[str, str, float]:
    """Key, text and position of writer ``me``'s ``i``-th turn (positions interleave)."""
    words = [WORDS[(me * 7 + i * 3 + j) % len(WORDS)] for j in range(2 + (i + me) % 5)]
    return f"w{me}_{i:02d}", " ".join([f"own{me}x{i}", *words]), float(i * WRITERS + me)


def _ops(ns: tuple[str, ...], key: str, text: str, position: float) -> list[Any]:
    return [PutOp(ns, key, {"text": text}, index=False),
            LexicalOp(ns, key, dict(Counter(tokenize(text))), ts=position, group="s1",
                      order=("2024", position), window=WINDOW)]


def _open(target: str, schema: str | None) -> HyMemoryStore:
    if schema is None:
        return HyMemoryStore(target, index=None)
    return HyMemoryStore.from_url(target, name=schema, index=None)


def _writer(target: str, schema: str | None, me: int, barrier: Any, out: Any) -> None:
    try:
        with _open(target, schema) as store:
            barrier.wait(DEADLINE_S)
            for i in range(TURNS):
                key, text, position = _turn(me, i)
                store.batch(_ops(("chat", "u1"), key, text, position))
                hits = store.lexical_search(("chat", "u1"), {f"own{me}x{i}": 1.0}, limit=10, k1=0.6, b=0.6)
                if key not in [h.key for h in hits]:  # (its neighbours hold the word too)
                    raise AssertionError(f"the search after writing {key} found {hits}")
    except Exception as exc:  # noqa: BLE001 - reported by the parent at once
        out.put(f"writer {me}: {type(exc).__name__}: {exc}")
        return
    out.put(me)


def _postings(store: HyMemoryStore, namespace: str) -> dict[tuple[str, str], tuple[int, int]]:
    p, d, s = lexical_postings.c, lexical_docs.c, lexical_spaces.c
    with store._engine.connect() as conn:
        rows = conn.execute(sa.select(d.key, p.term, p.tf, p.doc_len)
                            .join_from(lexical_postings, lexical_docs, d.item_id == p.item_id)
                            .join(lexical_spaces, s.id == d.space_id).where(s.namespace == namespace)).all()
    return {(key, term): (int(tf), int(doc_len)) for key, term, tf, doc_len in rows}


def _space(store: HyMemoryStore, namespace: str) -> tuple[int, int]:
    s = lexical_spaces.c
    with store._engine.connect() as conn:
        docs, total = conn.execute(sa.select(s.docs, s.total_len).where(s.namespace == namespace)).one()
    return int(docs), int(total)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    if request.param == "postgres":
        return request.getfixturevalue("pg_url"), "lexical"
    return str(tmp_path / "lexical.db"), None


def test_concurrent_writers_leave_the_postings_of_one_batch(database: tuple[str, str | None]) -> None:
    target, schema = database
    with _open(target, schema) as store:
        store.put(("setup",), "k", {"v": 1}, index=False)  # tables made before the writers start
        ctx = mp.get_context("spawn")
        barrier, out = ctx.Barrier(WRITERS), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(target, schema, me, barrier, out)) for me in range(WRITERS)]
        for proc in procs:
            proc.start()
        try:
            done = [out.get(timeout=DEADLINE_S) for _ in procs]
        finally:
            for proc in procs:
                proc.join(DEADLINE_S)
                if proc.is_alive():
                    proc.kill()
        assert sorted(map(str, done)) == [str(me) for me in range(WRITERS)], done
        assert all(p.exitcode == 0 for p in procs)
        # the same documents in one batch, in another user's namespace
        store.batch([op for me in range(WRITERS) for i in range(TURNS) for op in _ops(("chat", "u2"), *_turn(me, i))])
        written, expected = _postings(store, "chat.u1"), _postings(store, "chat.u2")
        assert len(expected) > WRITERS * TURNS and written == expected
        assert _space(store, "chat.u1") == _space(store, "chat.u2")
        assert _space(store, "chat.u1")[0] == WRITERS * TURNS
