"""Secrets given across two messages of a conversation.

A label can end one message and its value start the next: the user types "my new PIN
is" and sends "4821" on its own, or the assistant asks "What's the Wi-Fi password?" and
the user answers "Tr0ub4dor&3". Each message alone holds no secret, so the redactor reads
each pair of neighbouring messages as well:

* the end of the first and the start of the second, joined by a line break, are scanned
  as one text; what is found in the second's part is its secret ("password:" / "Xk9!");
* a card's expiry and security code after its number in the first ("pay with this one:
  4111 …" / "exp 11/26, code 123");
* after a question that asks for a password, a PIN or a code (its last sentence ends
  with ``?`` and names one) or says one comes next ("I'll send the password in the next
  message"), an answer that is a single token with a digit or a symbol ("4821", "it's
  Tr0ub4dor&3", "`Xk9!q` (case sensitive)") is its value. A word ("yes", "later") is not. After a
  question for a token or a key, an answer that looks random is.

* a seed phrase given in two messages (its first words end the first, the rest start the
  second) is read as one, its checksum included (:func:`~.seeds.split_phrase`).

Only the second message changes (:func:`carried_spans`), except the first half of a phrase
cut in two, which :func:`split_spans` gives too, for a writer that still holds the first
message; placeholders already in a message are never touched again.

Example:
    >>> carried_spans("Sure. What's the wifi password?", "it's GreenTea#42")
    [(5, 16, 'password')]
    >>> carried_spans("my new PIN is", "4821")
    [(0, 4, 'password')]
    >>> carried_spans("Do you want to reset your password?", "yes please")
    []
"""

from __future__ import annotations

import re
from typing import Final

from hy_memory_langgraph.redact.cards import KIND as CARD
from hy_memory_langgraph.redact.cards import card_numbers
from hy_memory_langgraph.redact.judge import credential_like, looks_random, not_a_value
from hy_memory_langgraph.redact.rules import NameClass, code_label, load_rules, name_class, split_name
from hy_memory_langgraph.redact.scan import Span, label_starts, scan
from hy_memory_langgraph.redact.seeds import KIND as SEED_PHRASE
from hy_memory_langgraph.redact.seeds import split_phrase

#: How much of the first message's end and of the second's start is read together.
_TAIL: Final = 160
_HEAD: Final = 240
#: Recent pairs (the end of one message and the start of the next) that carry nothing, so
#: the second redaction of the same messages costs a lookup; emptied when full.
_NOTHING_CARRIED: dict[str, None] = {}
_MEMO_SIZE: Final = 1024
#: A label must start this close to the first message's end to carry over.
_NEAR_END: Final = 80
#: An answer of one token, perhaps after an arrow or a bullet, "it's", "sure," or "here:",
#: perhaps quoted, perhaps followed by a note of its own: in brackets ("(case sensitive)"),
#: on the next line ("got it?"), or after a dash.
_ANSWER: Final = re.compile(
    r"(?i)\s*(?:[→>*•-]\s*)?(?:(?:it['’]?s|it is|that['’]?s|sure|ok(?:ay)?|yes|here(?: it is)?|es|c['’]est|voilà|ist|"
    r"é|è|sí|ja|oui|да|это|вот)[,:!]?\s+)*"
    r"[\"'“‘`]?(?P<value>[^\s\"“”‘’`]{4,64}?)[\"'”’`]?[.!?…]*(?=\s*$|\s+[(\[（]|\s*\n|\s+[-–—]\s)")
#: Characters that make a one-token answer a password rather than a word (sentence
#: punctuation does not: "Why?", "Hmm..." are words).
_SYMBOLS: Final = frozenset("#$%&*+/<=>@^_|~-")
#: Quotes and brackets around a token of an answer.
_EDGE_QUOTES: Final = "\"'“”‘’`«»()[]「」"
#: Sentence ends before the question's own sentence (Arabic ؟ and Greek ; ask too).
_SENTENCE_END: Final = re.compile(r"[.!?。！？؟;\u037e\n](?=\s|$)")
_QUESTION_MARKS: Final = ("?", "？", "؟", ";", "\u037e")
#: Words of a code of digits asked for beside the code labels: a PIN, a passcode.
_DIGIT_CODES: Final = frozenset({"pin", "passcode"})
#: Loose words that name a secret asked for, beside the labels: a PIN, a one-time password,
#: a passcode ("code" alone is a booking reference or a zip code as often; "door code" is a
#: label).
_ASKED: Final = frozenset({"pin", "otp", "passcode"})


#: Most questions of one text read as asked and answered within it.
_MAX_QUESTIONS: Final = 8
_QUESTION_END: Final = re.compile(r"[?？][ \t]+(?=\S)")


def answered_spans(text: str) -> list[Span]:
    """Spans of ``text`` that answer a question asked in it, as a message answers the one
    before it ("The wifi password at grandma's house? It's Talvi#6935"): each of its first
    :data:`_MAX_QUESTIONS` questions followed by more text on its line is read as a pair
    (:func:`carried_spans`)."""
    found: list[Span] = []
    for question in list(_QUESTION_END.finditer(text))[:_MAX_QUESTIONS]:
        offset = question.end()
        found += [(s + offset, e + offset, kind) for s, e, kind in carried_spans(text[:question.start() + 1],
                                                                                 text[offset:])]
    return found


def carried_spans(previous: str, current: str) -> list[Span]:
    """Spans of ``current`` that hold the value of a label ending ``previous``, or the rest
    of a secret begun there."""
    return split_spans(previous, current)[1]


