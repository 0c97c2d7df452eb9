"""Extractor input: windows, compression and language routing (docs/design.md#extractor-input-windows)."""

from __future__ import annotations

import json

import pytest

from .support import (
    StageScript,
    experience,
    extraction,
    rows,
    section,
    tool_trace,
)


def _turns(n: int, tag: str) -> list[dict[str, object]]:
    msgs: list[dict[str, object]] = []
    for i in range(1, n + 1):
        msgs += tool_trace(f"{tag} turn {i:02d} please", call_id=f"c{tag}{i}", answer=f"{tag} done {i:02d}")
    return msgs


def test_new_messages_hold_every_turn_of_the_call(make_client) -> None:
    script = StageScript({"working_extract": extraction()})
    client = make_client("pro", script.model())
    client.add(_turns(10, "new"), scene="working", user_id="u1")
    new = section(script.last("working_extract").user, "new_messages")
    assert all(f"new turn {i:02d} please" in new for i in range(1, 11))
    assert rows(script.last("working_extract").user, "history") == []


def test_history_is_capped_at_five_user_turns_of_same_user_and_session(make_client) -> None:
    script = StageScript({"coding_extract": extraction()})
    client = make_client("pro", script.model(), env={"MEMORY_EXTRACT_HISTORY_TURNS": "9"})
    assert client.config.coding.extract_history_turns == 9
    client.add(_turns(8, "old"), scene="coding", user_id="u1", session_id="s1")
    client.add(_turns(2, "other-session"), scene="coding", user_id="u1", session_id="s2")
    client.add(_turns(2, "other-user"), scene="coding", user_id="u2", session_id="s1")
    client.add(tool_trace("the newest request"), scene="coding", user_id="u1", session_id="s1")
    prompt = script.last("coding_extract").user
    history = section(prompt, "history")
    assert [i for i in range(1, 9) if f"old turn {i:02d} please" in history] == [4, 5, 6, 7, 8]
    assert "other-session" not in history and "other-user" not in history
    assert "the newest request" not in history
    assert "the newest request" in section(prompt, "new_messages")


def test_history_zero_turns_reads_nothing(make_client) -> None:
    script = StageScript({"coding_extract": extraction()})
    client = make_client("pro", script.model(), env={"MEMORY_EXTRACT_HISTORY_TURNS": "0"})
    client.add(_turns(2, "old"), scene="coding", user_id="u1")
    client.add(tool_trace("again"), scene="coding", user_id="u1")
    assert rows(script.last("coding_extract").user, "history") == []


def _tool_content(prompt: str) -> str:
    """Content of the last row (the tool result closes the NEW MESSAGES block)."""
    last = rows(prompt, "new_messages")[-1]
    assert last["tool"] == "run_tests"
    return str(last["result"])


def test_long_tool_result_reaches_the_prompt_cut_head_and_tail(make_client) -> None:
    script = StageScript({"coding_extract": extraction()})
    client = make_client("pro", script.model())
    result = "HEAD-OF-RESULT " + "x" * 4970 + " TAIL-OF-RESULT"
    assert len(result.encode()) == 5000
    client.add(tool_trace(tool="run_tests", result=result, answer=None), scene="coding", user_id="u1")
    content = _tool_content(script.last("coding_extract").user)
    assert content.startswith("HEAD-OF-RESULT") and content.endswith("TAIL-OF-RESULT")
    assert "truncated" in content and len(content.encode()) <= 2048


@pytest.mark.parametrize(("limit", "result"), [
    (2048, "a" + "é中😀" * 700),  # 1 + 9 * 700 bytes: both cuts fall inside characters
    (1000, "错" * 1700),  # 5100 bytes, configured limit
])
def test_tool_result_cut_is_utf8_safe_and_configurable(make_client, limit: int, result: str) -> None:
    script = StageScript({"coding_extract": extraction()})
    env = {} if limit == 2048 else {"MEMORY_CODING_TOOL_RESULT_MAX_BYTES": str(limit)}
    client = make_client("pro", script.model(), env=env)
    client.add(tool_trace(tool="run_tests", result=result, answer=None), scene="coding", user_id="u1")
    content = _tool_content(script.last("coding_extract").user)
    assert "\ufffd" not in content and len(content.encode()) <= limit
    head, tail = content.split("…[truncated", 1)
    assert result.startswith(head.rstrip("\n")) and result.endswith(tail.split("]…", 1)[1].lstrip("\n"))
    assert len(content.encode()) > limit - 16  # the budget is used, minus at most a character


