"""The client of one ``hy-memory`` command, opened the way the command needs it.

Commands that only read (``list``, ``get``, ``history``, ``stats``, ``export``, ``log``)
open a :class:`~hy_memory_langgraph.client.MemoryReader`: no model is resolved, no graph
is built, nothing is embedded. The others open a
:class:`~hy_memory_langgraph.client.HyMemoryClient`, whose module (and with it LangGraph's
graph runtime) the client package loads when that name is first used.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hy_memory_langgraph import client as client_layer
from hy_memory_langgraph.cli.common import data_dir_of, existing_data_dir
from hy_memory_langgraph.client.reader import MemoryReader
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.limits import WRAPPING, check_json_text

if TYPE_CHECKING:
    from hy_memory_langgraph.client import HyMemoryClient


def open_client(args: argparse.Namespace, *, writes: bool) -> HyMemoryClient:
    """A client on the command's data dir (``--data-dir``, else the environment) with
    ``--mode`` and, unless ``--no-embedding-cache``, an embedding cache in the data dir.

    Args:
        args: The parsed command line.
        writes: The command may write; a reading command (``writes=False``) refuses a
            data dir that does not exist instead of creating an empty one.
    """
    data_dir = data_dir_of(args) if writes else existing_data_dir(args)
    config = MemoryConfig.from_env(data_dir=data_dir)
    cache = not getattr(args, "no_embedding_cache", False)
    return client_layer.HyMemoryClient(mode=getattr(args, "mode", None), config=config, embedding_cache=cache)


def open_reader(args: argparse.Namespace) -> MemoryReader:
    """A reader on the command's data dir, which must exist (nothing is created)."""
    return MemoryReader(config=MemoryConfig.from_env(data_dir=existing_data_dir(args)))


def checked_json(text: str, source: str) -> str:
    """``text`` when its JSON nests no deeper than ``MEMORY_MAX_DEPTH`` allows (plus the
    levels of a file's list of writes), checked before it is parsed; else
    ``InvalidInputError`` naming the setting."""
    check_json_text(MemoryConfig.from_env().limits, text, source, wrapping=WRAPPING)
    return text
