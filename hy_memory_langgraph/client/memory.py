"""HyMemoryClient: the public entry point.

The client resolves models and configuration, opens the stores, and invokes the
write and search graphs. It holds no pipeline logic of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from langchain_core.stores import BaseStore as ByteStore

from hy_memory_langgraph.client.background import Background
from hy_memory_langgraph.client.locks import UserLocks
from hy_memory_langgraph.client.reader import MemoryReader, data_location, located
from hy_memory_langgraph.client.reader import faults as _faults
from hy_memory_langgraph.client.reader import in_thread as _in_thread
from hy_memory_langgraph.client.stores import StoreFactory, StoreRegistry
from hy_memory_langgraph.client.transfer import UNSET, Unset, import_rows
from hy_memory_langgraph.client.workflow import WorkflowMemoryService, oa_context_provider_from_config
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.flows.search.graph import build_search_graph
from hy_memory_langgraph.flows.search.prepare import prepare_search
from hy_memory_langgraph.flows.search.state import SearchArgs
from hy_memory_langgraph.flows.write.graph import build_write_graph
from hy_memory_langgraph.flows.write.prepare import prepare_write
from hy_memory_langgraph.flows.write.state import WriteArgs
from hy_memory_langgraph.ids import optional_id, random_id, require_id
from hy_memory_langgraph.limits import check_content, check_extract
from hy_memory_langgraph.models import (
    BoundedEmbeddings,
    CachedEmbeddings,
    LLMGateway,
    LLMUsage,
    embedding_dims,
    embedding_owners,
    resolve_chat_model,
    resolve_embeddings,
    resolve_mode,
)
from hy_memory_langgraph.redact import redact_text, redact_value
from hy_memory_langgraph.repos.base import version_texts
from hy_memory_langgraph.repos.records import Fact
from hy_memory_langgraph.results import (
    ChatMemoryDict,
    ImportReport,
    MemoryExtractResult,
    MemoryPromptResult,
    QueuedWriteResult,
    SearchResult,
    WriteResult,
)
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES, get_scene
from hy_memory_langgraph.store import IndexCache
from hy_memory_langgraph.store.db.faults import database_faults
from hy_memory_langgraph.store.kv import HyMemoryKVStore
from hy_memory_langgraph.timeutil import coerce_datetime
from hy_memory_langgraph.values import json_object, require_text
from hy_memory_langgraph.workflow.oa_context import OAContextFunction, OAContextProvider

if TYPE_CHECKING:  # a chat model's class loads only when one is given or configured
    from langchain_core.language_models import BaseChatModel


def _afaults(method: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`~hy_memory_langgraph.client.reader.faults` for a coroutine method."""

    @functools.wraps(method)
    async def wrapper(self: HyMemoryClient, *args: Any, **kwargs: Any) -> Any:
        with database_faults(self._where):
            return await method(self, *args, **kwargs)

    return wrapper


def _owners(prepared: Any) -> list[str]:
    """The users a prepared write or search is for (its ids are checked already)."""
    return list(prepared["user_ids"]) if "user_ids" in prepared else [prepared["user_id"]]


