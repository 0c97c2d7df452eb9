"""Prompt templates of hy_memory_langgraph, in English and Chinese, and their loader.

Each prompt lives in its own ``<name>.toml`` file next to this module::

    description = "what the prompt is for"
    variables = ["summary"]          # the placeholders both languages must use

    [en]
    system = '''...'''
    user = '''... {summary} ...'''

    [zh]
    system = '''...'''
    user = '''... {summary} ...'''

Template syntax
---------------
A placeholder is ``{name}`` where ``name`` is an ASCII identifier
(``[A-Za-z_][A-Za-z0-9_]*``). Every other brace is literal text, so JSON examples
(``{"scene": "chat"}``) are written as they are, without ``{{ }}`` escaping.
Substitution is a single pass over the template: a value is inserted verbatim and
never scanned again, so values may contain ``{``, ``}`` or ``{name}`` safely.

Values: ``str`` is inserted as is; ``None`` becomes ``""``; ``dict``/``list``/``tuple``
become JSON (``ensure_ascii=False``); anything else goes through ``str()``. Values are
data inside the prompt's sections (``<new_messages>`` … ``</new_messages>``): their
invisible characters are dropped and anything a model could read as one of the
template's section tags is defused (:mod:`hy_memory_langgraph.fences`), so a message
cannot close its section and write instructions after it.

Example:
    >>> p = load_prompt("scene_judge", "en")
    >>> system, user = p.render(scene_definitions="coding: changes to code",
    ...                          summary="turn 1: user: fix the build; tools: bash (result)")
    >>> "fix the build" in user
    True
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, get_args

from hy_memory_langgraph.errors import HyMemoryError, InvalidInputError
from hy_memory_langgraph.fences import as_data

__all__ = [
    "Lang",
    "LANGS",
    "PromptTemplate",
    "PromptTemplateError",
    "PromptVariableError",
    "available_prompts",
    "load_prompt",
    "scene_definitions",
]

Lang = Literal["en", "zh"]
LANGS: tuple[str, ...] = get_args(Lang)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TAG = re.compile(r"<(/?)([a-z_]+)>")


class PromptTemplateError(HyMemoryError, ValueError):
    """A packaged prompt file is malformed (a bug in the package, not in caller input)."""


class PromptVariableError(HyMemoryError, KeyError):
    """``render`` got a missing or an unexpected variable; the message names it."""

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else ""


def placeholders(text: str) -> frozenset[str]:
    """Names of the ``{name}`` placeholders in ``text``."""
    return frozenset(_PLACEHOLDER.findall(text))


def section_tags(text: str) -> frozenset[str]:
    """Names of the sections ``text`` opens and closes (``<history>`` … ``</history>``)."""
    found = _TAG.findall(text)
    return frozenset(name for slash, name in found if not slash) & frozenset(name for slash, name in found if slash)


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt in one language: a system and a user template plus their variables."""

    name: str
    lang: Lang
    system: str
    user: str
    variables: frozenset[str]
    #: Section tags of the templates, defused in values (:func:`section_tags`).
    fences: frozenset[str] = frozenset()

    def render(self, **values: Any) -> tuple[str, str]:
        """Return ``(system, user)`` with every placeholder replaced.

        Raises :class:`PromptVariableError` (a ``KeyError``) naming any missing
        variable, or any variable the template does not declare.
        """
        missing = sorted(self.variables - values.keys())
        if missing:
            raise PromptVariableError(
                f"prompt {self.name!r} ({self.lang}) is missing variable(s): "
                f"{', '.join(missing)}; it needs: {', '.join(sorted(self.variables))}"
            )
        extra = sorted(values.keys() - self.variables)
        if extra:
            raise PromptVariableError(
                f"prompt {self.name!r} ({self.lang}) got unexpected variable(s): "
                f"{', '.join(extra)}; it takes: {', '.join(sorted(self.variables))}"
            )
        texts = {k: as_data(_to_text(v), self.fences) for k, v in values.items()}

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: texts[m.group(1)], template)

        return fill(self.system), fill(self.user)


