"""What every ``hy-memory`` subcommand shares: errors, output, the user and the data dir.

* with ``--json`` a command prints one JSON envelope, ``{"ok": true, "data": ...}`` or
  ``{"ok": false, "error": {"code", "message"}}`` (usage errors included); without it,
  readable text;
* exit codes: 0 success, 1 internal error or not found, 2 bad input;
* commands that read or write one user's memory need that user: ``--user-id`` / ``-u``,
  else ``HY_MEMORY_USER_ID``; there is no silent default, and every answer names the
  user it is about;
* commands that only read refuse a data dir that does not exist (a mistyped
  ``--data-dir`` would otherwise read an empty memory); only writing commands create one.

This module stays light (no client, no models): ``hy-memory --help`` imports only it and
the parser.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Final, TextIO

EXIT_OK: Final = 0
EXIT_INTERNAL: Final = 1
EXIT_BAD_INPUT: Final = 2
#: The environment variable naming the user when ``--user-id`` is not given.
USER_ENV: Final = "HY_MEMORY_USER_ID"
#: Where the data dir is when neither ``--data-dir`` nor ``MEMORY_DATA_DIR`` says.
DEFAULT_DATA_DIR: Final = "~/.hy_memory"


class CliError(Exception):
    """A failure the CLI reports as ``{"ok": false, "error": {"code", "message"}}``."""

    def __init__(self, code: str, message: str, exit_code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code


def user_id_of(args: argparse.Namespace) -> str:
    """The user a command is about: ``--user-id``, else ``$HY_MEMORY_USER_ID``."""
    user = getattr(args, "user_id", None) or os.environ.get(USER_ENV, "").strip()
    if not user:
        raise CliError("MISSING_USER", f"say whose memory: pass --user-id USER (or -u USER), "
                                       f"or set {USER_ENV}")
    return user


def data_dir_of(args: argparse.Namespace) -> Path:
    """The data dir of a command: ``--data-dir``, else ``$MEMORY_DATA_DIR``, else the default."""
    value = getattr(args, "data_dir", None) or os.environ.get("MEMORY_DATA_DIR") or DEFAULT_DATA_DIR
    return Path(value).expanduser()


def existing_data_dir(args: argparse.Namespace) -> Path:
    """The data dir of a reading command, which must exist (nothing is created)."""
    path = data_dir_of(args)
    if not path.is_dir():
        given = "--data-dir" if getattr(args, "data_dir", None) else \
            "MEMORY_DATA_DIR" if os.environ.get("MEMORY_DATA_DIR") else "the default data dir"
        raise CliError("NO_DATA_DIR", f"the data dir {path} ({given}) does not exist: check the "
                                      "path, or add memories first (hy-memory add ...)")
    return path


# API argument names in library error messages, and what the command line calls them.
_TERMS: Final = [
    (re.compile(r"non-empty query=\.\.\. or queries=\[\.\.\.\]"), "non-empty QUERY argument"),
    (re.compile(r"use client\.export_memories\(\[user_id\]\)"), "use hy-memory export -u USER"),
    (re.compile(r"\buser_ids(\[\])?\b"), "--user-id"),
    (re.compile(r"\buser_id\b"), "--user-id"),
    (re.compile(r"\blimit\b"), "--limit"),
    (re.compile(r"\bmin_score\b"), "--min-score"),
    (re.compile(r"\bcreated_after\b"), "--after"),
    (re.compile(r"\bcreated_before\b"), "--before"),
    (re.compile(r"\bmemory_at\b"), "--memory-at"),
    (re.compile(r"\bworkspace_id\b"), "--workspace-id"),
    (re.compile(r"\bsession_id\b"), "--session-id"),
    (re.compile(r"\bmemory_id\b"), "MEMORY_ID"),
    (re.compile(r"\bcontent must\b"), "TEXT must"),
    (re.compile(r"\bquery\b"), "QUERY"),
]


def cli_terms(message: str) -> str:
    """A library error message in command-line terms (``limit`` → ``--limit``, ...)."""
    for pattern, replacement in _TERMS:
        message = pattern.sub(replacement, message)
    return message


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
