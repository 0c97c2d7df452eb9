"""Package faces whose public names are imported when first used.

A face (the package root, :mod:`hy_memory_langgraph.client`) names where each of its
public names lives; :func:`lazy_names` gives it the module ``__getattr__`` and
``__dir__`` that import a name's home on first use and keep the value, so importing the
face itself loads none of them.

Example:
    >>> getattr_, dir_ = lazy_names("demo", {"sqrt": "math"}, {})
    >>> getattr_("sqrt")(9.0), dir_()
    (3.0, ['sqrt'])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_names(module: str, homes: Mapping[str, str],
               namespace: MutableMapping[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a face.

    Args:
        module: The face's name (for the error of an unknown name).
        homes: Public name -> the module it lives in (the names ``dir()`` lists).
        namespace: The face's ``globals()``; a name imported once is kept there, so later
            lookups never reach ``__getattr__``.
    """

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *homes})

    return getattr_, dir_
