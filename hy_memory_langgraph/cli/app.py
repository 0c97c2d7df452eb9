"""The ``hy-memory`` command: parser, dispatch, envelopes, exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from hy_memory_langgraph import __version__
from hy_memory_langgraph.cli import demo, memories, transfer, workflow
from hy_memory_langgraph.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    CliError,
    add_common_options,
    envelope,
    print_json,
)
from hy_memory_langgraph.errors import ConfigError, InvalidInputError

__all__ = ["build_parser", "main"]

#: Exit status after the reader of stdout went away (as if killed by SIGPIPE).
EXIT_BROKEN_PIPE = 141

DESCRIPTION = """\
Long-term memory for agents, on this machine: remember conversations, search them,
inspect and move a memory. Runs offline with no API key (lite mode, embedded
embeddings); set OPENAI_API_KEY for LLM extraction (pro mode).

examples:
  hy-memory add --text "I adopted a grey cat called Miso" -u alice
  hy-memory search "what is my cat called?" -u alice
  hy-memory export -o memory.jsonl && hy-memory --data-dir ./copy import memory.jsonl
"""


def build_parser() -> argparse.ArgumentParser:
    """The full parser; ``--data-dir`` and ``--json`` work before or after the subcommand."""
    parser = argparse.ArgumentParser(prog="hy-memory", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hy-memory {__version__}")
    add_common_options(parser, top=True)
    parent = argparse.ArgumentParser(add_help=False)
    add_common_options(parent)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    memories.register(sub, parent)
    transfer.register(sub, parent)
    demo.register(sub, parent)
    workflow.register(sub, parent)
    return parser


def _fail(args: argparse.Namespace, error: CliError) -> int:
    if getattr(args, "json", False):
        print_json(envelope(error=error))
    else:
        print(f"hy-memory: error: {error.message}", file=sys.stderr)
    return error.exit_code


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if getattr(args, "raw_exit", False):
            return int(args.handler(args))
        data: Any = args.handler(args)
        if args.json:
            print_json(envelope(data))
        return EXIT_OK
    except CliError as exc:
        return _fail(args, exc)
    except ConfigError as exc:
        return _fail(args, CliError("CONFIG_ERROR", str(exc), EXIT_BAD_INPUT))
    except InvalidInputError as exc:
        return _fail(args, CliError("INVALID_INPUT", str(exc), EXIT_BAD_INPUT))
    except KeyboardInterrupt:
        return _fail(args, CliError("INTERRUPTED", "interrupted", 130))
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message, never a traceback
        return _fail(args, CliError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hy-memory`` command; returns the exit status.

    The command owns its process, so it asks OpenMP (FAISS, the e5 engine) for passive
    waits before either runtime loads; a value in the environment wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    args = build_parser().parse_args(argv)
    try:
        code = _dispatch(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader left (``| head``): stop quietly, and keep Python from complaining
        # about the unflushed stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
