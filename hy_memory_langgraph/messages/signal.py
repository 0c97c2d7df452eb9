"""Does a chat turn carry signal? Text matching for duplicates and trivial turns.

Two questions lite chat memory asks of every turn before storing it:

* :func:`match_text`: the form two turns are compared in to decide that they are the
  same turn: NFKC, case-folded, whitespace runs collapsed, and the punctuation and
  symbols at both ends dropped (``"I like tea."`` and ``"i like tea"`` match, ``"I like
  tea"`` and ``"I like green tea"`` do not).
* :func:`is_trivial`: the turn says nothing on its own: an acknowledgement or
  pleasantry (``"ok"``, ``"Thanks!"``, ``"好的，谢谢"``, ``"👍"``), only emoji or
  punctuation, or only function words (``"Me too!"``, ``"是的"``). A leading speaker
  label (``"Anna: ok"``) is not content. Any digit, or any word outside the small
  filler vocabulary below, makes a turn non-trivial; so does a length over
  :data:`TRIVIAL_MAX_CHARS` characters. The vocabulary is our own list of English
  acknowledgements, greetings and function words and of Chinese ones, matched as whole
  words (English) or greedily as whole phrases (Chinese).
* :func:`quotes`: a stored text holds one of an erased memory's texts, or is held in
  one (at least :data:`MIN_QUOTE_CHARS` characters): erasure drops such texts.
* :func:`is_question_only`: the turn only asks (``"What is my cat called?"``,
  ``"你叫什么名字？"``); it is stored, but search ranks it below the facts that answer
  it. Every sentence with content must be a question; one statement (``"I moved to
  Porto. Have you been?"``) or a tag question after a statement (``"You live in Porto,
  right?"``) makes the turn a statement (see :func:`is_question_only` for the rules).

Example:
    >>> is_trivial("Thanks!"), is_trivial("好的👍"), is_trivial("Thanks for the book tip!")
    (True, True, False)
    >>> match_text("  I like   TEA. ") == match_text("i like tea")
    True
    >>> is_question_only("What is my cat called?"), is_question_only("My cat is Miso. Yours?")
    (True, False)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

#: Longer turns are never trivial, whatever words they use.
TRIVIAL_MAX_CHARS: Final = 80
#: Shorter texts ("ok", "thanks") never count as quoting an erased memory: too many do.
MIN_QUOTE_CHARS: Final = 8

_SPACES = re.compile(r"\s+")
_LABEL = re.compile(r"^\s*[A-Z][\w.'-]{0,30}(?:\s+[A-Z][\w.'-]{0,30}){0,2}\s*[:：]\s+")
_LATIN_WORD = re.compile(r"[^\W\d_]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+")

# Acknowledgements, thanks, greetings, agreement, laughter, fillers and function words.
_EN_FILLER: Final = frozenset("""
    ok okay okey k kk alright right fine sure yes yeah yep yup ya yah no nope nah not
    thanks thank thx ty tysm cheers appreciate appreciated welcome np
    cool nice great good awesome perfect lovely wonderful amazing excellent sweet neat
    wow whoa oh ah aha ahh ahhh ooh oops hm hmm hmmm um umm uh huh mhm
    lol lmao haha hahaha hehe hah ha xd
    hi hello hey hiya yo bye goodbye later cya ya ciao morning evening night
    see soon take care too also same agreed agree indeed exactly true totally definitely
    absolutely of course noted understood gotcha got it will do done sounds
    s t d m ll re ve don didn doesn isn can cant won
    me you i we they it that this so very much lot lots a an the and or but then just
    really well all is are was be am do does did to for with at in on at by your my our
    what why how who when where which whatever anyway again about
""".split())
_ZH_FILLER: Final = tuple(sorted(set("""
    好的 好吧 好啊 好滴 好嘞 好呀 好 行吧 行 可以 没问题 对 对的 是的 是 嗯嗯 嗯 哦哦 哦 噢 喔 啊 呀
    哈哈哈 哈哈 呵呵 嘿嘿 嘻嘻 谢谢你 谢谢 谢了 多谢 感谢 辛苦了 辛苦 收到 明白了 明白 了解 知道了
    懂了 晓得 不客气 没事 没关系 太好了 太棒了 很好 真好 不错 棒 赞 厉害 牛 早安 晚安 早上好 晚上好
    你好 您好 再见 拜拜 回头见 一会见 好久不见 加油 我 你 您 也 都 了 的 吧 呢 吗 啦 哟 嘛 就 这样 那
