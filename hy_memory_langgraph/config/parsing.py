"""Parsers of configuration values: each takes the source named in errors (a variable or
a field) and the raw value (a string from the environment, or a value passed in code),
and returns the normalised value or raises a :class:`ConfigError` naming the source, the
bad value and what is accepted.

Example:
    >>> parse_bool("X", "on"), int_parser(0)("Y", " 7 ")
    (True, 7)
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from hy_memory_langgraph.errors import ConfigError

_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})
_BOOL_ACCEPTED: Final = "one of true/false/1/0/yes/no/on/off"
_DB_URL_RE: Final = re.compile(r"^postgres(ql)?(\+psycopg)?://", re.IGNORECASE)
_DB_URL_EXAMPLE: Final = "postgresql+psycopg://user:password@host:5432/dbname"
_PREFIX_RE: Final = re.compile(r"^[a-z0-9_]{0,40}$")


def env_value(env: Mapping[str, str] | None, name: str) -> str | None:
    """``env[name]`` stripped, or ``None`` when unset or blank (``None`` env: ``os.environ``)."""
    value = str((os.environ if env is None else env).get(name) or "").strip()
    return value or None


def bad_value(source: str, value: object, accepted: str) -> ConfigError:
    return ConfigError(f"{source}={value!r} is invalid: expected {accepted}.")


def parse_bool(source: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise bad_value(source, value, _BOOL_ACCEPTED)


def int_parser(minimum: int) -> Callable[[str, object], int]:
    """A parser of whole numbers of at least ``minimum``."""
    accepted = f"an integer >= {minimum}"

    def parse(source: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise bad_value(source, value, accepted)
        try:
            number = value if isinstance(value, int) else int(value.strip())
        except ValueError:
            raise bad_value(source, value, accepted) from None
        if number < minimum:
            raise bad_value(source, value, accepted)
        return number

    return parse


def float_parser(minimum: float, maximum: float) -> Callable[[str, object], float]:
    """A parser of finite numbers within ``[minimum, maximum]``."""
    accepted = f"a number of seconds from {minimum:g} to {maximum:g}"

    def parse(source: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise bad_value(source, value, accepted)
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except ValueError:
            raise bad_value(source, value, accepted) from None
        if not minimum <= number <= maximum:  # NaN fails both comparisons
            raise bad_value(source, value, accepted)
        return number

    return parse


def parse_path(source: str, value: object) -> Path:
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str) and text.strip():
            return Path(os.path.abspath(os.path.expanduser(text.strip())))
    raise bad_value(source, value, "a non-empty filesystem path")


def symlink_loop(path: Path) -> Path | None:
    """The first of ``path``'s ancestors (root first), or ``path`` itself, that is a
    symbolic link leading back to itself (a loop), or ``None``.

    Example:
        >>> import tempfile
        >>> base = Path(tempfile.mkdtemp())
        >>> (base / "a").symlink_to(base / "b"); (base / "b").symlink_to(base / "a")
        >>> symlink_loop(base / "a" / "data" / "x.db") == base / "a"
        True
        >>> symlink_loop(base / "missing" / "x.db") is None
        True
    """
    for candidate in (*reversed(path.parents), path):
        try:
            os.stat(candidate)
        except OSError as exc:  # absent, or below a file: nothing further down can loop
            return candidate if exc.errno == errno.ELOOP else None
    return None


def _refuse_loop(source: str, path: Path) -> None:
    loop = symlink_loop(path)
    if loop is not None:
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: {str(loop)!r} is a symbolic link that leads back "
            "to itself (a loop); fix or remove that link, or choose another path.")


def parse_dir(source: str, value: object) -> Path:
    path = parse_path(source, value)
    _refuse_loop(source, path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{source}={str(path)!r} is invalid: it is an existing file; expected a directory.")
    blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: {str(blocker)!r} is a file, so no directory can "
            "be created below it; choose a directory elsewhere.")
    return path


def parse_optional_dir(source: str, value: object) -> Path | None:
    return None if value is None else parse_dir(source, value)


def parse_db_path(source: str, value: object) -> Path | None:
    if value is None:
        return None
    path = parse_path(source, value)
    _refuse_loop(source, path)
    if path.is_dir():
        raise ConfigError(
            f"{source}={str(path)!r} is invalid: it is an existing directory; "
            "expected a SQLite file path such as /path/to/coding_memory.db.")
    return path


def parse_db_url(source: str, value: object) -> str | None:
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
            "unset it to keep SQLite files under MEMORY_DATA_DIR.")
    raise bad_value(source, "<hidden>", f"a PostgreSQL URL such as {_DB_URL_EXAMPLE}")


def parse_schema_prefix(source: str, value: object) -> str:
    if isinstance(value, str) and _PREFIX_RE.match(value.strip()):
        return value.strip()
    raise bad_value(source, value, "at most 40 lower-case letters, digits or '_' (e.g. staging_)")
