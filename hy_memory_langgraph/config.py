"""Configuration: :class:`MemoryConfig` and :class:`CodingConfig`.

Every setting comes from, in order of precedence: a keyword override passed in code,
then the environment variable, then the default. An empty (or blank) variable counts
as unset. Invalid values raise :class:`~hy_memory_langgraph.errors.ConfigError`
naming the variable (or field), the bad value and what is accepted.

Variables (default in brackets):

* ``MEMORY_DATA_DIR`` [``~/.hy_memory``]: where every file lives (``data/``,
  ``workflow/``).
* ``MEMORY_CODING_ENABLED`` [``true``]: enable the working/coding pipelines; ``false``
  sends every write and search to the chat scene.
* ``MEMORY_CODING_DB_PATH`` [``{DATA_DIR}/data/coding_memory.db``]: the working-scene
  SQLite file ``X.db``. Derived beside it: ``X_cv.db`` (coding), ``X_trace.db``
  (history shared by working and coding), ``hy_code_chain/hy_code.db`` (version
  chain), and the vector collections ``X_coding_keys``, ``X_working_facts`` (+ ``_cv``).
* ``MEMORY_CODING_TOOL_RESULT_MAX_BYTES`` [``2048``]: byte cap of one tool result in
  the extractor input (head and tail kept, UTF-8 safe); at least 64.
* ``MEMORY_CODING_VERBATIM_FALLBACK_ENABLED`` [``false``]: when the model yields no
  fact, store the raw user text as the statement and the trace as details.
* ``MEMORY_CODING_CHAIN_BLOCK_ENABLED`` [``false``]: coding search renders the
  version-evolution ``chain_block`` (opt-in).
* ``MEMORY_EXTRACT_HISTORY_TURNS`` [``5``]: history user-turns read back for the
  extractor (>= 0); the prompt never holds more than 5.
* ``MEMORY_CODING_CHAIN_REPO_ROOT`` [unset]: local git work tree the coding chain reads
  diffs from (a directory).
* ``HCM_BLOCK_OFF`` [``false``]: ablation switch, no ``chain_block`` even when enabled.
* ``MEMORY_ENABLE_QUERY_REWRITE`` [``false``]: allow the bounded query-rewrite call on
  multi-query default search.
* ``MEMORY_QUERY_REWRITE_MAX_CHARS`` [``1000``]: queries longer than this are never
  rewritten (>= 0).
* ``MEMORY_REDACT_SECRETS`` [``true``]: replace API keys, tokens, passwords and private
  keys in what is written with ``[REDACTED:<kind>]`` before anything is stored,
  embedded or sent to a model (``redact.py``).
* ``MEMORY_PIPELINE_LOG_DAYS`` [``7``]: days the per-request pipeline log keeps its
  records (``{DATA_DIR}/data/pipeline_log.db``); ``0`` keeps none (logging only).
* ``MEMORY_PIPELINE_LOG_TEXT`` [``false``]: keep prompt and message text (memory
  content, statements, rewrites) in the pipeline log; it may hold personal data.
* ``MEMORY_MAX_MESSAGE_BYTES`` [``1000000``]: size cap of one message in a write (UTF-8
  bytes, at least 1024): longer content (and tool-call argument text) keeps its head
  and tail around a visible ``…[cut N bytes]…`` marker before anything is stored,
  embedded or sent to a model.
* ``MEMORY_OA_CONTEXT_PROVIDER`` [unset]: ``package.module:callable`` supplying the
  ``oaContext`` of workflow memory; called with the user id, it returns a mapping or
  ``None`` (or raises). The module must import and the attribute must be a function or
  an instance (callable, or with ``get_oa_context``).
* ``MEMORY_OA_CONTEXT_FILE`` [unset]: a UTF-8 JSON file holding the ``oaContext`` of
  every user: ``{"version": ..., "user": {"position", "department", "subcompany",
  "employeeId"}}``. At most one of the two OA variables may be set.
* ``MEMORY_DB_URL`` [unset]: a PostgreSQL URL (``postgresql+psycopg://user:pw@host/db``).
  Unset: SQLite files under the data dir. Set: every store of the client lives in that
  database, one schema per store named after its file (``chat_memory``,
  ``coding_memory_cv``, ``hy_code``, ``pipeline_log``, ``workflow_memory``…).
* ``MEMORY_DB_SCHEMA_PREFIX`` [empty]: prefix of every schema name with ``MEMORY_DB_URL``
  (``staging_`` → ``staging_chat_memory``…), so several deployments share one database;
  lower-case letters, digits and ``_``.
* ``MEMORY_INDEX_CACHE_MB`` [``1024``]: budget of the in-memory vector indexes of a
  process (per-scope FAISS indexes, least recently used evicted first); >= 1.

Booleans accept ``true/false/1/0/yes/no/on/off`` (any case). ``~`` is expanded in
paths, and relative paths are made absolute against the current directory when the
configuration is built.

The model variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``HY_MEMORY_LLM_MODEL``,
``HY_MEMORY_EMBEDDING_MODEL``) are read by :mod:`hy_memory_langgraph.models`, not here.

Example:
    >>> cfg = MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": "/x/y/mem.db"})
    >>> str(cfg.scene_db_path("coding")), cfg.experience_collection("coding")
    ('/x/y/mem_cv.db', 'mem_coding_keys_cv')
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES, Scene, get_scene

__all__ = ["ENV_VARS", "CodingConfig", "MemoryConfig", "load_oa_context_file", "resolve_object_spec"]

_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})
_BOOL_ACCEPTED: Final = "one of true/false/1/0/yes/no/on/off"
_MAX_PROMPT_HISTORY_TURNS: Final = 5


# --------------------------------------------------------------------------- parsing


def _bad(source: str, value: object, accepted: str) -> ConfigError:
    return ConfigError(f"{source}={value!r} is invalid: expected {accepted}.")


def _parse_bool(source: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise _bad(source, value, _BOOL_ACCEPTED)


def _int_parser(minimum: int) -> Callable[[str, object], int]:
    accepted = f"an integer >= {minimum}"

    def parse(source: str, value: object) -> int:
        number: int
        if isinstance(value, bool):
            raise _bad(source, value, accepted)
        if isinstance(value, int):
            number = value
        elif isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                raise _bad(source, value, accepted) from None
        else:
            raise _bad(source, value, accepted)
        if number < minimum:
            raise _bad(source, value, accepted)
        return number

    return parse


def _parse_path(source: str, value: object) -> Path:
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str) and text.strip():
            return Path(os.path.abspath(os.path.expanduser(text.strip())))
    raise _bad(source, value, "a non-empty filesystem path")


def _parse_dir(source: str, value: object) -> Path:
    path = _parse_path(source, value)
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: it is an existing file; expected a directory."
        )
    blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: {str(blocker)!r} is a file, so no directory can "
            "be created below it; choose a directory elsewhere."
        )
    return path


def _parse_optional_dir(source: str, value: object) -> Path | None:
    return None if value is None else _parse_dir(source, value)


def _parse_db_path(source: str, value: object) -> Path | None:
    if value is None:
        return None
    path = _parse_path(source, value)
    if path.is_dir():
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: it is an existing directory; "
            "expected a SQLite file path such as /path/to/coding_memory.db."
        )
    return path


_SPEC: Final = re.compile(
    r"^(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$"
)
_SPEC_ACCEPTED: Final = "package.module:callable (a function or an instance, importable from PYTHONPATH)"
_OA_USER_FIELDS: Final = ("position", "department", "subcompany", "employeeId")


def resolve_object_spec(source: str, spec: str) -> Any:
    """Import ``package.module:attr`` and return the attribute.

    Args:
        source: The variable or field named in errors (e.g. ``MEMORY_OA_CONTEXT_PROVIDER``).
        spec: ``package.module:callable``; the attribute may be dotted (``mod:obj.method``).

    Raises:
        ConfigError: The spec is malformed, the module does not import, the attribute
            is missing, is a class, or is neither callable nor has ``get_oa_context``.

    Example:
        >>> resolve_object_spec("X", "os.path:join").__name__
        'join'
    """
    match = _SPEC.match(spec.strip()) if isinstance(spec, str) else None
    if match is None:
        raise _bad(source, spec, _SPEC_ACCEPTED)
    try:
        target: Any = importlib.import_module(match["module"])
    except Exception as exc:  # noqa: BLE001 - any import failure is a configuration error
        raise ConfigError(
            f"{source}={spec!r} is invalid: module {match['module']!r} does not import "
            f"({type(exc).__name__}: {exc}); expected {_SPEC_ACCEPTED}."
        ) from exc
    for part in match["attr"].split("."):
        if not hasattr(target, part):
            raise ConfigError(
                f"{source}={spec!r} is invalid: {match['module']!r} has no attribute "
                f"{match['attr']!r}; expected {_SPEC_ACCEPTED}."
            )
        target = getattr(target, part)
    if isinstance(target, type):
        raise ConfigError(
            f"{source}={spec!r} is invalid: it names a class; expected a function or an "
            "instance (create the instance in the module and point to it)."
        )
    if not (callable(target) or callable(getattr(target, "get_oa_context", None))):
        raise ConfigError(
            f"{source}={spec!r} is invalid: {type(target).__name__} is not callable; "
            f"expected {_SPEC_ACCEPTED}."
        )
    return target


def _parse_object_spec(source: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(source, value, _SPEC_ACCEPTED)
    resolve_object_spec(source, value)
    return value.strip()


def _check_oa_context(source: str, path: Path, data: object) -> dict[str, Any]:
    def bad(why: str) -> ConfigError:
        return ConfigError(
            f"{source}={str(path)!r} is invalid: {why}; expected a JSON object like "
            '{"version": "10.0.9909.01", "user": {"position": ..., "department": ..., '
            '"subcompany": ..., "employeeId": ...}}.'
        )

    if not isinstance(data, dict):
        raise bad(f"the file holds a JSON {type(data).__name__}, not an object")
    version = data.get("version")
    if version is not None and not isinstance(version, str):
        raise bad(f"'version' must be a string such as \"10.0.9909.01\" (got {version!r})")
    user = data.get("user")
    if user is not None and not isinstance(user, dict):
        raise bad(f"'user' must be an object (got {type(user).__name__})")
    for name in _OA_USER_FIELDS:
        value = (user or {}).get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            raise bad(f"'user.{name}' must be a string or null (got {value!r})")
    return data


def load_oa_context_file(source: str, path: Path) -> dict[str, Any]:
    """Read and check an OA context JSON file (UTF-8, a BOM is tolerated).

    ``smartGrouping`` in the file is ignored by the workflow memory: it is always
    computed from ``version``.

    Raises:
        ConfigError: The file is missing, unreadable, not JSON, or not of the shape
            ``{"version": str, "user": {position, department, subcompany, employeeId}}``.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: cannot read it ({type(exc).__name__}: {exc}); "
            "expected a readable UTF-8 JSON file."
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: it is not JSON ({exc}); expected a JSON object "
            'such as {"version": "10.0.9909.01", "user": {"employeeId": "E42"}}.'
        ) from exc
    return _check_oa_context(source, path, data)