""".split()), key=len, reverse=True))


def match_text(text: str) -> str:
    """The form in which two turns are compared for being the same turn.

    Args:
        text: A message's text.

    Returns:
        NFKC-normalised, case-folded text with whitespace runs collapsed to one space and
        punctuation, symbols and spaces stripped from both ends.

    Example:
        >>> match_text("Ｏｋ，I’ll  come！")
        'ok,i’ll come'
    """
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    start, end = 0, len(folded)
    while start < end and _edge(folded[start]):
        start += 1
    while end > start and _edge(folded[end - 1]):
        end -= 1
    return folded[start:end]


def _edge(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in "PSZC"


def _zh_is_filler(run: str) -> bool:
    """Whether a CJK run splits entirely into filler phrases (greedy, longest first)."""
    pos = 0
    while pos < len(run):
        for phrase in _ZH_FILLER:
            if run.startswith(phrase, pos):
                pos += len(phrase)
                break
        else:
            return False
    return True


def is_trivial(text: str) -> bool:
    """Whether a turn carries no content of its own (see the module docstring).

    Args:
        text: A message's text.

    Returns:
        ``True`` for acknowledgements, pleasantries, emoji- or punctuation-only text and
        text of function words only; ``False`` for anything with a digit or a content word,
        and for text longer than :data:`TRIVIAL_MAX_CHARS`.

    Example:
        >>> [is_trivial(t) for t in ("ok", "👍👍", "收到，谢谢！", "Paris", "3")]
        [True, True, True, False, False]
    """
    body = unicodedata.normalize("NFKC", _LABEL.sub("", text, count=1)).strip()
    if len(body) > TRIVIAL_MAX_CHARS:
        return False
    folded = body.casefold()
    if any(map(str.isdigit, folded)):
        return False
    for run in _CJK_RUN.findall(folded):
        if not _zh_is_filler(run):
            return False
    rest = _CJK_RUN.sub(" ", folded)
    return all(word in _EN_FILLER for word in _LATIN_WORD.findall(rest))


# --- question-only turns -------------------------------------------------------------

# A sentence: text up to a run of terminators; a dot followed by a letter or digit
# ("3.5", "e.g") does not end one.
_SENTENCE = re.compile(r"((?:[^.!?。！？…\n]|\.(?=\w))+)([.!?。！？…]*)")
_QUESTION_MARKS = frozenset("?？")
_AUX: Final = frozenset("""
    am is are was were do does did have has had can could will would shall should may
    might must isn aren wasn weren don doesn didn haven hasn hadn can't cannot couldn
    won wouldn shouldn
""".split())
_WH: Final = frozenset("what where when who whom whose why how which".split())
_SUBJECT: Final = frozenset("""
    i you he she it we they my your his her its our their this that these those there
    the anyone anybody someone somebody everyone everybody
