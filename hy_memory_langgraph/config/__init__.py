"""Configuration: what a client is set to do and where it keeps things.

* :mod:`.settings`: :class:`MemoryConfig` and :class:`CodingConfig` (overrides in code,
  then environment variables, then defaults);
* :mod:`.variables`: every environment variable, described once (the documents' tables
  are generated from it);
* :mod:`.layout`: the files, store names and vector collections a configuration derives;
* :mod:`.parsing` and :mod:`.oa`: the value parsers, and the checks of workflow memory's
  OA context sources.

Example:
    >>> cfg = MemoryConfig.from_env({}, data_dir="/tmp/mem", chain_block_enabled=True)
    >>> cfg.coding.chain_block_enabled, str(cfg.chat_db_path)
    (True, '/tmp/mem/data/chat_memory.db')
"""

from __future__ import annotations

from hy_memory_langgraph.config.oa import load_oa_context_file, resolve_object_spec
from hy_memory_langgraph.config.settings import (
    DEFAULT_INDEX_CACHE_MB,
    CodingConfig,
    MemoryConfig,
    index_cache_mb,
)
from hy_memory_langgraph.config.variables import ENV_VARS, VARIABLES, variables_table

__all__ = ["DEFAULT_INDEX_CACHE_MB", "ENV_VARS", "VARIABLES", "CodingConfig", "MemoryConfig",
           "index_cache_mb", "load_oa_context_file", "resolve_object_spec", "variables_table"]