def _parse_oa_context_file(source: str, value: object) -> Path | None:
    if value is None:
        return None
    path = _parse_path(source, value)
    if not path.is_file():
        why = "it is a directory" if path.is_dir() else "no such file"
        raise ConfigError(f"{source}={str(path)!r} is invalid: {why}; expected an existing JSON file.")
    load_oa_context_file(source, path)
    return path
_DB_URL_RE: Final = re.compile(r"^postgres(ql)?(\+psycopg)?://", re.IGNORECASE)
_DB_URL_EXAMPLE: Final = "postgresql+psycopg://user:password@host:5432/dbname"


def _parse_db_url(source: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if _DB_URL_RE.match(text):
            return "postgresql+psycopg://" + text.split("://", 1)[1]
        shown = re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", text)
        named = source if source == "MEMORY_DB_URL" else f"{source} (MEMORY_DB_URL)"
        raise ConfigError(
            f"{named}={shown!r} is invalid: expected a PostgreSQL URL such as {_DB_URL_EXAMPLE}; "
            "unset it to keep SQLite files under MEMORY_DATA_DIR."
        )
    raise _bad(source, "<hidden>", f"a PostgreSQL URL such as {_DB_URL_EXAMPLE}")


_PREFIX_RE: Final = re.compile(r"^[a-z0-9_]{0,40}$")


def _parse_schema_prefix(source: str, value: object) -> str:
    if isinstance(value, str) and _PREFIX_RE.match(value.strip()):
        return value.strip()
    raise _bad(source, value, "at most 40 lower-case letters, digits or '_' (e.g. staging_)")


@dataclass(frozen=True)
class _Var:
    env: str
    owner: Literal["memory", "coding"]
    field: str
    parse: Callable[[str, object], Any]


#: Every environment variable read by this module, in documentation order.
_VARS: Final[tuple[_Var, ...]] = (
    _Var("MEMORY_DATA_DIR", "memory", "data_dir", _parse_dir),
    _Var("MEMORY_CODING_ENABLED", "coding", "enabled", _parse_bool),
    _Var("MEMORY_CODING_DB_PATH", "coding", "db_path", _parse_db_path),
    _Var("MEMORY_CODING_TOOL_RESULT_MAX_BYTES", "coding", "tool_result_max_bytes", _int_parser(64)),
    _Var("MEMORY_CODING_VERBATIM_FALLBACK_ENABLED", "coding", "verbatim_fallback_enabled",
         _parse_bool),
    _Var("MEMORY_CODING_CHAIN_BLOCK_ENABLED", "coding", "chain_block_enabled", _parse_bool),
    _Var("MEMORY_EXTRACT_HISTORY_TURNS", "coding", "extract_history_turns", _int_parser(0)),
    _Var("MEMORY_CODING_CHAIN_REPO_ROOT", "coding", "chain_repo_root", _parse_optional_dir),
    _Var("HCM_BLOCK_OFF", "coding", "block_off", _parse_bool),
    _Var("MEMORY_ENABLE_QUERY_REWRITE", "memory", "enable_query_rewrite", _parse_bool),
    _Var("MEMORY_QUERY_REWRITE_MAX_CHARS", "memory", "query_rewrite_max_chars", _int_parser(0)),
    _Var("MEMORY_REDACT_SECRETS", "memory", "redact_secrets", _parse_bool),
    _Var("MEMORY_PIPELINE_LOG_DAYS", "memory", "pipeline_log_days", _int_parser(0)),
    _Var("MEMORY_PIPELINE_LOG_TEXT", "memory", "pipeline_log_text", _parse_bool),
    _Var("MEMORY_MAX_MESSAGE_BYTES", "memory", "max_message_bytes", _int_parser(1024)),
    _Var("MEMORY_OA_CONTEXT_PROVIDER", "memory", "oa_context_provider_spec", _parse_object_spec),
    _Var("MEMORY_OA_CONTEXT_FILE", "memory", "oa_context_file", _parse_oa_context_file),
    _Var("MEMORY_DB_URL", "memory", "db_url", _parse_db_url),
    _Var("MEMORY_DB_SCHEMA_PREFIX", "memory", "db_schema_prefix", _parse_schema_prefix),
    _Var("MEMORY_INDEX_CACHE_MB", "memory", "index_cache_mb", _int_parser(1)),
)

#: Names of every environment variable :meth:`MemoryConfig.from_env` reads.
ENV_VARS: Final[tuple[str, ...]] = tuple(v.env for v in _VARS)

_BY_FIELD: Final[dict[tuple[str, str], _Var]] = {(v.owner, v.field): v for v in _VARS}
DEFAULT_INDEX_CACHE_MB: Final = 1024


def index_cache_mb(env: Mapping[str, str]) -> int:
    """``MEMORY_INDEX_CACHE_MB`` from ``env`` (default 1024); ``ConfigError`` if invalid."""
    raw = _env_value(env, "MEMORY_INDEX_CACHE_MB")
    return DEFAULT_INDEX_CACHE_MB if raw is None else _int_parser(1)("MEMORY_INDEX_CACHE_MB", raw)


def _validate_fields(obj: object, owner: Literal["memory", "coding"]) -> None:
    """Parse/normalise every field of a frozen dataclass in place (naming the field)."""
    cls_name = type(obj).__name__
    for (var_owner, name), var in _BY_FIELD.items():
        if var_owner != owner:
            continue
        value = getattr(obj, name)
        object.__setattr__(obj, name, var.parse(f"{cls_name}.{name}", value))


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name)
    if raw is None or not str(raw).strip():
        return None
    return str(raw)


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
    {"data_dir", "coding", "enable_query_rewrite", "query_rewrite_max_chars",
     "redact_secrets", "pipeline_log_days", "pipeline_log_text", "max_message_bytes",
     "oa_context_provider_spec", "oa_context_file", "db_url", "db_schema_prefix",
     "index_cache_mb"}
)
_CODING_OVERRIDES: Final = frozenset(f.name for f in fields(CodingConfig))
_OA_FIELDS: Final = frozenset({"oa_context_provider_spec", "oa_context_file"})


