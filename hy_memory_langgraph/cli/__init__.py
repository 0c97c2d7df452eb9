"""The ``hy-memory`` command.

:mod:`.parsers` defines every subcommand and its arguments; :mod:`.app` parses, runs the
subcommand's handler (imported when it runs: :mod:`.memories`, :mod:`.transfer`,
:mod:`.demo`, :mod:`.workflow`) and reports; :mod:`.common` holds the envelopes, exit
codes and the user / data-dir rules every command follows.
"""

from __future__ import annotations

from hy_memory_langgraph.cli.app import main

__all__ = ["main"]
