"""Concurrent one-operation calls run as one batch (``store/batch/coalesce.py``).

Grouping is forced without timing: the first batch is held inside ``run`` until the other
callers are seen waiting, so they must come back as one group.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from hy_memory_langgraph.embedding_batch import EMBEDDING_OWNERS
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.store import HyMemoryStore
from hy_memory_langgraph.store.batch.coalesce import AsyncCoalescer, Coalescer, run_grouped

NS = ("docs", "u1")


def _wait_until(check: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.001)


class _HeldRun:
    """A batch runner whose first batch waits until ``release`` is set; records the groups."""

    def __init__(self, inner: Callable[[list[Any]], list[Any]]) -> None:
        self.inner = inner
        self.groups: list[int] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, ops: list[Any]) -> list[Any]:
        self.groups.append(len(ops))
        if len(self.groups) == 1:
            self.entered.set()
            assert self.release.wait(60)
        return self.inner(ops)


def _threads(coalescer: Coalescer, ops: list[Any]) -> list[Any]:
    """Call ``coalescer`` from one thread per op; each thread's result or error, in op order."""
    out: list[Any] = [None] * len(ops)

    def work(i: int) -> None:
        try:
            out[i] = coalescer.call(ops[i])
        except Exception as exc:
            out[i] = exc

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(ops))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    return out


def _grouped_after_first(ops: list[Any], inner: Callable[[list[Any]], list[Any]]) -> tuple[_HeldRun, list[Any]]:
    """Run ``ops[0]`` alone (held), let the rest queue behind it, then release: ``(run, results)``."""
    run = _HeldRun(inner)
    coalescer = Coalescer(run)
    results: list[Any] = [None] * len(ops)
    first = threading.Thread(target=lambda: results.__setitem__(0, coalescer.call(ops[0])))
    first.start()
    assert run.entered.wait(60)
    rest: list[Any] = []
    waiter = threading.Thread(target=lambda: rest.extend(_threads(coalescer, ops[1:])))
    waiter.start()
    _wait_until(lambda: len(coalescer._waiting) == len(ops) - 1, "the callers to queue")
    run.release.set()
    first.join(60)
    waiter.join(60)
    results[1:] = rest
    return run, results


def test_calls_waiting_behind_a_batch_run_as_one_batch() -> None:
    ops = [GetOp(("a",), f"k{i}") for i in range(9)]
    run, results = _grouped_after_first(ops, lambda batch: [op.key.upper() for op in batch])
    assert run.groups == [1, 8]
    assert results == [f"K{i}" for i in range(9)]


def test_a_failing_call_fails_alone_and_the_others_get_their_results() -> None:
    def inner(batch: list[Any]) -> list[Any]:
        if any(op.key == "bad" for op in batch):
            raise ValueError("bad key")
        return [op.key for op in batch]

    ops = [GetOp(("a",), "k0"), GetOp(("a",), "k1"), GetOp(("a",), "bad"), GetOp(("a",), "k3")]
    run, results = _grouped_after_first(ops, inner)
    assert run.groups[:2] == [1, 3]  # the group of three failed, then ran one by one
    assert results[:2] == ["k0", "k1"] and results[3] == "k3"
    assert isinstance(results[2], ValueError)


