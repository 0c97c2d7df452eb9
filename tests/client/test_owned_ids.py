"""``user_id=`` on the id-based calls: an app that passes on ids its users send (an
insecure direct object reference, otherwise) never shows, changes or erases another
user's memory; another user's id reads as an unknown one."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.errors import InvalidInputError
from tests.productivity.support import tool_trace


def test_another_users_id_is_unknown_to_every_id_call(make_client) -> None:
    client = make_client()
    chat = client.add("My locker number is 3316", user_id="alice")["memory_ids"][0]
    fact = client.add(tool_trace("Fix the timeout in search.py"), "working", user_id="alice")["memory_id"]
    for memory_id in (chat, fact):
        assert client.get(memory_id, user_id="bob") is None
        assert client.history(memory_id, user_id="bob") == []
        assert client.delete(memory_id, user_id="bob") is False
        assert client.get(memory_id, user_id="alice")["user_id"] == "alice"
        assert client.history(memory_id, user_id="alice")
    with pytest.raises(InvalidInputError, match="does not exist") as refused:
        client.update(chat, "My locker number is 0000", user_id="bob")
    with pytest.raises(InvalidInputError, match="does not exist") as missing:
        client.update("f" * 32, "My locker number is 0000")
    assert str(refused.value).replace(chat, "ID") == str(missing.value).replace("f" * 32, "ID")  # no oracle
    assert client.get(chat)["content"] == "My locker number is 3316"
    assert client.update(chat, "My locker number is 4417", user_id="alice")["content"] == "My locker number is 4417"
    assert client.delete(fact, user_id="alice") is True and client.get(fact) is None


async def test_the_async_twins_take_the_user_too(make_client) -> None:
    client = make_client()
    memory_id = client.add("I drink oolong tea", user_id="alice")["memory_ids"][0]
    assert await client.aget(memory_id, user_id="bob") is None
    assert await client.adelete(memory_id, user_id="bob") is False
    assert (await client.aget(memory_id, user_id="alice"))["content"] == "I drink oolong tea"


def test_a_bad_user_id_is_refused(make_client) -> None:
    client = make_client()
    memory_id = client.add("I drink oolong tea", user_id="alice")["memory_ids"][0]
    with pytest.raises(InvalidInputError, match="user_id"):
        client.get(memory_id, user_id=" alice")


def test_two_spellings_of_one_name_are_one_user_and_look_alikes_are_refused(make_client) -> None:
    client = make_client()
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    memory_id = client.add("I drink oolong tea", user_id=decomposed)["memory_ids"][0]
    assert client.get(memory_id)["user_id"] == composed
    assert [m["memory_id"] for m in client.search("tea", user_ids=[composed])["memories"]] == [memory_id]
    assert client.list_memories(decomposed)["memories"][0]["memory_id"] == memory_id
    for look_alike in ("Zo\u00eb\u3164", "Zo\u00eb\ufe0f", "Zo\u034f\u00eb", "Zo\u00eb\u2800"):
        with pytest.raises(InvalidInputError, match=r"invisible character U\+"):
            client.add("I drink black tea", user_id=look_alike)
        with pytest.raises(InvalidInputError, match=r"invisible character U\+"):
            client.search("tea", user_ids=[look_alike])
