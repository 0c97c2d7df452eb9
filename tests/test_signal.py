"""messages.signal: which turns are trivial, and when two turns are the same text."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.messages import is_trivial, match_text
from hy_memory_langgraph.messages.signal import TRIVIAL_MAX_CHARS

TRIVIAL = [
    "ok", "OK.", "Okay!", "k", "thanks!", "Thank you so much!", "thx", "ty", "Cheers",
    "Sure, see you soon!", "Sounds good", "Got it, will do.", "lol", "hahaha", "Bye!",
    "Me too!", "You too, take care!", "Yes.", "No", "Hmm...", "Agreed!", "Good night",
    "Anna: ok", "Melanie: Bye!",
    "👍", "👍👍", "🙏🏽❤️", "😂😂😂", ":)", ";)", "...", "!!!",
    "好的", "好的，谢谢！", "嗯嗯", "收到", "谢谢你", "哈哈哈", "没问题", "我也是", "晚安",
    "嗯，我知道了", "好的👌", "拜拜～",
]
NOT_TRIVIAL = [
    "Paris", "I like tea", "Thanks for the book tip!", "Thanks, Jon!", "ok, book it for 3 pm",
    "3", "42!", "Bye Nate!", "My cat is called Miso", "Keep it up!", "What time is the train?",
    "Note: call mom", "I'm allergic to peanuts",
    "我明白你的意思", "好的，明天下午三点见", "龙井", "谢谢，已经收到发票了", "ありがとう",
    "ok " * 40,
]


@pytest.mark.parametrize("text", TRIVIAL)
def test_trivial_turns(text: str) -> None:
    assert is_trivial(text)


@pytest.mark.parametrize("text", NOT_TRIVIAL)
def test_turns_with_content(text: str) -> None:
    assert not is_trivial(text)


def test_length_cap() -> None:
    assert len("ok " * 40) > TRIVIAL_MAX_CHARS and not is_trivial("ok " * 40)
    assert is_trivial("ok " * 10)


@pytest.mark.parametrize(("a", "b"), [
    ("I like tea.", "i like tea"),
    ("  I like   TEA! ", "I like tea"),
    ("Ｉ　ｌｉｋｅ　ｔｅａ", "I like tea"),
    ("我喜欢龙井。", "我喜欢龙井"),
    ("I like tea 👍", "I like tea"),
])
def test_same_text_once_matched(a: str, b: str) -> None:
    assert match_text(a) == match_text(b)


@pytest.mark.parametrize(("a", "b"), [
    ("I like tea", "I like green tea"),
    ("I like tea", "I liked tea"),
    ("我喜欢龙井", "我不喜欢龙井"),
    ("call at 3", "call at 4"),
])
def test_different_texts_stay_different(a: str, b: str) -> None:
    assert match_text(a) != match_text(b)
