"""Pipeline logs: every write and search records, per request id, the stages it went
through, with durations, LLM calls and tokens, the operations decided (before they are
applied) and every fallback taken; bounded retention; text only on request; emitted
through ``logging``; LangChain callbacks still see every node."""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from hy_memory_langgraph.pipeline_log.store import PipelineLogStore
from hy_memory_langgraph.testing import RaisingChatModel
from tests.productivity.support import StageScript, extraction, tool_trace

MARKER = "zebra-marker-7781"


def _stages(client: Any, result: dict[str, Any]) -> list[str]:
    return [r["stage"] for r in client.pipeline_log(result["request_id"])]


def _by_stage(client: Any, result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["stage"]: r for r in client.pipeline_log(result["request_id"])}


def _supersede_script() -> StageScript:
    return StageScript({"coding_extract": extraction(statement=f"raised the timeout {MARKER}"),
                        "fact_reconcile": {"supersede": ["f_0"]},
                        "progress_summary": {"summary": "timeout raised twice"}})


def test_coding_write_records_each_stage_in_order(make_client) -> None:
    script = _supersede_script()
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1")
    result = client.add(tool_trace(), scene="coding", user_id="u1")
    log = client.pipeline_log(result["request_id"])
    assert [r["stage"] for r in log] == [
        "scene_route", "prepare", "extract", "fact_candidates", "fact_reconcile",
        "progress_summary", "fact_store", "chain_record", "finish"]
    assert [r["seq"] for r in log] == list(range(len(log)))
    assert all(r["duration_ms"] >= 0 and r["request_id"] == result["request_id"] for r in log)
    stages = {r["stage"]: r for r in log}
    assert stages["scene_route"]["decision"] == {"route": "coding", "route_reason": "explicit"}
    for stage in ("extract", "fact_reconcile", "progress_summary"):
        assert stages[stage]["llm_calls"] == 1 and stages[stage]["prompt_tokens"] > 0
    assert "llm_calls" not in stages["fact_store"]
    # decided before it was applied: the reconcile record comes first and names the target
    old_fact = client.search("timeout", scene="coding", user_ids=["u1"], min_score=-1.0)
    assert stages["fact_reconcile"]["decided"][0]["op"] == "SUPERSEDE"
    assert stages["fact_reconcile"]["seq"] < stages["fact_store"]["seq"]
    applied = stages["fact_store"]["applied"]
    assert [op["op"] for op in applied] == ["INSERT", "SUPERSEDE"]
    assert applied[0]["memory_id"] == result["memory_id"] == old_fact["facts"][0]["memory_id"]


def test_scene_judge_records_its_decision_and_reason(make_client) -> None:
    script = StageScript({"scene_judge": {"scene": "coding", "reason": "edits code"},
                          "coding_extract": extraction()})
    client = make_client("pro", script.model())
    result = client.add(tool_trace(), user_id="u1")
    stages = _by_stage(client, result)
    assert stages["scene_route"]["decision"]["route_reason"] == "judge_pending"
    assert stages["scene_judge"]["decision"] == {"route": "coding", "route_reason": "judge"}
    assert stages["scene_judge"]["llm_calls"] == 1


def test_judge_failure_leaves_a_record_naming_the_fallback(make_client, caplog) -> None:
    client = make_client("pro", RaisingChatModel.create())
    with caplog.at_level(logging.INFO, logger="hy_memory_langgraph.pipeline_log"):
        result = client.add(tool_trace(), user_id="u1")
    judge = _by_stage(client, result)["scene_judge"]
    assert judge["decision"] == {"route": "chat", "route_reason": "judge_failed"}
    assert judge["fallback"] == ["scene judge unusable: routed to chat"]
    assert judge["llm_failures"] == 1 and "call failed" in judge["llm_errors"][0]
    assert "strip_tools" in _stages(client, result)
    # the same record went through logging, as a warning naming the request
    warned = [r for r in caplog.records if r.levelno == logging.WARNING
              and result["request_id"] in r.getMessage()]
    assert warned and "routed to chat" in warned[0].getMessage()


