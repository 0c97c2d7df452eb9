"""One privacy gate at persistence: whatever a write path makes, no detected secret reaches
a file of the data dir (every byte of every database, write-ahead log and document read).

Each test puts a fresh random secret where early redaction cannot see it (a model's
output, an imported row's every field, a workflow reply, a pipeline-log record) or
where it can, and scans the whole data dir after the client closed.
"""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.redact.gate import carries_secret, seal, seal_text
from hy_memory_langgraph.redact.scan import scan
from hy_memory_langgraph.store import SealedStore
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel
from tests.productivity.support import experience, extraction, tool_trace

_RNG = random.Random(5150)


def _body(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _secrets() -> dict[str, str]:
    """Fresh secrets of three kinds: what is stored, and the part no file may hold."""
    return {"github": "ghp_" + _body(36), "password": "Zq" + _body(10) + "!7", "aws": "AKIA" + _body(16, string.ascii_uppercase + string.digits)}


def _holding(root: Path, needles: list[str]) -> list[tuple[str, str]]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [(str(path.relative_to(root)), n) for n in needles if n.encode() in data]
    return found


def _client(root: Path, llm: Any = None, **env: str) -> HyMemoryClient:
    from hy_memory_langgraph.config import MemoryConfig
    config = MemoryConfig.from_env({"MEMORY_PIPELINE_LOG_TEXT": "true", **env}, data_dir=root)
    return HyMemoryClient(mode="pro" if llm else "lite", llm=llm, config=config, data_dir=root,
                          embeddings=HashingEmbeddings(dims=32))


def test_a_secret_the_chat_model_writes_never_reaches_disk(tmp_path: Path) -> None:
    s = _secrets()
    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": [
        {"content": f"The home wifi password is {s['password']}", "subject": "wifi", "owner": "user"},
        {"content": f"Deploy key: {s['github']}", "subject": f"key {s['aws']}", "owner": "user"}]}})
    client = _client(tmp_path / "d", model)
    result = client.add("the wifi one is base64 V2lGaQ== and the deploy key is on the card",
                        user_id="alice", session_id="s1")
    assert result["ops_summary"]["ADD"] == 2
    contents = [m["content"] for m in client.list_memories("alice")["memories"]]
    assert any("[REDACTED:" in c for c in contents) and "wifi password" in " ".join(contents)
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_a_secret_the_productivity_model_writes_never_reaches_disk(tmp_path: Path) -> None:
    s = _secrets()
    model = ScriptedChatModel.from_stages({"coding_extract": extraction(
        subject=f"src/db.py:connect {s['aws']}", statement=f"set password: {s['password']}",
        details=f"export GITHUB_TOKEN={s['github']}", files=["src/db.py"],
        experiences=[experience(f"rotate {s['github']}", solution=f"password={s['password']}",
                                keys=[s["aws"]])])})
    client = _client(tmp_path / "d", model)
    client.add(tool_trace("Fix the database connection"), scene="coding", user_id="alice",
               workspace_id="github.com/example/db")
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_a_secret_the_workflow_model_writes_never_reaches_disk(tmp_path: Path) -> None:
    s = _secrets()
    model = ScriptedChatModel.from_stages({"workflow_extract": {"entries": [
        {"dimension": "user", "text": f"用户的报销系统密码是 {s['password']}", "workflow_id": None,
         "alias": None, "workflow_name": None},
        {"dimension": "global", "text": f"接口令牌 token: {s['github']}", "workflow_id": None,
         "alias": None, "workflow_name": None},
        {"dimension": "user", "text": "用户希望回复使用中文。", "workflow_id": None,
         "alias": None, "workflow_name": None}]}})
    client = _client(tmp_path / "d", model)
    saved = client.memory_extract("alice", msg_list=[{"msgRole": "user", "msgValue": "记住我的偏好"}])
    assert saved["saved"] is True, saved
    assert "使用中文" in client.memory_prompt("alice")["memoryPrompt"]
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_update_and_every_field_of_an_add_are_sealed(tmp_path: Path) -> None:
    s = _secrets()
    client = _client(tmp_path / "d")
    memory_id = client.add([{"role": "user", "content": f"my github token is {s['github']}"}],
                           user_id="alice", session_id="s1",
                           metadata={"deep": {"er": [{"x": f"password: {s['password']}"}]},
                                     "aws_key": s["aws"]})["memory_ids"][0]
    client.update(memory_id, f"rotated: token {s['github']}", metadata={"pw": s["password"]})
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def _import_rows(s: dict[str, str]) -> list[dict[str, Any]]:
    value = {"memory_id": "0" * 31 + "1", "user_id": "alice", "content": f"token {s['github']}",
             "memory_at": "2024-01-01T00:00:00+00:00", "memory_ts": 1704067200.0, "status": "active",
             "version": 1, "supersedes": [], "superseded_by": None, "agent_id": None,
             "session_id": None, "request_id": "r1", "metadata": {"a": [{"b": s["aws"]}]},
             "created_at": "2024-01-01T00:00:00+00:00", "updated_at": "2024-01-01T00:00:00+00:00",
             "subject": "", "owner": "user", "role": "user", "source": f"turn, password: {s['password']}",
             "name": f"password: {s['password']}", "question": False, "context": "", "carried": ""}
    event = {"memory_id": value["memory_id"], "user_id": "alice", "kind": "chat", "op": "ADD",
             "content": f"aws {s['aws']}", "file": f"GITHUB_TOKEN={s['github']}", "seq": 1,
             "at": "2024-01-01T00:00:00+00:00"}
    thread = {"owner": "alice\x1f", "branch": None, "file": f"src/{s['github']}.py",
              "symbol": f"password={s['password']}", "created_at": "2024-01-01T00:00:00+00:00",
              "rounds": [{"number": 1, "request_id": "r1", "fact_id": None, "asked": f"use {s['aws']}",
                          "removed": [], "added": [f"TOKEN = '{s['github']}'"], "reverts": [],
                          "hunks": 1, "source": "edit", "at": "2024-01-01T00:00:00+00:00"}]}
    return [
        {"type": "header", "format": "hy-memory-export", "version": 1},
        {"type": "memory", "scene": "chat", "id": value["memory_id"], "value": value},
        {"type": "event", "scene": "chat", "key": f"{value['memory_id']}:1", "value": event},
        {"type": "trace", "store": "chat", "namespace": ["trace_window", "alice", "s1"], "key": "recent",
         "value": {"messages": [{"role": "user", "content": f"my password is {s['password']}",
                                 "name": s["github"]}], "id": s["aws"]}},
        {"type": "chain_thread", "value": thread},
        {"type": "workflow_file", "path": "alice/user.md", "text": f"# user\n\n- token: {s['github']}\n"},
    ]


