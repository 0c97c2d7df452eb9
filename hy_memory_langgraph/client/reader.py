"""MemoryReader: a data dir's memories, read without any model.

A reader opens the stores without their vector indexes, resolves no embedding or chat
model and builds no graph: :meth:`~MemoryReader.get`, :meth:`~MemoryReader.list_memories`,
:meth:`~MemoryReader.history`, :meth:`~MemoryReader.stats`,
:meth:`~MemoryReader.export_memories` and :meth:`~MemoryReader.pipeline_log` only read
records. :class:`~hy_memory_langgraph.client.HyMemoryClient` is a reader that also
writes and searches (the same methods, on stores opened with their indexes); the
``hy-memory`` commands that only read open a reader alone, so they load neither LangGraph's
graph runtime nor a model, and never call an embedding server.

Example:
    >>> import tempfile
    >>> from hy_memory_langgraph.config import MemoryConfig
    >>> with MemoryReader(config=MemoryConfig.from_env({}, data_dir=tempfile.mkdtemp())) as reader:
    ...     reader.list_memories("u1")["memories"]
    []
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings
from sqlalchemy.engine import make_url

from hy_memory_langgraph.client.stats import memory_stats
from hy_memory_langgraph.client.stores import StoreFactory, StoreRegistry, workflow_documents_for
from hy_memory_langgraph.client.transfer import export_rows
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import InvalidInputError, ReadOnlyStoreError, StoreError
from hy_memory_langgraph.ids import optional_id, require_id, require_ids
from hy_memory_langgraph.limits import check_user_ids
from hy_memory_langgraph.models import LLMGateway, Mode, resolve_embeddings
from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder
from hy_memory_langgraph.pipeline_log.store import PipelineLogStore
from hy_memory_langgraph.redact.gate import gate
from hy_memory_langgraph.repos.chat import ChatRepository
from hy_memory_langgraph.repos.productivity import ProductivityRepository, parse_id
from hy_memory_langgraph.repos.records import Record
from hy_memory_langgraph.results import HistoryEvent, MemoryDict, MemoryPage
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES, SCENES, validate_scene
from hy_memory_langgraph.services.context import MemoryContext, Stores
from hy_memory_langgraph.store.db.faults import database_faults
from hy_memory_langgraph.workflow.database import WorkflowDatabase

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R", bound="MemoryReader")
#: Largest ``offset + limit`` of :meth:`MemoryReader.list_memories`.
_MAX_LIST_WINDOW = 100_000


def faults(method: Callable[..., T]) -> Callable[..., T]:
    """Database errors that escape a store (a chain, log or workflow database) raised as
    our errors naming the reader's data dir or database."""

    @functools.wraps(method)
    def wrapper(self: MemoryReader, *args: Any, **kwargs: Any) -> T:
        with database_faults(self._where):
            return method(self, *args, **kwargs)

    return wrapper