def test_garbage_model_output_records_the_fallback(make_client) -> None:
    script = StageScript({"coding_extract": "this is not json at all", "chat_extract": "nope"})
    client = make_client("pro", script.model())
    coding = _by_stage(client, client.add(tool_trace(), scene="coding", user_id="u1"))
    assert "extract_failed" in coding["extract"]["fallback"]
    assert any("lite fact is stored" in f for f in coding["extract"]["fallback"])
    assert coding["extract"]["llm_errors"] == ["coding_extract: no usable JSON object in the reply"]
    chat = _by_stage(client, client.add("I moved to Lyon", user_id="u1"))
    assert "extraction unusable: the raw turns are stored" in chat["extract"]["fallback"]
    assert chat["store"]["applied"][0]["op"] == "ADD"


def test_failing_chain_store_leaves_a_record_and_keeps_the_write(make_client, monkeypatch) -> None:
    client = make_client("lite")

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(client.context.chain_store), "record", boom)
    result = client.add(tool_trace(args={"file_path": "a.py", "old_string": "x = 1",
                                         "new_string": "x = 2"}, tool="Edit"),
                        scene="coding", user_id="u1")
    assert result["success"] is True and result["chain_rounds"] == 0
    chain = _by_stage(client, result)["chain_record"]
    assert chain["fallback"] == ["chain record failed: the write is kept with 0 rounds"]
    assert chain["decision"] == {"chain_rounds": 0}


def test_text_stays_out_unless_asked(make_client) -> None:
    quiet = make_client("pro", _supersede_script().model())
    for _ in range(2):
        result = quiet.add(tool_trace(), scene="coding", user_id="u1")
    assert MARKER not in json.dumps(quiet.pipeline_log(result["request_id"]))
    loud = make_client("pro", _supersede_script().model(), pipeline_log_text=True)
    for _ in range(2):
        result = loud.add(tool_trace(), scene="coding", user_id="u1")
    assert MARKER in json.dumps(loud.pipeline_log(result["request_id"]))


def test_searches_record_route_retrieval_and_chain_decoration(make_client) -> None:
    client = make_client("lite", chain_block_enabled=True)
    client.add(tool_trace(), scene="coding", user_id="u1")
    found = client.search("timeout", scene="coding", user_ids=["u1"], min_score=-1.0)
    assert _stages(client, found) == ["search_route", "retrieval", "retrieval_experiences",
                                      "chain_decorate", "finish"]
    chat = client.search("timeout", user_ids=["u1"])
    stages = _by_stage(client, chat)
    assert stages["search_route"]["decision"] == {"route": "chat"}
    assert list(stages) == ["search_route", "retrieval"]


def test_agentic_search_records_the_analysis_call(make_client) -> None:
    script = StageScript({"other": {"scene": "chat", "rewrite": f"where is {MARKER}",
                                    "time_range": {"start": "2024-01-01", "end": None}}})
    client = make_client("pro", script.model())
    found = client.search("where is it?", user_ids=["u1"], search_mode="agentic")
    analysis = _by_stage(client, found)["rewrite_time_range"]
    assert analysis["llm_calls"] == 1 and analysis["decision"]["analysis"] == "full"
    assert analysis["decision"]["rewrite"] == f"<{len('where is ' + MARKER)} chars>"


def test_log_survives_the_client_and_retention_prunes(make_client, tmp_path) -> None:
    client = make_client("lite", data_dir=tmp_path / "kept")
    rid = client.add("I like tea", user_id="u1")["request_id"]
    client.close()
    reopened = make_client("lite", data_dir=tmp_path / "kept")
    # a lite chat write is one node after prepare: its store stage also builds the result
    assert [r["stage"] for r in reopened.pipeline_log(rid)] == ["scene_route", "store"]
    written_at = reopened.pipeline_log(rid)[-1]["ts"]
    target, schema = reopened.config.store_target(reopened.config.pipeline_log_path.stem)
    store = PipelineLogStore(target, retention_days=7, schema=schema)
    assert store.prune(now=written_at + 6 * 86400) == 0
    assert store.prune(now=written_at + 8 * 86400) == 2
    assert reopened.pipeline_log(rid) == []
    store.close()


def test_zero_days_keeps_no_file(make_client, tmp_path) -> None:
    client = make_client("lite", pipeline_log_days=0, data_dir=tmp_path / "none")
    result = client.add("I like tea", user_id="u1")
    assert client.pipeline_log(result["request_id"]) == []
    assert not client.config.pipeline_log_path.exists()


