"""Prompt templates of hy_memory_langgraph, in English and Chinese, and their loader.

Each prompt lives in its own ``<name>.toml`` file next to this module::

    description = "what the prompt is for"
    variables = ["summary"]          # the placeholders both languages must use
    trusted = []                     # variables filled with the package's own text

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

Values are data. A placeholder alone between a section's tags::

    <new_messages>
    {new_messages}
    </new_messages>

is a data region (:mod:`hy_memory_langgraph.fences`): the tags get a fresh random nonce
(``<new_messages data="3f9a1c07b2e4">``) named by a line placed before the user template,
and the value is written one JSON value per line: a list or tuple one line per item, a
mapping one line, a string one line per line of it, ``None`` nothing. Any other
placeholder gets its value as one JSON literal (``"alice"``), except the variables a
prompt file lists under ``trusted``: those the package fills with its own text (scene
definitions, dates), inserted as written. So no value can close a section, open one,
or start a line of the prompt.

Example:
    >>> p = load_prompt("scene_judge", "en")
    >>> system, user = p.render(scene_definitions="coding: changes to code",
    ...                          summary="turn 1: user: fix the build; tools: bash (result)")
    >>> "fix the build" in user
    True
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, get_args

from hy_memory_langgraph.errors import HyMemoryError, InvalidInputError
from hy_memory_langgraph.fences import closing, literal, new_nonce, opening

_Lang = Literal["en", "zh"]
LANGS: tuple[str, ...] = get_args(_Lang)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: A section (its tags around one placeholder alone) or a placeholder.
_SLOT = re.compile(r"<(?P<tag>[a-z_]+)>\n\{(?P<section>[A-Za-z_][A-Za-z0-9_]*)\}\n</(?P=tag)>"
                   r"|\{(?P<inline>[A-Za-z_][A-Za-z0-9_]*)\}")


class PromptTemplateError(HyMemoryError, ValueError):
    """A packaged prompt file is malformed (a bug in the package, not in caller input)."""


class PromptVariableError(HyMemoryError, KeyError):
    """``render`` got a missing or an unexpected variable; the message names it."""

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else ""


def placeholders(text: str) -> frozenset[str]:
    """Names of the ``{name}`` placeholders in ``text``."""
    return frozenset(_PLACEHOLDER.findall(text))


def sections(text: str) -> dict[str, str]:
    """Variable → section name of the data regions of ``text`` (``<history>``, its
    placeholder alone on the next line, ``</history>``)."""
    return {m["section"]: m["tag"] for m in _SLOT.finditer(text) if m["section"]}


def _rows(value: Any) -> list[Any]:
    """A section's value as its rows (one JSON value each)."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt in one language: a system and a user template plus their variables."""

    name: str
    lang: _Lang
    system: str
    user: str
    variables: frozenset[str]
    #: Variables filled with the package's own text, inserted as written.
    trusted: frozenset[str] = frozenset()
    #: Variable → section name of the data regions (:func:`sections`).
    sections: Mapping[str, str] = field(default_factory=dict)
    #: The line naming the nonce, before the user template when it has sections.
    data_note: str = ""

    def render(self, **values: Any) -> tuple[str, str]:
        """Return ``(system, user)`` with every placeholder replaced (see the module
        docstring for how values are written).

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
        nonce = new_nonce()

        def slot(match: re.Match[str]) -> str:
            if match["section"]:
                tag = match["tag"]
                rows = [literal(row) for row in _rows(values[match["section"]])]
                return "\n".join([opening(tag, nonce), *rows, closing(tag, nonce)])
            name, value = match["inline"], values[match["inline"]]
            if name in self.trusted:
                return "" if value is None else str(value)
            return literal(value)

        user = _SLOT.sub(slot, self.user)
        if self.sections:
            user = self.data_note.replace("{nonce}", nonce) + "\n\n" + user
        return _SLOT.sub(slot, self.system), user


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
    trusted = data.get("trusted", [])
    if not isinstance(trusted, list) or not set(trusted) <= declared_set:
        raise PromptTemplateError(f"prompt file {name}.toml: 'trusted' must list declared variables")
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
        regions = sections(parts["user"])
        if sections(parts["system"]) or set(regions) & set(trusted):
            raise PromptTemplateError(f"prompt file {name}.toml: [{lang}] data sections belong in the "
                                      "user template and hold no trusted variable")
        out[lang] = PromptTemplate(
            name=name,
            lang=lang,  # type: ignore[arg-type]
            system=parts["system"],
            user=parts["user"],
            variables=declared_set,
            trusted=frozenset(trusted),
            sections=regions,
            data_note=_fragment_file("data")["data_note"][lang],
        )
    return out


@lru_cache(maxsize=None)
def load_prompt(name: str, lang: _Lang = "en") -> PromptTemplate:
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


@lru_cache(maxsize=None)
def _fragment_file(name: str) -> dict[str, Any]:
    source = _prompt_dir().joinpath("fragments", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(source)


def scene_definitions(purpose: Literal["write", "search"], lang: _Lang,
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
    data = _fragment_file("scenes")
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

