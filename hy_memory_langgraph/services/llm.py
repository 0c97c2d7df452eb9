"""One way for nodes to ask the model for JSON, with a graceful failure path."""

from __future__ import annotations

import logging
from typing import Any

from hy_memory_langgraph.errors import HyMemoryError
from hy_memory_langgraph.models import LLMGateway
from hy_memory_langgraph.models.parsing import parse_json_object
from hy_memory_langgraph.pipeline_log.meter import note_llm_error
from hy_memory_langgraph.prompts import load_prompt

__all__ = ["ask_json"]

logger = logging.getLogger(__name__)


def ask_json(llm: LLMGateway | None, stage: str, prompt: str, lang: str,
             **values: Any) -> dict[str, Any] | None:
    """Render ``prompt`` in ``lang``, call the model once, parse a JSON object.

    Returns ``None`` (and logs why) when there is no model, the call fails or the
    reply holds no usable JSON object: callers then take their documented fallback. A
    failed call raises instead with a gateway that says so (``raise_errors``: a
    background run, retried later from its checkpoint).
    """
    if llm is None:
        return None
    system, user = load_prompt(prompt, "zh" if lang == "zh" else "en").render(**values)
    try:
        reply = llm.invoke(stage, user, system=system)
    except HyMemoryError as exc:
        if llm.raise_errors:
            raise
        logger.warning("LLM stage %s failed (%s); using the fallback", stage, exc)
        note_llm_error(f"{stage}: call failed ({type(exc.__cause__ or exc).__name__})")
        return None
    parsed = parse_json_object(reply)
    if parsed is None:
        logger.warning("LLM stage %s returned no usable JSON; using the fallback", stage)
        note_llm_error(f"{stage}: no usable JSON object in the reply")
    return parsed
