"""Lite mode: raw turns stored, zero LLM calls anywhere; hybrid search works."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.errors import InvalidInputError, InvalidSceneError

TURNS = [
    ("2024-05-01T09:00:00Z", "I adopted a grey cat called Miso."),
    ("2024-05-03T18:30:00Z", "I'm training for the Berlin marathon in September."),
    ("2024-05-10T12:00:00Z", "我最喜欢的茶是龙井。"),
    ("2024-06-02T08:15:00Z", "We moved to Lisbon, near the river."),
]


@pytest.fixture
def lite(make_client, raising_model):
    client = make_client(mode="lite", llm=raising_model)
    for i, (at, text) in enumerate(TURNS):
        client.add([{"role": "user", "content": text}], user_id="u1", memory_at=at, session_id=f"s{i}")
    return client


def test_lite_add_stores_each_turn_with_memory_at(make_client) -> None:
    client = make_client(mode="lite")
    result = client.add(
        [{"role": "user", "content": "My sister lives in Oslo."},
         {"role": "assistant", "content": "Oslo is lovely in summer."}],
        user_id="u1", memory_at="2023-07-01T10:00:00Z", metadata={"src": "t"},
    )
    assert result["success"] and result["scene"] == "chat"
    assert set(result) == {"success", "scene", "request_id", "memory_ids", "ops", "ops_summary", "elapsed_ms"}
    assert result["ops_summary"]["ADD"] == 2 and len(result["memory_ids"]) == 2
    stored = [client.get(i) for i in result["memory_ids"]]
    assert [m["content"] for m in stored] == ["My sister lives in Oslo.", "Oslo is lovely in summer."]
    assert all(m["memory_at"].startswith("2023-07-01T10:00") for m in stored)
    assert all(m["metadata"] == {"src": "t"} for m in stored)
    assert [m["owner"] for m in stored] == ["user", "assistant"]


def test_lite_makes_no_llm_call_on_any_path(lite) -> None:
    lite.search("cat name", user_ids=["u1"])
    lite.search(queries=["hi", "cat name"], user_ids=["u1"])
    lite.search("cat name", user_ids=["u1"], search_mode="agentic")
    lite.add([{"role": "user", "content": "run it"},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]},
              {"role": "tool", "tool_call_id": "c1", "content": "ok"}], scene="chat", user_id="u1")
    assert lite.llm_usage.total_calls == 0


def test_search_finds_relevant_memory_first(lite) -> None:
    found = lite.search("What is my cat called?", user_ids=["u1"], limit=2)
    assert found["scene"] == "chat" and found["rewrite"] is None
    assert set(found) == {"request_id", "scene", "memories", "rewrite", "elapsed_ms"}
    top = found["memories"][0]
    assert "Miso" in top["content"]
    assert {"memory_id", "content", "score", "memory_at", "metadata", "created_at", "updated_at"} <= set(top)
    scores = [m["score"] for m in found["memories"]]
    assert scores == sorted(scores, reverse=True)


def test_chinese_query_uses_cjk_lexical_match(lite) -> None:
    found = lite.search("龙井", user_ids=["u1"], limit=1)
    assert found["memories"][0]["content"] == "我最喜欢的茶是龙井。"


def test_time_range_filters_on_memory_at(lite) -> None:
    found = lite.search("where do we live", user_ids=["u1"], created_after="2024-05-02",
                        created_before="2024-05-31")
    contents = [m["content"] for m in found["memories"]]
    assert contents and all("Miso" not in c and "Lisbon" not in c for c in contents)


def test_min_score_and_limit(lite) -> None:
    assert len(lite.search("cat", user_ids=["u1"], limit=2)["memories"]) == 2
    assert lite.search("cat", user_ids=["u1"], min_score=0.99)["memories"] == []


def test_lite_turn_keeps_previous_message_as_context(make_client) -> None:
    client = make_client(mode="lite")
    client.add("We got a puppy last week.", user_id="u1", session_id="s")
    second = client.add([{"role": "assistant", "content": "We called him Biscuit."}], user_id="u1", session_id="s")
    client.add("Unrelated other session", user_id="u1", session_id="t")
    memory = client.get(second["memory_ids"][0])
    assert memory["content"] == "We called him Biscuit."
    assert memory["context"] == "We got a puppy last week."
    found = client.search("puppy name", user_ids=["u1"], limit=2)["memories"]
    assert "We called him Biscuit." in [m["content"] for m in found]


def test_users_are_isolated(make_client) -> None:
    client = make_client(mode="lite")
    client.add("Alice's secret PIN is 4321", user_id="alice")
    client.add("Bob likes jazz", user_id="bob")
    for mode in ("default", "agentic"):
        found = client.search("secret PIN", user_ids=["bob"], search_mode=mode)
        assert all("PIN" not in m["content"] for m in found["memories"])
    both = client.search("secret PIN", user_ids=["bob", "alice"])
    assert any("PIN" in m["content"] for m in both["memories"])


@pytest.mark.parametrize("scene", ["chatting", "CHAT", "", 3])
def test_invalid_scene_names_allowed_values(make_client, scene) -> None:
    client = make_client()
    with pytest.raises(InvalidSceneError, match="'chat', 'working', 'coding'"):
        client.add("hello", scene=scene, user_id="u1")
    with pytest.raises(ValueError, match="'chat', 'working', 'coding'"):
        client.search("hello", scene=scene, user_ids=["u1"])


@pytest.mark.parametrize("user_ids", [None, [], [""], "  "])
def test_user_ids_required(make_client, user_ids) -> None:
    with pytest.raises(InvalidInputError, match="user_ids"):
        make_client().search("hello", user_ids=user_ids)


def test_user_id_required_on_add(make_client) -> None:
    with pytest.raises(InvalidInputError, match="user_id"):
        make_client().add("hello", user_id="")


def test_bad_inputs_are_rejected_without_writing(make_client) -> None:
    client = make_client()
    with pytest.raises(InvalidInputError, match="memory_at"):
        client.add("hello", user_id="u1", memory_at="not a date")
    with pytest.raises(InvalidInputError, match="limit"):
        client.search("hello", user_ids=["u1"], limit=0)
    with pytest.raises(InvalidInputError, match="MEMORY_MAX_SEARCH_LIMIT=10000"):
        client.search("hello", user_ids=["u1"], limit=2**61)  # a fuzz find: SQL overflowed
    assert client.search("hello", user_ids=["u1"], limit=10_000)["memories"] == []
    with pytest.raises(InvalidInputError, match="query"):
        client.search(user_ids=["u1"])
    assert client.search("hello", user_ids=["u1"])["memories"] == []


def test_get_update_delete_history(make_client) -> None:
    client = make_client()
    memory_id = client.add("I live in Paris", user_id="u1")["memory_ids"][0]
    updated = client.update(memory_id, "I live in Paris, 11th district")
    assert updated["content"] == "I live in Paris, 11th district" and updated["version"] == 2
    ops = [event["op"] for event in client.history(memory_id)]
    assert ops == ["ADD", "UPDATE"]
    assert client.delete(memory_id) is True
    assert client.get(memory_id) is None and client.delete(memory_id) is False
    # the content is erased with the memory; a content-free DELETE event stays
    assert [e["op"] for e in client.history(memory_id)] == ["DELETE"]
    assert "Paris" not in str(client.history(memory_id))
    with pytest.raises(InvalidInputError):
        client.update(memory_id, "gone")


def test_delete_all_removes_only_that_user(make_client) -> None:
    client = make_client()
    client.add(["a one", "a two"], user_id="a")
    client.add("b one", user_id="b")
    assert client.delete_all("a") == 2
    assert client.search("one", user_ids=["a"])["memories"] == []
    assert len(client.search("one", user_ids=["b"])["memories"]) == 1


def test_user_ids_with_dots_and_slashes(make_client) -> None:
    client = make_client()
    client.add("likes sailing", user_id="jane.doe@example.com")
    found = client.search("sailing", user_ids=["jane.doe@example.com"])
    assert found["memories"][0]["user_id"] == "jane.doe@example.com"


async def test_async_twins(make_client) -> None:
    client = make_client()
    result = await client.aadd("I play the cello", user_id="u1")
    found = await client.asearch("cello", user_ids=["u1"])
    assert found["memories"][0]["memory_id"] == result["memory_ids"][0]
    assert (await client.aget(result["memory_ids"][0]))["content"] == "I play the cello"
    assert [e["op"] for e in await client.ahistory(result["memory_ids"][0])] == ["ADD"]
    assert await client.adelete(result["memory_ids"][0]) is True


def test_update_keeps_memory_at_and_refuses_productivity_ids(make_client) -> None:
    client = make_client()
    memory_id = client.add("I live in Paris", user_id="u1", memory_at="2024-05-01")["memory_ids"][0]
    assert client.update(memory_id, "I live in Paris, 11th")["memory_at"].startswith("2024-05-01")
    assert client.update(memory_id, "I live in Lyon", memory_at="2024-09-01")["memory_at"].startswith("2024-09-01")
    with pytest.raises(InvalidInputError, match="not edited in place"):
        client.update("fact_working_" + "0" * 32, "x")


@pytest.mark.parametrize("bad", [float("nan"), 1e20, "2024-13-45"])
def test_bad_memory_at_names_the_field(make_client, bad) -> None:
    with pytest.raises(InvalidInputError, match="memory_at"):
        make_client().add("hello", user_id="u1", memory_at=bad)


def test_non_json_metadata_is_rejected_before_any_work(make_client, raising_model) -> None:
    import datetime as dt

    client = make_client(mode="pro", llm=raising_model)
    with pytest.raises(InvalidInputError, match="metadata"):
        client.add("hello", user_id="u1", metadata={"when": dt.datetime(2024, 1, 1)})
    assert raising_model.call_count == 0


def test_memory_id_error_hint(make_client) -> None:
    with pytest.raises(InvalidInputError, match="returned by add"):
        make_client().get("")


def test_reopening_with_another_embedding_size_names_the_fix(tmp_path) -> None:
    from hy_memory_langgraph import ConfigError, HyMemoryClient
    from hy_memory_langgraph.testing import HashingEmbeddings

    with HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(dims=64)) as client:
        client.add("hello", user_id="u1")
    with HyMemoryClient(mode="lite", data_dir=tmp_path, embeddings=HashingEmbeddings(dims=32)) as client:
        with pytest.raises(ConfigError, match="64-dim vectors.*HY_MEMORY_EMBEDDING_MODEL=local"):
            client.add("hello", user_id="u1")


def test_search_reloads_a_users_memories_only_after_a_change(make_client, backend, monkeypatch) -> None:
    """In process (InMemoryStore) a user's memories are loaded once per change; a store
    with a persistent lexical index never loads them to search."""
    from hy_memory_langgraph.repos.chat import ChatRepository

    loads: list[str] = []
    original = ChatRepository.active
    monkeypatch.setattr(ChatRepository, "active", lambda self, uid: loads.append(uid) or original(self, uid))
    per_change = ["u1"] if backend == "memory" else []
    client = make_client()
    client.add("I play chess", user_id="u1")
    client.search("chess", user_ids=["u1"])
    client.search("chess again", user_ids=["u1"])
    assert loads == per_change
    memory_id = client.add("I play go", user_id="u1")["memory_ids"][0]
    assert len(client.search("go", user_ids=["u1"])["memories"]) == 2 and loads == per_change * 2
    client.delete(memory_id)
    assert [m["content"] for m in client.search("go", user_ids=["u1"])["memories"]] == ["I play chess"]
