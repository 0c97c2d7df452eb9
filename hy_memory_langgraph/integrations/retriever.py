"""A LangChain retriever over a :class:`HyMemoryClient` (standard retriever contract).

``invoke(query)`` returns at most ``k`` documents; ``invoke(query, k=2, scene="coding",
workspace_id=..., branch=..., created_after=..., created_before=..., min_score=...)``
overrides the constructor's values for one call. Productivity scenes return facts and
experiences merged by score (each tagged with ``metadata["layer"]``), still at most
``k`` in total. A document's ``page_content`` is the memory's text as a model should see
it: invisible characters dropped and chat templates' control tokens defused
(:func:`~hy_memory_langgraph.fences.clean`); ``metadata`` keeps the stored record.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError, MissingContextError
from hy_memory_langgraph.fences import clean
from hy_memory_langgraph.integrations.scope import current_context, resolve_scope

__all__ = ["HyMemoryRetriever", "result_documents"]


def _score(record: dict[str, Any]) -> float:
    score = record.get("score")
    return float(score) if isinstance(score, (int, float)) else float("-inf")


def result_documents(result: dict[str, Any], k: int | None = None) -> list[Document]:
    """The documents of one ``client.search`` result, best first, at most ``k``.

    Chat memories keep their order; productivity facts and experiences are merged by
    score (a stable sort, so facts win ties) and tagged with ``metadata["layer"]``.
    """
    if result["scene"] == "chat":
        docs = [Document(page_content=clean(m["content"]), id=m["memory_id"],
                         metadata={key: v for key, v in m.items() if key != "content"})
                for m in result["memories"]]
        return docs if k is None else docs[:k]
    ranked: list[tuple[float, Document]] = []
    for fact in result["facts"]:
        text = f"{fact.get('subject', '')}: {fact.get('statement', '')}".strip(": ")
        ranked.append((_score(fact), Document(page_content=clean(text), id=fact["memory_id"],
                                              metadata={"layer": "fact", **fact})))
    for exp in result["experiences"]:
        text = f"{exp.get('task', '')}\n{exp.get('solution', '')}".strip()
        ranked.append((_score(exp), Document(page_content=clean(text), id=exp["memory_id"],
                                             metadata={"layer": "experience", **exp})))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    docs = [doc for _, doc in ranked]
    return docs if k is None else docs[:k]


class HyMemoryRetriever(BaseRetriever):
    """Retrieve one user's memories as LangChain ``Document``s (zero LLM calls).

    Args:
        client: The memory client.
        user_id: The user this retriever is for (a call may name its own:
            ``invoke(q, user_id=...)``); ``None`` follows the run (its runtime context or
            ``config["configurable"]``). A run naming another user raises
            :class:`~hy_memory_langgraph.errors.ForeignUserError`; no user anywhere
            raises :class:`~hy_memory_langgraph.errors.MissingContextError` (one rule for
            every face: :mod:`~hy_memory_langgraph.integrations.scope`). The run's
            ``workspace_id`` and ``branch`` come before this retriever's, a call's before
            both.
        scene: ``"chat"`` (default), ``"working"`` or ``"coding"``; productivity scenes
            return facts and experiences, each tagged with ``metadata["layer"]``.
        k: How many documents at most (any scene).
        workspace_id: Productivity scope (exact match), optional.
        branch: Productivity scope within ``workspace_id``, optional.
        min_score: Drop hits scoring below this, optional.

    Every field may be overridden for one call: ``invoke(query, k=1, scene="coding")``
    (also ``user_id``, ``workspace_id``, ``branch``, ``min_score``, ``created_after``,
    ``created_before``).

    Example:
        >>> retriever = HyMemoryRetriever(client=client, user_id="u1", k=4)  # doctest: +SKIP
        >>> retriever.invoke("what is my cat called?", k=1)[0].page_content  # doctest: +SKIP
        'My cat is called Miso'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: HyMemoryClient
    user_id: str | None = None
    scene: str = "chat"
    k: int = 4
    workspace_id: str | None = None
    branch: str | None = None
    min_score: float | None = None

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        config = ensure_config(config)
        return super().invoke(input, config, **self._run_scope(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None,
                      **kwargs: Any) -> list[Document]:
        config = ensure_config(config)
        return await super().ainvoke(input, config, **self._run_scope(config, kwargs))

    def _run_scope(self, config: RunnableConfig, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the user, workspace and branch filled from the run, then from
        this retriever's fields (what the call passes itself is kept)."""
        defaults = {"user_id": self.user_id, "workspace_id": self.workspace_id, "branch": self.branch}
        given = {name: kwargs[name] for name in defaults if kwargs.get(name) is not None}
        scope = resolve_scope(current_context(), config, what="HyMemoryRetriever",
                              defaults={**defaults, **given})
        return {**kwargs, "user_id": scope.user_id, "workspace_id": scope.workspace_id,
                "branch": scope.branch, **given}

    def _search_args(self, query: str, overrides: dict[str, Any]) -> tuple[dict[str, Any], int]:
        k = self.k if overrides.get("k") is None else overrides["k"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k={k!r} is invalid: pass a positive integer number of documents")
        chosen = {name: overrides[name] if overrides.get(name) is not None else getattr(self, name)
                  for name in ("user_id", "scene", "workspace_id", "branch", "min_score")}
        if chosen["user_id"] is None:
            raise MissingContextError("HyMemoryRetriever needs user_id: build it with user_id=..., or "
                                      "pass one in the run's context or config['configurable']",
                                      field="user_id")
        args = {"query": query, "scene": chosen["scene"], "user_ids": [chosen["user_id"]],
                "limit": k, "workspace_id": chosen["workspace_id"], "branch": chosen["branch"],
                "min_score": chosen["min_score"], "created_after": overrides.get("created_after"),
                "created_before": overrides.get("created_before")}
        return args, k

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, scene: str | None = None,
                                user_id: str | None = None, workspace_id: str | None = None,
                                branch: str | None = None, min_score: float | None = None,
                                created_after: Any = None, created_before: Any = None) -> list[Document]:
        args, limit = self._search_args(query, locals())
        return result_documents(self.client.search(**args), limit)

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None, scene: str | None = None,
                                       user_id: str | None = None, workspace_id: str | None = None,
                                       branch: str | None = None, min_score: float | None = None,
                                       created_after: Any = None,
                                       created_before: Any = None) -> list[Document]:
        args, limit = self._search_args(query, locals())
        return result_documents(await self.client.asearch(**args), limit)
