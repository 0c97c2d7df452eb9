"""A LangChain retriever over a :class:`HyMemoryClient` (standard retriever contract).

``invoke(query)`` returns at most ``k`` documents. It follows the vector-store
retriever's convention too: ``search_kwargs`` (``k``, ``score_threshold`` and the search
arguments below) given to the constructor or to one call, and ``search_type``
(``"similarity"`` or ``"similarity_score_threshold"``). ``invoke(query, k=2,
scene="coding", workspace_id=..., branch=..., created_after=..., created_before=...,
min_score=...)`` overrides the constructor's values for one call. Productivity scenes
return facts and experiences merged by score (each tagged with ``metadata["layer"]``),
still at most ``k`` in total. A document's ``page_content`` is the memory's text as a
model should see it: invisible characters dropped and chat templates' control tokens
defused (:func:`~hy_memory_langgraph.fences.clean`); ``metadata`` keeps the stored record.
"""

from __future__ import annotations

from typing import Any, Final

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict, Field

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError, MissingContextError
from hy_memory_langgraph.fences import clean
from hy_memory_langgraph.integrations.scope import current_context, resolve_scope

#: What ``search_kwargs`` may hold (``score_threshold`` is ``min_score``'s name there).
_SEARCH_KWARGS: Final = ("k", "score_threshold", "min_score", "scene", "user_id", "workspace_id", "branch",
                         "created_after", "created_before")
_SEARCH_TYPES: Final = ("similarity", "similarity_score_threshold")


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
        search_type: ``"similarity"`` (default) or ``"similarity_score_threshold"``
            (then ``search_kwargs`` must hold ``score_threshold``), as LangChain's
            vector-store retrievers take it.
        search_kwargs: Search arguments as a vector-store retriever takes them: ``k``,
            ``score_threshold`` (= ``min_score``) and any field above, ``created_after``,
            ``created_before``; they override the fields.

    Every field may be overridden for one call: ``invoke(query, k=1, scene="coding")``
    or ``invoke(query, search_kwargs={"k": 1})`` (also ``user_id``, ``workspace_id``,
    ``branch``, ``min_score``, ``created_after``, ``created_before``).

    Example:
        >>> retriever = HyMemoryRetriever(client=client, user_id="u1", search_kwargs={"k": 2})  # doctest: +SKIP
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
    search_type: str = "similarity"
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        config = ensure_config(config)
        return super().invoke(input, config, **self._run_scope(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None,
                      **kwargs: Any) -> list[Document]:
        config = ensure_config(config)
        return await super().ainvoke(input, config, **self._run_scope(config, kwargs))

    def _run_scope(self, config: RunnableConfig, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` (a call's ``search_kwargs`` unfolded into them) with the user,
        workspace and branch filled from the run, then from this retriever's fields and
        ``search_kwargs`` (what the call passes itself is kept)."""
        kwargs = {**_search_kwargs(kwargs.pop("search_kwargs", None) or {}, "search_kwargs of the call"),
                  **{k: v for k, v in kwargs.items() if v is not None}}
        own = _search_kwargs(self.search_kwargs, "HyMemoryRetriever.search_kwargs")
        defaults = {name: own.get(name, getattr(self, name)) for name in ("user_id", "workspace_id", "branch")}
        given = {name: kwargs[name] for name in defaults if kwargs.get(name) is not None}
        scope = resolve_scope(current_context(), config, what="HyMemoryRetriever",
                              defaults={**defaults, **given})
        return {**kwargs, "user_id": scope.user_id, "workspace_id": scope.workspace_id,
                "branch": scope.branch, **given}

    def _search_args(self, query: str, overrides: dict[str, Any]) -> tuple[dict[str, Any], int]:
        own = _search_kwargs(self.search_kwargs, "HyMemoryRetriever.search_kwargs")
        if self.search_type not in _SEARCH_TYPES:
            raise InvalidInputError(f"search_type={self.search_type!r} is not supported: use "
                                    + " or ".join(map(repr, _SEARCH_TYPES)))
        overrides = {**own, **{name: v for name, v in overrides.items() if v is not None}}
        if self.search_type == "similarity_score_threshold" and overrides.get("min_score") is None:
            raise InvalidInputError("search_type='similarity_score_threshold' needs search_kwargs="
                                    "{'score_threshold': ...}")
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


def _search_kwargs(given: Any, where: str) -> dict[str, Any]:
    """``search_kwargs`` checked (known names only) with ``score_threshold`` as ``min_score``."""
    if not isinstance(given, dict):
        raise InvalidInputError(f"{where} must be a dict, e.g. {{'k': 3}} (got {type(given).__name__})")
    unknown = sorted(set(given) - set(_SEARCH_KWARGS))
    if unknown:
        raise InvalidInputError(f"{where} holds {', '.join(map(repr, unknown))}, which the memory search "
                                f"does not take; it takes {', '.join(_SEARCH_KWARGS)}")
    out = {name: v for name, v in given.items() if name != "score_threshold"}
    if given.get("score_threshold") is not None:
        out["min_score"] = given["score_threshold"]
    return out
