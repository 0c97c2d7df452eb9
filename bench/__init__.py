"""Benchmarks of hy_memory_langgraph (not tests): each script prints what it measured.

Run them from the repository root as modules, e.g. ``python -m bench.locomo_recall``;
``docs/benchmarks.md`` holds the current figures with their commands. Shared code lives
in :mod:`bench.common` (data paths and loaders, the recall harness, corpora).
"""
