"""Concurrent one-operation calls of a store run together as one batch (group commit).

LangGraph's ``put``/``get``/``search``/``list_namespaces``/``delete`` and their async twins
each call ``batch([op])``. Run one by one, every call pays its own transaction (on
PostgreSQL also the write lock and a few round trips). Here a call that arrives while a
batch is running waits, and the calls that waited run as the next batch:

* threads (:class:`Coalescer`): the first caller leads; it runs the waiting calls, its own
  among them, as one batch, hands each caller its result and passes the lead to a caller
  that arrived meanwhile (so no caller serves others for ever);
* coroutines of one event loop (:class:`AsyncCoalescer`): a drain task runs what was
  queued, then what was queued while it ran, until nothing waits.

Nothing a caller can observe changes: a batch's reads see the store as committed before
its writes (a concurrent write may or may not be seen, as without grouping), and a
caller's earlier calls are committed before its next one starts, so it reads its own
writes. Identical reads of one batch run once and every caller gets its own copy of the
result; of two puts of one key the later wins, as in arrival order. When a grouped batch
fails, its calls run again one by one (the failed batch was one transaction: it wrote
nothing), so each call gets its own result or its own error.

Example:
    >>> from langgraph.store.base import GetOp
    >>> seen = []
    >>> def run(ops):
    ...     seen.append(len(ops))
    ...     return [op.key.upper() for op in ops]
    >>> Coalescer(run).call(GetOp(("a",), "x"))
    'X'
    >>> seen
    [1]
"""

from __future__ import annotations

import asyncio
import copy
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchOp

#: The operations a one-operation call may be grouped with others for.
GROUPABLE = (GetOp, PutOp, SearchOp, ListNamespacesOp)

Outcome = tuple[Result, BaseException | None]


def _frozen(value: Any) -> Any:
    """A hashable stand-in of a JSON-like value that keeps ``1``, ``1.0`` and ``True`` apart
    (text, ``None`` and tuples of text, as namespaces are, stand for themselves: no other
    stand-in is text or a tuple of text only)."""
    if type(value) is str or value is None or _texts(value):
        return value
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((str(k), _frozen(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    hash(value)  # TypeError: not groupable as a read
    return (type(value).__name__, value)


def _texts(value: Any) -> bool:
    return type(value) is tuple and all(type(v) is str for v in value)


def _read_key(op: Op) -> Any:
    """What makes two reads the same read (``None``: not a read, or not comparable)."""
    if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp)):
        return None
    try:
        return (type(op).__name__, tuple(_frozen(part) for part in op))
    except TypeError:
        return None


def _clone(value: Any) -> Any:
    """A copy of a result a caller may change without touching another caller's."""
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, Item):
        twin = copy.copy(value)
        twin.value = copy.deepcopy(value.value)
        return twin
    return value  # None, or namespaces (tuples of strings)


def _dedupe(ops: Sequence[Op]) -> tuple[list[Op], list[int]]:
    """The distinct operations to run and, per call, the index of its result."""
    unique: list[Op] = []
    listen: list[int] = []
    reads: dict[Any, int] = {}
    for op in ops:
        key = _read_key(op)
        if key is not None and key in reads:
            listen.append(reads[key])
            continue
        if key is not None:
            reads[key] = len(unique)
        listen.append(len(unique))
        unique.append(op)
    return unique, listen


def _spread(results: Sequence[Result], listen: Sequence[int]) -> Iterator[Result]:
    """Each call's result: the first caller of a read gets it, the others copies."""
    delivered: set[int] = set()
    for index in listen:
        result = results[index]
        yield _clone(result) if index in delivered else result
        delivered.add(index)


def run_grouped(run: Callable[[list[Op]], list[Result]], ops: Sequence[Op]) -> list[Outcome]:
    """Each call's ``(result, error)``: the calls as one batch, or one by one if it failed."""
    unique, listen = _dedupe(ops)
    try:
        return [(result, None) for result in _spread(run(unique), listen)]
    except Exception as exc:
        if len(ops) == 1:
            return [(None, exc)]
    return [_alone(run, op) for op in ops]


def _alone(run: Callable[[list[Op]], list[Result]], op: Op) -> Outcome:
    try:
        return run([op])[0], None
    except Exception as exc:
        return None, exc


def _held_lock() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


