"""Every node of the memory graphs runs inside a stage record of the pipeline log.

:func:`recorded` wraps a node function: it times the node, meters the LLM calls and
fallbacks reported during it (:mod:`hy_memory_langgraph.pipeline_log.meter`), and hands the
result to the recorder of the run-time context (``runtime.context.recorder``; none →
nothing is recorded). A node that raises is recorded with its error, then the error
propagates unchanged.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from hy_memory_langgraph.pipeline_log.meter import stage_meter
from hy_memory_langgraph.pipeline_log.recorder import PipelineRecorder


def _request_id(state: Any, update: Any) -> str | None:
    for source in (update, state):
        if isinstance(source, dict) and source.get("request_id"):
            return str(source["request_id"])
    return None


def recorded(graph: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a node that records its stage (``graph`` and ``name`` identify it)."""
    wants_runtime = "runtime" in inspect.signature(fn).parameters

    def node(state: Any, runtime: Runtime[Any]) -> Any:
        recorder: PipelineRecorder | None = getattr(runtime.context, "recorder", None)
        started = time.perf_counter()
        update, error = None, None
        with stage_meter() as trace:
            try:
                update = fn(state, runtime) if wants_runtime else fn(state)
                return update
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                rid = _request_id(state, update)
                if recorder is not None and rid is not None:
                    recorder.stage(rid, graph=graph, node=name,
                                   duration_ms=(time.perf_counter() - started) * 1000,
                                   trace=trace, update=update, error=error)

    node.__name__ = node.__qualname__ = name
    node.__doc__ = fn.__doc__
    return node


def recorded_graph(graph: str, state: type[Any], context: type[Any], nodes: dict[str, Callable[..., Any]], *,
                   input_schema: type[Any] | None = None,
                   output_schema: type[Any] | None = None) -> StateGraph[Any, Any, Any, Any]:
    """A ``StateGraph`` over ``state`` (run-time ``context``) holding ``nodes``, each
    recording its stage of ``graph`` (the name the graph is compiled under)."""
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        state, context_schema=context, input_schema=input_schema, output_schema=output_schema)
    for name, fn in nodes.items():
        builder.add_node(name, recorded(graph, name, fn))
    return builder
