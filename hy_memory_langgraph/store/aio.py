"""AsyncHyMemoryStore: the store with LangGraph's async-store conventions.

LangGraph's ``AsyncSqliteStore`` / ``AsyncPostgresStore`` make ``setup``, the TTL
sweep and the sweeper's start/stop coroutines, and refuse synchronous calls made
on the event loop's own thread (a blocking database call there would stall every
other task). :class:`AsyncHyMemoryStore` is the same store under those rules, so
code written for those classes runs unchanged; :class:`HyMemoryStore` itself keeps
both faces usable anywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import Op, Result

from hy_memory_langgraph.store.store import HyMemoryStore


class AsyncHyMemoryStore(HyMemoryStore):
    """:class:`HyMemoryStore` for async code, shaped like LangGraph's async stores.

    ``setup``, ``sweep_ttl``, ``start_ttl_sweeper`` and ``stop_ttl_sweeper`` are
    coroutines; ``aput``/``aget``/``asearch``/... work as on the parent class. A
    synchronous call (``put``, ``get``, ``batch``...) made on the thread running an
    event loop raises :class:`asyncio.InvalidStateError`; from another thread it runs.

    Example:
        >>> import asyncio, os, tempfile
        >>> async def main() -> str:
        ...     path = os.path.join(tempfile.mkdtemp(), "memory.db")
        ...     async with AsyncHyMemoryStore.from_conn_string(path) as store:
        ...         await store.setup()
        ...         await store.aput(("prefs",), "theme", {"value": "dark"})
        ...         return (await store.aget(("prefs",), "theme")).value["value"]
        >>> asyncio.run(main())
        'dark'
    """

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        _refuse_on_loop_thread("batch")
        return super().batch(ops)

    async def setup(self) -> None:  # type: ignore[override]
        """Create or migrate the tables (done on open already; safe to repeat)."""
        await self.asetup()

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        """Delete expired items; returns how many."""
        return await asyncio.get_running_loop().run_in_executor(None, self._sweep)

    async def start_ttl_sweeper(  # type: ignore[override]
        self, sweep_interval_minutes: float | None = None
    ) -> Any:
        """Start the background sweeper (a thread); returns its future."""
        return super().start_ttl_sweeper(sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """Stop the background sweeper; ``True`` when it is not running any more."""
        return await asyncio.get_running_loop().run_in_executor(None, self._stop_sweeper, timeout)


def _refuse_on_loop_thread(method: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise asyncio.InvalidStateError(
        f"AsyncHyMemoryStore.{method}() was called synchronously on the event loop's thread, "
        "where it would block every other task: await the async method instead (aput, aget, "
        "asearch, adelete, alist_namespaces, abatch), or call it from another thread, or use "
        "HyMemoryStore")
