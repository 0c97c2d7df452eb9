"""The ``hy-memory`` command.

Subcommands (each takes ``--data-dir`` and ``--json``, before or after its name):
``add``, ``search``, ``get``, ``history``, ``delete``, ``stats`` (:mod:`.memories`),
``export`` / ``import`` (:mod:`.transfer`), ``demo`` (:mod:`.demo`), ``workflow run``
(:mod:`.workflow`). The parser and exit codes live in :mod:`.app`.
"""

from __future__ import annotations

from hy_memory_langgraph.cli.app import main

__all__ = ["main"]
