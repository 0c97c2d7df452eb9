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

Example:
    >>> is_trivial("Thanks!"), is_trivial("好的👍"), is_trivial("Thanks for the book tip!")
    (True, True, False)
    >>> match_text("  I like   TEA. ") == match_text("i like tea")
    True
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["TRIVIAL_MAX_CHARS", "is_trivial", "match_text"]

#: Longer turns are never trivial, whatever words they use.
TRIVIAL_MAX_CHARS: Final = 80

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
        "ok,i’ll come"
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
    if any(ch.isdigit() for ch in folded):
        return False
    for run in _CJK_RUN.findall(folded):
        if not _zh_is_filler(run):
            return False
    rest = _CJK_RUN.sub(" ", folded)
    return all(word in _EN_FILLER for word in _LATIN_WORD.findall(rest))
