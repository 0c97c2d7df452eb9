"""Random bodies for the class corpus: passwords, PINs, tokens, keys, seed phrases.

Every field of a template (``§pw§``, ``§seed:en:12§``, …; :data:`FIELD`) is filled by a
maker of :data:`FIELDS` from a seeded generator: the text to insert and its needle (what
must not be stored; ``None`` for a near miss's field, a tuple when a secret is given in
parts). A maker's value may hold :data:`SPLIT`: the message is cut there into two
messages written in a row (a seed phrase given in two messages).

Example:
    >>> rng = random.Random(1)
    >>> text, needle = FIELDS["seed"](rng, "en:12:sp")
    >>> len(text.split()), needle in text
    (12, True)
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Final

__all__ = ["FIELD", "FIELDS", "SEED_LANGS", "SPLIT", "mnemonic"]

_BIP39: Final = Path(__file__).resolve().parents[2] / "hy_memory_langgraph" / "redact" / "bip39"
#: Where a field's value cuts its message in two.
SPLIT: Final = "\x00"

_SYMBOLS: Final = "!#$%&*+-=?@^_.~"
_B64: Final = string.ascii_letters + string.digits + "+/"
_B32: Final = string.ascii_uppercase + "234567"
_CONSONANTS: Final = "bcdfghjklmnprstvwz"
_VOWELS: Final = "aeiou"


def _word(rng: random.Random, syllables: int) -> str:
    """A pronounceable made-up word (random, in no dictionary)."""
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))


def _chars(rng: random.Random, n: int, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _password(rng: random.Random) -> str:
    style = rng.randrange(6)
    if style == 0:  # Word#1234
        return (_word(rng, rng.randint(2, 3)).capitalize() + rng.choice("!#$%&*@?")
                + _chars(rng, rng.randint(2, 4), string.digits))
    if style == 1:  # random from every class
        while True:
            pw = _chars(rng, rng.randint(9, 16), string.ascii_letters + string.digits + _SYMBOLS)
            if re.search(r"\d", pw) and re.search(r"[A-Z]", pw) and re.search(r"[a-z]", pw):
                return pw
    if style == 2:  # lower case and digits
        return _word(rng, 2) + _chars(rng, rng.randint(2, 4), string.digits) + _word(rng, 1)
    if style == 3:  # words joined with a dash and a number
        return f"{_word(rng, 2).capitalize()}-{_word(rng, 2)}-{rng.randint(10, 99)}"
    if style == 4:  # mixed case and digits, no symbol
        while True:
            pw = _chars(rng, rng.randint(8, 14), string.ascii_letters + string.digits)
            if re.search(r"\d", pw) and re.search(r"[A-Z]", pw) and re.search(r"[a-z]", pw):
                return pw
    return _word(rng, 2) + rng.choice("_.") + _word(rng, 2) + str(rng.randint(1, 9999))


def _token(rng: random.Random) -> str:
    while True:
        tok = _chars(rng, rng.randint(24, 44), string.ascii_letters + string.digits)
        if re.search(r"\d", tok) and re.search(r"[A-Z]", tok) and re.search(r"[a-z]", tok):
            return tok


def _pem_body(rng: random.Random, lines: int) -> list[str]:
    return ["MII" + _chars(rng, 61, _B64)] + [_chars(rng, 64, _B64) for _ in range(lines - 1)]


@cache
def _bip39(lang: str) -> tuple[str, ...]:
    return tuple((_BIP39 / f"{lang}.txt").read_text(encoding="utf-8").split())


SEED_LANGS: Final = {"en": "english", "es": "spanish", "fr": "french", "it": "italian", "pt": "portuguese",
                      "cs": "czech", "ja": "japanese", "ko": "korean", "zh": "chinese_simplified",
                      "zh_tw": "chinese_traditional", "ru": "russian", "tr": "turkish"}


def mnemonic(entropy: bytes, words: tuple[str, ...]) -> list[str]:
    """The BIP39 mnemonic of ``entropy`` (16, 20, 24, 28 or 32 bytes) in the list ``words``:
    the entropy's bits and the first ``len(entropy) * 8 / 32`` bits of its SHA-256, read
    eleven at a time as indices into the list (written from the standard, not from the
    redactor's checker)."""
    bits = len(entropy) * 8
    checksum = hashlib.sha256(entropy).digest()[0] >> (8 - bits // 32)
    number = int.from_bytes(entropy, "big") << (bits // 32) | checksum
    count = (bits + bits // 32) // 11
    return [words[(number >> (11 * (count - 1 - i))) & 0x7FF] for i in range(count)]


def _seed_words(rng: random.Random, lang: str, count: int) -> list[str]:
    """A valid seed phrase (its checksum right) of ``count`` words of the language's list."""
    entropy = bytes(rng.randrange(256) for _ in range(count * 11 * 32 // 33 // 8))
    return mnemonic(entropy, _bip39(SEED_LANGS[lang]))


def _seed(rng: random.Random, lang: str, count: int, style: str) -> tuple[str, str]:
    """A seed phrase of ``count`` words of the language's list (its checksum right, as a
    wallet writes it), written in ``style`` (``sp`` spaces, ``nl`` one a line, ``num``
    numbered, ``numnl`` numbered lines, ``comma``); the needle is four words from its
    middle, as written."""
    words = _seed_words(rng, lang, count)
    space = "\u3000" if lang == "ja" and style == "sp" else " "
    if style == "nl":
        parts, sep = words, "\n"
    elif style == "num":
        parts, sep = [f"{i}. {w}" for i, w in enumerate(words, 1)], " "
    elif style == "numnl":
        parts, sep = [f"{i}) {w}" for i, w in enumerate(words, 1)], "\n"
    elif style == "comma":
        parts, sep = words, ", "
    else:
        parts, sep = words, space
    middle = count // 2 - 2
    return sep.join(parts), sep.join(parts[middle:middle + 4])


# Field makers: each returns the text to insert and the needle (None: no secret).
_Maker = Callable[[random.Random, str], tuple[str, "str | None"]]


def _secret(make: Callable[[random.Random], str]) -> _Maker:
    return lambda rng, _arg: (value := make(rng), value)


def _plain(make: Callable[[random.Random], str]) -> _Maker:
    return lambda rng, _arg: (make(rng), None)


def _long(rng: random.Random, _arg: str) -> tuple[str, str]:
    value = "IQoJb3JpZ2luX2Vj" + _chars(rng, rng.randint(300, 900), _B64) + "=="
    return value, value[-40:]


def _seed_field(rng: random.Random, arg: str) -> tuple[str, str]:
    lang, count, *style = arg.split(":")
    return _seed(rng, lang, int(count), style[0] if style else rng.choice(("sp", "sp", "num", "nl", "comma")))


def _pem(rng: random.Random, arg: str) -> tuple[str, str]:
    """A private key block; ``arg``: its type and the dash to draw it with."""
    kind, dash = (arg.split(":") + ["-"])[:2] if arg else ("RSA", "-")
    kind = "" if kind == "PKCS8" else kind + " "
    body = _pem_body(rng, 4)
    line = dash * 5
    return (f"{line}BEGIN {kind}PRIVATE KEY{line}\n" + "\n".join(body) + f"\n{line}END {kind}PRIVATE KEY{line}",
            body[2])


def _pem_b64(rng: random.Random, _arg: str) -> tuple[str, str]:
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_pem_body(rng, 6)) + "\n-----END RSA PRIVATE KEY-----\n"
    value = base64.b64encode(pem.encode()).decode()
    return value, value[120:160]


def _b32_grouped(rng: random.Random) -> str:
    key = _chars(rng, 32, _B32)
    groups = " ".join(key[i:i + 4] for i in range(0, 32, 4))
    return groups.lower() if rng.random() < 0.5 else groups


def _odbc(rng: random.Random, _arg: str) -> tuple[str, str]:
    value = _word(rng, 2) + rng.choice(";}=") + _chars(rng, 4, string.digits) + rng.choice("!#;")
    return "{" + value.replace("}", "}}") + "}", value.replace("}", "}}")


def _pw_at(rng: random.Random) -> str:
    return _word(rng, 2) + "@" + _chars(rng, 3, string.digits) + rng.choice(["!", "#x", "Q", "@z"])


FIELDS: Final[dict[str, _Maker]] = {
    "pw": _secret(_password),
    "pwat": _secret(_pw_at),
    "pin": _secret(lambda r: _chars(r, r.choice((4, 4, 5, 6)), string.digits)),
    "pin4": _secret(lambda r: _chars(r, 4, string.digits)),
    "pin6": _secret(lambda r: _chars(r, 6, string.digits)),
    "cvv": _secret(lambda r: _chars(r, 3, string.digits)),
    "cvv4": _secret(lambda r: _chars(r, 4, string.digits)),
    "tok": _secret(_token),
    "hex": _secret(lambda r: _chars(r, r.choice((32, 40)), "0123456789abcdef")),
    "hex64": _secret(lambda r: _chars(r, 64, "0123456789abcdef")),
    "b64": _secret(lambda r: base64.b64encode(_chars(r, r.randint(18, 30), _B64).encode()).decode()),
    "uuid": _secret(lambda r: "-".join(_chars(r, n, "0123456789abcdef") for n in (8, 4, 4, 4, 12))),
    "b32": _secret(lambda r: _chars(r, r.choice((16, 32)), _B32)),
    "b32g": _secret(_b32_grouped),
    "lic": _secret(lambda r: "-".join(_chars(r, 5, string.ascii_uppercase + string.digits) for _ in range(5))),
    "long": _long,
    "seed": _seed_field,
    "pem": _pem,
    "pemb64": _pem_b64,
    "odbc": _odbc,
    # bodies of a key split over two messages: two lines each
    "pemhead": lambda r, _a: (value := "\n".join(_pem_body(r, 2)), value.splitlines()[1]),
    "pemtail": lambda r, _a: (value := "\n".join(_chars(r, 64, _B64) for _ in range(2)) + "\n"
                              + _chars(r, 28, _B64) + "==", value.splitlines()[0]),
    # near misses: numbers, prices, phone numbers, times (no needle)
    "n": _plain(lambda r: str(r.randint(2, 99))),
    "year": _plain(lambda r: str(r.randint(2015, 2027))),
    "price": _plain(lambda r: str(r.randint(9, 1500))),
    "phone": _plain(lambda r: f"+{r.choice(['44', '1', '49', '33', '81'])} {r.randint(200, 999)} "
                               f"{r.randint(100, 999)} {r.randint(1000, 9999)}"),
    "time": _plain(lambda r: f"{r.randint(1, 12)}:{r.choice(['00', '15', '30', '45'])}"),
    "date": _plain(lambda r: f"{r.randint(2019, 2026)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"),
    "word": _plain(lambda r: _word(r, 2).capitalize()),
    "ip": _plain(lambda r: ".".join(str(r.randint(1, 254)) for _ in range(4))),
    "pubb64": _plain(lambda r: "AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + _chars(r, 60, _B64)),
    "certbody": _plain(lambda r: "\n".join(["MIID" + _chars(r, 60, _B64)] + [_chars(r, 64, _B64) for _ in range(3)])),
}
# ------------------------------------------------------------------ second round's bodies
_ALNUM: Final = string.ascii_letters + string.digits
_HEXD: Final = "0123456789abcdef"
_URLSAFE: Final = _ALNUM + "_-"


def _mixed(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    """``n`` random characters of ``alphabet`` holding a lower-case letter, a capital and a digit."""
    while True:
        value = _chars(rng, n, alphabet)
        if re.search(r"\d", value) and re.search(r"[A-Z]", value) and re.search(r"[a-z]", value):
            return value


#: Tokens as vendors document them (prefix, alphabet, length), by vendor.
_VENDORS: Final[dict[str, Callable[[random.Random], str]]] = {
    # source hosting, CI/CD, package registries, infrastructure
    "ghp": lambda r: "ghp_" + _mixed(r, 36),
    "gho": lambda r: "gho_" + _mixed(r, 36),
    "ghs": lambda r: "ghs_" + _mixed(r, 36),
    "ghpat": lambda r: "github_pat_11" + _mixed(r, 20) + "_" + _mixed(r, 59),
    "glpat": lambda r: "glpat-" + _mixed(r, 20, _URLSAFE),
    "glrt": lambda r: "glrt-" + _mixed(r, 20, _URLSAFE),
    "glrunner": lambda r: "GR1348941" + _mixed(r, 20, _URLSAFE),
    "npm": lambda r: "npm_" + _mixed(r, 36),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _mixed(r, 64, _URLSAFE),
    "dckr": lambda r: "dckr_pat_" + _mixed(r, 27, _URLSAFE),
    "hvs": lambda r: "hvs." + _mixed(r, 24) if r.random() < 0.5 else "hvs.CAESI" + _mixed(r, 86, _URLSAFE),
    "hvb": lambda r: "hvb.AAAAAQ" + _mixed(r, 100, _URLSAFE),
    "tfc": lambda r: _mixed(r, 14) + ".atlasv1." + _mixed(r, 67),
    "doppler": lambda r: r.choice(("dp.st.prd.", "dp.st.dev.", "dp.pt.", "dp.sa.", "dp.ct.")) + _mixed(r, 43),
    "pulumi": lambda r: "pul-" + _chars(r, 40, _HEXD),
    "buildkite": lambda r: "bkua_" + _chars(r, 40, _HEXD),
    "netlify": lambda r: "nfp_" + _mixed(r, 36),
    "linear": lambda r: "lin_api_" + _mixed(r, 40),
    "sentry": lambda r: "sntrys_eyJpYXQiOjE3" + _mixed(r, 70) + "_" + _mixed(r, 43),
    "grafana_sa": lambda r: "glsa_" + _mixed(r, 32) + "_" + _chars(r, 8, _HEXD),
    "grafana_cloud": lambda r: "glc_eyJvIjoi" + _mixed(r, 100) + "=",
    "sonar": lambda r: r.choice(("squ_", "sqp_", "sqa_")) + _chars(r, 40, _HEXD),
    "tailscale": lambda r: "tskey-" + r.choice(("auth", "api", "client")) + "-k" + _mixed(r, 10) + "CNTRL-"
                           + _mixed(r, 33),
    "figma": lambda r: "figd_" + _mixed(r, 40, _URLSAFE),
    "render": lambda r: "rnd_" + _mixed(r, 32),
    "prefect": lambda r: "pnu_" + _mixed(r, 36),
    "neon": lambda r: "napi_" + _chars(r, 64, string.ascii_lowercase + string.digits),
    "flyio": lambda r: "fo1_" + _mixed(r, 43, _URLSAFE),
    "atlassian": lambda r: "ATATT3xFfGF0" + _mixed(r, 170, _URLSAFE) + "=" + _chars(r, 8, "0123456789ABCDEF"),
    "bitbucket": lambda r: "ATBB" + _mixed(r, 32),
    "azdo": lambda r: _chars(r, 52, "abcdefghijklmnopqrstuvwxyz234567"),
    "circleci": lambda r: "CCIPAT_" + _mixed(r, 22) + "_" + _chars(r, 40, _HEXD),
    "rubygems": lambda r: "rubygems_" + _chars(r, 48, _HEXD),
    "clojars": lambda r: "CLOJARS_" + _chars(r, 60, _HEXD),
    "supabase": lambda r: "sb_secret_" + _mixed(r, 31, _URLSAFE),
    "notion": lambda r: "ntn_" + _chars(r, 11, string.digits) + _mixed(r, 35),
    "ngrok": lambda r: "2" + _mixed(r, 26) + "_" + _mixed(r, 21),
    "cloudflare": lambda r: _mixed(r, 40, _URLSAFE),
    "datadog": lambda r: _chars(r, 32, _HEXD),
    "vercel": lambda r: _mixed(r, 24),
    "snyk": lambda r: "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)),
    # AI providers
    "groq": lambda r: "gsk_" + _mixed(r, 52),
    "xai": lambda r: "xai-" + _mixed(r, 80),
    "openrouter": lambda r: "sk-or-v1-" + _chars(r, 64, _HEXD),
    "fireworks": lambda r: "fw_" + _mixed(r, 24),
    "langfuse": lambda r: "sk-lf-" + "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)),
    "nvidia": lambda r: "nvapi-" + _mixed(r, 64, _URLSAFE),
    "tavily": lambda r: "tvly-" + _mixed(r, 32),
    "elevenlabs": lambda r: "sk_" + _chars(r, 48, _HEXD),
    "mistral": lambda r: _mixed(r, 32),
    "cohere": lambda r: _mixed(r, 40),
    "anthropic": lambda r: "sk-ant-api03-" + _mixed(r, 93, _URLSAFE) + "AA",
    "openai": lambda r: "sk-proj-" + _mixed(r, 48, _URLSAFE) + "T3BlbkFJ" + _mixed(r, 48, _URLSAFE),
    "deepseek": lambda r: "sk-" + _chars(r, 32, _HEXD),
    "jina": lambda r: "jina_" + _mixed(r, 60),
    # cloud providers
    "aws_secret": lambda r: _mixed(r, 40, _ALNUM + "/+"),
    "azure_secret": lambda r: _mixed(r, 3) + r.choice("5678") + "Q~" + _mixed(r, 34, _ALNUM + "_.~-"),
    "azure_storage": lambda r: _mixed(r, 86, _ALNUM + "/+") + "==",
    "ibm": lambda r: _mixed(r, 44, _URLSAFE),
    "alibaba_secret": lambda r: _mixed(r, 30),
    "tencent_secret": lambda r: _mixed(r, 32),
    "linode": lambda r: _chars(r, 64, _HEXD),
    "hetzner": lambda r: _mixed(r, 64),
    "scaleway": lambda r: "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)),
    # messaging and e-mail
    "twilio_auth": lambda r: _chars(r, 32, _HEXD),
    "slack_bot": lambda r: f"xoxb-{r.randint(10**10, 10**12)}-{r.randint(10**11, 10**13)}-" + _mixed(r, 24),
    "postmark": lambda r: "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)),
    "vonage": lambda r: _mixed(r, 16),
    "pusher": lambda r: _chars(r, 20, _HEXD),
    "mailchimp": lambda r: _chars(r, 32, _HEXD) + f"-us{r.randint(1, 21)}",
    "line": lambda r: _mixed(r, 172, _ALNUM + "/+") + "=",
    "teams_hook": lambda r: "https://acme.webhook.office.com/webhookb2/" + "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12))
                           + "@" + "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)) + "/IncomingWebhook/"
                           + _chars(r, 32, _HEXD) + "/" + "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12)),
    # payments
    "whsec": lambda r: "whsec_" + _mixed(r, 32),
    "paypal": lambda r: "E" + _mixed(r, 79, _URLSAFE),
    "braintree": lambda r: "access_token$production$" + _chars(r, 16, string.ascii_lowercase + string.digits) + "$"
                           + _chars(r, 32, _HEXD),
    "square": lambda r: "EAAA" + _mixed(r, 60, _URLSAFE),
    "adyen": lambda r: "AQE" + _chars(r, 8, string.ascii_lowercase + string.digits) + "." + _mixed(r, 70, _URLSAFE),
    "razorpay": lambda r: _mixed(r, 24),
    "flutterwave": lambda r: "FLWSECK-" + _chars(r, 32, _HEXD) + "-X",
    "mollie": lambda r: "live_" + _mixed(r, 30),
    "paystack": lambda r: "sk_live_" + _chars(r, 40, _HEXD),
}


def _vendor(rng: random.Random, arg: str) -> tuple[str, str]:
    value = _VENDORS[arg](rng)
    return value, value


def _seed_in_two(rng: random.Random, arg: str) -> tuple[str, tuple[str, str]]:
    """A seed phrase cut in two messages (:data:`SPLIT` between its halves); a needle from each."""
    lang, count = arg.split(":")[:2]
    words = _seed_words(rng, lang, int(count))
    half = len(words) // 2
    space = "\u3000" if lang == "ja" else " "
    first, second = words[:half], words[half:]
    return (space.join(first) + SPLIT + space.join(second),
            (space.join(first[1:4]), space.join(second[1:4])))


def _seed_styled(rng: random.Random, arg: str) -> tuple[str, str]:
    """A seed phrase written as people paste it: ``caps`` (capitalised), ``json`` (a JSON
    array), ``dash`` (``1-word``), ``table`` (``| 1 | word |`` rows), ``and`` (commas and a
    last "and"), ``cols`` (three numbered columns a line)."""
    lang, count, style = arg.split(":")
    words = _seed_words(rng, lang, int(count))
    if style == "caps":
        parts, sep = [w.capitalize() for w in words], " "
    elif style == "json":
        parts, sep = [f'"{w}"' for w in words], ", "
    elif style == "dash":
        parts, sep = [f"{i}-{w}" for i, w in enumerate(words, 1)], " "
    elif style == "table":
        parts, sep = [f"| {i} | {w} |" for i, w in enumerate(words, 1)], "\n"
    elif style == "and":
        parts, sep = [*words[:-2], f"{words[-2]} and {words[-1]}"], ", "
    else:  # cols
        cells = [f"{i:>2}. {w:<10}" for i, w in enumerate(words, 1)]
        parts, sep = [" ".join(cells[i:i + 3]).rstrip() for i in range(0, len(cells), 3)], "\n"
    text = ("[" + sep.join(parts) + "]") if style == "json" else sep.join(parts)
    middle = len(words) // 2
    return text, words[middle] if style != "caps" else words[middle].capitalize()


def _word_list(rng: random.Random, arg: str) -> tuple[str, None]:
    """Words of a BIP39 list in a random order (no checksum asked for: most lists of
    words fail it), as a list of things is written."""
    lang, count = arg.split(":")
    words = [rng.choice(_bip39(SEED_LANGS[lang])) for _ in range(int(count))]
    return rng.choice((" ", ", ", "\n")).join(words), None


def _backup_codes(rng: random.Random, arg: str) -> tuple[str, tuple[str, str]]:
    """Backup codes as services print them: ``g`` ten "1234 5678", ``gh`` sixteen "a1b2c-3d4e5",
    ``alnum`` ten "a1b2c3d4", ``dash`` ten "1234-5678"; one a line or after commas."""
    style = arg or "g"
    if style == "g":
        codes = [f"{_chars(rng, 4, string.digits)} {_chars(rng, 4, string.digits)}" for _ in range(10)]
    elif style == "gh":
        codes = [f"{_chars(rng, 5, _HEXD)}-{_chars(rng, 5, _HEXD)}" for _ in range(16)]
    elif style == "alnum":
        codes = [_mixed(rng, 8, string.ascii_lowercase + string.digits + "A") .lower() for _ in range(10)]
    else:
        codes = [f"{_chars(rng, 4, string.digits)}-{_chars(rng, 4, string.digits)}" for _ in range(10)]
    sep = rng.choice(("\n", ", ", "  "))
    return sep.join(codes), (codes[1], codes[-2])


def _otp_uri(rng: random.Random, arg: str) -> tuple[str, str]:
    """An ``otpauth://`` URI with its parameters in any order, the label URL-encoded."""
    secret = _chars(rng, rng.choice((16, 26, 32)), _B32)
    issuer = rng.choice(("GitHub", "Acme%20Corp", "AWS", "Google", "Dropbox"))
    params = [f"secret={secret}", f"issuer={issuer}", "algorithm=SHA1", "digits=6", "period=30"]
    rng.shuffle(params)
    kind = arg or "totp"
    return f"otpauth://{kind}/{issuer}:{_word(rng, 2)}%40example.com?" + "&".join(params), secret


def _otp_migration(rng: random.Random, _arg: str) -> tuple[str, str]:
    """Google Authenticator's export: ``otpauth-migration://offline?data=`` and base64."""
    data = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randint(40, 90)))).decode()
    quoted = data.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    return "otpauth-migration://offline?data=" + quoted, quoted[8:28]


def _session_value(rng: random.Random, arg: str) -> tuple[str, str]:
    """A session id as frameworks make them: ``hex`` (32), ``HEX`` (JSESSIONID), ``php`` (26
    lower-case letters and digits), ``asp`` (24 lower-case), ``flask`` (signed base64url),
    ``rails`` (base64 and a digest), ``alnum`` (32)."""
    style = arg or rng.choice(("hex", "HEX", "php", "asp", "flask", "rails", "alnum"))
    if style == "hex":
        value = _chars(rng, 32, _HEXD)
    elif style == "HEX":
        value = _chars(rng, 32, _HEXD.upper())
    elif style == "php":
        value = _mixed(rng, 26, string.ascii_lowercase + string.digits + "A").lower()
    elif style == "asp":
        value = _chars(rng, 24, "abcdefghijklmnopqrstuvwxyz012345")
    elif style == "flask":
        value = "eyJ" + _mixed(rng, 30, _URLSAFE) + "." + _mixed(rng, 6, _URLSAFE) + "." + _mixed(rng, 27, _URLSAFE)
    elif style == "rails":
        value = _mixed(rng, 120, _ALNUM + "+/") + "--" + _chars(rng, 40, _HEXD)
    else:
        value = _mixed(rng, 32)
    return value, value


def _b64_secret(rng: random.Random, _arg: str) -> tuple[str, str]:
    """A password as a Kubernetes Secret holds it: base64."""
    value = base64.b64encode(_password(rng).encode()).decode()
    return value, value


FIELDS.update({
    "vt": _vendor,
    "seed2": _seed_in_two,  # type: ignore[dict-item]
    "seeds": _seed_styled,
    "words": _word_list,
    "bk": _backup_codes,  # type: ignore[dict-item]
    "otpuri": _otp_uri,
    "otpmig": _otp_migration,
    "sess": _session_value,
    "b64pw": _b64_secret,
    "b32l": _secret(lambda r: _chars(r, 32, _B32).lower()),
    "b32s": _secret(lambda r: _chars(r, 16, _B32)),
    "b32g4": _secret(lambda r: " ".join(_chars(r, 4, _B32).lower() for _ in range(r.choice((4, 8))))),
    "otp6": _plain(lambda r: _chars(r, 6, string.digits)),
    "sha256": _plain(lambda r: _chars(r, 64, _HEXD)),
    "sha1": _plain(lambda r: _chars(r, 40, _HEXD)),
    "md5": _plain(lambda r: _chars(r, 32, _HEXD)),
    "puuid": _plain(lambda r: "-".join(_chars(r, n, _HEXD) for n in (8, 4, 4, 4, 12))),
    "sshpub": _plain(lambda r: r.choice((
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _chars(r, 43, _B64),
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + _chars(r, 300, _B64),
        "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + _chars(r, 86, _B64) + "=",
    )) + f" {_word(r, 2)}@{_word(r, 2)}"),
    "user": _plain(lambda r: _word(r, 2)),
    "host": _plain(lambda r: f"{_word(r, 2)}.example.com"),
    "b64data": _plain(lambda r: base64.b64encode(_word(r, 3).encode()).decode()),
})


FIELD: Final = re.compile(r"§([a-z0-9]+)(?::([^§]*))?§")



# ------------------------------------------------------------------ third round's bodies
def _laid_out(words: list[str], layout: str, space: str) -> tuple[str, list[tuple[int, int]]]:
    """``words`` written in ``layout``, with where each word stands: ``line`` (one line),
    ``num`` (``1. word`` a line), ``numin`` (``1. word 2. word`` on one line), ``grid``
    (numbered cells, numbers running down the columns, four columns), ``gridrow`` (numbered
    cells, three a row), ``md`` (a markdown table, ``| # | word | # | word |``), ``perline``
    (four words a line, unnumbered), ``tab`` (number, tab, word a line)."""
    n = len(words)
    cells: list[list[tuple[str, int]]]  # lines of (prefix, word index)
    if layout == "num":
        cells = [[(f"{i + 1}. ", i)] for i in range(n)]
    elif layout == "tab":
        cells = [[(f"{i + 1}\t", i)] for i in range(n)]
    elif layout == "numin":
        cells = [[(f"{i + 1}. ", i) for i in range(n)]]
    elif layout == "grid":
        rows = (n + 3) // 4
        cells = [[(f"{c * rows + r + 1:>2}. ", c * rows + r) for c in range(4) if c * rows + r < n]
                 for r in range(rows)]
    elif layout == "gridrow":
        cells = [[(f"{i + 1:>2}. ", i) for i in range(r, min(r + 3, n))] for r in range(0, n, 3)]
    elif layout == "md":
        cells = [[(f"| {i + 1} | ", i), (f" | {i + 2} | ", i + 1)] for i in range(0, n, 2)]
    elif layout == "perline":
        cells = [[("", i) for i in range(r, min(r + 4, n))] for r in range(0, n, 4)]
    else:
        cells = [[("", i) for i in range(n)]]
    text, where = "", [(0, 0)] * n
    if layout == "md":
        text = "| # | word | # | word |\n|---|---|---|---|\n"
    for row in cells:
        for k, (prefix, i) in enumerate(row):
            if k and layout not in ("md",):
                text += "   " if layout in ("grid", "gridrow") else space
            text += prefix
            where[i] = (len(text), len(text) + len(words[i]))
            text += words[i]
        text += " |\n" if layout == "md" else "\n"
    return text.rstrip("\n"), where


def _pairs(text: str, where: list[tuple[int, int]]) -> tuple[str, ...]:
    """Every two words next to each other in ``text``, with what stands between them."""
    spans = sorted(where)
    return tuple(text[a[0]:b[1]] for a, b in zip(spans, spans[1:]))


def _seed_laid(rng: random.Random, arg: str) -> tuple[str, tuple[str, ...]]:
    """A seed phrase (checksum right) in a layout (:func:`_laid_out`); ``arg``
    ``LANG:N:LAYOUT[:ideo]`` (``ideo``: words apart by the ideographic space). The needles
    are every two neighbouring words as the text shows them: all must go."""
    lang, count, layout, *rest = arg.split(":")
    words = _seed_words(rng, lang, int(count))
    text, where = _laid_out(words, layout, "\u3000" if rest else " ")
    return text, _pairs(text, where)


def _seed_invalid(rng: random.Random, arg: str) -> tuple[str, None]:
    """BIP39 words of one list whose checksum fails (a valid phrase with its last word
    changed until the checksum breaks), laid out like :func:`_seed_laid`."""
    lang, count, layout = arg.split(":")
    words = _seed_words(rng, lang, int(count))
    vocabulary = _bip39(SEED_LANGS[lang])
    entropy_bits = int(count) * 11 - int(count) // 3
    while True:
        words[-1] = rng.choice(vocabulary)
        number = 0
        for w in words:
            number = number << 11 | vocabulary.index(w)
        checksum = number & ((1 << (int(count) // 3)) - 1)
        entropy = (number >> (int(count) // 3)).to_bytes(entropy_bits // 8, "big")
        if hashlib.sha256(entropy).digest()[0] >> (8 - int(count) // 3) != checksum:
            break
    return _laid_out(words, layout, " ")[0], None


def _site(rng: random.Random) -> str:
    return rng.choice(("gmail.com", "netflix.com", "amazon.de", "github.com", "bank.example", "vk.com",
                       "mercadolibre.com", "rakuten.co.jp", "taobao.com", "paypal.com", "steam", "icloud",
                       "outlook.com", "wifi-casa", "router", "instagram", "yandex.ru", "seznam.cz"))


def _credential_list(rng: random.Random, arg: str) -> tuple[str, tuple[str, ...]]:
    """Several accounts at once; ``arg`` ``STYLE[:H1,H2,H3]``: ``md`` (markdown table),
    ``csv``, ``tsv``, ``cols`` (aligned columns), ``bul`` (``- site: user / password``),
    ``lab`` (``- site — H2 user, H3 password``), ``chrome`` / ``bitwarden`` / ``firefox``
    (password managers' CSV exports), ``rows`` / ``urlrows`` (an export's rows without a
    header). The needles: every password."""
    style, *heads = arg.split(":")
    head = heads[0].split(",") if heads else ["site", "user", "password"]
    rows = [(_site(rng), _word(rng, 2) + rng.choice(("", "@gmail.com", "77", ".k")), _password(rng))
            for _ in range(rng.randint(3, 5))]
    if style == "md":
        lines = [f"| {' | '.join(head)} |", "|---|---|---|"] + [f"| {s} | {u} | {p} |" for s, u, p in rows]
    elif style == "csv":
        lines = [",".join(head)] + [f"{s},{u},{p}" for s, u, p in rows]
    elif style == "tsv":
        lines = ["\t".join(head)] + [f"{s}\t{u}\t{p}" for s, u, p in rows]
    elif style == "cols":
        lines = [f"{head[0]:<18}{head[1]:<16}{head[2]}"] + [f"{s:<18}{u:<16}{p}" for s, u, p in rows]
    elif style == "bul":
        lines = [f"- {s}: {u} / {p}" for s, u, p in rows]
    elif style == "lab":
        lines = [f"- {s} — {head[1]} {u}, {head[2]} {p}" for s, u, p in rows]
    elif style == "chrome":
        lines = ["name,url,username,password,note"] + [f"{s},https://{s}/login,{u},{p}," for s, u, p in rows]
    elif style == "bitwarden":
        lines = ["folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp"] \
            + [f",,login,{s},,,0,https://{s},{u},{p}," for s, u, p in rows]
    elif style == "rows":  # a browser export's rows, without their header
        lines = [f"{s},https://{s}/login,{u},{p}," for s, u, p in rows]
    elif style == "urlrows":  # url, user, password a line, tabs between
        lines = [f"https://{s}\t{u}\t{p}" for s, u, p in rows]
    else:  # firefox
        lines = ['"url","username","password","httpRealm","formActionOrigin","guid","timeCreated"'] \
            + [f'"https://{s}","{u}","{p}",,"https://{s}","{{{_chars(rng, 8, _HEXD)}}}","1700000000000"'
               for s, u, p in rows]
    return "\n".join(lines), tuple(p for _, _, p in rows)


def _backup_codes_3(rng: random.Random, arg: str) -> tuple[str, tuple[str, ...]]:
    """Eight to ten 2FA backup codes; ``arg`` ``SHAPE:SEP``: shapes ``d44`` (``1234 5678``),
    ``d4d4`` (``1234-5678``), ``d8`` (8 digits), ``d10``, ``a44`` (``abcd-efgh``), ``x55``
    (``a1b2c-3d4e5``), ``a8`` (8 lower-case letters and digits); separators ``nl``, ``comma``,
    ``num`` (``1. code`` a line), ``sp`` (two spaces). The needles: every code."""
    shape, sep = arg.split(":")
    lower = string.ascii_lowercase + string.digits
    make = {
        "d44": lambda: f"{_chars(rng, 4, string.digits)} {_chars(rng, 4, string.digits)}",
        "d4d4": lambda: f"{_chars(rng, 4, string.digits)}-{_chars(rng, 4, string.digits)}",
        "d8": lambda: _chars(rng, 8, string.digits),
        "d10": lambda: _chars(rng, 10, string.digits),
        "a44": lambda: f"{_chars(rng, 4, string.ascii_lowercase)}-{_chars(rng, 4, string.ascii_lowercase)}",
        "x55": lambda: f"{_chars(rng, 5, _HEXD)}-{_chars(rng, 5, _HEXD)}",
        "a8": lambda: _mixed(rng, 8, lower + "A").lower(),
    }[shape]
    codes = [make() for _ in range(rng.randint(8, 10))]
    if sep == "num":
        text = "\n".join(f"{i}. {c}" for i, c in enumerate(codes, 1))
    else:
        text = {"nl": "\n", "comma": ", ", "sp": "  "}[sep].join(codes)
    return text, tuple(codes)


FIELDS.update({
    "seedl": _seed_laid,  # type: ignore[dict-item]
    "badseed": _seed_invalid,
    "creds": _credential_list,  # type: ignore[dict-item]
    "bk3": _backup_codes_3,  # type: ignore[dict-item]
    "pin8": _secret(lambda r: _chars(r, 8, string.digits)),
    "pinx": _secret(lambda r: _chars(r, r.choice((4, 4, 5, 6, 6, 8)), string.digits)),
    "zip": _plain(lambda r: _chars(r, 5, string.digits)),
    "last4": _plain(lambda r: _chars(r, 4, string.digits)),
})
