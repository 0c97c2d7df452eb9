"""A LangChain retriever over a :class:`HyMemoryClient`."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from hy_memory_langgraph.client import HyMemoryClient

__all__ = ["HyMemoryRetriever"]


def _documents(result: dict[str, Any]) -> list[Document]:
    if result["scene"] == "chat":
        return [Document(page_content=m["content"], id=m["memory_id"],
                         metadata={k: v for k, v in m.items() if k != "content"})
                for m in result["memories"]]
    docs = [Document(page_content=f"{f.get('subject', '')}: {f.get('statement', '')}".strip(": "),
                     id=f["memory_id"], metadata={"layer": "fact", **f})
            for f in result["facts"]]
    docs += [Document(page_content=f"{e.get('task', '')}\n{e.get('solution', '')}".strip(),
                      id=e["memory_id"], metadata={"layer": "experience", **e})
             for e in result["experiences"]]
    return docs


class HyMemoryRetriever(BaseRetriever):
    """Retrieve one user's memories as LangChain ``Document``s (zero LLM calls).

    Args:
        client: The memory client.
        user_id: Whose memories are searched.
        scene: ``"chat"`` (default), ``"working"`` or ``"coding"``; productivity scenes
            return facts then experiences, each tagged with ``metadata["layer"]``.
        k: How many memories (per layer for productivity scenes).

    Example:
        >>> retriever = HyMemoryRetriever(client=client, user_id="u1", k=4)  # doctest: +SKIP
        >>> retriever.invoke("what is my cat called?")[0].page_content  # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: HyMemoryClient
    user_id: str
    scene: str = "chat"
    k: int = 4
    workspace_id: str | None = None
    branch: str | None = None

    def _search_args(self, query: str) -> dict[str, Any]:
        return {"query": query, "scene": self.scene, "user_ids": [self.user_id], "limit": self.k,
                "workspace_id": self.workspace_id, "branch": self.branch}

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return _documents(self.client.search(**self._search_args(query)))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return _documents(await self.client.asearch(**self._search_args(query)))