def _prompt_dir() -> Any:
    return resources.files(__name__)


@lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    return tuple(
        sorted(
            entry.name[: -len(".toml")]
            for entry in _prompt_dir().iterdir()
            if entry.name.endswith(".toml") and entry.is_file()
        )
    )


def available_prompts() -> list[str]:
    """Names of all packaged prompts, sorted."""
    return list(_names())


@lru_cache(maxsize=None)
def _load_file(name: str) -> dict[str, PromptTemplate]:
    source = _prompt_dir().joinpath(f"{name}.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise PromptTemplateError(f"prompt file {name}.toml is not valid TOML: {exc}") from exc
    declared = data.get("variables")
    if not isinstance(declared, list) or not all(isinstance(v, str) for v in declared):
        raise PromptTemplateError(f"prompt file {name}.toml needs a top-level list 'variables'")
    declared_set = frozenset(declared)
    out: dict[str, PromptTemplate] = {}
    for lang in LANGS:
        table = data.get(lang)
        if not isinstance(table, dict):
            raise PromptTemplateError(f"prompt file {name}.toml has no [{lang}] table")
        parts: dict[str, str] = {}
        for key in ("system", "user"):
            text = table.get(key)
            if not isinstance(text, str) or not text.strip():
                raise PromptTemplateError(f"prompt file {name}.toml: [{lang}].{key} is missing")
            parts[key] = text.strip()
        used = placeholders(parts["system"]) | placeholders(parts["user"])
        if used != declared_set:
            raise PromptTemplateError(
                f"prompt file {name}.toml: [{lang}] uses {sorted(used)} "
                f"but declares {sorted(declared_set)}"
            )
        out[lang] = PromptTemplate(
            name=name,
            lang=lang,  # type: ignore[arg-type]
            system=parts["system"],
            user=parts["user"],
            variables=declared_set,
            fences=section_tags(parts["system"] + "\n" + parts["user"]),
        )
    return out


@lru_cache(maxsize=None)
def load_prompt(name: str, lang: Lang = "en") -> PromptTemplate:
    """Load (once, then cached) the prompt ``name`` in ``lang``.

    Raises ``ValueError`` (:class:`~hy_memory_langgraph.errors.InvalidInputError`)
    listing the available names or languages when either is unknown.
    """
    if name not in _names():
        raise InvalidInputError(
            f"unknown prompt {name!r}; available prompts: {', '.join(_names())}"
        )
    if lang not in LANGS:
        raise InvalidInputError(
            f"unknown prompt language {lang!r} for {name!r}; available: {', '.join(LANGS)}"
        )
    return _load_file(name)[lang]


@lru_cache(maxsize=1)
def _scene_fragments() -> dict[str, Any]:
    source = _prompt_dir().joinpath("fragments", "scenes.toml").read_text(encoding="utf-8")
    return tomllib.loads(source)


def scene_definitions(purpose: Literal["write", "search"], lang: Lang,
                      scenes: Sequence[str]) -> str:
    """The ``{scene_definitions}`` block of the routing prompts: one line per scene.

    Definitions live in ``fragments/scenes.toml`` (``write``: sorting a finished
    conversation; ``search``: routing a query), in both languages.

    Raises:
        PromptTemplateError: a scene has no definition (a registry entry without its
            prompt data).

    Example:
        >>> scene_definitions("search", "en", ["chat"]).startswith('- "chat": the user')
        True
    """
    data = _scene_fragments()
    sep = "：" if lang == "zh" else ": "
    lines = []
    for name in scenes:
        text = data.get(name, {}).get(lang, {}).get(purpose)
        if not isinstance(text, str):
            raise PromptTemplateError(
                f"prompts/fragments/scenes.toml has no [{name}.{lang}] {purpose} definition; "
                "every registered scene needs one"
            )
        lines.append(f'- "{name}"{sep}{text}')
    return "\n".join(lines)

