"""Collect the stage records of each request and write them soon after the request ends.

Records are buffered per request id (a request runs in one graph invocation) and
emitted through the ``hy_memory_langgraph.pipeline_log.recorder`` logger as they happen (INFO
for stages, WARNING for fallbacks). :meth:`PipelineRecorder.flush` marks a request as
ended; the records of every request ended within ``flush_delay`` seconds (1 s) are
written together, in one transaction, by a background timer (or by :meth:`close`), so
no ``add`` or ``search`` waits for the log's database. :meth:`PipelineRecorder.read`
sees records before they are written; a process killed hard loses at most the last
``flush_delay`` seconds of log.

Example:
    >>> import tempfile, os
    >>> from hy_memory_langgraph.pipeline_log.meter import StageMeter
    >>> rec = PipelineRecorder(PipelineLogStore(os.path.join(tempfile.mkdtemp(), "l.db"),
    ...                                         retention_days=1), keep_text=False)
    >>> rec.stage("r1", graph="memory_write", node="route", duration_ms=1.0,
    ...           trace=StageMeter(), update={"route": "chat"})
    >>> rec.flush("r1")
    >>> [r["stage"] for r in rec.read("r1")]
    ['scene_route']
    >>> rec.close()
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

from hy_memory_langgraph.pipeline_log.meter import StageMeter
from hy_memory_langgraph.pipeline_log.store import PipelineLogStore
from hy_memory_langgraph.pipeline_log.summary import summarize

logger = logging.getLogger(__name__)

#: Stage name of each node (``graph:node``); other nodes are logged under their own name.
_STAGE_NAMES: Final[dict[str, str]] = {
    "memory_write:route": "scene_route", "memory_write:judge_scene": "scene_judge",
    "memory_write:strip_tools": "strip_tools", "memory_write:store_turns": "store",
    "chat_write:store_turns": "store", "chat_write:extract_facts": "extract",
    "chat_write:gather_candidates": "candidates", "chat_write:reconcile": "reconcile",
    "chat_write:apply_decisions": "store", "chat_write:finish_chat": "finish",
    "productivity_write:prepare": "prepare", "productivity_write:lite_fact": "extract",
    "productivity_write:extract": "extract",
    "productivity_write:gather_experience_candidates": "experience_candidates",
    "productivity_write:reconcile_experiences": "experience_reconcile",
    "productivity_write:apply_experiences": "experience_store",
    "productivity_write:gather_fact_candidates": "fact_candidates",
    "productivity_write:reconcile_fact": "fact_reconcile",
    "productivity_write:summarize_progress": "progress_summary",
    "productivity_write:insert_fact": "fact_store", "productivity_write:record_chain": "chain_record",
    "productivity_write:finish": "finish",
    "memory_search:route": "search_route", "memory_search:analyze_query": "rewrite_time_range",
    "memory_search:chat_search": "retrieval",
    "productivity_search:search_facts": "retrieval", "productivity_search:search_experiences":
        "retrieval_experiences",
    "productivity_search:chain_block": "chain_decorate", "productivity_search:finish": "finish",
    "workflow_extract:validate_input": "normalise", "workflow_extract:extract_llm": "extract",
    "workflow_extract:extract_lite": "extract", "workflow_extract:route_dimensions": "route",
    "workflow_extract:merge_and_save": "store",
    "memory_background:queue": "queue",
}


class PipelineRecorder:
    """Stage records of running requests, written per request.

    Args:
        store: Where records are kept (``None``: emitted through logging only).
        keep_text: Keep prompt and message text in the records.
    """

    def __init__(self, store: PipelineLogStore | None, *, keep_text: bool,
                 flush_delay: float = 1.0) -> None:
        self.store = store
        self.keep_text = keep_text
        self.flush_delay = flush_delay
        self._buffers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._ended: list[dict[str, Any]] = []
        self._users: dict[str, Sequence[str]] = {}  # of the ended requests, by request id
        self._timer: threading.Timer | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # a write and a read of the log never interleave

    def stage(self, request_id: str, *, graph: str, node: str, duration_ms: float,
              trace: StageMeter, update: dict[str, Any] | None, error: str | None = None) -> None:
        """Record one finished (or failed) node of ``request_id``."""
        record: dict[str, Any] = {
            "request_id": request_id, "stage": _STAGE_NAMES.get(f"{graph}:{node}", node),
            "graph": graph, "node": node, "ts": time.time(),
            "duration_ms": round(duration_ms, 3),
            **trace.counts(),
            **summarize(update, keep_text=self.keep_text),
        }
        if trace.fallbacks:
            record["fallback"] = [*record.get("fallback", []), *trace.fallbacks]
        if error:
            record["error"] = error
        with self._lock:
            buffer = self._buffers[request_id]
            record["seq"] = len(buffer)
            buffer.append(record)
        self._emit(record)

    def flush(self, request_id: str, users: Sequence[str] = ()) -> None:
        """``request_id`` (a request of ``users``) ended: its records are written within
        ``flush_delay`` seconds, in one transaction with those of the other requests ended
        meanwhile."""
        with self._lock:
            records = self._buffers.pop(request_id, [])
            if self.store is None or not records:
                return
            self._ended.extend(records)
            if self.keep_text:  # only records with text hold anything of the user to erase
                self._users[request_id] = list(users)
            if self._timer is None and not self._closed:
                self._timer = threading.Timer(self.flush_delay, self.write_pending)
                self._timer.daemon = True
                self._timer.start()

    def write_pending(self) -> None:
        """Write the records of every ended request now (one transaction)."""
        with self._write_lock:
            with self._lock:
                records, self._ended, self._timer = self._ended, [], None
                users, self._users = self._users, {}
            if self.store is not None and records:
                try:
                    self.store.write(records, users)
                except Exception as exc:  # diagnostics: never fail a request, nor kill the timer
                    logger.warning("pipeline log: %d records not written (%s: %s)", len(records),
                                type(exc).__name__, exc)

    def read(self, request_id: str) -> list[dict[str, Any]]:
        """Every record of ``request_id``: written ones, then any not written yet."""
        with self._write_lock:
            written = self.store.read(request_id) if self.store is not None else []
            with self._lock:
                pending = [r for r in self._ended if r["request_id"] == request_id]
                pending += self._buffers.get(request_id, [])
        return [*written, *pending]

    def forget_user(self, user_id: str) -> int:
        """Erasure: drop every record of ``user_id``'s requests, those not written yet
        included; returns how many went."""
        self.write_pending()
        with self._write_lock:
            return self.store.forget_user(user_id) if self.store is not None else 0

    def forget_texts(self, user_id: str, texts: Sequence[str]) -> int:
        """Erasure of one memory: drop the records of ``user_id``'s requests that quote one
        of its ``texts``, those not written yet included; returns how many went."""
        self.write_pending()
        with self._write_lock:
            return self.store.forget_texts(user_id, texts) if self.store is not None else 0

    def close(self) -> None:
        """Write what is pending and release the log's database."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.write_pending()
        if self.store is not None:
            self.store.close()

    @staticmethod
    def _emit(record: dict[str, Any]) -> None:
        # a fallback is worth a warning; an error propagates to the caller anyway
        level = logging.WARNING if record.get("fallback") else logging.INFO
        if logger.isEnabledFor(level):
            logger.log(level, "request %s %s (%s) %.1f ms%s", record["request_id"], record["stage"],
                       record["node"], record["duration_ms"],
                       f" fallback={record['fallback']}" if record.get("fallback") else "",
                       extra={"hy_memory_stage": record})
