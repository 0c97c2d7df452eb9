"""Cached embeddings over HyMemoryKVStore: no text embedded twice, across clients and processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_classic.embeddings import CacheBackedEmbeddings
from langchain_core.embeddings import Embeddings
from langchain_core.stores import InMemoryByteStore

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.integrations import CachedEmbeddings, HyMemoryKVStore
from hy_memory_langgraph.testing import HashingEmbeddings

REPO = Path(__file__).resolve().parents[2]


class CountingEmbeddings(HashingEmbeddings):
    """Hashing embeddings that count the texts they embed."""

    def __init__(self) -> None:
        super().__init__(dims=64)
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.texts.append(text)
        return super().embed_query(text)


def test_vectors_are_exact_and_embedded_once(tmp_path: Path) -> None:
    base = CountingEmbeddings()
    with HyMemoryKVStore(tmp_path / "cache.db") as kv:
        cached = CachedEmbeddings(base, kv)
        first = cached.embed_documents(["a", "b", "a"])
        assert first == base.embed_documents(["a", "b", "a"])
        base.texts.clear()
        assert cached.embed_documents(["b", "c"]) == HashingEmbeddings(64).embed_documents(["b", "c"])
        assert base.texts == ["c"] and (cached.hits, cached.misses) == (1, 3)
        # Query vectors live in their own key space.
        cached.embed_query("a")
        cached.embed_query("a")
        assert base.texts == ["c", "a"]
        assert cached.dims == 64


async def test_async_path_shares_the_cache() -> None:
    base = CountingEmbeddings()
    cached = CachedEmbeddings(base, InMemoryByteStore())
    await cached.aembed_documents(["x", "y"])
    assert await cached.aembed_documents(["y", "x"]) == HashingEmbeddings(64).embed_documents(["y", "x"])
    assert await cached.aembed_query("x") == await cached.aembed_query("x")
    assert base.texts == ["x", "y", "x"]


def test_float64_vectors_round_trip_exactly() -> None:
    class Precise(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[0.1, 1 / 3, 2.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [0.1, 1 / 3, 2.0]

    cached = CachedEmbeddings(Precise(), InMemoryByteStore())
    cached.embed_documents(["t"])
    assert cached.embed_documents(["t"]) == [[0.1, 1 / 3, 2.0]] and cached.hits == 1


def test_two_clients_share_one_cache_file(tmp_path: Path) -> None:
    base = CountingEmbeddings()
    cache = tmp_path / "shared-cache.db"
    results = []
    for run in ("one", "two"):
        with HyMemoryClient(mode="lite", data_dir=tmp_path / run, embeddings=base,
                            embedding_cache=cache) as client:
            client.add("I adopted a grey cat called Miso", user_id="u1")
            results.append([(m["content"], m["score"]) for m in
                            client.search("cat name", user_ids=["u1"])["memories"]])
            if run == "one":
                embedded = len(base.texts)
    assert results[0] == results[1]
    assert len(base.texts) == embedded  # the second client embedded nothing


def test_embedding_cache_true_lives_in_the_data_dir(tmp_path: Path) -> None:
    with HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(64),
                        embedding_cache=True) as client:
        client.add("hello there", user_id="u1")
        assert isinstance(client.embeddings, CachedEmbeddings)
    assert (tmp_path / "cache" / "embeddings.db").is_file()


def test_bad_cache_argument_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="embedding_cache"):
        HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(64), embedding_cache=42)


def test_langchains_cache_backed_embeddings_accepts_the_kv_store(tmp_path: Path) -> None:
    base = CountingEmbeddings()
    with HyMemoryKVStore(tmp_path / "lc.db") as kv:
        cached = CacheBackedEmbeddings.from_bytes_store(base, kv, namespace="hashing64",
                                                        key_encoder="sha256")
        cached.embed_documents(["one", "two"])
        cached.embed_documents(["two", "three"])
        assert base.texts == ["one", "two", "three"]
        assert len(list(kv.yield_keys(prefix="hashing64"))) == 3


def test_a_second_process_embeds_nothing(tmp_path: Path) -> None:
    texts = ["alpha", "beta", "gamma"]
    with HyMemoryKVStore(tmp_path / "p.db") as kv:
        cached = CachedEmbeddings(HashingEmbeddings(64), kv)
        vectors = cached.embed_documents(texts)
        assert (cached.hits, cached.misses) == (0, 3)
    script = textwrap.dedent(f"""
        import json
        from hy_memory_langgraph.integrations import CachedEmbeddings, HyMemoryKVStore
        from hy_memory_langgraph.testing import HashingEmbeddings
        with HyMemoryKVStore({str(tmp_path / 'p.db')!r}) as kv:
            cached = CachedEmbeddings(HashingEmbeddings(64), kv)
            vectors = cached.embed_documents({texts!r})
            print(json.dumps([cached.hits, cached.misses, vectors]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=120).stdout
    hits, misses, again = json.loads(out)
    assert (hits, misses) == (3, 0) and again == vectors
