"""One way for nodes to ask the model, with a graceful failure path: the reply parsed once
into the prompt's typed shape (:mod:`hy_memory_langgraph.prompts.replies`)."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from pydantic import ValidationError

from hy_memory_langgraph.errors import HyMemoryError
from hy_memory_langgraph.models import LLMGateway
from hy_memory_langgraph.models.parsing import parse_json_object
from hy_memory_langgraph.pipeline_log.meter import note_llm_error
from hy_memory_langgraph.prompts import load_prompt
from hy_memory_langgraph.prompts.replies import Reply

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=Reply)


def ask(llm: LLMGateway | None, stage: str, prompt: str, lang: str, reply: type[R],
        **values: Any) -> R | None:
    """Render ``prompt`` in ``lang``, call the model once, parse its answer as ``reply``.

    Returns ``None`` (and logs why) when there is no model, the call fails, the answer
    holds no JSON object, or the object cannot be ``reply`` at all: callers then take
    their documented fallback. A failed call raises instead with a gateway that says so
    (``raise_errors``: a background run, retried later from its checkpoint).
    """
    if llm is None:
        return None
    system, user = load_prompt(prompt, "zh" if lang == "zh" else "en").render(**values)
    try:
        answer = llm.invoke(stage, user, system=system)
    except HyMemoryError as exc:
        if llm.raise_errors:
            raise
        logger.warning("LLM stage %s failed (%s); using the fallback", stage, exc)
        note_llm_error(f"{stage}: call failed ({type(exc.__cause__ or exc).__name__})")
        return None
    parsed = parse_json_object(answer)
    if parsed is None:
        logger.warning("LLM stage %s returned no usable JSON; using the fallback", stage)
        note_llm_error(f"{stage}: no usable JSON object in the reply")
        return None
    try:
        return reply.model_validate(parsed)
    except ValidationError as exc:
        logger.warning("LLM stage %s returned an object of the wrong shape (%s); using the fallback",
                       stage, exc.errors(include_url=False, include_input=False)[:1])
        note_llm_error(f"{stage}: the reply is not a {reply.__name__}")
        return None
