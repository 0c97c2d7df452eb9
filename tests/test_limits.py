"""One set of limits at every entry point (:mod:`hy_memory_langgraph.limits`): each limit
accepts an input at the limit and refuses one just over it with an ``InvalidInputError``
naming its setting, before any model sees the input (a spy embedding model records no
call, a chat model that raises is never called); inputs far over a limit (100,000 levels,
100,000 messages, 10 MB) are refused the same way, never with a ``RecursionError``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from hy_memory_langgraph.cli import main
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.errors import ConfigError, InvalidInputError
from hy_memory_langgraph.integrations import create_memory_tools
from hy_memory_langgraph.integrations.mcp_server import build_mcp_server
from hy_memory_langgraph.limits import Limits, check_nesting, json_text_depth
from hy_memory_langgraph.testing import HashingEmbeddings


SMALL = {"max_messages": 3, "max_write_bytes": 300, "max_metadata_bytes": 50, "max_query_bytes": 40,
         "max_queries": 2, "max_user_ids": 2, "max_search_limit": 20, "max_row_bytes": 4000,
         "max_message_bytes": 1024}


class Spy(HashingEmbeddings):
    """Hashing embeddings that count the texts they are given."""

    def __init__(self) -> None:
        super().__init__(dims=32)
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return super().embed_query(text)


@pytest.fixture
def backend() -> str:
    return "memory"  # the limits hold before any store


@pytest.fixture
def spy() -> Spy:
    return Spy()


@pytest.fixture
def client(make_client: Any, spy: Spy) -> Any:
    return make_client("lite", embeddings=spy, **SMALL)


def _deep(depth: int, leaf: Any = "leaf") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def refused(setting: str, call: Any, spy: Spy | None = None) -> None:
    """``call()`` raises an InvalidInputError naming ``setting``, and no model saw anything."""
    before = None if spy is None else spy.calls
    with pytest.raises(InvalidInputError, match=rf"more than {setting}=\d+"):
        call()
    if spy is not None:
        assert spy.calls == before


def twins(client: Any, name: str, *args: Any, **kwargs: Any) -> list[Any]:
    """The sync method and its async twin, each as a call of no argument."""
    return [lambda: getattr(client, name)(*args, **kwargs),
            lambda: asyncio.run(getattr(client, f"a{name}")(*args, **kwargs))]


# --------------------------------------------------------------------------- writes


def test_messages_per_write(client: Any, spy: Spy) -> None:
    for add in twins(client, "add", ["a", "b", "c"], user_id="u1"):
        assert add()["success"] is True
    for add in twins(client, "add", ["a", "b", "c", "d"], user_id="u1"):
        refused("MEMORY_MAX_MESSAGES", add, spy)
    refused("MEMORY_MAX_MESSAGES", lambda: client.add(["hi"] * 100_000, user_id="u1"), spy)


def test_bytes_per_write(client: Any, spy: Spy) -> None:
    assert client.add("é" * 150, user_id="u1")["success"] is True  # 300 bytes
    for add in twins(client, "add", "é" * 150 + "x", user_id="u1"):
        refused("MEMORY_MAX_WRITE_BYTES", add, spy)
    refused("MEMORY_MAX_WRITE_BYTES", lambda: client.add("x" * 10_000_000, user_id="u1"), spy)


def test_metadata_bytes_on_add_and_update(client: Any, spy: Spy) -> None:
    # the bytes of keys and strings, one for every other value: 1 (the dict) + 1 ("k") + 48
    memory_id = client.add("I like tea", user_id="u1", metadata={"k": "v" * 48})["memory_ids"][0]
    for add in twins(client, "add", "I like coffee", user_id="u1", metadata={"k": "v" * 49}):
        refused("MEMORY_MAX_METADATA_BYTES", add, spy)
    for update in twins(client, "update", memory_id, "I like green tea", metadata={"k": "v" * 49}):
        refused("MEMORY_MAX_METADATA_BYTES", update, spy)
    assert client.get(memory_id)["content"] == "I like tea"


def test_update_content_is_held_to_the_message_size(client: Any) -> None:
    memory_id = client.add("I like tea", user_id="u1")["memory_ids"][0]
    assert client.update(memory_id, "t" * 1024)["content"] == "t" * 1024
    for update in twins(client, "update", memory_id, "t" * 1025):
        refused("MEMORY_MAX_MESSAGE_BYTES", update)
    refused("MEMORY_MAX_MESSAGE_BYTES", lambda: client.update(memory_id, "t" * 20_000_000))
    assert client.get(memory_id)["content"] == "t" * 1024


def test_nesting_of_metadata_and_of_json_text_in_messages(make_client: Any, spy: Spy, raising_model: Any) -> None:
    client = make_client("pro", raising_model, embeddings=spy)
    at_limit = _deep(64)
    assert check_nesting(client.config.limits, at_limit, "metadata") > 0
    for add in twins(client, "add", "hi", user_id="u1", metadata=_deep(65)):
        refused("MEMORY_MAX_DEPTH", add, spy)
    refused("MEMORY_MAX_DEPTH", lambda: client.add("hi", user_id="u1", metadata=_deep(100_000)), spy)
    # tool-call arguments nested 2,000 deep in 4 KB of JSON text, and as a dict 100,000 deep
    for arguments in ("[" * 2000 + "]" * 2000, _deep(100_000)):
        trace = [{"role": "user", "content": "Save it"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"id": "c1", "type": "function", "function": {"name": "save", "arguments": arguments}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "saved"}]
        refused("MEMORY_MAX_DEPTH", lambda: client.add(trace, scene="working", user_id="u1"), spy)
    assert raising_model.prompts == []
    # JSON text counts from where its string is: 1 level for the dict around it
    assert client.config.limits.max_depth == 64
    assert check_nesting(client.config.limits, {"k": "[" * 63 + "]" * 63}, "metadata") > 0
    with pytest.raises(InvalidInputError, match="holds JSON text that nests too deeply"):
        check_nesting(client.config.limits, {"k": "[" * 64 + "]" * 64}, "metadata")


def test_workflow_extract(client: Any, make_client: Any) -> None:
    said = [{"msgRole": "user", "msgValue": "我的报销审批人是王经理"}]
    assert client.memory_extract("u1", msg_list=said * 3)["saved"] in (True, False)
    for extract in twins(client, "memory_extract", "u1", msg_list=said * 4):
        refused("MEMORY_MAX_MESSAGES", extract)
    refused("MEMORY_MAX_WRITE_BYTES", lambda: client.memory_extract("u1", user_message=["x" * 200],
                                                                    assistant_message=["y" * 101]))
    refused("MEMORY_MAX_METADATA_BYTES", lambda: client.memory_extract("u1", msg_list=said,
                                                                       dynamic_context={"k": "v" * 49}))
    deep = make_client("lite")  # the default limits: 64 levels come before 65,536 bytes
    refused("MEMORY_MAX_DEPTH", lambda: deep.memory_extract("u1", msg_list=said, dynamic_context=_deep(65)))


# --------------------------------------------------------------------------- searches


def test_query_text_queries_user_ids_and_limit(client: Any, spy: Spy) -> None:
    client.add("I like green tea", user_id="u1")
    accepted = [{"query": "q" * 40}, {"queries": ["a" * 20, "b" * 20]}, {"query": "tea", "user_ids": ["u1", "u2"]},
                {"query": "tea", "limit": 20}]
    over = [("MEMORY_MAX_QUERY_BYTES", {"query": "q" * 41}),
            ("MEMORY_MAX_QUERY_BYTES", {"query": "é" * 21}),
            ("MEMORY_MAX_QUERY_BYTES", {"queries": ["a" * 20], "query": "b" * 21}),
            ("MEMORY_MAX_QUERY_BYTES", {"query": "q" * 10_000_000}),
            ("MEMORY_MAX_QUERIES", {"queries": ["a", "b", "c"]}),
            ("MEMORY_MAX_USER_IDS", {"query": "tea", "user_ids": ["u1", "u2", "u3"]}),
            ("MEMORY_MAX_USER_IDS", {"query": "tea", "user_ids": [f"u{i}" for i in range(10_000)]}),
            ("MEMORY_MAX_SEARCH_LIMIT", {"query": "tea", "limit": 21})]
    for args in accepted:
        for search in twins(client, "search", **{"user_ids": ["u1"], **args}):
            assert search()["scene"] == "chat"
    for setting, args in over:
        for search in twins(client, "search", **{"user_ids": ["u1"], **args}):
            refused(setting, search, spy)


# --------------------------------------------------------------------------- export / import


def test_export_and_import(client: Any, make_client: Any) -> None:
    client.add("I like green tea", user_id="u1", metadata={"k": "v"})
    for export in twins(client, "export_memories", ["u1", "u2", "u3"]):
        refused("MEMORY_MAX_USER_IDS", lambda: list(export()))
    rows = list(client.export_memories(["u1", "u2"]))
    target = make_client("lite", **SMALL)
    for load in twins(target, "import_memories", rows, user_ids=["u1", "u2", "u3"]):
        refused("MEMORY_MAX_USER_IDS", load)
    assert target.import_memories(rows, user_ids=["u1"])["memory"] == 1
    big = json.loads(json.dumps(rows))
    memory = next(r for r in big if r["type"] == "memory")
    memory["value"]["metadata"] = {"k": "v" * 4000}
    for load in twins(target, "import_memories", big, user_ids=None):
        refused("MEMORY_MAX_IMPORT_ROW_BYTES", load)
    memory["value"]["metadata"] = _deep(100_000)
    refused("MEMORY_MAX_DEPTH", lambda: target.import_memories(big, user_ids=None))


def test_the_row_limits_leave_room_for_what_an_accepted_write_stored(make_client: Any) -> None:
    """A write at the depth limit exports rows that import again (a row adds two levels)."""
    source = make_client("lite")
    source.add("I like green tea", user_id="u1", metadata=_deep(63, ["x"]))  # 64 levels
    rows = list(source.export_memories(["u1"]))
    assert make_client("lite").import_memories(rows, user_ids=["u1"])["memory"] == 1


# --------------------------------------------------------------------------- tools, MCP, CLI


def test_memory_tools(client: Any, spy: Spy) -> None:
    search = create_memory_tools(client, user_id="u1")[0]
    assert search.invoke({"query": "q" * 40}) == "No memories found."
    refused("MEMORY_MAX_QUERY_BYTES", lambda: search.invoke({"query": "q" * 41}), spy)
    deep = {"name": "search_memory", "args": {"query": _deep(2000)}, "id": "c1", "type": "tool_call"}
    refused("MEMORY_MAX_DEPTH", lambda: search.invoke(deep), spy)
    refused("MEMORY_MAX_DEPTH", lambda: asyncio.run(search.ainvoke({"query": _deep(100_000)})), spy)


async def test_mcp_tools(client: Any, spy: Spy) -> None:
    async with create_connected_server_and_client_session(build_mcp_server(client, user_id="u1")) as session:
        deep = await session.call_tool("record_work", {"scene": "working", "messages": [_deep(80)]})
        long = await session.call_tool("search_memory", {"query": "q" * 41})
        many = await session.call_tool("record_work", {"scene": "working",
                                                       "messages": [{"role": "user", "content": "x"}] * 4})
    for result, setting in ((deep, "MEMORY_MAX_DEPTH"), (long, "MEMORY_MAX_QUERY_BYTES"),
                            (many, "MEMORY_MAX_MESSAGES")):
        assert result.isError and f"more than {setting}=" in result.content[0].text
    assert spy.calls == 0


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_MAX_QUERY_BYTES", "40")
    (tmp_path / "d").mkdir()
    data = ["--data-dir", str(tmp_path / "d"), "--json", "--mode", "lite"]
    deep = tmp_path / "deep.json"
    deep.write_text('{"messages": "hi", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for argv in (["add", str(deep), "-u", "alice"], ["search", "q" * 41, "-u", "alice"]):
        code = main([*argv, *data])
        error = json.loads(capsys.readouterr().out)["error"]
        assert code == 2 and error["code"] == "INVALID_INPUT" and "more than MEMORY_MAX_" in error["message"]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"type": "header", "format": "hy-memory-export", "version": 1}) + "\n"
                    + '{"type": "memory", "value": ' + "[" * 5000 + "]" * 5000 + "}\n")
    assert main(["import", str(rows), "--all-users", *data[:3]]) == 2
    assert "MEMORY_MAX_DEPTH" in json.loads(capsys.readouterr().out)["error"]["message"]


# --------------------------------------------------------------------------- the settings


def test_the_limits_are_settings() -> None:
    config = MemoryConfig.from_env({"MEMORY_MAX_QUERIES": "7"}, max_user_ids=9)
    assert (config.limits.max_queries, config.limits.max_user_ids) == (7, 9)
    assert MemoryConfig.from_env({}).limits == Limits()
    for name, value in (("MEMORY_MAX_DEPTH", "65"), ("MEMORY_MAX_SEARCH_LIMIT", "10001"),
                        ("MEMORY_MAX_SEARCH_LIMIT", "19"), ("MEMORY_MAX_QUERIES", "0")):
        with pytest.raises(ConfigError, match=name):
            MemoryConfig.from_env({name: value})
    assert Limits.setting("max_row_bytes") == "MEMORY_MAX_IMPORT_ROW_BYTES"


def test_json_text_depth_skips_string_literals_and_stops_early() -> None:
    assert json_text_depth('{"a": "[[[[", "b": [{"c": "\\"]]"}]}', 64) == 3
    assert json_text_depth("[" * 10_000_000, 64) == 65
    assert json_text_depth("not json", 64) == 0
