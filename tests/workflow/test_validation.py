"""Validation errors name the field and the fix; credentials are refused, nothing written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hy_memory_langgraph.client import WorkflowMemoryService
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.workflow.errors import CredentialsRefusedError
from tests.workflow.conftest import ALIAS_ZH, msgs


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"msg_list": msgs("hi"), "user_message": ["hi"], "assistant_message": []}, "exactly one of msg_list"),
    ({}, "no messages"),
    ({"msg_list": [{"role": "user", "content": "hi"}]}, "rename them to 'msgRole' / 'msgValue'"),
    ({"msg_list": "hi"}, "msg_list (msgList) must be a list"),
    ({"msg_list": ["hi"]}, "msg_list[0] (msgList[0]) must be an object"),
    ({"msg_list": [{"msgRole": "system", "msgValue": "x"}]}, "msgRole must be 'user' or 'assistant'"),
    ({"msg_list": [{"msgRole": "user", "msgValue": 3}]}, "msgValue must be a string"),
    ({"msg_list": [{"msgRole": "user", "msgValue": "  "}]}, "hold no text"),
    ({"user_message": ["hi"]}, "assistant_message (assistantMessage) is missing"),
    ({"assistant_message": ["hi"]}, "user_message (userMessage) is missing"),
    ({"user_message": "hi", "assistant_message": []}, "user_message (userMessage) must be a list of strings"),
    ({"user_message": ["hi"], "assistant_message": [1]}, "assistant_message (assistantMessage) must be a list"),
    ({"msg_list": msgs("hi"), "dynamic_context": "x"}, "dynamic_context (dynamicContext) must be an object"),
    ({"msg_list": msgs("hi"), "workflow_id": ""}, "workflow_id (workflowId) must be a non-empty string"),
    ({"msg_list": msgs("hi"), "memory_app_id": 1.5}, "memory_app_id (memoryAppId)"),
])
def test_validation_errors_name_the_field(service: WorkflowMemoryService, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidInputError, match=None) as info:
        service.memory_extract("u1", **kwargs)
    assert needle in str(info.value)
    assert not isinstance(info.value, CredentialsRefusedError)


def test_bad_user_id(service: WorkflowMemoryService) -> None:
    with pytest.raises(InvalidInputError, match="user_id"):
        service.memory_extract("", msg_list=msgs("hi"))
    with pytest.raises(InvalidInputError, match="user_id"):
        service.memory_prompt(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "where"), [
    ({"msg_list": msgs(ALIAS_ZH, "Cookie: ETEAMSID=abc123")}, "messages[1] (user)"),
    ({"msg_list": msgs(ALIAS_ZH, ("assistant", "接口返回 X-Auth-Token: a8Fj2kLq9"))}, "messages[1] (assistant)"),
    ({"msg_list": msgs(ALIAS_ZH, "eteamsid=xyz")}, "messages[1]"),
    ({"user_message": [ALIAS_ZH], "assistant_message": ["Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefgh"]},
     "messages[1] (assistant)"),
    ({"msg_list": msgs(ALIAS_ZH), "dynamic_context": {"Cookie": "a=b"}}, "dynamicContext.Cookie"),
    ({"msg_list": msgs(ALIAS_ZH), "dynamic_context": {"accessToken": "x"}}, "dynamicContext.accessToken"),
    ({"msg_list": msgs(ALIAS_ZH), "dynamic_context": {"header": {"operator": "42"}}}, "dynamicContext.header.operator"),
    ({"msg_list": msgs(ALIAS_ZH), "dynamic_context": {"note": "ETEAMSID=1"}}, "dynamicContext.note"),
    ({"msg_list": msgs(ALIAS_ZH), "dynamic_context": {"list": ["Bearer-Token: x"]}}, "dynamicContext.list[0]"),
])
def test_credentials_are_refused_and_nothing_is_written(service: WorkflowMemoryService, workflow_root: Path,
                                                        kwargs: dict[str, Any], where: str) -> None:
    with pytest.raises(CredentialsRefusedError) as info:
        service.memory_extract("u1", **kwargs)
    message = str(info.value)
    assert where in message and "Nothing was saved" in message
    assert "abc123" not in message and "a=b" not in message
    assert not workflow_root.exists()


def test_innocent_words_are_not_credentials(service: WorkflowMemoryService) -> None:
    result = service.memory_extract("u1", msg_list=msgs(ALIAS_ZH, "tokenizer 和 cookiecutter、tokenization 都可以"))
    assert result["saved"] is True


@pytest.mark.parametrize("text", [
    "报销单里的 token 字段就是指发票号",
    "用你的 token 调用接口",
    "header.operator 已设置",
    "the cookie banner should stay hidden",
])
def test_credential_words_without_a_value_are_normal_memories(service: WorkflowMemoryService,
                                                               text: str) -> None:
    service.memory_extract("u1", msg_list=msgs(text))  # no CredentialsRefusedError


_SCOPE_FIELDS = {"workflow_id": "workflow_id (workflowId)", "memory_app_id": "memory_app_id (memoryAppId)"}


@pytest.mark.parametrize("field", sorted(_SCOPE_FIELDS))
@pytest.mark.parametrize(("value", "needle"), [
    ("crm\u200b", "U+200B"), ("crm\n1", "control character"), ("c" * 600, "600 bytes"),
    ("crm\U0001d159", "U+1D159"), ("ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5", "secret"),
])
def test_workflow_scope_ids_are_checked_as_every_id(service: WorkflowMemoryService, field: str, value: str,
                                                     needle: str) -> None:
    """A workflow or app id names a stored document: it is refused as a user id would be
    (invisible, control, too long) and when it carries a credential, on reads and writes."""
    with pytest.raises(InvalidInputError, match=rf"{re.escape(_SCOPE_FIELDS[field])}.*{re.escape(needle)}"):
        service.memory_prompt("u1", **{field: value})
    with pytest.raises(InvalidInputError, match=re.escape(needle)):
        service.memory_extract("u1", msg_list=msgs(ALIAS_ZH), **{field: value})


@pytest.mark.parametrize(("dimension", "app_id"), [("workflow:100003460000000060\u200b", None),
                                                   ("global", "crm\u2800"), ("user", "sk-proj-" + "Ab1" * 10)])
def test_no_document_is_named_by_an_invisible_character_or_a_secret(dimension: str, app_id: str | None) -> None:
    """Where documents are named (both backends), whatever path the id took to get there."""
    from hy_memory_langgraph.workflow.files import relative_name

    with pytest.raises(InvalidInputError):
        relative_name(dimension, app_id)
