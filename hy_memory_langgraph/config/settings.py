"""Settings: :class:`MemoryConfig` and :class:`CodingConfig`, and how they are read.

Every setting comes from, in order of precedence: a keyword override passed in code,
then the environment variable, then the default. An empty (or blank) variable counts as
unset. Invalid values raise :class:`~hy_memory_langgraph.errors.ConfigError` naming the
variable (or field), the bad value and what is accepted. The variables, their defaults
and effects are listed once, in :mod:`hy_memory_langgraph.config.variables`; the paths
and names a configuration derives are in :mod:`hy_memory_langgraph.config.layout`.

Booleans accept ``true/false/1/0/yes/no/on/off`` (any case). ``~`` is expanded in
paths, and relative paths are made absolute against the current directory when the
configuration is built.

Example:
    >>> MemoryConfig.from_env({"MEMORY_CODING_ENABLED": "off"}, data_dir="/m").coding.enabled
    False
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final, Literal

from hy_memory_langgraph.config.layout import StorageLayout
from hy_memory_langgraph.config.parsing import env_value, int_parser
from hy_memory_langgraph.config.variables import VARIABLES, Variable
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.limits import Limits

_MAX_PROMPT_HISTORY_TURNS: Final = 5
_READ: Final[tuple[Variable, ...]] = tuple(v for v in VARIABLES if v.owner is not None)
_BY_FIELD: Final[dict[tuple[str, str], Variable]] = {(v.owner, v.field): v for v in _READ if v.owner}
DEFAULT_INDEX_CACHE_MB: Final = 1024
#: Vectors a scope holds before its index becomes approximate (IVF); see docs/benchmarks.md.
DEFAULT_APPROXIMATE_MIN_VECTORS: Final = 200_000


def index_cache_mb(env: Mapping[str, str]) -> int:
    """``MEMORY_INDEX_CACHE_MB`` from ``env`` (default 1024); ``ConfigError`` if invalid."""
    raw = env_value(env, "MEMORY_INDEX_CACHE_MB")
    return DEFAULT_INDEX_CACHE_MB if raw is None else int_parser(1)("MEMORY_INDEX_CACHE_MB", raw)


def _validate_fields(obj: object, owner: Literal["memory", "coding"]) -> None:
    """Parse/normalise every field of a frozen dataclass in place (naming the field)."""
    cls_name = type(obj).__name__
    for (var_owner, name), var in _BY_FIELD.items():
        if var_owner != owner:
            continue
        value = getattr(obj, name)
        assert var.parse is not None
        object.__setattr__(obj, name, var.parse(f"{cls_name}.{name}", value))


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class CodingConfig:
    """Settings of the working/coding pipelines and the version-evolution chain.

    Values are validated on construction (strings such as ``"true"`` or ``"4096"``
    are accepted and converted); an invalid one raises :class:`ConfigError`.

    Attributes:
        enabled: ``MEMORY_CODING_ENABLED``.
        db_path: ``MEMORY_CODING_DB_PATH``; ``None`` means
            ``{data_dir}/data/coding_memory.db``.
        tool_result_max_bytes: ``MEMORY_CODING_TOOL_RESULT_MAX_BYTES`` (>= 64).
        verbatim_fallback_enabled: ``MEMORY_CODING_VERBATIM_FALLBACK_ENABLED``.
        chain_block_enabled: ``MEMORY_CODING_CHAIN_BLOCK_ENABLED``.
        extract_history_turns: ``MEMORY_EXTRACT_HISTORY_TURNS`` (>= 0).
        chain_repo_root: ``MEMORY_CODING_CHAIN_REPO_ROOT``.
        block_off: ``HCM_BLOCK_OFF``.

    Example:
        >>> CodingConfig(tool_result_max_bytes="4096").tool_result_max_bytes
        4096
    """

    enabled: bool = True
    db_path: Path | None = None
    tool_result_max_bytes: int = 2048
    verbatim_fallback_enabled: bool = False
    chain_block_enabled: bool = False
    extract_history_turns: int = 5
    chain_repo_root: Path | None = None
    block_off: bool = False

    def __post_init__(self) -> None:
        _validate_fields(self, "coding")

    @property
    def prompt_history_turns(self) -> int:
        """History user-turns the extractor prompt actually holds: ``min(value, 5)``."""
        return min(self.extract_history_turns, _MAX_PROMPT_HISTORY_TURNS)

    @property
    def chain_block_active(self) -> bool:
        """``True`` when coding search should render ``chain_block``."""
        return self.chain_block_enabled and not self.block_off


_MEMORY_OVERRIDES: Final = frozenset(
    {"data_dir", "coding", "limits", "enable_query_rewrite", "query_rewrite_max_chars",
     "redact_secrets", "pipeline_log_days", "pipeline_log_text", "max_message_bytes",
     "oa_context_provider_spec", "oa_context_file", "db_url", "db_schema_prefix",
     "index_cache_mb", "approximate_min_vectors", "db_timeout_s",
     "background_delay_s"}
)
_CODING_OVERRIDES: Final = frozenset(f.name for f in fields(CodingConfig))
_LIMIT_OVERRIDES: Final = frozenset(f.name for f in fields(Limits))
_OA_FIELDS: Final = frozenset({"oa_context_provider_spec", "oa_context_file"})


def _default_data_dir() -> Path:
    return Path(os.path.expanduser("~/.hy_memory"))


@dataclass(frozen=True)
class MemoryConfig(StorageLayout):
    """Effective configuration of a client: where files live and feature switches.

    Build it with :meth:`from_env` (or :meth:`default`); construct it directly only
    when every value is known. Derived paths and collection names are properties.

    Attributes:
        data_dir: ``MEMORY_DATA_DIR`` (default ``~/.hy_memory``).
        coding: The working/coding settings.
        limits: What one call may ask (sizes, counts, depth): ``MEMORY_MAX_*``, see
            :mod:`hy_memory_langgraph.limits`.
        enable_query_rewrite: ``MEMORY_ENABLE_QUERY_REWRITE``.
        query_rewrite_max_chars: ``MEMORY_QUERY_REWRITE_MAX_CHARS``.
        redact_secrets: ``MEMORY_REDACT_SECRETS``.
        pipeline_log_days: ``MEMORY_PIPELINE_LOG_DAYS``.
        pipeline_log_text: ``MEMORY_PIPELINE_LOG_TEXT``.
        max_message_bytes: ``MEMORY_MAX_MESSAGE_BYTES`` (>= 1024).
        oa_context_provider_spec: ``MEMORY_OA_CONTEXT_PROVIDER`` (``package.module:callable``).
        oa_context_file: ``MEMORY_OA_CONTEXT_FILE`` (a JSON file).
        db_url: ``MEMORY_DB_URL`` (``None``: SQLite files under ``data_dir``).
        db_schema_prefix: ``MEMORY_DB_SCHEMA_PREFIX``.
        index_cache_mb: ``MEMORY_INDEX_CACHE_MB``.
        approximate_min_vectors: ``MEMORY_APPROXIMATE_MIN_VECTORS``: vectors a scope holds
            before its index becomes approximate (``0``: always exact).
        db_timeout_s: ``MEMORY_DB_TIMEOUT_S``: the longest wait on the database (a lock
            a user's erasure and writes share, connecting, a statement).
        background_delay_s: ``MEMORY_BACKGROUND_DELAY_S``: seconds a queued write waits for
            more requests of its session before one extraction takes them together.

    Example:
        >>> cfg = MemoryConfig.from_env({}, data_dir="/tmp/mem", chain_block_enabled=True)
        >>> cfg.coding.chain_block_enabled, str(cfg.chat_db_path)
        (True, '/tmp/mem/data/chat_memory.db')
    """

    data_dir: Path
    coding: CodingConfig = field(default_factory=CodingConfig)
    limits: Limits = field(default_factory=Limits)
    enable_query_rewrite: bool = False
    query_rewrite_max_chars: int = 1000
    redact_secrets: bool = True
    pipeline_log_days: int = 7
    pipeline_log_text: bool = False
    max_message_bytes: int = 1_000_000
    oa_context_provider_spec: str | None = None
    oa_context_file: Path | None = None
    db_url: str | None = field(default=None, repr=False)
    db_schema_prefix: str = ""
    index_cache_mb: int = DEFAULT_INDEX_CACHE_MB
    approximate_min_vectors: int = DEFAULT_APPROXIMATE_MIN_VECTORS
    db_timeout_s: int = 30
    background_delay_s: float = 5.0

    def __post_init__(self) -> None:
        _validate_fields(self, "memory")
        if not isinstance(self.coding, CodingConfig):
            raise ConfigError(
                f"MemoryConfig.coding={self.coding!r} is invalid: expected a CodingConfig."
            )
        if not isinstance(self.limits, Limits):
            raise ConfigError(f"MemoryConfig.limits={self.limits!r} is invalid: expected a Limits.")
        if self.oa_context_provider_spec is not None and self.oa_context_file is not None:
            raise ConfigError(
                "MEMORY_OA_CONTEXT_PROVIDER (oa_context_provider_spec) and MEMORY_OA_CONTEXT_FILE "
                f"(oa_context_file) are both set ({self.oa_context_provider_spec!r}, "
                f"{str(self.oa_context_file)!r}): expected at most one OA context source; "
                "unset one of them."
            )

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> MemoryConfig:
        """Build a configuration from environment variables plus code overrides.

        Args:
            env: The variables to read; ``None`` reads ``os.environ``.
            **overrides: Field values that beat the environment: ``data_dir``,
                ``enable_query_rewrite``, ``query_rewrite_max_chars``, ``coding``
                (a whole :class:`CodingConfig`, replacing the environment's) and any
                :class:`CodingConfig` field (applied last, on top of ``coding``),
                ``limits`` and any :class:`~hy_memory_langgraph.limits.Limits` field (the
                same way),
                ``oa_context_provider_spec`` and ``oa_context_file`` (either one replaces
                both OA variables of the environment). A value of ``None`` means
                "not overridden".

        Returns:
            The validated configuration.

        Raises:
            ConfigError: A variable or override is invalid or unknown.

        Example:
            >>> MemoryConfig.from_env({"MEMORY_CODING_ENABLED": "no"}).coding.enabled
            False
        """
        source = os.environ if env is None else env
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = sorted(set(given) - _MEMORY_OVERRIDES - _CODING_OVERRIDES - _LIMIT_OVERRIDES)
        if unknown:
            allowed = ", ".join(sorted(_MEMORY_OVERRIDES | _CODING_OVERRIDES | _LIMIT_OVERRIDES))
            raise ConfigError(
                f"Unknown configuration override(s) {', '.join(unknown)}; accepted: {allowed}."
            )

        values: dict[str, dict[str, Any]] = {"memory": {}, "coding": {}, "limits": {}}
        oa_overridden = bool(_OA_FIELDS & set(given))
        for var in _READ:
            if oa_overridden and var.field in _OA_FIELDS:
                continue
            raw = env_value(source, var.env)
            if raw is None or var.parse is None:
                continue
            values[str(var.owner)][var.field] = var.parse(var.env, raw)

        coding = given.pop("coding", None)
        if coding is not None and not isinstance(coding, CodingConfig):
            raise ConfigError(f"coding={coding!r} is invalid: expected a CodingConfig.")
        if coding is None:
            coding = CodingConfig(**values["coding"])
        coding_fields = {k: given.pop(k) for k in list(given) if k in _CODING_OVERRIDES}
        if coding_fields:
            coding = replace(coding, **coding_fields)
        limits = given.pop("limits", None)
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigError(f"limits={limits!r} is invalid: expected a Limits.")
        limits = replace(limits or Limits(**values["limits"]),
                         **{k: given.pop(k) for k in list(given) if k in _LIMIT_OVERRIDES})

        memory_values = {**values["memory"], **given}
        memory_values.setdefault("data_dir", _default_data_dir())
        return cls(coding=coding, limits=limits, **memory_values)

    @classmethod
    def default(cls) -> MemoryConfig:
        """The configuration described by ``os.environ`` alone."""
        return cls.from_env(os.environ)