def test_an_import_seals_every_field_of_every_row(tmp_path: Path) -> None:
    s = _secrets()
    client = _client(tmp_path / "d")
    report = client.import_memories(_import_rows(s), user_ids=None)
    assert report["memory"] == 1 and report["refused"] == []
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_an_import_refuses_a_row_placed_by_a_secret(tmp_path: Path) -> None:
    s = _secrets()
    client = _client(tmp_path / "d")
    rows = _import_rows(s)
    rows[1]["value"]["user_id"] = s["github"]
    rows[3]["namespace"] = ["trace_window", "alice", f"password={s['password']}"]
    report = client.import_memories(rows, user_ids=None)
    assert len(report["refused"]) == 2 and all("secret" in r["reason"] for r in report["refused"])
    assert client.list_memories(s["github"].lower()[:8] + "x")["memories"] == []
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_ids_that_carry_a_secret_are_refused_naming_the_field(tmp_path: Path) -> None:
    s = _secrets()
    client = _client(tmp_path / "d")
    for field in ("user_id", "session_id", "agent_id"):
        ids = {"user_id": "alice", field: s["github"]}
        with pytest.raises(InvalidInputError, match=field):
            client.add("I like tea", **ids)
    client.close()
    assert _holding(tmp_path / "d", [s["github"]]) == []


def test_the_store_refuses_a_place_that_carries_a_secret() -> None:
    from langgraph.store.memory import InMemoryStore
    store = SealedStore(InMemoryStore())
    with pytest.raises(InvalidInputError, match="namespace label"):
        store.put(("notes", "ghp_" + _body(36)), "k", {"text": "x"})
    with pytest.raises(InvalidInputError, match="a key"):
        store.put(("notes",), "password=" + _body(12) + "9!", {"text": "x"})


def test_a_value_the_gate_changes_gets_no_lexical_document(tmp_path: Path) -> None:
    from hy_memory_langgraph.store import HyMemoryStore, LexicalOp
    secret = "ghp_" + _body(36)
    inner = HyMemoryStore(str(tmp_path / "s.db"))
    store = SealedStore(inner)
    store.batch([
        _put(("chat", "u"), "m1", {"text": f"token {secret}"}),
        LexicalOp(("chat", "u"), "m1", {secret.lower(): 1, "token": 1}),
        _put(("chat", "u"), "m2", {"text": "green tea"}),
        LexicalOp(("chat", "u"), "m2", {"green": 1, "tea": 1}),
    ])
    assert inner.lexical_status(("chat", "u")).docs == 1  # m2's document only
    assert inner.get(("chat", "u"), "m1").value == {"text": "token [REDACTED:github_token]"}
    inner.close()
    assert _holding(tmp_path, [secret, secret.lower()]) == []


