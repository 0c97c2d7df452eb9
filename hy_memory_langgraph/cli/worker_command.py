"""The ``hy-memory worker`` subcommand's arguments (its handler: :mod:`.worker`)."""

from __future__ import annotations

import argparse
from typing import Any, Final

_WORKER_DESCRIPTION: Final = """\
Process the background writes of a data dir (or of MEMORY_DB_URL): the requests that
add(..., background=True) and the agent faces queue in pro mode. Runs until interrupted
(SIGINT/SIGTERM end it after the step in progress; the run is resumed by the next
worker), or with --drain until nothing is queued. Several workers may share one
PostgreSQL database, on any machines; on SQLite one worker per data dir works at a
time and the others wait. Needs a chat model (OPENAI_API_KEY...) unless --mode lite.
"""


def add_worker_command(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Register ``worker`` on the subcommands ``sub`` (``parent``: the common options)."""
    worker = sub.add_parser("worker", parents=[parent], help="process queued background writes",
                            description=_WORKER_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    worker.add_argument("--drain", action="store_true", help="exit once nothing is queued or running")
    worker.add_argument("--retry-failed", action="store_true",
                        help="queue again, first, the failed writes that were kept")
    worker.add_argument("--mode", choices=["lite", "pro"],
                        help="pro (default): the write graph with the model; lite: store raw turns only")
    worker.set_defaults(handler="worker:run", raw_exit=True)
