"""messages.signal: which turns are trivial, and when two turns are the same text."""

from __future__ import annotations

import pytest

from hy_memory_langgraph.messages.signal import TRIVIAL_MAX_CHARS, is_question_only, is_trivial, match_text

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


# --- question-only turns -------------------------------------------------------------

QUESTION_ONLY = [
    "What's the name of my cat?", "what is my cat called?", "Where do I work these days?",
    "Caroline: Hey Mel! How are you doing?", "Thanks! What did you think of the book?",
    "Wow, that sounds amazing! What made you decide to do it?", "Can you believe it?!",
    "Did you go? Was it fun?", "Why did you go? 😊", "Is it far", "Where do I work",
    "Hey Caroline, how's it going?",
    "我的猫叫什么名字？", "你去过波尔图吗", "你几点下班", "好的，你明天几点到？", "你为什么搬家？",
]
NOT_QUESTION_ONLY = [
    "My cat is called Miso.", "I moved to Porto. Have you been?",
    "Have you been to Porto? I moved there last year.", "You live in Porto, right?",
    "You live in Porto, don't you?", "It was great, wasn't it?", "When I was a kid I lived in Porto",
    "Do the dishes", "Have a nice day", "What a great day!", "Me? I love it.",
    "我搬到了波尔图。你去过吗？", "你住在波尔图，对吧？", "我不知道他叫什么", "我忘了他住在哪里。",
    "Really?", "How about you?", "好的", "ok", "", "   ", "???", "👍",
]


@pytest.mark.parametrize("text", QUESTION_ONLY)
def test_question_only_turns(text: str) -> None:
    assert is_question_only(text)


@pytest.mark.parametrize("text", NOT_QUESTION_ONLY)
def test_turns_that_state_something(text: str) -> None:
    assert not is_question_only(text)


def test_a_statement_anywhere_makes_a_statement() -> None:
    question = "Where did you grow up?"
    for statement in ("I grew up in Porto.", "我在波尔图长大。"):
        assert not is_question_only(f"{statement} {question}")
        assert not is_question_only(f"{question} {statement}")
        assert not is_question_only(f"{question}\n{statement}")


def test_unmarked_question_only_when_alone() -> None:
    assert is_question_only("Where do I work")
    assert not is_question_only("Where do I work? I forget where do I work")
    assert not is_question_only("I wonder where I work")
