"""``python -m hy_memory_langgraph.cli``: the ``hy-memory`` command."""

from __future__ import annotations

from hy_memory_langgraph.cli import main

raise SystemExit(main())
