"""What a data dir holds: memories per scene, kind and status, users, files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from hy_memory_langgraph.repos.base import RecordRepository
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES
from hy_memory_langgraph.services.context import MemoryContext


def _repo(context: MemoryContext, scene: str) -> RecordRepository:
    return context.chat_repo if scene == "chat" else context.productivity_repo(scene)


def memory_stats(context: MemoryContext, workflow_dir: Path) -> dict[str, Any]:
    """Counts of one data dir (reads every record once; no vectors, no model calls).

    Returns ``scenes`` (per scene: ``{kind: {status: n}}`` and ``users``), ``users``
    (distinct users with memories), ``history_events``, ``chain_threads``,
    ``workflow_users`` and ``files`` (size in bytes of each file under the data dir).

    Example:
        >>> memory_stats(client.context, client.config.workflow_dir)["users"]  # doctest: +SKIP
        3
    """
    scenes: dict[str, Any] = {}
    users: set[str] = set()
    events = 0
    for scene in ("chat", *PRODUCTIVITY_SCENES):
        kinds: dict[str, Counter[str]] = {}
        scene_users: set[str] = set()
        for what, _, value in _repo(context, scene).dump():
            if what == "event":
                events += 1
                continue
            kinds.setdefault(str(value.get("kind") or "chat"), Counter())[str(value.get("status"))] += 1
            scene_users.add(str(value.get("user_id")))
        scenes[scene] = {"kinds": {k: dict(c) for k, c in kinds.items()}, "users": len(scene_users)}
        users |= scene_users
    root = context.config.data_dir
    files = {p.relative_to(root).as_posix(): p.stat().st_size
             for p in sorted(root.rglob("*")) if p.is_file()} if root.is_dir() else {}
    workflow_users = len([p for p in workflow_dir.iterdir() if p.is_dir()]) if workflow_dir.is_dir() else 0
    return {"data_dir": str(root), "scenes": scenes, "users": len(users), "history_events": events,
            "chain_threads": sum(1 for _ in context.chain_store.dump()),
            "workflow_users": workflow_users, "files": files}
