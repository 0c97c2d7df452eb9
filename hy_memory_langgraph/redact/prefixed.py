"""Credentials of any vendor by their common shape: a short prefix, then a random body.

Most services now issue keys as a short name, a separator and a long random part
(``gsk_…``, ``glsa_…``, ``lin_api_…``, ``pplx-…``, ``dp.st.dev.…``). New ones appear every
month, so beyond the named shapes of ``patterns.toml`` a token counts as a credential when:

* it starts with a prefix of two to eight letters of one case (and perhaps a digit),
  followed by ``_``, ``-`` or ``.``, and is not a hash's or an id's name (``sha256-…``,
  ``commit_…``, model APIs' ``chatcmpl-…``, ``call_…``), nor the value of a hash's name
  (``sha256=…`` in package records; ``export DEPLOY_KEY=gsk_…`` is a key);
* its longest part (parts are split at ``_ - .``) is at least :data:`MIN_BODY` characters
  and the parts after the prefix hold at least :data:`MIN_TOTAL`;
* that part is random: letters of both cases and digits (or capitals and digits only),
  in short chunks, not words (:func:`_random_body`: ``LineOver1DRangeSeries`` is a name).

Hexadecimal parts are left alone, whatever their prefix: ``diff-<sha256>``,
``release-<commit>`` and ``chunk-vendors.3f2a….js`` hold hashes, and keys of hex digits
behind a prefix (``pplx-…``, ``sbp_…``) cannot be told from them; a label still finds them
(``api key: pplx-…``).

Ids of 24 random characters (``pi_3MtwBwLkdIwHu7ix28a3tqPa``) stay below the lengths.

Example:
    >>> [kind for _, _, kind in prefixed_tokens("use gsk_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7b")]
    ['api_token']
    >>> prefixed_tokens("see test_every_rule_has_needles_and_more and sha256-9f86d081884c7d659a2feaa0c55ad015")
    []
"""

from __future__ import annotations

import re
from string import hexdigits
from typing import Final

from hy_memory_langgraph.redact.judge import entropy

KIND: Final = "api_token"
#: Fewest characters of the longest random part.
MIN_BODY: Final = 20
#: Fewest characters of all parts after the prefix together.
MIN_TOTAL: Final = 28
#: Names of hashes, digests and ids: what follows them is no credential.
_NOT_PREFIXES: Final = frozenset({
    "sha", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3", "md5", "blake2b", "blake2s", "blake3",
    "crc32", "xxh64", "git", "commit", "rev", "ref", "hash", "digest", "checksum", "etag", "uuid", "guid",
    "id", "ipfs", "cid", "data", "base64", "sri", "integrity", "build", "version",
    # ids of model APIs' objects (completions, responses, messages, calls, runs, files, …)
    "chatcmpl", "cmpl", "resp", "msg", "call", "toolu", "req", "run", "step", "thread", "asst", "file",
    "batch", "ftjob", "evt", "vs", "org", "proj", "user",
})
#: A prefix is two to eight letters of one case, perhaps a digit after them (``gsk``,
#: ``PMAK``, ``fm2``); it starts a token (perhaps a value after ``=``).
_CANDIDATE: Final = re.compile(
    r"(?<![A-Za-z0-9_./+\\-])(?:[a-z]{2,8}|[A-Z]{2,8})[0-9]?[_.-][A-Za-z0-9_.-]{" + str(MIN_TOTAL - 1) + r",}")
#: The name before ``=`` when it names a hash (``sha256=``, ``integrity=``, ``--hash=``):
#: what follows it is a digest.
_HASH_NAME: Final = re.compile(
    r"(?i)(?:sha\d*|md5|blake\w*|crc\d*|xxh\d*|hash|digest|checksum|integrity|etag|sri)[\w.-]{0,8}=$")
_LONG_RUN: Final = re.compile(r"[A-Za-z0-9_.-]{" + str(MIN_TOTAL + 2) + "}")
_PART: Final = re.compile(r"[_.-]")
_CHUNKS: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HEX: Final = frozenset(hexdigits)


def _random_body(part: str) -> bool:
    """Letters of both cases and digits (or capitals and digits, 24 or more); in chunks
    (a capital and its lower-case letters, a run of capitals or of digits) of under 2.5
    characters on average, as random text falls apart and names (``Wow64Enable``) do not;
    Shannon entropy of 3.5 bits a character or more."""
    lower, upper, digit = (any(c.islower() for c in part), any(c.isupper() for c in part),
                           any(c.isdigit() for c in part))
    if not (digit and upper) or (not lower and len(part) < 24):
        return False
    return len(part) / len(_CHUNKS.findall(part)) < 2.5 and entropy(part) >= 3.5


def _credential(token: str) -> bool:
    head, *rest = _PART.split(token, maxsplit=1)
    if not rest or head.lower() in _NOT_PREFIXES:
        return False
    parts = [p for p in _PART.split(rest[0]) if p]
    if not parts or sum(map(len, parts)) < MIN_TOTAL:
        return False
    longest = max(parts, key=len)
    return len(longest) >= MIN_BODY and not set(longest) <= _HEX and _random_body(longest)


def prefixed_tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, "api_token")`` of every prefixed credential in ``text``."""
    if len(text) < MIN_TOTAL + 2 or _LONG_RUN.search(text) is None:
        return []
    found = []
    for match in _CANDIDATE.finditer(text):
        if text[match.start() - 1:match.start()] == "=" and \
                _HASH_NAME.search(text, max(0, match.start() - 24), match.start()):
            continue
        token = match.group().rstrip("_.-")
        if _credential(token):
            found.append((match.start(), match.start() + len(token), KIND))
    return found
