"""What one lite chat ``add`` costs: embedding time vs everything else, SQL statements, size sweep.

Two parts, both through the public client in lite mode (``HyMemoryClient(mode="lite")``):

1. **Per add**: ``--adds`` adds of one short user message each (generated sentences, 20 per
   session), after a few warm-up adds. For each add: wall time (less the time this script
   spends measuring: the input-byte count), the time spent inside the
   embedding model (a timing wrapper around the model the client is given), the rest
   ("non-embedding overhead") and embedding calls. Then 20 more adds count the SQL
   statements of the add's thread (see :class:`StatementCounter`; counting runs outside
   the timed adds). Statements run later by other threads (the pipeline log, written
   once a second) are reported separately.
2. **Size sweep**: one add of a single message of each size (1 KB → 5 MB), each in a fresh
   session: wall time, embedding time, bytes the model was given, bytes stored.

Usage::

    python -m bench.ingest_cost [--fast] [--adds 300] [--sizes 1000 10000 100000 1000000 5000000]
                                [--kinds words base64] [--skip-sweep]

``--fast`` uses :class:`HashingEmbeddings` (no model) instead of the embedded e5-small.
Set ``OMP_WAIT_POLICY=PASSIVE`` on a shared machine.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import Pool

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.testing import HashingEmbeddings

SUBJECTS = ("I", "My sister", "Our team", "My neighbour", "The landlord", "My manager", "Grandpa")
VERBS = ("booked", "painted", "fixed", "ordered", "planted", "visited", "cancelled", "sold",
         "borrowed", "cooked")
OBJECTS = ("a blue bicycle", "the kitchen shelves", "tickets to Lisbon", "a lemon tree",
           "the old piano", "two kilos of rice", "a dentist appointment", "the garden fence",
           "a vegan cake", "our camping gear")
WHEN = ("last Monday", "in early May", "after the storm", "before the holidays", "this morning")


def sentence(i: int) -> str:
    """A short, unique chat turn (our own words, deterministic)."""
    rnd = random.Random(i)
    return (f"{rnd.choice(SUBJECTS)} {rnd.choice(VERBS)} {rnd.choice(OBJECTS)} "
            f"{rnd.choice(WHEN)}, note {i}.")


def filler(kind: str, size: int) -> str:
    """``size`` bytes of text: ``words`` (random lowercase words) or ``base64`` (one blob)."""
    rnd = random.Random(size)
    if kind == "base64":
        return base64.urlsafe_b64encode(rnd.randbytes(size * 3 // 4 + 3)).decode()[:size]
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
             for _ in range(4000)]
    words = []
    length = 0
    while length < size:
        word = rnd.choice(vocab)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


class TimedEmbeddings(Embeddings):
    """Wraps a model and records the time and the input bytes of every call."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.dims = getattr(inner, "dims", None)
        self.seconds = 0.0
        self.calls = 0
        self.input_bytes = 0
        self.accounting = 0.0  # time spent measuring input bytes (not the client's)

    def _timed(self, fn: Callable[[], Any], texts: list[str], *, is_query: bool = False) -> Any:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            done = time.perf_counter()
            self.seconds += done - start
            self.calls += 1
            fit = getattr(self.inner, "fit", None)  # what e5 reads of each text (its window)
            read = [fit(t, is_query=is_query) for t in texts] if callable(fit) else texts
            self.input_bytes += sum(len(t.encode("utf-8", "replace")) for t in read)
            self.accounting += time.perf_counter() - done

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._timed(lambda: self.inner.embed_documents(texts), list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._timed(lambda: self.inner.embed_query(text), [text], is_query=True)

    def reset(self) -> None:
        self.seconds, self.calls, self.input_bytes, self.accounting = 0.0, 0, 0, 0.0


class StatementCounter:
    """Statements per add on the add's thread, counted in a pass of its own.

    Two counts: statements the store issues (a SQLAlchemy ``before_cursor_execute``
    listener on every engine; an ``executemany`` is one statement, ``BEGIN`` counts,
    ``COMMIT`` is not a statement) and statement executions SQLite runs (its trace
    callback; every row of an ``executemany`` is one). The timed adds run without it
    (the trace callback costs time).
    """

    def __init__(self) -> None:
        self.main = threading.get_ident()
        self.on = False
        self.statements = self.executions = self.others = self.log_statements = 0
        self._connections: list[sqlite3.Connection] = []  # this script's whole run
        event.listen(Pool, "connect", self._connected)

    def _connected(self, dbapi_conn: Any, _record: Any) -> None:
        if isinstance(dbapi_conn, sqlite3.Connection):
            self._connections.append(dbapi_conn)
            dbapi_conn.set_trace_callback(self._executed if self.on else None)

    def _trace(self, on: bool) -> None:
        """SQLite's trace callback on every connection while counting (it costs time)."""
        self.on = on
        for connection in self._connections:
            with contextlib.suppress(sqlite3.ProgrammingError):  # closed by its pool since
                connection.set_trace_callback(self._executed if on else None)

    def _executed(self, statement: str) -> None:
        if threading.get_ident() == self.main and not statement.startswith(("COMMIT", "ROLLBACK")):
            self.executions += 1

    def _issued(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                executemany: bool) -> None:
        if threading.get_ident() == self.main:
            self.statements += 1
        else:
            self.others += 1
            self.log_statements += "pipeline_log" in statement

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        """Count inside the block."""
        self._trace(True)
        event.listen(Engine, "before_cursor_execute", self._issued)
        try:
            yield
        finally:
            event.remove(Engine, "before_cursor_execute", self._issued)
            self._trace(False)

    def count(self, add: Callable[[], None]) -> tuple[int, int]:
        """``(statements, SQLite executions)`` of the add's thread in one call of ``add``."""
        self.statements = self.executions = 0
        add()
        return self.statements, self.executions


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _one_add(client: HyMemoryClient, i: int) -> None:
    client.add([{"role": "user", "content": sentence(i)}], user_id="bench", session_id=f"s{i // 20}")


def per_add(client: HyMemoryClient, timed: TimedEmbeddings, counter: StatementCounter,
            adds: int) -> None:
    for i in range(5):  # warm-up: stores opened, model loaded
        client.add(f"warm-up turn number {i} about the weather", user_id="bench", session_id="w")
    walls, embeds, others, calls = [], [], [], []
    for i in range(adds):
        timed.reset()
        start = time.perf_counter()
        _one_add(client, i)
        wall = (time.perf_counter() - start - timed.accounting) * 1000
        walls.append(wall)
        embeds.append(timed.seconds * 1000)
        others.append(wall - timed.seconds * 1000)
        calls.append(timed.calls)
    with counter.counting():
        counted = [counter.count(lambda i=i: _one_add(client, i)) for i in range(adds, adds + 20)]
        time.sleep(1.5)  # let a deferred pipeline-log write happen
    print(f"\n## Per add ({adds} lite chat adds of one short message)\n")
    print("| measure | median | p95 | mean |")
    print("|---|---:|---:|---:|")
    rows: list[tuple[str, list[float]]] = [
        ("wall ms", walls), ("embedding ms", embeds), ("non-embedding ms", others),
        ("embedding calls", calls),
        ("SQL statements (add's thread; 20 more adds)", [float(c[0]) for c in counted]),
        ("SQLite statement executions (same 20 adds)", [float(c[1]) for c in counted])]
    for name, values in rows:
        print(f"| {name} | {statistics.median(values):.2f} | {_pct(values, 0.95):.2f} | "
              f"{statistics.fmean(values):.2f} |")
    print(f"\nstatements run by other threads during the 20 counted adds: {counter.others} "
          f"(pipeline log: {counter.log_statements})")


def sweep(client: HyMemoryClient, timed: TimedEmbeddings, sizes: list[int], kinds: list[str]) -> None:
    print("\n## Size sweep (one add of one message, fresh session each)\n")
    print("| kind | message bytes | wall ms | embedding ms | non-embedding ms | bytes the model reads | stored content bytes | cut marker |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for kind in kinds:
        for size in sizes:
            text = filler(kind, size)
            timed.reset()
            start = time.perf_counter()
            result = client.add(text, user_id="sweep", session_id=f"{kind}-{size}")
            wall = (time.perf_counter() - start) * 1000
            stored = ""
            if result.get("memory_ids"):
                stored = client.get(result["memory_ids"][0])["content"]
            print(f"| {kind} | {size:,} | {wall:.0f} | {timed.seconds * 1000:.0f} | "
                  f"{wall - timed.seconds * 1000:.0f} | {timed.input_bytes:,} | "
                  f"{len(stored.encode('utf-8')):,} | {'yes' if '[cut ' in stored else 'no'} |",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fast", action="store_true", help="HashingEmbeddings instead of e5")
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="*",
                        default=[1_000, 10_000, 100_000, 1_000_000, 5_000_000])
    parser.add_argument("--kinds", nargs="*", default=["words", "base64"])
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    model: Embeddings = HashingEmbeddings(dims=384) if args.fast else E5Embeddings()
    timed = TimedEmbeddings(model)
    counter = StatementCounter()
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="hy_ingest_cost_"))
    client = HyMemoryClient(mode="lite", embeddings=timed, data_dir=root)
    print(f"embeddings: {type(model).__name__}; data dir: {root}")
    try:
        per_add(client, timed, counter, args.adds)
        if not args.skip_sweep:
            sweep(client, timed, args.sizes, args.kinds)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
