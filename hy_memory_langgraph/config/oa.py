"""The OA context sources of workflow memory, checked when the configuration is built.

``MEMORY_OA_CONTEXT_PROVIDER`` names ``package.module:callable`` (a function of the user
id, or an instance with ``get_oa_context``): the module must import and the attribute must
be a function or an instance, never a class. ``MEMORY_OA_CONTEXT_FILE`` names a UTF-8 JSON
file ``{"version": str, "user": {"position", "department", "subcompany", "employeeId"}}``.
Bad values raise :class:`ConfigError` naming the variable; the workflow memory reads the
same file through :func:`load_oa_context_file` each time it renders a prompt.

Example:
    >>> resolve_object_spec("X", "os.path:join").__name__
    'join'
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any, Final

from hy_memory_langgraph.config.parsing import bad_value, parse_path
from hy_memory_langgraph.errors import ConfigError

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
        raise bad_value(source, spec, _SPEC_ACCEPTED)
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


def parse_object_spec(source: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_value(source, value, _SPEC_ACCEPTED)
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


def parse_oa_context_file(source: str, value: object) -> Path | None:
    if value is None:
        return None
    path = parse_path(source, value)
    if not path.is_file():
        why = "it is a directory" if path.is_dir() else "no such file"
        raise ConfigError(f"{source}={str(path)!r} is invalid: {why}; expected an existing JSON file.")
    load_oa_context_file(source, path)
    return path