def test_short_tool_result_is_untouched(make_client) -> None:
    script = StageScript({"coding_extract": extraction()})
    client = make_client("pro", script.model())
    result = "y" * 2048
    client.add(tool_trace(tool="run_tests", result=result, answer=None), scene="coding", user_id="u1")
    assert _tool_content(script.last("coding_extract").user) == result


def test_long_assistant_text_keeps_first_and_last_3000_chars(make_client) -> None:
    script = StageScript({"working_extract": extraction()})
    client = make_client("pro", script.model())
    answer = "A" * 3000 + "MIDDLE-GONE" + "B" * 3000
    client.add(tool_trace(answer=answer), scene="working", user_id="u1")
    new = section(script.last("working_extract").user, "new_messages")
    assert "A" * 3000 in new and "B" * 3000 in new and "MIDDLE-GONE" not in new
    client.add(tool_trace(answer="C" * 6000), scene="working", user_id="u2")
    assert "C" * 6000 in script.last("working_extract").user


def _supersede_all(user: str) -> dict[str, object]:
    ids = [row["id"] for row in rows(user, "candidates")]
    return {"supersede": ids, "reason": "same task"}


def _update_first(user: str) -> dict[str, object]:
    return {"operations": [{"draft": "d0", "op": "SKIP", "target": "e_0", "merged": None}]}


def test_chinese_start_followed_by_code_uses_zh_templates_everywhere(make_client) -> None:
    script = StageScript({
        "coding_extract": extraction(experiences=[experience("修复 ReadTimeout")]),
        "experience_reconcile": _update_first, "fact_reconcile": _supersede_all,
        "progress_summary": {"summary": "进展"},
    })
    client = make_client("pro", script.model())
    user = ("帮我修一下这个报错，测试一直失败：\n```python\nTraceback (most recent call last):\n"
            '  File "src/search.py", line 42, in search\nhttpx.ReadTimeout: timed out\n```\n'
            "Please check src/search.py and tests/test_search.py, the CI log says the read timed out.")
    client.add(tool_trace(user), scene="coding", user_id="u1")
    client.add(tool_trace(user), scene="coding", user_id="u1")
    assert script.stages() == ["coding_extract", "coding_extract", "experience_reconcile",
                               "fact_reconcile", "progress_summary"]
    assert {c.lang for c in script.calls} == {"zh"}
    assert rows(script.calls[1].user, "history") != []


def test_english_start_with_a_chinese_term_stays_en(make_client) -> None:
    script = StageScript({"working_extract": extraction()})
    client = make_client("pro", script.model())
    client.add(tool_trace("Please translate the 用户协议 section of terms.docx into English"),
               scene="working", user_id="u1")
    assert script.last("working_extract").lang == "en"
    assert rows(script.last("working_extract").user, "history") == []


def test_language_ignores_tool_results_and_history(make_client) -> None:
    script = StageScript({"working_extract": extraction()})
    client = make_client("pro", script.model())
    client.add(tool_trace("整理一下本周的周报并发给团队"), scene="working", user_id="u1")
    client.add(tool_trace("Now export it as PDF", result="导出成功，文件已保存到桌面"),
               scene="working", user_id="u1")
    assert [c.lang for c in script.calls if c.stage == "working_extract"] == ["zh", "en"]


def test_prompt_carries_time_workspace_and_branch(make_client) -> None:
    script = StageScript({"coding_extract": extraction()})
    client = make_client("pro", script.model())
    client.add(tool_trace(), scene="coding", user_id="u1", workspace_id="github.com/acme/api",
               branch="fix/search-timeout", memory_at="2024-05-16T10:02:00Z")
    prompt = script.last("coding_extract").user
    assert "2024-05-16T10:02+00:00" in prompt
    assert '"github.com/acme/api"' in prompt and '"fix/search-timeout"' in prompt
    assert json.loads(json.dumps(prompt))  # plain text, no placeholder left
    assert "{history}" not in prompt and "{new_messages}" not in prompt
