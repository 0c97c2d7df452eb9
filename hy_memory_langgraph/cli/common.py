"""What every ``hy-memory`` subcommand shares: options, the client, output, errors.

* ``--data-dir`` and ``--json`` are accepted before or after the subcommand (and
  ``--mode``, ``--user-id`` wherever a subcommand takes them);
* with ``--json`` a command prints one JSON envelope, ``{"ok": true, "data": ...}`` or
  ``{"ok": false, "error": {"code", "message"}}``; without it, readable text;
* exit codes: 0 success, 1 internal error or not found, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Final, TextIO

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_OK", "CliError", "add_common_options", "dump_json",
    "envelope", "make_client", "print_json", "user_id_of",
]

EXIT_OK: Final = 0
EXIT_INTERNAL: Final = 1
EXIT_BAD_INPUT: Final = 2


class CliError(Exception):
    """A failure the CLI reports as ``{"ok": false, "error": {"code", "message"}}``."""

    def __init__(self, code: str, message: str, exit_code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code


def add_common_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--data-dir``, ``--json``, ``--no-embedding-cache``; on subcommands they never reset
    a value given before the subcommand."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument("--data-dir", default=default, metavar="DIR",
                        help="where the memory files live (default: $MEMORY_DATA_DIR, else ~/.hy_memory)")
    parser.add_argument("--json", action="store_true", default=False if top else argparse.SUPPRESS,
                        help="print one JSON envelope instead of text")
    parser.add_argument("--no-embedding-cache", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="do not keep embeddings in {data dir}/cache/embeddings.db")


def add_user_option(parser: argparse.ArgumentParser, help_text: str = "whose memories") -> None:
    parser.add_argument("--user-id", "-u", help=f"{help_text} (default: $HY_MEMORY_USER_ID, else 'default')")


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=["lite", "pro"],
                        help="lite: no LLM calls; pro: LLM extraction (default: pro when "
                             "OPENAI_API_KEY is set, else lite)")


def user_id_of(args: argparse.Namespace) -> str:
    return getattr(args, "user_id", None) or os.environ.get("HY_MEMORY_USER_ID") or "default"


def data_dir_of(args: argparse.Namespace) -> Path | None:
    value = getattr(args, "data_dir", None)
    return None if value is None else Path(value).expanduser()


def make_client(args: argparse.Namespace) -> HyMemoryClient:
    """The client of one command: ``--data-dir`` (else the environment), ``--mode``, and
    an embedding cache in the data dir unless ``--no-embedding-cache``."""
    config = MemoryConfig.from_env(data_dir=data_dir_of(args))
    cache = not getattr(args, "no_embedding_cache", False)
    return HyMemoryClient(mode=getattr(args, "mode", None), config=config, embedding_cache=cache)


def _utf8(stream: TextIO) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "").startswith("utf8")


def dump_json(value: Any, *, compact: bool = True, stream: TextIO | None = None) -> str:
    """``value`` as JSON (non-ASCII kept when the stream is UTF-8)."""
    ascii_only = not _utf8(stream or sys.stdout)
    return json.dumps(value, ensure_ascii=ascii_only, indent=None if compact else 2, default=str)


def print_json(value: Any, *, compact: bool = True) -> None:
    print(dump_json(value, compact=compact))


def envelope(data: Any = None, error: CliError | None = None) -> dict[str, Any]:
    if error is not None:
        return {"ok": False, "error": {"code": error.code, "message": error.message}}
    return {"ok": True, "data": data}
