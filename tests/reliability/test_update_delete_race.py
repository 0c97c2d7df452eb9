"""No zombie memories: ``update`` racing ``delete`` on one memory, on every backend.

After both threads finish, a memory is either fully there (``get`` finds it, search
returns it, a second ``delete`` succeeds) or fully gone (``get`` is ``None``, search
never returns it, ``update`` raised "does not exist" without writing anything).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from hy_memory_langgraph.errors import InvalidInputError

TRIALS = 150


def _race(client: Any, memory_id: str) -> tuple[Any, Any]:
    barrier = threading.Barrier(2)
    outcome: dict[str, Any] = {}

    def update() -> None:
        barrier.wait()
        try:
            outcome["update"] = client.update(memory_id, "Alice moved to Rome")["version"]
        except InvalidInputError as exc:
            outcome["update"] = exc

    def delete() -> None:
        barrier.wait()
        outcome["delete"] = client.delete(memory_id)

    threads = [threading.Thread(target=update), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcome["update"], outcome["delete"]


@pytest.mark.parametrize("order", ["update_first", "delete_first", "together"])
def test_update_racing_delete_leaves_no_zombie(make_client, order: str) -> None:
    client = make_client("lite")
    zombies, updated_after_delete = 0, 0
    for i in range(TRIALS // 3):
        memory_id = client.add(f"Alice lives in Paris {order} {i}", user_id="u1")["memory_ids"][0]
        if order == "update_first":
            client.update(memory_id, "Alice lives in Lyon")
        elif order == "delete_first":
            client.delete(memory_id)
        updated, deleted = _race(client, memory_id)
        found = {m["memory_id"] for m in client.search("Alice", user_ids=["u1"], limit=50)["memories"]}
        exists = client.get(memory_id) is not None
        zombies += int(exists != (memory_id in found)) + int(exists and deleted is True)
        if isinstance(updated, InvalidInputError):
            assert not exists and "does not exist" in str(updated)
        elif not exists:
            updated_after_delete += int(deleted is not True)
    assert zombies == 0
    assert updated_after_delete == 0
