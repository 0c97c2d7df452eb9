"""LangChain's standard suites (``langchain-tests``): the retriever, the key-value store and the
memory tools bound to a user."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import (
    BaseStoreAsyncTests,
    BaseStoreSyncTests,
    RetrieversIntegrationTests,
    ToolsIntegrationTests,
)
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.store.memory import InMemoryStore

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.integrations import HyMemoryKVStore, HyMemoryRetriever, create_memory_tools
from hy_memory_langgraph.testing import HashingEmbeddings

PETS = ["My cat is called Miso.", "My dog is called Rex.", "I had a hamster named Bao.",
        "Our goldfish is called Nemo.", "My sister's parrot is called Kiwi."]


class TestHyMemoryRetriever(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _client(self, tmp_path: Path) -> Iterator[None]:
        self.client = HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(64))
        for text in PETS:
            self.client.add(text, user_id="u1")
        self.client.add("My cat is called Tom.", user_id="u2")
        yield
        self.client.close()

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return HyMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"client": self.client, "user_id": "u1"}

    @property
    def retriever_query_example(self) -> str:
        return "What are my pets called?"


class TestHyMemoryKVStoreSync(BaseStoreSyncTests[bytes]):
    @pytest.fixture
    def kv_store(self, tmp_path: Path) -> Iterator[HyMemoryKVStore]:
        with HyMemoryKVStore(tmp_path / "kv.db") as store:
            yield store

    @pytest.fixture
    def three_values(self) -> tuple[bytes, bytes, bytes]:
        return b"foo", b"\x00\xffbar", "buzz ✓".encode()


class TestHyMemoryKVStoreAsync(BaseStoreAsyncTests[bytes]):
    @pytest.fixture
    async def kv_store(self, tmp_path: Path) -> AsyncIterator[HyMemoryKVStore]:
        with HyMemoryKVStore(tmp_path / "kv.db", namespace=("cache", "v1")) as store:
            yield store

    @pytest.fixture
    def three_values(self) -> tuple[bytes, bytes, bytes]:
        return b"foo", b"bar", b""


class TestHyMemoryKVStoreOnASharedStore(BaseStoreSyncTests[bytes]):
    """One namespace of a store that holds other data: the other data is invisible."""

    @pytest.fixture
    def kv_store(self) -> HyMemoryKVStore:
        shared = InMemoryStore()
        shared.put(("notes",), "foo", {"text": "not a key of the byte store"})
        HyMemoryKVStore(shared, namespace=("other",)).mset([("bar", b"elsewhere")])
        return HyMemoryKVStore(shared, namespace=("bytes",))

    @pytest.fixture
    def three_values(self) -> tuple[bytes, bytes, bytes]:
        return b"1", b"2", b"3"


class _BoundToolSuite:
    """One memory tool bound to user u1 (no ToolRuntime needed), over a real client."""

    index = 0
    example: dict[str, Any] = {}

    @pytest.fixture(autouse=True)
    def _client(self, tmp_path: Path) -> Iterator[None]:
        self.client = HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(64))
        self.client.add("My cat is called Miso.", user_id="u1")
        yield
        self.client.close()

    @property
    def tool_constructor(self) -> BaseTool:
        return create_memory_tools(self.client, user_id="u1")[self.index]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return self.example


class TestSearchToolUnit(_BoundToolSuite, ToolsUnitTests):
    example = {"query": "cat name", "limit": 3}


class TestSearchToolIntegration(_BoundToolSuite, ToolsIntegrationTests):
    example = {"query": "cat name", "limit": 3}


class TestSaveToolIntegration(_BoundToolSuite, ToolsIntegrationTests):
    index, example = 1, {"content": "The user's dog is called Rex."}


class TestForgetToolIntegration(_BoundToolSuite, ToolsIntegrationTests):
    index, example = 2, {"memory_id": "mem_does_not_exist"}