def _default_data_dir() -> Path:
    return Path(os.path.expanduser("~/.hy_memory"))


@dataclass(frozen=True)
class MemoryConfig:
    """Effective configuration of a client: where files live and feature switches.

    Build it with :meth:`from_env` (or :meth:`default`); construct it directly only
    when every value is known. Derived paths and collection names are properties.

    Attributes:
        data_dir: ``MEMORY_DATA_DIR`` (default ``~/.hy_memory``).
        coding: The working/coding settings.
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

    Example:
        >>> cfg = MemoryConfig.from_env({}, data_dir="/tmp/mem", chain_block_enabled=True)
        >>> cfg.coding.chain_block_enabled, str(cfg.chat_db_path)
        (True, '/tmp/mem/data/chat_memory.db')
    """

    data_dir: Path
    coding: CodingConfig = field(default_factory=CodingConfig)
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

    def __post_init__(self) -> None:
        _validate_fields(self, "memory")
        if not isinstance(self.coding, CodingConfig):
            raise ConfigError(
                f"MemoryConfig.coding={self.coding!r} is invalid: expected a CodingConfig."
            )
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
        unknown = sorted(set(given) - _MEMORY_OVERRIDES - _CODING_OVERRIDES)
        if unknown:
            allowed = ", ".join(sorted(_MEMORY_OVERRIDES | _CODING_OVERRIDES))
            raise ConfigError(
                f"Unknown configuration override(s) {', '.join(unknown)}; accepted: {allowed}."
            )

        memory_values: dict[str, Any] = {}
        coding_values: dict[str, Any] = {}
        oa_overridden = bool(_OA_FIELDS & set(given))
        for var in _VARS:
            if oa_overridden and var.field in _OA_FIELDS:
                continue
            raw = _env_value(source, var.env)
            if raw is None:
                continue
            parsed = var.parse(var.env, raw)
            (memory_values if var.owner == "memory" else coding_values)[var.field] = parsed

        coding = given.pop("coding", None)
        if coding is not None and not isinstance(coding, CodingConfig):
            raise ConfigError(f"coding={coding!r} is invalid: expected a CodingConfig.")
        if coding is None:
            coding = CodingConfig(**coding_values)
        coding_fields = {k: given.pop(k) for k in list(given) if k in _CODING_OVERRIDES}
        if coding_fields:
            coding = replace(coding, **coding_fields)

        memory_values.update(given)
        memory_values.setdefault("data_dir", _default_data_dir())
        return cls(coding=coding, **memory_values)

    @classmethod
    def default(cls) -> MemoryConfig:
        """The configuration described by ``os.environ`` alone."""
        return cls.from_env(os.environ)

    # ------------------------------------------------------------------ derived paths

    @property
    def chat_db_path(self) -> Path:
        """``{data_dir}/data/chat_memory.db``."""
        return self.data_dir / "data" / "chat_memory.db"

    @property
    def working_db_path(self) -> Path:
        """``MEMORY_CODING_DB_PATH`` or ``{data_dir}/data/coding_memory.db``."""
        if self.coding.db_path is not None:
            return self.coding.db_path
        return self.data_dir / "data" / "coding_memory.db"

    def _sibling(self, suffix: str) -> Path:
        working = self.working_db_path
        return working.with_name(f"{working.stem}{suffix}{working.suffix}")

    @property
    def trace_db_path(self) -> Path:
        """The history shared by the productivity scenes: ``X.db`` → ``X_trace.db``."""
        return self._sibling("_trace")

    @property
    def chain_db_path(self) -> Path:
        """The version-evolution chain: ``<dir>/hy_code_chain/hy_code.db``."""
        return self.working_db_path.parent / "hy_code_chain" / "hy_code.db"

    @property
    def collection_base(self) -> str:
        """Stem of the working file (``coding_memory`` by default)."""
        return self.working_db_path.stem

    @property
    def pipeline_log_path(self) -> Path:
        """``{data_dir}/data/pipeline_log.db``."""
        return self.data_dir / "data" / "pipeline_log.db"

    @property
    def calibration_path(self) -> Path:
        """``{data_dir}/data/embedding_calibration.json``: similarity anchors per model."""
        return self.data_dir / "data" / "embedding_calibration.json"

    @property
    def workflow_dir(self) -> Path:
        """``{data_dir}/workflow``."""
        return self.data_dir / "workflow"

    # ------------------------------------------------------------------ store names

    @property
    def chat_store(self) -> str:
        """Name of the chat store: the stem of its file (``chat_memory``)."""
        return self.chat_db_path.stem

    @property
    def trace_store(self) -> str:
        """Name of the productivity history store (``coding_memory_trace``)."""
        return self.trace_db_path.stem

    @property
    def chain_store(self) -> str:
        """Name of the version chain store (``hy_code``)."""
        return self.chain_db_path.stem

    @property
    def pipeline_log_store(self) -> str:
        """Name of the pipeline log store (``pipeline_log``)."""
        return self.pipeline_log_path.stem

    #: Name of the workflow documents store (only used with ``MEMORY_DB_URL``).
    workflow_store: ClassVar[str] = "workflow_memory"

    def scene_store(self, scene: str) -> str:
        """Name of a productivity scene's store (``coding_memory``, ``coding_memory_cv``)."""
        return self.scene_db_path(scene).stem

    def store_paths(self) -> dict[str, Path]:
        """Every SQLite store file by store name (the embedded layout).

        Raises:
            ConfigError: Two stores would get the same name (a ``MEMORY_CODING_DB_PATH``
                whose stem collides with another store's file).
        """
        paths = [self.chat_db_path, *(self.scene_db_path(s) for s in PRODUCTIVITY_SCENES),
                 self.trace_db_path, self.chain_db_path, self.pipeline_log_path]
        named = {p.stem: p for p in paths}
        if len(named) != len(paths) or self.workflow_store in named:
            raise ConfigError(
                f"MEMORY_CODING_DB_PATH={str(self.working_db_path)!r} gives a store name used by "
                "another store; choose another file name (e.g. coding_memory.db)."
            )
        return named

    def store_target(self, name: str) -> tuple[str, str | None]:
        """Where store ``name`` lives: ``(MEMORY_DB_URL, prefix + name)`` or ``(SQLite file, None)``.

        Example:
            >>> cfg = MemoryConfig.from_env({}, data_dir="/m")
            >>> cfg.store_target("coding_memory_cv")
            ('/m/data/coding_memory_cv.db', None)
            >>> MemoryConfig.from_env({"MEMORY_DB_URL": "postgresql://h/db"}, data_dir="/m").store_target("hy_code")
            ('postgresql+psycopg://h/db', 'hy_code')
        """
        paths = self.store_paths()
        if name not in paths and name != self.workflow_store:
            raise InvalidInputError(f"unknown store {name!r}; known: {', '.join(sorted(paths))}")
        if self.db_url is not None:
            return self.db_url, self.db_schema_prefix + name
        if name == self.workflow_store:
            return str(self.workflow_dir), None
        return str(paths[name]), None

    def scene_db_path(self, scene: str) -> Path:
        """The store file of a productivity scene: ``X.db`` plus its storage suffix.

        Example:
            >>> MemoryConfig.from_env({}, data_dir="/m").scene_db_path("coding").name
            'coding_memory_cv.db'
        """
        return self._sibling(_productivity(scene).file_suffix)

    def experience_collection(self, scene: str) -> str:
        """Vector collection of experiences: ``{base}_coding_keys`` plus the scene suffix."""
        return f"{self.collection_base}_coding_keys{_productivity(scene).file_suffix}"

    def fact_collection(self, scene: str) -> str:
        """Vector collection of facts: ``{base}_working_facts`` plus the scene suffix."""
        return f"{self.collection_base}_working_facts{_productivity(scene).file_suffix}"


def _productivity(scene: str) -> Scene:
    spec = get_scene(scene)
    if spec.pipeline != "productivity":
        raise InvalidInputError(
            f"scene={scene!r} has no productivity storage; use one of "
            f"{', '.join(PRODUCTIVITY_SCENES)}"
        )
    return spec