def test_a_sealed_store_declares_what_the_wrapped_store_offers(tmp_path: Path) -> None:
    """Protocol checks read attributes statically on Python 3.12+ (``inspect.getattr_static``,
    never ``__getattr__``): the gate must not hide the lexical index from the repositories."""
    import inspect

    from langgraph.store.memory import InMemoryStore

    from hy_memory_langgraph.repos.base import RecordRepository
    from hy_memory_langgraph.store import CapabilityFlags, HyMemoryStore, IndexedStore
    members = [*CapabilityFlags.__annotations__, "lexical_status", "lexical_search", "vector_search_keys"]
    inner = HyMemoryStore(str(tmp_path / "s.db"))
    sealed = SealedStore.around(inner)
    missing = [m for m in members if _static(sealed, m) is None]
    assert missing == []
    assert [getattr(sealed, f) for f in CapabilityFlags.__annotations__] == \
        [getattr(inner, f) for f in CapabilityFlags.__annotations__]
    assert RecordRepository(sealed, {"chat": "chat"}, "chat_history").indexed is sealed
    plain = SealedStore.around(InMemoryStore())
    assert [m for m in members if _static(plain, m) is not None] == []
    assert not isinstance(plain, IndexedStore) and not isinstance(plain, CapabilityFlags)
    assert inspect.getattr_static(sealed, "batch") is not None
    inner.close()


def _static(obj: object, name: str) -> object:
    import inspect
    return inspect.getattr_static(obj, name, None)


def _put(namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> Any:
    from langgraph.store.base import PutOp
    return PutOp(namespace, key, value, index=False)


def test_the_gate_keeps_clean_values_as_they_are() -> None:
    value = {"content": "I adopted a grey cat called Miso", "turn_hash": "ab" * 32,
             "memory_id": "0f" * 16, "memory_at": "2024-05-01T09:00:00+00:00", "n": [1, 2.5, None]}
    assert seal(value) == value


@pytest.mark.parametrize("seed", range(3))
def test_own_id_and_time_shapes_hold_no_detectable_secret(seed: int) -> None:
    """The gate skips scanning the shapes of this package's own ids and times: no rule
    finds a secret in any of them (random samples of each shape)."""
    rng = random.Random(seed)
    for _ in range(300):
        own = ["".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (32, 64)]
        own.append(f"{rng.randint(1970, 2100)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
                   f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}."
                   f"{rng.randint(0, 999999):06d}+00:00")
        for text in own:
            assert scan(text) == [] and seal_text(text) == text and not carries_secret(text)


def _spy(changed: list[Any]) -> Any:
    """``seal``, noting each value it changed in ``changed``."""

    def spy(value: Any) -> Any:
        out = seal(value)
        if out != value:
            changed.append(value)
        return out

    return spy


