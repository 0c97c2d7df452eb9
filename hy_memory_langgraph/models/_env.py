"""Helpers shared by the model modules."""

from __future__ import annotations

import os
from collections.abc import Mapping


def env_get(env: Mapping[str, str] | None, name: str) -> str | None:
    """``env[name]`` stripped, or ``None`` when unset or blank (``None`` env: os.environ)."""
    source = os.environ if env is None else env
    value = source.get(name)
    if value is None or not str(value).strip():
        return None
    return str(value).strip()