class HyMemoryClient(MemoryReader):
    """Long-term memory for agents: ``add`` conversations, ``search`` them later.

    A :class:`~hy_memory_langgraph.client.reader.MemoryReader` (``get``, ``list_memories``,
    ``history``, ``stats``, ``export_memories``, ``pipeline_log``) that also writes,
    searches, edits and erases, with the models it resolves and the graphs it runs.

    Args:
        mode: ``"lite"`` (zero LLM calls), ``"pro"`` (LLM extraction) or ``None``:
            pro when a chat model resolves, else lite.
        llm: A LangChain chat model; default ``ChatOpenAI`` from ``OPENAI_API_KEY``.
        embeddings: A LangChain ``Embeddings``; default OpenAI when configured,
            else the embedded multilingual e5-small (offline).
        config: A :class:`MemoryConfig`; default read from the environment.
        data_dir: Where every file lives (overrides ``config.data_dir``).
        db_url: A PostgreSQL URL holding every store (overrides ``MEMORY_DB_URL``);
            unset, the stores are SQLite files under the data dir.
        store_factory: Opens a LangGraph ``BaseStore`` for a store name
            (``chat_memory``, ``coding_memory_cv``…) and an index config; default
            :class:`HyMemoryStore` where the configuration says.
        oa_context_provider: Supplies ``oaContext`` to :meth:`memory_prompt`
            (an :class:`~hy_memory_langgraph.workflow.OAContextProvider`, or a function
            of the user id); default the
            one configured by ``MEMORY_OA_CONTEXT_PROVIDER`` / ``MEMORY_OA_CONTEXT_FILE``,
            else none.
        embedding_cache: Keep every vector and reuse it, so no text is embedded twice
            (across runs and processes): ``True`` → ``{data_dir}/cache/embeddings.db``,
            a path → a :class:`~hy_memory_langgraph.store.kv.HyMemoryKVStore` there
            (several data dirs may share one), or any LangChain ``BaseStore[str, bytes]``.
            Default ``None``: no cache. Embeddings passed in that are already a
            :class:`~hy_memory_langgraph.models.CachedEmbeddings` are used as they are.

    Example:
        >>> client = HyMemoryClient(mode="lite", data_dir="/tmp/hy-doc")  # doctest: +SKIP
        >>> client.add([{"role": "user", "content": "I love green tea"}], user_id="u1")  # doctest: +SKIP
        >>> client.search("what drink do I like", user_ids=["u1"])["memories"][0]["content"]  # doctest: +SKIP
        'I love green tea'
    """

    def __init__(self, mode: str | None = None, *, llm: BaseChatModel | None = None,
                 embeddings: Embeddings | Callable[..., Any] | None = None,
                 config: MemoryConfig | None = None, data_dir: str | Path | None = None,
                 db_url: str | None = None, store_factory: StoreFactory | None = None,
                 oa_context_provider: OAContextProvider | OAContextFunction | None = None,
                 embedding_cache: bool | str | Path | ByteStore[str, bytes] | None = None) -> None:
        config = config or MemoryConfig.from_env()
        self._where = data_location(config, data_dir, db_url)
        with database_faults(self._where):
            self._setup(mode, llm, embeddings, config, data_dir, db_url, store_factory,
                        oa_context_provider, embedding_cache)

    def _setup(self, mode: str | None, llm: BaseChatModel | None, embeddings: Any, config: MemoryConfig,
               data_dir: str | Path | None, db_url: str | None, store_factory: StoreFactory | None,
               oa_context_provider: Any, embedding_cache: Any) -> None:
        config = located(config, data_dir, db_url)
        chat_model = None if mode == "lite" else resolve_chat_model(llm)
        self.mode = resolve_mode(mode, chat_model)
        self.llm_usage = LLMUsage()
        gateway = LLMGateway(chat_model, self.llm_usage) if self.mode == "pro" and chat_model else None
        self._owned_cache: HyMemoryKVStore | None = None
        self.embeddings = self._with_cache(resolve_embeddings(embeddings), embedding_cache, config)
        self.store_embeddings = BoundedEmbeddings(self.embeddings)  # window-bounded, query LRU
        self.index_cache = IndexCache.from_mb(config.index_cache_mb)
        stores = StoreRegistry(config, self.store_embeddings, embedding_dims(self.embeddings),
                               store_factory, self.index_cache)
        self._open(config, stores, self.mode, gateway)  # config, recorder, context, documents
        self._locks = UserLocks(config)
        self.write_graph = build_write_graph()
        self.search_graph = build_search_graph()
        self.background = Background(self.config, self.context, self.write_graph, self.recorder, self._locks)
        self.context.pending = self.background.pending_turns
        if oa_context_provider is None:
            oa_context_provider = oa_context_provider_from_config(config)
        self.workflow = WorkflowMemoryService(self._documents, mode=self.mode, llm=gateway,
                                              oa_context_provider=oa_context_provider,
                                              recorder=self.recorder)

    # -- write / search ---------------------------------------------------------------
    @_faults
    def add(self, messages: Sequence[Any] | str, scene: str | None = None, *, user_id: str,
            agent_id: str | None = None, session_id: str | None = None,
            workspace_id: str | None = None, branch: str | None = None,
            metadata: dict[str, Any] | None = None, memory_at: Any = None,
            config: RunnableConfig | None = None,
            background: bool = False) -> WriteResult | QueuedWriteResult:
        """Remember a conversation; returns the scene's write result
        (``docs/design.md#return-shapes``).

        ``config`` is passed to the graph run (LangChain callbacks, tags, run names).

        ``background=True`` (pro mode): the write is prepared (validated, normalised,
        redacted) and queued durably in the memory's database, and
        ``{"success": True, "status": "queued", "request_id": …}`` is returned at once; a
        worker runs the write graph on it later (``docs/design.md#background-writes``),
        a search finds its turns meanwhile (marked ``pending``). In lite mode, whose
        write makes no model call, the write is made at once and its result returned.
        """
        args = WriteArgs(request_id=random_id(), messages=messages, scene=scene, user_id=user_id,
                         agent_id=agent_id, session_id=session_id, workspace_id=workspace_id,
                         branch=branch, metadata=metadata, memory_at=memory_at)
        if background and self.mode == "pro":
            return self._enqueue(args)
        return self._run(self.write_graph, args, config)

    @_afaults
    async def aadd(self, messages: Sequence[Any] | str, scene: str | None = None, *, user_id: str,
                   agent_id: str | None = None, session_id: str | None = None,
                   workspace_id: str | None = None, branch: str | None = None,
                   metadata: dict[str, Any] | None = None, memory_at: Any = None,
                   config: RunnableConfig | None = None,
                   background: bool = False) -> WriteResult | QueuedWriteResult:
        """Async twin of :meth:`add`."""
        args = WriteArgs(request_id=random_id(), messages=messages, scene=scene, user_id=user_id,
                         agent_id=agent_id, session_id=session_id, workspace_id=workspace_id,
                         branch=branch, metadata=metadata, memory_at=memory_at)
        if background and self.mode == "pro":
            return await asyncio.to_thread(self._enqueue, args)
        return await self._arun(self.write_graph, args, config)

    def _enqueue(self, args: WriteArgs) -> QueuedWriteResult:
        """Prepare ``args`` as every write is prepared, then queue it (one transaction,
        holding the user's write lock: an erasure waits for it)."""
        prepared = self._prepared(args)
        with self._locked(prepared):
            self.background.enqueue(prepared)
        return {"success": True, "status": "queued", "request_id": prepared["request_id"]}

    @_faults
    def pending(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """The background writes not done yet (of ``user_id``), in queue order: each with
        ``request_id``, ``user_id``, ``session_id``, ``state`` (``queued``, ``running`` or
        ``failed``), ``attempts``, ``error`` (why the last attempt failed), ``queued_at``,
        ``ready_at`` and ``started_at`` (seconds since the epoch)."""
        return self.background.pending(optional_id(user_id, "user_id"))

    @_faults
    def flush(self, timeout: float | None = None, *, retry_failed: bool = False) -> dict[str, Any]:
        """Process every queued background write now (the coalescing delay and retry
        backoffs are skipped) and wait until none is queued or running, or ``timeout``
        seconds passed; for tests, notebooks and shutdown.

        Args:
            timeout: Seconds to wait at most (``None``: until done).
            retry_failed: Queue again, first, the failed writes that were kept.

        Returns:
            ``outstanding`` (writes still queued or running: ``0`` unless the timeout
            passed) and ``failed`` (failed writes; :meth:`pending` says why).
        """
        if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool)
                                    or timeout < 0):
            raise InvalidInputError(f"timeout must be a number of seconds >= 0 or None (got {timeout!r})")
        return self.background.flush(timeout, retry_failed=retry_failed)

    @_faults
    def search(self, query: str | None = None, *, queries: list[str] | None = None,
               scene: str | None = None, search_mode: str = "default",
               user_ids: list[str] | None = None, workspace_id: str | None = None,
               branch: str | None = None, limit: int = 10, min_score: float | None = None,
               created_after: Any = None, created_before: Any = None,
               config: RunnableConfig | None = None) -> SearchResult:
        """Recall memories; the route follows ``docs/design.md#search-routing``.

        ``config`` is passed to the graph run (LangChain callbacks, tags, run names).
        """
        args = SearchArgs(request_id=random_id(), query=query, queries=queries, scene=scene,
                          search_mode=search_mode, user_ids=user_ids, workspace_id=workspace_id,
                          branch=branch, limit=limit, min_score=min_score,
                          created_after=created_after, created_before=created_before)
        return self._run(self.search_graph, args, config)

    @_afaults
    async def asearch(self, query: str | None = None, *, queries: list[str] | None = None,
                      scene: str | None = None, search_mode: str = "default",
                      user_ids: list[str] | None = None, workspace_id: str | None = None,
                      branch: str | None = None, limit: int = 10, min_score: float | None = None,
                      created_after: Any = None, created_before: Any = None,
                      config: RunnableConfig | None = None) -> SearchResult:
        """Async twin of :meth:`search`."""
        args = SearchArgs(request_id=random_id(), query=query, queries=queries, scene=scene,
                          search_mode=search_mode, user_ids=user_ids, workspace_id=workspace_id,
                          branch=branch, limit=limit, min_score=min_score,
                          created_after=created_after, created_before=created_before)
        return await self._arun(self.search_graph, args, config)

    # -- single memories ------------------------------------------------------------------
    @_faults
    def update(self, memory_id: str, content: str, *, metadata: dict[str, Any] | None = None,
               memory_at: Any = None, expected_version: int | None = None,
               user_id: str | None = None) -> ChatMemoryDict:
        """Replace a chat memory's content (a new version, ``UPDATE`` in its history).

        ``memory_at`` stays as it was unless a newer one is given. With
        ``expected_version`` (the ``version`` a :meth:`get` returned) the update happens
        only if nobody changed the memory since, else :class:`ConflictError`: two
        processes doing get-then-update never lose one's change. Working/coding memories
        are records of what happened and are not edited in place: delete them (or add a
        new write) instead.
        """
        check_content(self.config.limits, content, self.config.max_message_bytes, metadata)
        memory_id = require_id(memory_id, "memory_id")
        content = require_text(content, "content")
        if not content.strip():
            raise InvalidInputError("content must be a non-empty string")
        if metadata is not None:
            metadata = json_object(metadata, "metadata")
        if expected_version is not None and (not isinstance(expected_version, int)
                                             or isinstance(expected_version, bool) or expected_version < 1):
            raise InvalidInputError(f"expected_version must be a version number >= 1 (got {expected_version!r})")
        if self._productivity(memory_id) is not None:
            raise InvalidInputError(
                f"memory_id={memory_id!r} is a working/coding memory; those are not edited in "
                "place: use delete(memory_id) and add the corrected trace instead"
            )
        at = coerce_datetime(memory_at, "memory_at")
        if self.config.redact_secrets:
            content, metadata = redact_text(content), redact_value(metadata)
        owner = optional_id(user_id, "user_id")
        updated = None if owner is not None and self._owned(memory_id, owner) is None else self._chat.update(
            memory_id, content.strip(), request_id="manual", memory_at=at, metadata=metadata,
            expected_version=expected_version)  # a memory's user never changes: the check holds
        if updated is None:
            raise InvalidInputError(f"memory_id={memory_id!r} does not exist; use an id returned by add/search")
        return updated.to_dict()

    @_faults
    def delete(self, memory_id: str, *, user_id: str | None = None) -> bool:
        """Erase one memory; ``False`` when it did not exist (or, with ``user_id``, is
        another user's).

        Erasure (``docs/design.md#erasure``): the record, its history content (a
        content-free ``DELETE`` event stays), the trace messages it quotes and the
        retrieval context other memories kept of it are removed; the vector index files
        are rewritten without it.
        """
        memory_id = require_id(memory_id, "memory_id")
        productivity = self._productivity(memory_id)
        repo = productivity or self._chat
        record = self._owned(memory_id, optional_id(user_id, "user_id"))
        if record is None:
            return False
        own_events = (e for e in repo.history(memory_id) if e.get("memory_id") == memory_id)
        texts = list(dict.fromkeys([*record.quoted_texts(), *version_texts(own_events)]))
        if not repo.delete(memory_id, request_id="manual"):
            return False
        traces = self.context.productivity_traces if productivity else self.context.chat_traces
        traces.scrub(record.user_id, texts)
        self.recorder.forget_texts(record.user_id, texts)
        if isinstance(self.embeddings, CachedEmbeddings):
            self.embeddings.forget_texts(texts)
        if isinstance(record, Fact) and get_scene(record.variant).version_chain:
            self.context.chain_store.forget_fact(record.user_id, record.memory_id)
        self.context.stores.flush()
        return True

    @_faults
    def delete_all(self, user_id: str) -> int:
        """Erase everything of ``user_id``: memories, history, traces, version chain and
        workflow memory (every app scope); the vector index files are rewritten.

        Returns the number of memories (chat, experiences, facts) removed.
        """
        user_id = require_id(user_id, "user_id")
        self.background.erase_user(user_id, self._stores())  # stops a run of theirs first
        with self._locks.erasing(user_id):  # waits for the user's writes in flight
            return self._erase(user_id)

    def _erase(self, user_id: str) -> int:
        removed = self._chat.delete_all(user_id)
        self.context.chat_traces.delete_user(user_id)
        for scene in PRODUCTIVITY_SCENES:
            removed += self.context.productivity_repo(scene).delete_all(user_id)
        self.context.productivity_traces.delete_user(user_id)
        self.context.chain_store.delete_user(user_id)
        self.workflow.delete_user(user_id)  # also drops the user's pipeline-log records
        if isinstance(self.embeddings, CachedEmbeddings):
            self.embeddings.forget_owner(user_id)
        self.context.stores.flush()
        return removed

    def _stores(self) -> list[Any]:
        """The memory stores (where background runs keep journal entries)."""
        stores = self.context.stores
        return [stores.chat(), stores.trace(), *(stores.productivity(s) for s in PRODUCTIVITY_SCENES)]

    # -- export / import / stats --------------------------------------------------------------
    @_faults
    def import_memories(self, rows: Iterable[dict[str, Any]], *,
                        user_ids: Sequence[str] | str | None | Unset = UNSET,
                        on_row: Callable[[int], None] | None = None) -> ImportReport:
        """Write the rows of :meth:`export_memories` here; returns counts per row type,
        ``rows`` and ``complete`` (the export's footer was found and matched).

        ``user_ids`` (required) names the users whose rows are written (a string is one
        user); rows of anyone else are counted in ``refused_users``, not written.
        ``user_ids=None`` writes every user of the file (restoring a whole data dir).
        """
        return import_rows(self.context, self.config.workflow_dir, rows, user_ids=user_ids, on_row=on_row)

    @_faults
    def stats(self) -> dict[str, Any]:
        """Counts of this data dir: memories per scene, kind and status, users, files;
        the client's ``mode``; and ``background`` (requests ``queued``, ``running``,
        ``failed``, ``cancelled``)."""
        return {"mode": self.mode, **super().stats(), "background": self.background.counts()}

    # -- workflow memory ---------------------------------------------------------------------
    @_faults
    def memory_prompt(self, user_id: str, workflow_id: str | None = None,
                      memory_app_id: str | None = None) -> MemoryPromptResult:
        """``workflow.memoryPrompt``: see :meth:`WorkflowMemoryService.memory_prompt`."""
        return self.workflow.memory_prompt(user_id, workflow_id, memory_app_id)

    @_faults
    def memory_extract(self, user_id: str, msg_list: list[dict[str, Any]] | None = None,
                       user_message: list[str] | None = None,
                       assistant_message: list[str] | None = None,
                       workflow_id: str | None = None, dynamic_context: dict[str, Any] | None = None,
                       memory_app_id: str | None = None) -> MemoryExtractResult:
        """``workflow.memoryExtract``: see :meth:`WorkflowMemoryService.memory_extract`."""
        check_extract(self.config.limits, msg_list, user_message, assistant_message, dynamic_context)
        return self.workflow.memory_extract(user_id, msg_list, user_message, assistant_message,
                                            workflow_id, dynamic_context, memory_app_id)

    apending = _in_thread(pending)
    aflush = _in_thread(flush)
    aupdate = _in_thread(update)
    adelete = _in_thread(delete)
    adelete_all = _in_thread(delete_all)
    amemory_prompt = _in_thread(memory_prompt)
    amemory_extract = _in_thread(memory_extract)
    aimport_memories = _in_thread(import_memories)

    # -- lifecycle ----------------------------------------------------------------------------
    @_faults
    def close(self) -> None:
        """Stop the background worker (after its current step; a run in progress is
        resumed by the next worker), then close every store, the pipeline log, the workflow
        documents, the user locks and the embedding cache."""
        self.background.close()
        super().close()
        self._locks.close()
        if self._owned_cache is not None:
            self._owned_cache.close()
            self._owned_cache = None

    # -- helpers ------------------------------------------------------------------------------
    def _run(self, graph: Any, args: WriteArgs | SearchArgs, config: RunnableConfig | None) -> Any:
        """Prepare ``args`` and run a memory graph on them, then hand its pipeline log to the
        recorder (also when it raised); the recorder writes it in the background within a
        second. Cached embeddings made meanwhile are referenced under the call's users
        (erasure); a write holds its users' locks (:mod:`.locks`)."""
        users: list[str] = []
        try:
            prepared = self._prepared(args)
            users = _owners(prepared)
            with embedding_owners(users), self._locked(prepared):
                return graph.invoke(prepared, config, context=self.context)["result"]
        finally:
            self.recorder.flush(args["request_id"], users)

    async def _arun(self, graph: Any, args: WriteArgs | SearchArgs, config: RunnableConfig | None) -> Any:
        users: list[str] = []
        try:
            prepared = self._prepared(args)
            users = _owners(prepared)
            with embedding_owners(users), self._locked(prepared):
                return (await graph.ainvoke(prepared, config, context=self.context))["result"]
        finally:
            self.recorder.flush(args["request_id"], users)  # cheap: written off this path

    def _locked(self, prepared: Any) -> contextlib.AbstractContextManager[None]:
        """A write holds its user's lock shared (an erasure of the user waits for it)."""
        return self._locks.writing(_owners(prepared)) if "msgs" in prepared else contextlib.nullcontext()

    def _prepared(self, args: WriteArgs | SearchArgs) -> Any:
        """What a graph run is given: ``args`` validated, normalised and with its secrets
        replaced (unless redaction is off), so no callback or tracer of the run sees one
        (``docs/design.md#secrets``) and no node prepares them again."""
        if "messages" in args:
            return prepare_write(args, self.config)  # type: ignore[arg-type]
        return prepare_search(args, self.config)  # type: ignore[arg-type]

    def _with_cache(self, embeddings: Embeddings, cache: Any, config: MemoryConfig) -> Embeddings:
        """``embeddings`` wrapped in a :class:`CachedEmbeddings` as ``cache`` asks."""
        if cache is None or cache is False or isinstance(embeddings, CachedEmbeddings):
            return embeddings
        if cache is True:
            cache = config.data_dir / "cache" / "embeddings.db"
        if isinstance(cache, (str, Path)):
            Path(cache).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._owned_cache = HyMemoryKVStore(Path(cache).expanduser(), namespace=("embeddings",))
            cache = self._owned_cache
        if not isinstance(cache, ByteStore):
            raise InvalidInputError(
                f"embedding_cache={cache!r} is invalid: pass True (a cache in the data dir), "
                "a file path, or a LangChain BaseStore[str, bytes]")
        return CachedEmbeddings(embeddings, cache)