def test_a_clean_corpus_passes_the_gate_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real conversations and tool traces, written in lite mode: the gate changes no value
    (early redaction already did its work, and nothing of our own looks like a secret)."""
    from hy_memory_langgraph.store import sealed as sealed_module
    changed: list[Any] = []
    monkeypatch.setattr(sealed_module, "seal", _spy(changed))
    turns = _locomo_turns()
    client = _client(tmp_path / "d")
    for n, (speaker, text, session) in enumerate(turns[:300]):
        client.add([{"role": "user" if n % 2 else "assistant", "content": text}], user_id=speaker,
                   session_id=session)
    client.add(tool_trace(), scene="coding", user_id="alice", workspace_id="github.com/example/service")
    client.add(tool_trace("Send the weekly report"), scene="working", user_id="alice")
    client.close()
    assert changed == []


def _locomo_turns() -> list[tuple[str, str, str]]:
    from bench.common.paths import LOCOMO_PATH
    if not LOCOMO_PATH.is_file():
        if os.environ.get("HY_TEST_REQUIRE_DATA") == "1":
            pytest.fail(f"HY_TEST_REQUIRE_DATA=1 but {LOCOMO_PATH} is missing")
        pytest.skip(f"no LoCoMo at {LOCOMO_PATH}")
    sample = json.loads(LOCOMO_PATH.read_text(encoding="utf-8"))[0]["conversation"]
    out = []
    for key, turns in sample.items():
        if key.startswith("session_") and isinstance(turns, list):
            out += [(t["speaker"].lower(), t["text"], key) for t in turns if t.get("text")]
    return out


# ------------------------------------------------------------- background writes


def test_a_secret_the_model_writes_never_reaches_a_checkpoint_or_the_queue(tmp_path: Path) -> None:
    """A background run's checkpoints hold the model's facts between nodes (here: while
    reconcile waits) and a failed attempt's error stays in the queue: both sealed."""
    import threading

    s = _secrets()
    inside, release = threading.Event(), threading.Event()
    attempts = {"reconcile": 0}

    def reconcile(_: Any) -> str:
        attempts["reconcile"] += 1
        if attempts["reconcile"] == 1:  # the run's first attempt (the first add had no candidate)
            raise ConnectionError(f"upstream said: bad key {s['github']}")
        if attempts["reconcile"] == 2:
            inside.set()
            assert release.wait(60)
        return '{"operations": []}'

    model = ScriptedChatModel.from_stages({"chat_extract": [
        {"facts": [{"content": "The user has a wifi network", "subject": "wifi", "owner": "user"}]},
        {"facts": [{"content": f"The home wifi password is {s['password']}", "subject": "wifi", "owner": "user"},
                   {"content": f"Deploy key: {s['github']}", "subject": f"key {s['aws']}", "owner": "user"}]}],
        "chat_reconcile": reconcile})
    client = _client(tmp_path / "d", model, MEMORY_BACKGROUND_DELAY_S="3600")
    client.add("I have a wifi network at home", user_id="alice", session_id="s1")  # the candidate
    client.add("the wifi one is base64 V2lGaQ== and the deploy key is on the card", user_id="alice",
               session_id="s1", background=True)
    flushing = threading.Thread(target=client.flush)
    flushing.start()
    assert inside.wait(60)  # the facts are in the run's checkpoint, the first attempt's error in its row
    assert _holding(tmp_path / "d", list(s.values())) == []
    assert "[REDACTED:" in client.pending("alice")[0]["error"]
    release.set()
    flushing.join()
    contents = " ".join(m["content"] for m in client.list_memories("alice")["memories"])
    assert "wifi password is [REDACTED:" in contents
    client.close()
    assert _holding(tmp_path / "d", list(s.values())) == []


def test_the_checkpoint_serializer_seals_every_string_and_refuses_what_it_cannot_walk() -> None:
    from hy_memory_langgraph.jobs.checkpoints import SealedSerializer
    from hy_memory_langgraph.messages.types import Msg, ToolCall
    from hy_memory_langgraph.repos.records import ChatMemory

    s = _secrets()
    serde = SealedSerializer()
    call = ToolCall(id="c1", name="login", arguments={"nested": [{"token": s["github"]}]}, raw_arguments="{}")
    state = {"msgs": [Msg(role="assistant", content="", tool_calls=(call,))],
             "candidates": [ChatMemory(memory_id="0f" * 16, user_id="u", content=f"key {s['aws']}",
                                       memory_at="2024-05-01T00:00:00+00:00", memory_ts=0.0,
                                       metadata={"deep": [[{"pw": f"password: {s['password']}"}]]})]}
    kind, data = serde.dumps_typed(state)
    assert all(secret.encode() not in data for secret in s.values())
    back = serde.loads_typed((kind, data))
    assert back["msgs"][0].tool_calls[0].name == "login" and isinstance(back["msgs"][0].tool_calls, tuple)
    assert back["candidates"][0].memory_id == "0f" * 16 and "[REDACTED:" in back["candidates"][0].content
    with pytest.raises(TypeError, match="privacy gate"):
        serde.dumps_typed(s["github"].encode())


def test_a_clean_background_run_passes_the_checkpoint_gate_unchanged(tmp_path: Path) -> None:
    """Nothing of LangGraph's or ours in a checkpoint looks like a secret: the gate changes
    no value of a clean run's checkpoints (so it never corrupts one)."""
    changed: list[Any] = []
    model = ScriptedChatModel.from_stages({"chat_extract": {"facts": [
        {"content": "The user adopted a grey cat called Miso", "subject": "Miso", "owner": "user"}]},
        "coding_extract": extraction(experiences=[experience("Fix the timeout")])})
    client = _client(tmp_path / "d", model, MEMORY_BACKGROUND_DELAY_S="3600")
    client.add("I adopted a grey cat called Miso", user_id="alice", session_id="s1")
    client.background.checkpoints.serde.seal = _spy(changed)
    client.add("Miso is two years old now", user_id="alice", session_id="s1", background=True)
    client.add(tool_trace("Fix the timeout in search.py"), scene="coding", user_id="alice",
               workspace_id="github.com/example/service", background=True)
    assert client.flush()["outstanding"] == 0
    client.close()
    assert changed == []
