"""Where a configuration puts things: files, store names, vector collections.

The embedded layout under the data dir (names fixed by the contract; with
``MEMORY_DB_URL`` each store is a schema named after its file's stem instead):

* ``data/chat_memory.db``: chat memories, their history and traces;
* ``data/coding_memory.db``: working memory (``MEMORY_CODING_DB_PATH``, ``X.db``);
  beside it ``X_cv.db`` (coding memory), ``X_trace.db`` (the history both productivity
  scenes share) and ``hy_code_chain/hy_code.db`` (the coding version chain); vector
  collections ``X_coding_keys`` / ``X_working_facts`` (``_cv`` for coding);
* ``data/pipeline_log.db``: the per-request pipeline log;
* ``data/background.db``: queued writes (``add(..., background=True)``) and the checkpoints
  of the write graph runs that process them;
* ``data/embedding_calibration.json``: the similarity anchors of each embedding model;
* ``cache/embeddings.db``: the embedding cache, when on;
* ``workflow/<user>/``: workflow memory (``user.md``, ``memory.md``,
  ``workflows/<id>.md``, ``apps/<app id>/…``); the schema ``workflow_memory`` on PostgreSQL.

:class:`StorageLayout` computes them from the fields of a
:class:`~hy_memory_langgraph.config.MemoryConfig`, which inherits it.

Example:
    >>> from hy_memory_langgraph.config import MemoryConfig
    >>> cfg = MemoryConfig.from_env({"MEMORY_CODING_DB_PATH": "/x/y/mem.db"})
    >>> str(cfg.scene_db_path("coding")), cfg.experience_collection("coding")
    ('/x/y/mem_cv.db', 'mem_coding_keys_cv')
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import hy_memory_langgraph.scenes as scenes
from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES, Scene, get_scene

if TYPE_CHECKING:
    from hy_memory_langgraph.config.settings import CodingConfig


class StorageLayout:
    """Paths, store names and collections derived from ``data_dir``, ``coding.db_path``,
    ``db_url`` and ``db_schema_prefix`` (the fields of the configuration inheriting it)."""

    data_dir: Path
    coding: CodingConfig
    db_url: str | None
    db_schema_prefix: str

    # ------------------------------------------------------------------ derived paths

    @property
    def chat_db_path(self) -> Path:
        """``{data_dir}/data/chat_memory.db``."""
        return self.data_dir / "data" / "chat_memory.db"

    @property
    def working_db_path(self) -> Path:
        """``MEMORY_CODING_DB_PATH`` or ``{data_dir}/data/coding_memory.db``."""
        if self.coding.db_path is not None:
            return self.coding.db_path
        return self.data_dir / "data" / "coding_memory.db"

    def _sibling(self, suffix: str) -> Path:
        working = self.working_db_path
        return working.with_name(f"{working.stem}{suffix}{working.suffix}")

    @property
    def trace_db_path(self) -> Path:
        """The history shared by the productivity scenes: ``X.db`` → ``X_trace.db``."""
        return self._sibling("_trace")

    @property
    def chain_db_path(self) -> Path:
        """The version-evolution chain: ``<dir>/hy_code_chain/hy_code.db``."""
        return self.working_db_path.parent / "hy_code_chain" / "hy_code.db"

    @property
    def collection_base(self) -> str:
        """Stem of the working file (``coding_memory`` by default)."""
        return self.working_db_path.stem

    @property
    def pipeline_log_path(self) -> Path:
        """``{data_dir}/data/pipeline_log.db``."""
        return self.data_dir / "data" / "pipeline_log.db"

    @property
    def background_db_path(self) -> Path:
        """``{data_dir}/data/background.db``: the queue of background writes and the
        checkpoints of their runs."""
        return self.data_dir / "data" / "background.db"

    @property
    def calibration_path(self) -> Path:
        """``{data_dir}/data/embedding_calibration.json``: similarity anchors per model."""
        return self.data_dir / "data" / "embedding_calibration.json"

    @property
    def workflow_dir(self) -> Path:
        """``{data_dir}/workflow``."""
        return self.data_dir / "workflow"

    # ------------------------------------------------------------------ store names
    # A store is named after the stem of its file (``chat_memory``, ``coding_memory_trace``,
    # ``hy_code``, ``pipeline_log``, ``background``).

    #: Name of the workflow documents store (only used with ``MEMORY_DB_URL``).
    workflow_store: ClassVar[str] = "workflow_memory"

    def scene_store(self, scene: str) -> str:
        """Name of a productivity scene's store (``coding_memory``, ``coding_memory_cv``)."""
        return self.scene_db_path(scene).stem

    def family_db_path(self, scene: str) -> Path:
        """The file of a scene of a graph family other than chat and productivity:
        ``{DATA_DIR}/data/<scene>_memory.db`` (its store is named after the stem)."""
        return self.chat_db_path.parent / f"{get_scene(scene).name}_memory.db"

    def _family_paths(self) -> list[Path]:
        others = [s.name for s in scenes.SCENE_REGISTRY.values() if s.pipeline not in ("chat", "productivity")]
        return [self.family_db_path(s) for s in others]

    def store_paths(self) -> dict[str, Path]:
        """Every SQLite store file by store name (the embedded layout).

        Raises:
            ConfigError: Two stores would get the same name (a ``MEMORY_CODING_DB_PATH``
                whose stem collides with another store's file).
        """
        paths = [self.chat_db_path, *(self.scene_db_path(s) for s in PRODUCTIVITY_SCENES),
                 self.trace_db_path, self.chain_db_path, self.pipeline_log_path, self.background_db_path,
                 *self._family_paths()]
        named = {p.stem: p for p in paths}
        if len(named) != len(paths) or self.workflow_store in named:
            raise ConfigError(
                f"MEMORY_CODING_DB_PATH={str(self.working_db_path)!r} gives a store name used by "
                "another store; choose another file name (e.g. coding_memory.db)."
            )
        return named

    def store_target(self, name: str) -> tuple[str, str | None]:
        """Where store ``name`` lives: ``(MEMORY_DB_URL, prefix + name)`` or ``(SQLite file, None)``.

        Example:
            >>> from hy_memory_langgraph.config import MemoryConfig
            >>> cfg = MemoryConfig.from_env({}, data_dir="/m")
            >>> cfg.store_target("coding_memory_cv")
            ('/m/data/coding_memory_cv.db', None)
            >>> MemoryConfig.from_env({"MEMORY_DB_URL": "postgresql://h/db"}, data_dir="/m").store_target("hy_code")
            ('postgresql+psycopg://h/db', 'hy_code')
        """
        paths = self.store_paths()
        if name not in paths and name != self.workflow_store:
            raise InvalidInputError(f"unknown store {name!r}; known: {', '.join(sorted(paths))}")
        if self.db_url is not None:
            return self.db_url, self.db_schema_prefix + name
        if name == self.workflow_store:
            return str(self.workflow_dir), None
        return str(paths[name]), None

    def scene_db_path(self, scene: str) -> Path:
        """The store file of a productivity scene: ``X.db`` plus its storage suffix.

        Example:
            >>> from hy_memory_langgraph.config import MemoryConfig
            >>> MemoryConfig.from_env({}, data_dir="/m").scene_db_path("coding").name
            'coding_memory_cv.db'
        """
        return self._sibling(_productivity(scene).file_suffix)

    def experience_collection(self, scene: str) -> str:
        """Vector collection of experiences: ``{base}_coding_keys`` plus the scene suffix."""
        return f"{self.collection_base}_coding_keys{_productivity(scene).file_suffix}"

    def fact_collection(self, scene: str) -> str:
        """Vector collection of facts: ``{base}_working_facts`` plus the scene suffix."""
        return f"{self.collection_base}_working_facts{_productivity(scene).file_suffix}"


def _productivity(scene: str) -> Scene:
    spec = get_scene(scene)
    if spec.pipeline != "productivity":
        raise InvalidInputError(
            f"scene={scene!r} has no productivity storage; use one of "
            f"{', '.join(PRODUCTIVITY_SCENES)}"
        )
    return spec
