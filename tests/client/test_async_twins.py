"""Every public method of the client has an ``a*`` twin that does the same."""

from __future__ import annotations

import inspect
from pathlib import Path

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.testing import HashingEmbeddings


def _public_methods() -> list[str]:
    """The client's public methods, its reader's included."""
    return [name for name, _ in inspect.getmembers(HyMemoryClient, inspect.isfunction)
            if not name.startswith(("_", "a"))]


def test_every_public_method_has_an_async_twin() -> None:
    missing = [name for name in _public_methods()
               if not inspect.iscoroutinefunction(getattr(HyMemoryClient, f"a{name}", None))]
    assert missing == []
    assert {"close", "export_memories", "import_memories", "stats", "list_memories"} <= set(_public_methods())


async def test_the_twins_do_what_the_methods_do(tmp_path: Path) -> None:
    async with HyMemoryClient(mode="lite", data_dir=tmp_path / "a", embeddings=HashingEmbeddings(32)) as client:
        added = await client.aadd("I adopted a grey cat called Miso", user_id="u1")
        rows = await client.aexport_memories()
        again = list(client.export_memories())
        assert [r for r in rows if r["type"] != "header"] == [r for r in again if r["type"] != "header"]
        assert (await client.astats())["users"] == 1
        assert (await client.astats())["mode"] == "lite"  # the client's override runs
        page = await client.alist_memories("u1")
        assert [m["memory_id"] for m in page["memories"]] == added["memory_ids"]
    copy = HyMemoryClient(mode="lite", data_dir=tmp_path / "b", embeddings=HashingEmbeddings(32))
    result = await copy.aimport_memories(rows, user_ids=None)
    assert result["complete"] is True
    found = await copy.asearch("cat", user_ids=["u1"])
    assert found["memories"][0]["content"] == "I adopted a grey cat called Miso"
    await copy.aclose()
    copy.close()  # closing twice is harmless
