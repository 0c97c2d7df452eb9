"""The key-value view keeps to its own namespace, on every backend."""

from __future__ import annotations

from collections.abc import Callable

from langgraph.store.base import BaseStore

from hy_memory_langgraph.store import HyMemoryKVStore


def _pair(open_store: Callable[..., BaseStore]) -> tuple[HyMemoryKVStore, HyMemoryKVStore]:
    store = open_store(index=None)
    return HyMemoryKVStore(store, namespace=("cache",)), HyMemoryKVStore(store, namespace=("cache", "v1"))


def test_an_outer_map_does_not_see_the_keys_of_an_inner_one(open_store: Callable[..., BaseStore]) -> None:
    outer, inner = _pair(open_store)
    inner.mset([("k", b"inner"), ("kk", b"inner2")])
    outer.mset([("o", b"outer")])
    assert sorted(outer.yield_keys()) == ["o"] and sorted(outer.yield_keys(prefix="k")) == []
    assert outer.mget(["k"]) == [None]
    outer.mdelete(["k"])
    assert inner.mget(["k"]) == [b"inner"] and sorted(inner.yield_keys()) == ["k", "kk"]


async def test_the_async_view_keeps_to_its_namespace_too(open_store: Callable[..., BaseStore]) -> None:
    outer, inner = _pair(open_store)
    await inner.amset([("k", b"inner")])
    assert [k async for k in outer.ayield_keys()] == []
    assert [k async for k in inner.ayield_keys(prefix="k")] == ["k"]


def test_paging_skips_inner_keys_without_losing_own_ones(open_store: Callable[..., BaseStore]) -> None:
    outer, inner = _pair(open_store)
    inner.mset([(f"i{n:04d}", b"x") for n in range(1500)])
    outer.mset([(f"o{n:04d}", b"y") for n in range(700)])
    assert sorted(outer.yield_keys()) == [f"o{n:04d}" for n in range(700)]