""".split())
_PRONOUN: Final = frozenset("i you he she it we they".split())
_EN_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# "..., right?", "..., isn't it?", "..., you know?": a statement asking for agreement.
_TAG = re.compile(
    r"[,，]\s*(?:right|ok|okay|no|yeah|yes|eh|huh|correct|true|you know|don't you think"
    r"|(?:(?:is|are|was|were|do|does|did|have|has|had|can|could|will|would|should)(?:n['’]t)?"
    r"(?:\s+not)?\s+(?:i|you|he|she|it|we|they|there)))\s*$",
    re.IGNORECASE)
_ZH_TAG = re.compile(r"[，,]\s*(?:对吧|是吧|对不对|是不是|对吗|是吗|好吗|行吗|可以吗)\s*$")
_ZH_ASK = re.compile(r"什么|哪|谁|几(?:点|岁|号|月|年|天|次|时|位|口|本|只)|怎么|怎样|如何|为什么|多少|多久|多大|多远")
_ZH_NOT_ASKING = re.compile(r"不知道|不清楚|不记得|忘了|无论|不管|都")
_ZH_FINAL_PARTICLE = re.compile(r"(?:吗|呢|么|嘛)$")


def _sentences(text: str) -> list[tuple[str, str]]:
    """``(body, terminators)`` of each sentence with letters or digits in it; the marks
    after a sentence without any (``"Far... ?"``, ``"Why? 😊"``) join the one before."""
    out: list[tuple[str, str]] = []
    for body, ends in _SENTENCE.findall(text):
        if any(ch.isalnum() for ch in body):
            out.append((body.strip(), ends))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + ends)
    return out


def _is_filler_sentence(body: str, ends: str) -> bool:
    """A sentence that says nothing: trivial, or a greeting with a name (``"Hey Mel!"``)."""
    if is_trivial(body):
        return True
    if _QUESTION_MARKS & set(ends) or _CJK_RUN.search(body):
        return False
    words = _EN_WORD.findall(body)
    rest = [w for w in words if not (w[0].isupper() and w.casefold() not in _EN_FILLER)]
    return bool(rest) and len(rest) < len(words) and is_trivial(" ".join(rest))


def _en_inverted(body: str) -> bool:
    """An English question without its mark: ``"Where do I work"``, ``"Is it far"``.

    An auxiliary first and a subject next; or a wh-word and, within three words, an
    auxiliary (or a contracted one) before any subject pronoun ("When I was a kid" is
    not a question).
    """
    words = [w.casefold().replace("’", "'") for w in _EN_WORD.findall(body)]
    if len(words) < 2:
        return False
    head, rest = words[0], words[1:]
    stem = head.split("'")[0]
    if head in ("do", "have"):  # "Do the dishes", "Have a nice day": imperatives
        return rest[0] in _PRONOUN
    if head in _AUX or stem in _AUX:
        return rest[0] in _SUBJECT
    if stem not in _WH:
        return False
    if "'" in head:
        return head.endswith(("'s", "'re", "'d", "'ll"))
    for word in rest[:3]:
        if word.split("'")[0] in _AUX:
            return True
        if word in _SUBJECT or word in ("a", "an"):
            return False
    return False


def _zh_unmarked_question(body: str) -> bool:
    """A Chinese question without its mark: ``"我的猫叫什么"``, ``"你去过波尔图吗"``."""
    if not _CJK_RUN.search(body) or _ZH_NOT_ASKING.search(body):
        return False
    return bool(_ZH_FINAL_PARTICLE.search(body) or _ZH_ASK.search(body))


def _asks(body: str, ends: str) -> bool:
    """A sentence that ends with a question mark and is not a tag question."""
    return bool(_QUESTION_MARKS & set(ends)) and not (_TAG.search(body) or _ZH_TAG.search(body))


def _asks_unmarked(body: str, ends: str) -> bool:
    """A sentence without a question mark that still asks (inversion, zh particles)."""
    if ends.strip(".…。") or _TAG.search(body) or _ZH_TAG.search(body):
        return False
    return _en_inverted(body) or _zh_unmarked_question(body)


def is_question_only(text: str) -> bool:
    """Whether a turn only asks a question and states nothing.

    The turn (its speaker label dropped) is cut into sentences at ``. ! ? 。！？…`` and
    line breaks; sentences with no letters or digits, trivial ones (see
    :func:`is_trivial`) and greetings with a name (``"Hey Mel!"``) are ignored. The turn
    is question-only when at least one sentence is left and each one asks:

    * it ends with ``?`` or ``？`` (trailing emoji and spaces aside), unless it is a tag
      question after a statement (``"You moved to Porto, right?"``, ``"……，对吧？"``);
    * or, for a turn of one sentence without a question mark (ending with nothing, a
      full stop or an ellipsis), it is an English inversion (``"Where do I work"``,
      ``"Is it far"``) or Chinese with a question particle at its end (吗, 呢) or an
      interrogative word (什么, 哪, 谁, 几, 怎么, 为什么, 多少, ...) not inside an
      embedded question (``"我不知道他叫什么"``).

    Args:
        text: A message's text.

    Returns:
        ``True`` for a turn that only asks; ``False`` when any sentence states something,
        and for empty or trivial turns.

    Example:
        >>> [is_question_only(t) for t in ("Where do I work these days?", "我的猫叫什么",
        ...  "Hey Mel! How was the trip?", "I moved to Porto last year. Have you been?")]
        [True, True, True, False]
        >>> [is_question_only(t) for t in ("When I was a kid I lived in Porto",
        ...  "You work in Porto, right?", "Ok", "我不知道他叫什么")]
        [False, False, False, False]
    """
    body = unicodedata.normalize("NFKC", _LABEL.sub("", text, count=1)).strip()
    if is_trivial(body):
        return False
    asked, stated = 0, []
    for sentence, ends in reversed(_sentences(body)):  # a statement usually comes last
        if _asks(sentence, ends):
            asked += 1
        elif not _is_filler_sentence(sentence, ends):
            stated.append((sentence, ends))
            if len(stated) > 1 or asked:
                return False
    if not stated:
        return asked > 0
    return asked == 0 and _asks_unmarked(*stated[0])


def quotes(text: str, needles: Sequence[str]) -> bool:
    """Whether ``text`` (stripped, at least :data:`MIN_QUOTE_CHARS` characters) holds one
    of ``needles`` or is held in one.

    Example:
        >>> quotes("I said my locker number is 7731", ["locker number is 7731"]), quotes("ok", ["ok then"])
        (True, False)
    """
    text = text.strip()
    if len(text) < MIN_QUOTE_CHARS:
        return False
    return any(text in needle or needle in text for needle in needles)
