"""``hy-memory export`` / ``hy-memory import``: a whole memory as JSONL, exact round trip.

Handlers only (the arguments are in :mod:`~hy_memory_langgraph.cli.parsers`); the rows
are those of :meth:`HyMemoryClient.export_memories`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from hy_memory_langgraph.cli.common import CliError, dump_json
from hy_memory_langgraph.cli.progress import Progress
from hy_memory_langgraph.cli.session import checked_json, open_client, open_reader


def export(args: argparse.Namespace) -> Any:
    to_stdout = args.output in (None, "-")
    if to_stdout and args.json:
        raise CliError("INVALID_INPUT", "--json prints a summary: pass --output FILE for the rows")
    with open_reader(args) as reader:
        rows = list(reader.export_memories(args.user_ids or None))
    bar = Progress("rows", total=len(rows), enabled=args.progress)
    stream: TextIO = sys.stdout
    try:
        if not to_stdout:
            Path(args.output).expanduser().parent.mkdir(parents=True, exist_ok=True)
            stream = open(Path(args.output).expanduser(), "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        for done, row in enumerate(rows, start=1):
            stream.write(dump_json(row, stream=stream) + "\n")
            bar.update(done)
        stream.flush()
    finally:
        if stream is not sys.stdout:
            stream.close()
    bar.close()
    footer = rows[-1]
    summary = {"output": None if to_stdout else str(args.output), "rows": footer["rows"], "counts": footer["counts"]}
    if not to_stdout and not args.json:
        counts = ", ".join(f"{k}={v}" for k, v in footer["counts"].items())
        print(f"exported {footer['rows']} rows to {args.output} ({counts or 'empty'})")
    return summary


def _rows(lines: list[str], source: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(checked_json(line, f"{source} line {number}"))
        except json.JSONDecodeError as exc:
            raise CliError("INVALID_JSON", f"{source} line {number} is not JSON: {exc.msg}") from exc


def import_(args: argparse.Namespace) -> Any:
    if not args.user_ids and not args.all_users:
        raise CliError("MISSING_USER", "say whose rows to import: --user-id USER (repeatable; rows of "
                                       "other users are refused), or --all-users to restore every user "
                                       "of the file")
    try:
        text = sys.stdin.read() if args.source == "-" else Path(args.source).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError("INVALID_INPUT", f"cannot read {args.source}: {exc}") from exc
    lines = [line for line in text.splitlines() if line.strip()]
    bar = Progress("rows", total=len(lines), enabled=args.progress)
    with open_client(args, writes=True) as client:
        result = client.import_memories(_rows(lines, args.source), on_row=bar.update,
                                        user_ids=None if args.all_users else args.user_ids)
    bar.close()
    if not result["complete"]:
        print("hy-memory: warning: the export has no matching footer row; it may be truncated",
              file=sys.stderr)
    for row in result["refused"]:
        print(f"hy-memory: warning: memory {row['memory_id']} of {row['user_id']} not imported: "
              f"{row['reason']}", file=sys.stderr)
    for user, count in result["refused_users"].items():
        print(f"hy-memory: warning: {count} rows of user {user!r} not imported: not among --user-id",
              file=sys.stderr)
    if not args.json:
        counts = ", ".join(f"{k}={v}" for k, v in result.items()
                           if k not in ("rows", "complete", "refused", "refused_users") and v)
        print(f"imported {result['rows']} rows ({counts or 'nothing'})")
    return result