@dataclass
class _Call:
    """A thread's call; ``wake`` is released once to wake it (a lock, not an Event: an
    Event is a condition variable and three Python objects, and every call makes one)."""

    op: Op
    wake: threading.Lock = field(default_factory=_held_lock)
    lead: bool = False
    outcome: Outcome | None = None

    def result(self) -> Result:
        assert self.outcome is not None
        result, error = self.outcome
        if error is not None:
            raise error
        return result


class Coalescer:
    """Group commit of the one-operation calls threads make on one store.

    Args:
        run: Runs a batch and returns its results (the store's own batch).
    """

    def __init__(self, run: Callable[[list[Op]], list[Result]]) -> None:
        self._run = run
        self._mutex = threading.Lock()
        self._waiting: list[_Call] = []
        self._busy = False

    def call(self, op: Op) -> Result:
        """Run ``op`` with whatever other calls are waiting; its result (or its error)."""
        me = _Call(op)
        with self._mutex:
            self._waiting.append(me)
            leads = not self._busy
            self._busy = True
        if not leads:
            me.wake.acquire()  # released by the leader that ran the call, or to hand the lead over
            if not me.lead:
                return me.result()
        self._lead()
        return me.result()

    def _lead(self) -> None:
        with self._mutex:
            group, self._waiting = self._waiting, []
        try:
            outcomes = run_grouped(self._run, [c.op for c in group])
        except BaseException as exc:  # KeyboardInterrupt and the like: nobody waits for ever
            outcomes = [(None, exc)] * len(group)
            raise
        finally:
            for item, outcome in zip(group, outcomes, strict=True):
                item.outcome = outcome
                item.wake.release()
            with self._mutex:
                if self._waiting:
                    self._waiting[0].lead = True
                    self._waiting[0].wake.release()
                else:
                    self._busy = False


@dataclass
class _LoopQueue:
    waiting: list[tuple[Op, asyncio.Future[Result]]] = field(default_factory=list)
    running: list[tuple[Op, asyncio.Future[Result]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class AsyncCoalescer:
    """Group commit of the one-operation calls coroutines make on one store (per event loop).

    Args:
        run: Runs a batch (the store's own async batch).
    """

    def __init__(self, run: Callable[[list[Op]], Awaitable[list[Result]]]) -> None:
        self._run = run
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = \
            weakref.WeakKeyDictionary()
        # the loop of the last call and its queue: a lookup in ``_queues`` makes a weak
        # reference per call (60,000 gathered calls: a tenth of their Python time)
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], _LoopQueue] | None = None

    def call(self, op: Op) -> asyncio.Future[Result]:
        """Queue ``op`` to run with the other calls queued on this loop; the future of its
        result (or its error). Called on the loop's thread, in a coroutine or callback.

        A plain function returning the future, not a coroutine: with 60,000 calls
        gathered at once, every suspended frame less is memory the cyclic collector
        does not walk again and again."""
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            queue = last[1]
        else:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = _LoopQueue()
            self._last = (weakref.ref(loop), queue)
        future: asyncio.Future[Result] = loop.create_future()
        queue.waiting.append((op, future))
        if queue.task is None:
            queue.task = loop.create_task(self._drain(queue))
        return future

    async def _drain(self, queue: _LoopQueue) -> None:
        try:
            while queue.waiting:
                group, queue.waiting = queue.waiting, []
                if any(future.done() for _, future in group):  # cancelled meanwhile
                    group = [(op, future) for op, future in group if not future.done()]
                queue.running = group
                if queue.running:
                    await self._run_group(queue.running)
        finally:
            queue.task = None
            for _, future in (*queue.running, *queue.waiting):  # cancelled: nothing runs them now
                if not future.done():
                    future.cancel()
            queue.running, queue.waiting = [], []

    async def _run_group(self, group: list[tuple[Op, asyncio.Future[Result]]]) -> None:
        ops = [op for op, _ in group]
        unique, listen = _dedupe(ops)
        try:
            results = await self._run(unique)
        except Exception as exc:
            outcomes = [(None, exc)] if len(ops) == 1 else [await self._alone(op) for op in ops]
        else:  # no (result, error) pair per call: 60,000 of them would only feed the collector
            for (_, future), result in zip(group, _spread(results, listen), strict=True):
                if not future.done():
                    future.set_result(result)
            return
        for (_, future), (result, error) in zip(group, outcomes, strict=True):
            if future.done():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

    async def _alone(self, op: Op) -> Outcome:
        try:
            return (await self._run([op]))[0], None
        except Exception as exc:
            return None, exc
