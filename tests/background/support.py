"""Helpers of the background-write tests: stub answers per stage, clients on the test's
backend, and a worker process that kills itself at a chosen node boundary.

The worker processes come from a ``forkserver`` that preloaded the package, so each is a
cheap fork of a clean single-threaded process (no import, no inherited thread).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hy_memory_langgraph.testing import HashingEmbeddings

DIMS = 64
NODE_WRAPPER = "hy_memory_langgraph.services.stages"


def chat_replies(facts: list[dict[str, Any]], operations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Stage answers of a chat write: ``facts`` extracted, ``operations`` reconciled."""
    return {"chat_extract": {"facts": facts}, "chat_reconcile": {"operations": operations or []}}


def fact(content: str, subject: str = "user") -> dict[str, Any]:
    return {"content": content, "subject": subject, "owner": "user"}


def chat_model(base_url: str) -> Any:
    """The real ``ChatOpenAI`` client against the loopback stub (no retries of its own:
    a failure reaches the run)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="stub-model", base_url=base_url, api_key="test", max_retries=0, timeout=30)


# ---------------------------------------------------------------- the dying worker


def _dying(node: str, when: str, event: Path) -> Callable[..., Any]:
    """``services.stages.recorded`` that kills the process ``before`` / ``after`` ``node``
    (``after``: its store writes done, its end not yet checkpointed)."""
    import hy_memory_langgraph.services.stages as stages

    recorded = stages.recorded

    def kill() -> None:
        event.write_text(f"{node}:{when}")
        os.kill(os.getpid(), signal.SIGKILL)

    def wrap(graph: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        inner = recorded(graph, name, fn)
        if name != node:
            return inner

        def node_fn(state: Any, runtime: Any) -> Any:
            if when == "before":
                kill()
            update = inner(state, runtime)
            kill()
            return update

        node_fn.__name__ = name
        return node_fn

    return wrap


def worker_main(settings: dict[str, Any]) -> None:
    """A ``hy-memory worker --drain`` of a test: pro client on the stub, optionally
    killed at ``settings["kill"] = (node, "before" | "after")``."""
    import hy_memory_langgraph.services.stages as stages
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.config import MemoryConfig

    os.environ.update(settings.get("env") or {})
    if settings.get("kill"):
        node, when = settings["kill"]
        stages.recorded = _dying(node, when, Path(settings["event"]))  # type: ignore[assignment]
    config = MemoryConfig.from_env({}, data_dir=settings["data_dir"], background_delay_s=3600,
                                   db_url=settings.get("db_url"), db_schema_prefix=settings.get("prefix"))
    client = HyMemoryClient(mode="pro", llm=chat_model(settings["base_url"]), config=config,
                            embeddings=HashingEmbeddings(dims=DIMS))
    try:
        client.background.serve(drain=True)
    finally:
        client.close()


_CONTEXT: Any = None


def run_worker(settings: dict[str, Any], timeout: float = 120.0) -> int:
    """Run :func:`worker_main` in a forked worker process; its exit code (``-9``: killed)."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(["hy_memory_langgraph.client", "tests.background.support",
                                         "langchain_openai"])
    process = _CONTEXT.Process(target=worker_main, args=(settings,))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
        raise AssertionError(f"the worker did not end within {timeout} s")
    return int(process.exitcode or 0)
