"""The ``hy-memory`` command: parse, run the subcommand's handler, report, exit.

Handlers are found by name (:data:`~hy_memory_langgraph.cli.parsers.HANDLERS`) and
imported when their subcommand runs. Every failure becomes a message (text on stderr,
or the JSON envelope under ``--json``, usage errors included), never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from hy_memory_langgraph import __version__
from hy_memory_langgraph.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    CliError,
    cli_terms,
    envelope,
    print_json,
)
from hy_memory_langgraph.cli.parsers import UsageError, build_parser, wants_json
from hy_memory_langgraph.errors import ConfigError, InvalidInputError

#: Exit status after the reader of stdout went away (as if killed by SIGPIPE).
EXIT_BROKEN_PIPE: Final = 141


def _handler_of(spec: str) -> Callable[[argparse.Namespace], Any]:
    """The handler ``"module:function"`` of this package's ``cli`` folder, imported now."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(f"hy_memory_langgraph.cli.{module}"), name)


def _fail(as_json: bool, error: CliError) -> int:
    if as_json:
        print_json(envelope(error=error))
    else:
        print(f"hy-memory: error: {error.message}", file=sys.stderr)
    return error.exit_code


def _usage(as_json: bool, error: UsageError) -> int:
    if not as_json:
        error.parser.print_usage(sys.stderr)
    return _fail(as_json, CliError("USAGE_ERROR", f"{error.parser.prog}: {error.message}", EXIT_BAD_INPUT))


def _dispatch(args: argparse.Namespace) -> int:
    as_json = bool(getattr(args, "json", False))
    try:
        handler = _handler_of(args.handler)
        if getattr(args, "raw_exit", False):
            return int(handler(args))
        data: Any = handler(args)
        if as_json:
            print_json(envelope(data))
        return EXIT_OK
    except CliError as exc:
        return _fail(as_json, exc)
    except ConfigError as exc:
        return _fail(as_json, CliError("CONFIG_ERROR", cli_terms(str(exc)), EXIT_BAD_INPUT))
    except InvalidInputError as exc:
        return _fail(as_json, CliError("INVALID_INPUT", cli_terms(str(exc)), EXIT_BAD_INPUT))
    except KeyboardInterrupt:
        return _fail(as_json, CliError("INTERRUPTED", "interrupted", 130))
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message, never a traceback
        return _fail(as_json, CliError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}", EXIT_INTERNAL))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hy-memory`` command; returns the exit status.

    The command owns its process, so it asks OpenMP (FAISS, the e5 engine) for passive
    waits before either runtime loads; a value in the environment wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser(__version__).parse_args(argv)
    except UsageError as exc:
        return _usage(wants_json(argv), exc)
    try:
        code = _dispatch(args)
        if not sys.stdout.closed:  # a server that spoke over stdio has closed it
            sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader left (``| head``): stop quietly, and keep Python from complaining
        # about the unflushed stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