def in_thread(method: Callable[..., T]) -> Callable[..., Any]:
    """Build the ``a*`` twin of a blocking method (run in a worker thread); the twin calls
    the method by name, so a subclass's override is the one that runs."""
    name = method.__name__

    @functools.wraps(method)
    async def twin(self: MemoryReader, *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(getattr(self, name), *args, **kwargs)

    twin.__doc__ = f"Async twin of :meth:`{name}`."
    return twin


def data_location(config: MemoryConfig, data_dir: str | Path | None, db_url: str | None) -> str:
    """What errors name as the place of the memory: the database (password hidden) or the
    data dir, as ``data_dir`` / ``db_url`` override ``config``."""
    url = db_url or config.db_url
    if url:
        try:
            return make_url(url).render_as_string(hide_password=True)
        except Exception:  # noqa: BLE001 - an invalid URL is reported by the store that opens it
            return "the configured database"
    return str(Path(data_dir).expanduser() if data_dir else config.data_dir)


def located(config: MemoryConfig, data_dir: str | Path | None, db_url: str | None) -> MemoryConfig:
    """``config`` with ``data_dir`` and ``db_url`` in place of its own, when given."""
    if data_dir is not None:
        config = dataclasses.replace(config, data_dir=Path(data_dir).expanduser())
    if db_url is not None:
        config = dataclasses.replace(config, db_url=db_url)
    return config


def _page_bounds(limit: Any, offset: Any) -> tuple[int, int]:
    for name, value, low in (("limit", limit, 1), ("offset", offset, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise InvalidInputError(f"{name} must be an integer >= {low} (got {value!r})")
    if limit > 10_000 or offset + limit > _MAX_LIST_WINDOW:
        raise InvalidInputError(f"limit must be at most 10000 and offset + limit at most {_MAX_LIST_WINDOW} "
                                f"(got limit={limit}, offset={offset}); export the memory to read it all")
    return limit, offset


def _recorder(config: MemoryConfig) -> PipelineRecorder:
    """The pipeline log of a client (kept unless retention is 0 days)."""
    store = None
    if config.pipeline_log_days > 0:
        target, schema = config.store_target(config.pipeline_log_path.stem)
        try:
            store = PipelineLogStore(target, retention_days=config.pipeline_log_days, schema=schema,
                                     sealed=gate(config.redact_secrets), timeout_s=float(config.db_timeout_s))
        except ReadOnlyStoreError:  # a read-only data dir: records go through logging only
            store = None
        except StoreError as exc:  # the log never fails a call: records go through logging only
            logger.warning("the pipeline log cannot be kept (%s); stage records go to logging only. "
                           "Fix or move aside %s, or set MEMORY_PIPELINE_LOG_DAYS=0", exc, target)
            store = None
    return PipelineRecorder(store, keep_text=config.pipeline_log_text)


class MemoryReader:
    """Read a data dir's memories without any model (see the module docstring).

    Args:
        config: A :class:`MemoryConfig`; default read from the environment.
        data_dir: Where every file lives (overrides ``config.data_dir``).
        db_url: A PostgreSQL URL holding every store (overrides ``MEMORY_DB_URL``).
        store_factory: Opens a LangGraph ``BaseStore`` for a store name and an index
            config (always ``None`` here); default :class:`HyMemoryStore` where the
            configuration says.
        embeddings: The embedding model the memory is written with, only to name it in
            the header of :meth:`export_memories`; default the one the environment
            configures, resolved on the first export and never called.

    Example:
        >>> reader = MemoryReader(data_dir="./memory")  # doctest: +SKIP
        >>> reader.list_memories("u1", limit=5)["has_more"]  # doctest: +SKIP
        False
    """

    config: MemoryConfig
    context: MemoryContext
    recorder: PipelineRecorder
    #: The embedding model (a reader's: the one given, or ``None`` for the environment's).
    embeddings: Embeddings | Callable[..., Any] | None

    def __init__(self, *, config: MemoryConfig | None = None, data_dir: str | Path | None = None,
                 db_url: str | None = None, store_factory: StoreFactory | None = None,
                 embeddings: Embeddings | Callable[..., Any] | None = None) -> None:
        config = config or MemoryConfig.from_env()
        self._where = data_location(config, data_dir, db_url)
        self.embeddings = embeddings
        with database_faults(self._where):
            config = located(config, data_dir, db_url)
            self._open(config, StoreRegistry(config, None, None, store_factory), "lite", None)

    def _open(self, config: MemoryConfig, stores: Stores, mode: Mode, llm: LLMGateway | None) -> None:
        """Take the configuration and the stores; open the pipeline log and the workflow
        documents (what every method here reads)."""
        self.config = config
        self.recorder = _recorder(config)
        self.context = MemoryContext(config=config, mode=mode, llm=llm, stores=stores, recorder=self.recorder)
        self._documents = workflow_documents_for(config)

    @faults
    def pipeline_log(self, request_id: str) -> list[dict[str, Any]]:
        """The stages a write or search went through, in order (``[]`` when unknown).

        Each record has ``stage``, ``node``, ``graph``, ``duration_ms``, and when they
        apply ``llm_calls``, ``prompt_tokens``, ``completion_tokens``, ``decision``
        (route and reason, analysis, time range), ``decided`` (the model's operations,
        before they are applied), ``applied``, ``counts``, ``fallback``, ``llm_errors``
        and ``error``. Text is left out unless ``MEMORY_PIPELINE_LOG_TEXT=true``.
        """
        return self.recorder.read(require_id(request_id, "request_id"))

    # -- single memories ------------------------------------------------------------------
    @property
    def _chat(self) -> ChatRepository:
        return self.context.chat_repo

    def _productivity(self, memory_id: str) -> ProductivityRepository | None:
        """The working/coding repository owning ``memory_id`` (``None``: a chat id)."""
        parsed = parse_id(memory_id)
        return None if parsed is None else self.context.productivity_repo(parsed[1])

    def _owned(self, memory_id: str, user_id: str | None) -> Record | None:
        """The memory ``memory_id`` if it exists and, when ``user_id`` is given, is theirs."""
        record = (self._productivity(memory_id) or self._chat).get(memory_id)
        return None if record is None or (user_id is not None and record.user_id != user_id) else record

    @faults
    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryDict | None:
        """One memory (chat memory, working/coding experience or fact) by id, or ``None``.

        With ``user_id`` (any of these methods) only that user's memory is found: an app
        that passes on ids its users send cannot be made to show, change or erase another
        user's memory (another user's id reads as an unknown one).
        """
        record = self._owned(require_id(memory_id, "memory_id"), optional_id(user_id, "user_id"))
        return None if record is None else record.to_dict()

    @faults
    def list_memories(self, user_id: str, *, scene: str | None = None, limit: int = 20,
                      offset: int = 0) -> MemoryPage:
        """A page of ``user_id``'s active memories, most recently updated first.

        Args:
            user_id: Whose memories.
            scene: ``"chat"``, ``"working"`` or ``"coding"``; ``None`` lists every scene
                (working/coding: facts and experiences).
            limit: Memories in the page (1..10,000).
            offset: Memories skipped before the page (``offset + limit`` ≤ 100,000).

        Returns:
            ``user_id``, ``memories`` (each with its ``scene``), ``limit``, ``offset`` and
            ``has_more`` (a next page exists).
        """
        user_id = require_id(user_id, "user_id")
        scenes = list(SCENES) if scene is None else [str(validate_scene(scene))]
        limit, offset = _page_bounds(limit, offset)
        count = offset + limit + 1
        found: list[tuple[str, Record]] = []
        for name in scenes:
            repo, kinds = (self.context.productivity_repo(name), ("fact", "experience")) \
                if name in PRODUCTIVITY_SCENES else (self._chat, ("chat",))
            found += [(name, r) for kind in kinds for r in repo.recent(kind, user_id, count)]
        found.sort(key=lambda pair: (pair[1].updated_at, pair[1].memory_id), reverse=True)
        page = found[offset:offset + limit]
        return {"user_id": user_id, "memories": [{**r.to_dict(), "scene": name} for name, r in page],
                "limit": limit, "offset": offset, "has_more": len(found) > offset + limit}

    @faults
    def history(self, memory_id: str, *, user_id: str | None = None) -> list[HistoryEvent]:
        """Every version of a memory (and of those it superseded), oldest first; with
        ``user_id`` only that user's events."""
        memory_id = require_id(memory_id, "memory_id")
        events = (self._productivity(memory_id) or self._chat).history(memory_id)
        owner = optional_id(user_id, "user_id")
        return events if owner is None else [e for e in events if e.get("user_id") == owner]

    # -- export / stats -------------------------------------------------------------------
    def export_memories(self, user_ids: Sequence[str] | str | None = None) -> Iterator[dict[str, Any]]:
        """Every row of an export of this data dir (or of ``user_ids`` only; a string is
        one user): memories of every scene and status, history, traces, version chain,
        workflow files.

        See :mod:`hy_memory_langgraph.client.transfer` for the rows and what is left out.
        """
        check_user_ids(self.config.limits, user_ids)
        users = None if user_ids is None else require_ids(user_ids, "user_ids")
        model = resolve_embeddings(self.embeddings)  # named in the header, never called
        return export_rows(self.context, model, self.config.workflow_dir, user_ids=users)

    @faults
    def stats(self) -> dict[str, Any]:
        """Counts of this data dir: memories per scene, kind and status, users, files."""
        return memory_stats(self.context, self.config.workflow_dir)

    aget = in_thread(get)
    alist_memories = in_thread(list_memories)
    ahistory = in_thread(history)
    apipeline_log = in_thread(pipeline_log)
    astats = in_thread(stats)

    async def aexport_memories(self, user_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Async twin of :meth:`export_memories`: the rows as a list (read in a worker
        thread; use the sync iterator to stream a very large export)."""
        return await asyncio.to_thread(lambda: list(self.export_memories(user_ids)))

    # -- lifecycle ----------------------------------------------------------------------------
    @faults
    def close(self) -> None:
        """Close every store, the pipeline log and the workflow documents."""
        self.context.stores.close()
        self.recorder.close()
        if isinstance(self._documents, WorkflowDatabase):
            self._documents.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        await asyncio.to_thread(self.close)

    def __enter__(self: R) -> R:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self: R) -> R:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