def split_spans(previous: str, current: str) -> tuple[list[Span], list[Span]]:
    """The spans of ``previous`` and of ``current`` that hold a secret given across the
    two: a seed phrase's first and last words; else :func:`carried_spans` only.

    Example:
        >>> split_spans("first half: legal winner thank year wave sausage",
        ...             "worth useful legal winner thank yellow")
        ([(12, 48, 'seed_phrase')], [(0, 38, 'seed_phrase')])
    """
    phrase = split_phrase(previous, current)
    if phrase is not None:
        start, end = phrase
        return [(start, len(previous.rstrip()), SEED_PHRASE)], [(len(current) - len(current.lstrip()), end, SEED_PHRASE)]
    return [], _carried_value(previous, current)


def _carried_value(previous: str, current: str) -> list[Span]:
    tail = previous[-_TAIL:]
    window = f"{tail}\n{current[:_HEAD]}"
    if window in _NOTHING_CARRIED:  # the graph's second pass over what the client redacted
        return []
    spans = _carried(tail, current, window)
    if not spans:
        if len(_NOTHING_CARRIED) >= _MEMO_SIZE:
            _NOTHING_CARRIED.clear()
        _NOTHING_CARRIED[window] = None
    return spans


def _carried(tail: str, current: str, window: str) -> list[Span]:
    """The spans of :func:`carried_spans`: a card's code after its number in ``tail``
    (:func:`~.cards.card_numbers`), a label near the end of ``tail`` whose value the
    ``window`` scan finds in ``current``, else the answer to a request for a secret."""
    offset = len(tail) + 1
    codes = [(s - offset, e - offset, kind) for s, e, kind in card_numbers(window) if s >= offset and kind != CARD]
    if codes:
        return codes
    starts = label_starts(tail)
    if not starts or starts[-1] < len(tail) - _NEAR_END:
        return []
    found = [(s - offset, e - offset, kind) for s, e, kind in scan(window) if s >= offset]
    asked = None if found else _asked_for(tail)
    answer = _ANSWER.match(current) if asked else None
    if asked is not None and answer is None and asked[0] == "password" and not current.startswith("[REDACTED:"):
        return _short_answer(current)
    if asked is None or answer is None or current.startswith("[REDACTED:"):
        return found
    kind, code, question = asked
    value = answer.group("value")
    if not_a_value(value.rstrip(".,;:!?")):
        return []  # "When does the password expire?" / "2025-03-01."
    span = [(answer.start("value"), answer.end("value"), "password" if kind == "password" else "secret_value")]
    if kind == "secret":
        return span if looks_random(value, min_length=12) else []
    if code and value.isdigit() and 3 <= len(value) <= 8:
        return span  # "the door code?" / "4821"
    if len(set(value)) >= 3 and any(c.isdigit() or c in _SYMBOLS for c in value):
        return span  # asked for, or announced ("I'll send the password next"), and not a word
    return span if credential_like(value) or (value.isdigit() and 4 <= len(value) <= 8 and len(set(value)) > 1) \
        else []


#: Most tokens of an answer read for the one that looks like a password ("claro → X",
#: "X です", "here: X thanks").
_SHORT_ANSWER: Final = 5
_ANSWER_TOKEN: Final = re.compile(r"\S+")


def _short_answer(current: str) -> list[Span]:
    """In a short answer to a request for a password, the one token that looks like a
    password (:func:`~.judge.credential_like`), whatever words stand around it; none when
    the answer is longer or holds two such tokens (a sentence, not an answer)."""
    tokens = list(_ANSWER_TOKEN.finditer(current))
    if len(tokens) > _SHORT_ANSWER:
        return []
    found = []
    named = load_rules().before_ids | load_rules().before_numbers
    for i, token in enumerate(tokens):
        if i and tokens[i - 1].group().lower().strip(_EDGE_QUOTES + ".,;:!?") in named:
            continue  # "model RT-AX58U", "order 55-1234": an id, named by the word before it
        value = token.group().strip(_EDGE_QUOTES).rstrip(".,;:!?")
        if credential_like(value):
            start = token.start() + token.group().index(value)
            found.append((start, start + len(value), "password"))
    return found if len(found) == 1 else []


def _qualified(words: list[str]) -> bool:
    """Whether a word naming a secret has a qualifier beside it ("the PIN length", "password
    hint"): it then names something about the secret (a qualifier elsewhere in the sentence,
    German "dir", qualifies nothing)."""
    qualifiers = load_rules().qualifiers
    return any(name_class(word) is not None and not qualifiers.isdisjoint(words[max(0, i - 1):i + 2])
               for i, word in enumerate(words))


def _asked_for(tail: str) -> tuple[NameClass, bool, bool] | None:
    """What the end of ``tail`` asks for, as a question or a request ("tell me the door
    code", "把门禁密码发我一下"): the class of the secret its last sentence names (or the
    question before a short note: "What's your API token? I need it for the deploy"),
    whether that is a code of digits (a PIN, a door code), and whether it is a question;
    ``None`` when it names none, or a qualifier ("what's the PIN length?")."""
    text = tail.rstrip()
    ends = [0, *(m.end() for m in _SENTENCE_END.finditer(text, 0, len(text) - 1))]
    sentences = [text[a:b].strip() for a, b in zip(ends, [*ends[1:], len(text)])]
    for sentence in sentences[::-1][:2]:
        words = split_name(sentence)
        if _qualified(words):
            return None
        kinds = {name_class(w) for w in words} | {name_class(sentence)}
        question = sentence.endswith(_QUESTION_MARKS)
        if "password" in kinds or _ASKED.intersection(words):
            return "password", code_label(sentence) or not _DIGIT_CODES.isdisjoint(words), question
        if "secret" in kinds:
            return "secret", False, question
        if not sentence.endswith(_QUESTION_MARKS) and sentence is not sentences[-1]:
            break
    return None