def test_identical_reads_run_once_and_each_caller_gets_its_own_copy() -> None:
    item = Item(value={"tags": ["x"]}, key="k", namespace=("a",),
                created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
    seen: list[int] = []

    def inner(batch: list[Any]) -> list[Any]:
        seen.append(len(batch))
        return [item for _ in batch]

    filtered = SearchOp(("a",), filter={"n": 1}, limit=5)
    outcomes = run_grouped(inner, [GetOp(("a",), "k"), GetOp(("a",), "k"), filtered,
                                   SearchOp(("a",), filter={"n": 1}, limit=5),
                                   SearchOp(("a",), filter={"n": True}, limit=5)])
    assert seen == [3]  # two gets and two searches were the same reads; 1 and True are not
    first, second = outcomes[0][0], outcomes[1][0]
    assert first.value == second.value and first is not second
    second.value["tags"].append("y")
    assert first.value == {"tags": ["x"]}


def test_two_puts_of_one_key_keep_arrival_order(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory(index=None)
    outcomes = run_grouped(store._batch_alone, [PutOp(NS, "k", {"v": 1}), PutOp(NS, "k", {"v": 2}),
                                                PutOp(NS, "gone", {"v": 0}), PutOp(NS, "gone", None)])
    assert [error for _, error in outcomes] == [None] * 4
    assert store.get(NS, "k").value == {"v": 2}
    assert store.get(NS, "gone") is None


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_threads_on_a_store_share_transactions_and_read_their_own_writes(
        open_store: Callable[..., BaseStore], monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(index=None)
    assert isinstance(store, HyMemoryStore)
    batches: list[int] = []
    alone = store._batch_alone

    def counted(ops: list[Any]) -> list[Any]:
        batches.append(len(ops))
        return alone(ops)

    monkeypatch.setattr(store._group, "_run", counted)
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(25):
                store.put(("t", f"w{w}"), f"k{i}", {"i": i, "w": w})
                assert store.get(("t", f"w{w}"), f"k{i}").value == {"i": i, "w": w}  # read-your-writes
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert errors == []
    assert sum(batches) == 8 * 25 * 2
    assert all(len(store.search(("t", f"w{w}"), limit=100)) == 25 for w in range(8))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_gathered_coroutines_run_in_few_batches_with_errors_kept_apart(
        open_store: Callable[..., BaseStore], monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(index=None)
    assert isinstance(store, HyMemoryStore)
    batches: list[int] = []
    alone = store._abatch_alone

    async def counted(ops: list[Any]) -> list[Any]:
        batches.append(len(ops))
        return await alone(ops)

    monkeypatch.setattr(store._agroup, "_run", counted)
    puts = [store.aput(("a", f"u{i % 3}"), f"k{i}", {"i": i}) for i in range(300)]
    bad = store.aput(("a", "u0"), "bad", {"i": object()})  # not JSON: refused by the batch
    results = await asyncio.gather(*puts, bad, return_exceptions=True)
    assert isinstance(results[-1], InvalidInputError) and results[:-1] == [None] * 300
    assert batches[0] == 301 and len(batches) == 302  # one group; it failed, so each ran alone
    assert await store.aget(("a", "u0"), "bad") is None
    batches.clear()
    gets = await asyncio.gather(*(store.aget(("a", f"u{i % 3}"), f"k{i}") for i in range(300)))
    assert [g.value["i"] for g in gets] == list(range(300))
    assert batches == [300]


async def test_a_cancelled_call_does_not_stop_the_others(hy_factory: Callable[..., HyMemoryStore]) -> None:
    store = hy_factory(index=None)
    calls = [asyncio.ensure_future(store.aput(NS, f"k{i}", {"i": i})) for i in range(5)]
    calls[2].cancel()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[2], asyncio.CancelledError)
    assert [store.get(NS, f"k{i}") is not None for i in range(5)] == [True, True, False, True, True]


async def test_async_coalescer_groups_what_queued_while_a_batch_ran() -> None:
    groups: list[int] = []
    gate = asyncio.Event()

    async def run(ops: list[Any]) -> list[Any]:
        groups.append(len(ops))
        if len(groups) == 1:
            await gate.wait()
        return [op.key for op in ops]

    coalescer = AsyncCoalescer(run)
    first = asyncio.ensure_future(coalescer.call(GetOp(("a",), "k0")))
    while not groups:
        await asyncio.sleep(0)
    rest = [asyncio.ensure_future(coalescer.call(GetOp(("a",), f"k{i}"))) for i in range(1, 6)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(first, *rest) == [f"k{i}" for i in range(6)]
    assert groups == [1, 5]


def test_event_loops_in_turn_and_side_by_side_keep_their_own_queues() -> None:
    """Calls of several event loops (one after another, and two at once in two threads)
    each run in their own loop's batches: no call waits on another loop's queue."""
    seen: list[tuple[int, int]] = []  # (loop id, group size)

    async def run(ops: list[Any]) -> list[Any]:
        seen.append((id(asyncio.get_running_loop()), len(ops)))
        await asyncio.sleep(0.001)
        return [op.key for op in ops]

    coalescer = AsyncCoalescer(run)

    async def burst(tag: str) -> list[Any]:
        return await asyncio.gather(*(coalescer.call(GetOp(("a",), f"{tag}{i}")) for i in range(20)))

    for turn in range(3):  # a new loop each time (asyncio.run), the cached one gone
        assert asyncio.run(burst(f"t{turn}-")) == [f"t{turn}-{i}" for i in range(20)]
    results: dict[str, list[Any]] = {}
    threads = [threading.Thread(target=lambda tag=tag: results.__setitem__(tag, asyncio.run(burst(tag))))
               for tag in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == {tag: [f"{tag}{i}" for i in range(20)] for tag in ("x", "y")}
    assert sum(size for _, size in seen) == 100


def test_reads_are_the_same_read_only_with_fields_of_the_same_types() -> None:
    """Equal ops are one read; a field of another type (``True`` for ``1``) keeps an op
    apart from its lookalike."""
    seen: list[list[Any]] = []

    def inner(batch: list[Any]) -> list[Any]:
        seen.append(batch)
        return [None for _ in batch]

    ns_op = ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("a", "*")),), max_depth=1)
    ops = [GetOp(("a",), "k", True), GetOp(("a",), "k", True), GetOp(("a",), "k", 1),
           SearchOp(("a",), limit=1), SearchOp(("a",), limit=1), SearchOp(("a",), limit=True),
           ns_op, ns_op._replace(), ns_op._replace(max_depth=True), ns_op._replace(max_depth=1.0)]
    outcomes = run_grouped(inner, ops)
    assert [error for _, error in outcomes] == [None] * len(ops)
    assert [(type(op).__name__, op[1:]) for op in seen[0]] == [
        ("GetOp", ("k", True)), ("GetOp", ("k", 1)), ("SearchOp", (None, 1, 0, None, True)),
        ("SearchOp", (None, True, 0, None, True)), ("ListNamespacesOp", (1, 100, 0)),
        ("ListNamespacesOp", (True, 100, 0)), ("ListNamespacesOp", (1.0, 100, 0))]


@pytest.mark.parametrize("face", ["sync", "async"])
async def test_calls_made_for_named_users_run_alone(hy_factory: Callable[..., HyMemoryStore],
                                                    monkeypatch: pytest.MonkeyPatch, face: str) -> None:
    store = hy_factory(index=None)
    coalescer: Any = store._group if face == "sync" else store._agroup
    grouped: list[Any] = []
    call = coalescer.call
    monkeypatch.setattr(coalescer, "call", lambda op: grouped.append(op) or call(op))

    async def run(method: str, *args: Any) -> Any:
        if face == "sync":  # a thread, with this context (the named users) copied
            return await asyncio.to_thread(getattr(store, method), *args)
        return await getattr(store, f"a{method}")(*args)

    token = EMBEDDING_OWNERS.set(("alice",))
    try:
        await run("put", NS, "k", {"v": 1})
    finally:
        EMBEDDING_OWNERS.reset(token)
    assert grouped == []
    assert (await run("get", NS, "k")).value == {"v": 1}
    assert [type(op).__name__ for op in grouped] == ["GetOp"]


def _answers(results: list[Any]) -> list[Any]:
    out = []
    for result in results:
        if isinstance(result, list):
            out.append([(r.namespace, r.key, r.value) if hasattr(r, "key") else r for r in result])
        else:
            out.append(None if result is None else (result.namespace, result.key, result.value))
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_grouped_reads_answer_as_alone(open_store: Callable[..., BaseStore], backend: str) -> None:
    """A grouped batch's reads (independent calls: no common snapshot) give what each call
    gets alone, and none sees the group's write."""
    store = open_store(index=None, ttl={"default_ttl": 10.0, "refresh_on_read": True})
    assert isinstance(store, HyMemoryStore)
    for i in range(6):
        store.put((*NS, f"n{i % 2}"), f"k{i}", {"i": i, "even": i % 2 == 0})
    ops: list[Any] = [
        GetOp((*NS, "n0"), "k0"), GetOp((*NS, "n1"), "k1"), GetOp((*NS, "n1"), "gone"),
        SearchOp(NS, None, 2, 1), SearchOp(("docs",), None, 10, 0),
        SearchOp(NS, {"even": True}, 10, 0),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", NS),), max_depth=None),
        ListNamespacesOp(match_conditions=None, max_depth=2),
        PutOp((*NS, "n0"), "k9", {"i": 9}),  # written after the reads: none of them sees it
    ]
    alone = [store.batch([op])[0] for op in ops[:-1]]
    grouped = store._batch_alone(ops, grouped=True)
    assert _answers(grouped[:-1]) == _answers(alone)
    assert [r.key for r in grouped[5]] == ["k4", "k2", "k0"]
    assert store.get((*NS, "n0"), "k9") is not None
