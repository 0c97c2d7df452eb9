"""``hy-memory worker``: a separate process that forms the memories of queued writes.

It runs the worker loop of :class:`~hy_memory_langgraph.client.background.Background`
(the one a client runs in a thread) until ``SIGINT`` / ``SIGTERM`` (after the step in
progress) or, with ``--drain``, until the queue is empty.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from hy_memory_langgraph.cli.common import envelope, print_json
from hy_memory_langgraph.cli.session import open_client


def run(args: argparse.Namespace) -> int:
    """Serve the queue; prints what is left in it when it ends."""
    args.mode = getattr(args, "mode", None) or "pro"  # a pro client needs a model: its error says so
    client = open_client(args, writes=True)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if args.retry_failed:
            client.background.queue.requeue_failed()
        if not args.json:
            print(f"hy-memory worker: serving {client.config.db_url and 'MEMORY_DB_URL' or client.config.data_dir}"
                  f"{' until drained' if args.drain else ''} (Ctrl-C to stop)", file=sys.stderr)
        client.background.serve(stop, drain=args.drain)
        left: dict[str, Any] = client.background.counts()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        client.close()
    if args.json:
        print_json(envelope({"background": left}))
    else:
        print(f"hy-memory worker: stopped; queued {left['queued']}, running {left['running']}, "
              f"failed {left['failed']}", file=sys.stderr)
    return 0