def test_unknown_request_id_is_an_empty_log(make_client) -> None:
    assert make_client("lite").pipeline_log("nope") == []
    with pytest.raises(ValueError, match="request_id"):
        make_client("lite").pipeline_log("")


class _Seen(BaseCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.names.append(str(kwargs.get("name")))


def test_langchain_callbacks_see_every_node(make_client) -> None:
    client = make_client("lite")
    seen = _Seen()
    result = client.add(tool_trace(), scene="coding", user_id="u1", config={"callbacks": [seen]})
    logged = [r["node"] for r in client.pipeline_log(result["request_id"])]
    assert set(logged) <= set(seen.names) and {"memory_write", "productivity"} <= set(seen.names)
    searched = _Seen()
    client.search("timeout", scene="coding", user_ids=["u1"], config={"callbacks": [searched]})
    assert {"route", "search_facts", "search_experiences", "chain_block", "finish"} <= set(
        searched.names)


def test_hy_memory_log_prints_the_stages_of_a_request(tmp_path, capsys, monkeypatch) -> None:
    from hy_memory_langgraph.cli import main
    from hy_memory_langgraph.models import embeddings as embeddings_module
    from hy_memory_langgraph.testing import HashingEmbeddings

    monkeypatch.setattr(embeddings_module, "E5Embeddings", lambda: HashingEmbeddings(64))
    data = str(tmp_path / "cli")
    assert main(["add", "--text", "I like oolong tea", "-u", "alice", "--data-dir", data, "--json"]) == 0
    request_id = json.loads(capsys.readouterr().out)["data"]["results"][0]["request_id"]
    assert main(["log", request_id, "--data-dir", data]) == 0
    text = capsys.readouterr().out
    assert "scene_route" in text and "store" in text
    assert main(["--json", "log", request_id, "--data-dir", data]) == 0
    records = json.loads(capsys.readouterr().out)["data"]
    assert [r["stage"] for r in records] == ["scene_route", "store"]
    assert main(["log", "no-such-request", "--data-dir", data]) != 0
    assert "no pipeline log" in capsys.readouterr().err


def test_workflow_memory_extract_is_logged_too(make_client) -> None:
    client = make_client("lite")
    result = client.memory_extract("u1", msg_list=[{"msgRole": "user", "msgValue": "以后回复用中文"}])
    stages = [r["stage"] for r in client.pipeline_log(result["request_id"])]
    assert stages[0] == "normalise" and "extract" in stages and stages[-1] == "store"


def test_a_stage_record_carries_every_meter_that_counted() -> None:
    from dataclasses import fields

    from hy_memory_langgraph.pipeline_log.meter import StageMeter

    assert StageMeter().counts() == {}
    meters = [f.name for f in fields(StageMeter) if f.name != "fallbacks"]
    for name in meters:
        trace = StageMeter()
        setattr(trace, name, ["x"] if isinstance(getattr(trace, name), list) else 3)
        assert list(trace.counts()) == [name]
    assert StageMeter(fallbacks=["f"]).counts() == {}  # fallbacks are a field of their own


def test_erasure_drops_the_users_log_records_on_every_backend(make_client) -> None:
    client = make_client("lite", pipeline_log_text=True)
    kept = client.add("My favourite tea is oolong from Taiwan", user_id="u1")
    gone = client.add("My locker number is 7731 at the gym", user_id="u1")
    searched = client.search("locker number", user_ids=["u1", "u2"])
    other = client.add("My locker number is 8842 at the pool", user_id="u2")
    client.recorder.write_pending()  # the records leave the recorder's buffer for the database
    assert "is 7731" in json.dumps(client.pipeline_log(gone["request_id"]))
    assert client.delete(gone["memory_ids"][0]) is True
    records = client.pipeline_log(gone["request_id"])  # its records that quoted it went
    assert records and "is 7731" not in json.dumps(records)  # (a bare 7731 may be in a time)
    assert "oolong" in json.dumps(client.pipeline_log(kept["request_id"]))  # another memory's
    client.delete_all("u1")
    assert client.pipeline_log(kept["request_id"]) == [] == client.pipeline_log(searched["request_id"])  # u1 in it
    assert "8842" in json.dumps(client.pipeline_log(other["request_id"]))  # u2's own request stays
