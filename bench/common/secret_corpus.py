"""A corpus of secrets in the places a memory library meets them, built here.

Every value is fake (drawn from a seeded generator in each credential's own shape); each
case is one secret in one context (English or Chinese prose, touching Chinese text,
full-width colons, JSON with ``\\uXXXX`` escapes) carried by one write path: a chat
message, metadata (flat and nested), an update, an OpenAI tool call (JSON-string
arguments), an Anthropic ``tool_use`` block (dict input), a tool result, a workspace id.
``needle`` is what must not reach disk.

Example:
    >>> cases = build_cases()
    >>> len(cases) > 300, len({c.kind for c in cases}) >= 25
    (True, True)
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["CARRIERS", "KINDS", "LABELLED_ONLY", "Case", "build_cases"]

_ALNUM: Final = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Case:
    """One secret in one context on one write path.

    Attributes:
        kind: The credential's kind (``openai_key``, ``password``, …).
        needle: The secret itself (what no file may hold).
        carrier: The write path (see :data:`CARRIERS`).
        text: The prose around the secret (for text carriers).
        key: The key it sits under (for structured carriers), if any.
        lang: ``"en"`` or ``"zh"``.
    """

    kind: str
    needle: str
    carrier: str
    text: str = ""
    key: str | None = None
    lang: str = "en"
    extra: dict[str, Any] = field(default_factory=dict)


def _rand(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_WORDS: Final = ("correct horse battery staple purple monkey dishwasher rain orbit velvet canyon "
                  "lantern pickle thunder maple quartz ribbon saddle tundra walnut").split()


def _make(kind: str, rng: random.Random) -> str:
    """A fresh fake secret of ``kind`` (the shapes of each provider's credentials)."""
    hexd, b64 = "0123456789abcdef", _ALNUM + "+/"
    upper = string.ascii_uppercase + string.digits
    makers = {
        "openai_key": lambda: rng.choice([f"sk-proj-{_rand(rng, 40)}", f"sk-{_rand(rng, 48)}"]),
        "anthropic_key": lambda: f"sk-ant-api03-{_rand(rng, 60)}",
        "aws_access_key": lambda: rng.choice(["AKIA", "ASIA"]) + _rand(rng, 16, upper),
        "aws_secret_key": lambda: _rand(rng, 40, b64),
        "github_token": lambda: rng.choice([f"ghp_{_rand(rng, 36)}", f"ghs_{_rand(rng, 36)}",
                                            f"github_pat_{_rand(rng, 60)}"]),
        "gitlab_token": lambda: f"glpat-{_rand(rng, 20)}",
        "slack_token": lambda: f"xoxb-{_rand(rng, 12, string.digits)}-{_rand(rng, 24)}",
        "google_api_key": lambda: f"AIza{_rand(rng, 35)}",
        "stripe_key": lambda: rng.choice(["sk_live_", "rk_test_"]) + _rand(rng, 24),
        "jwt": lambda: f"eyJ{_rand(rng, 20)}.eyJ{_rand(rng, 30)}.{_rand(rng, 43)}",
        "huggingface_token": lambda: f"hf_{_rand(rng, 34)}",
        "npm_token": lambda: f"npm_{_rand(rng, 36)}",
        "sendgrid_key": lambda: f"SG.{_rand(rng, 22)}.{_rand(rng, 43)}",
        "telegram_bot_token": lambda: f"{_rand(rng, 9, string.digits)}:AA{_rand(rng, 33)}",
        "tencent_secret_id": lambda: f"AKID{_rand(rng, 32)}",
        "alibaba_access_key": lambda: f"LTAI{_rand(rng, 16)}",
        "digitalocean_token": lambda: f"dop_v1_{_rand(rng, 64, hexd)}",
        "password": lambda: rng.choice([f"Tr0ub4dor&{_rand(rng, 4, string.digits)}",
                                        f"{_rand(rng, 6, string.ascii_lowercase)}{_rand(rng, 3, string.digits)}!"]),
        "passphrase": lambda: " ".join(rng.sample(_WORDS, 4)),
        # 8 digits: a 6-digit needle turns up by chance in megabytes of index files
        "numeric_pin": lambda: _rand(rng, 8, string.digits),
        "generic_token": lambda: f"{_rand(rng, 8)}{_rand(rng, 4, string.digits)}{_rand(rng, 8)}",
        "azure_account_key": lambda: _rand(rng, 86, b64) + "==",
        "url_password": lambda: rng.choice([f"pa/{_rand(rng, 6)}{_rand(rng, 2, string.digits)}", _rand(rng, 10)]),
        "private_key": lambda: rng.choice([
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n-----END PGP PRIVATE KEY BLOCK-----",
        ]).format(_rand(rng, 64, b64)),
        "bearer_token": lambda: _rand(rng, 32),
        "cookie": lambda: f"sessionid={_rand(rng, 24)}; csrftoken={_rand(rng, 24)}",
    }
    return makers[kind]()


#: Every kind of the corpus.
KINDS: Final = ("openai_key", "anthropic_key", "aws_access_key", "aws_secret_key", "github_token",
                "gitlab_token", "slack_token", "google_api_key", "stripe_key", "jwt", "huggingface_token",
                "npm_token", "sendgrid_key", "telegram_bot_token", "tencent_secret_id",
                "alibaba_access_key", "digitalocean_token", "password", "passphrase", "numeric_pin",
                "generic_token", "azure_account_key", "url_password", "private_key", "bearer_token",
                "cookie")


def _needle(kind: str, value: str) -> str:
    """The part that must vanish (a private key's body; a cookie's first value)."""
    if kind == "private_key":
        return value.splitlines()[-2]
    if kind == "cookie":
        return value.split(";")[0].split("=", 1)[1]
    return value


# Prose around a secret: (lang, template). {s} is the secret, {label} a word naming it.
_PROSE: Final = [
    ("en", "Here is the value you asked for: {s} (do not share it)."),
    ("en", "ok so the {label} is {s} and the deploy target is Frankfurt"),
    ("en", "{label}: {s}"),
    ("en", "export APP_{LABEL}=\"{s}\""),
    ("en", "config: {{\"{label}\": \"{s}\"}}"),
    ("zh", "我的{label}是{s}在生产环境"),
    ("zh", "{zh_label}：{s}，别外传"),
    ("zh", "请用{s}登录"),
    ("zh", "{zh_label}是{s}"),
]
# How each kind is named in prose (en label, zh label); None: by its shape alone.
_LABELS: Final[dict[str, tuple[str, str]]] = {
    "aws_secret_key": ("secret access key", "访问密钥"),
    "password": ("password", "密码"),
    "passphrase": ("passphrase", "口令"),
    "numeric_pin": ("payment pin", "支付密码"),
    "generic_token": ("access token", "令牌"),
    "azure_account_key": ("AccountKey", "密钥"),
    "bearer_token": ("Authorization: Bearer", "令牌 Bearer"),
}
#: Kinds recognised only with a label: prose without one is not expected to be caught.
LABELLED_ONLY: Final = frozenset(_LABELS)
#: The write paths of the cases.
CARRIERS: Final = ("chat", "metadata", "nested_metadata", "update", "update_metadata",
                   "openai_tool_args", "anthropic_tool_input", "tool_result", "escaped_json",
                   "workspace_id")


def _prose(kind: str) -> list[tuple[str, str]]:
    """``(lang, template)`` of ``kind`` with ``{s}`` where the secret goes."""
    label, zh_label = _LABELS.get(kind, ("key", "密钥"))
    out = []
    for lang, template in _PROSE:
        unlabelled = "{label}" not in template and "{zh_label}" not in template and \
            "{LABEL}" not in template
        if kind in LABELLED_ONLY and unlabelled:
            continue
        if kind == "cookie":
            template = template.replace("{s}", "Cookie: {s}")
        if kind == "url_password":
            template = template.replace("{s}", "postgres://app:{s}@db.internal:5432/main")
        if kind == "azure_account_key":
            template = template.replace("{s}", "DefaultEndpointsProtocol=https;AccountName=acct;"
                                               "AccountKey={s};EndpointSuffix=core.windows.net")
        out.append((lang, template.replace("{label}", label).replace("{zh_label}", zh_label)
                     .replace("{LABEL}", label.upper().replace(" ", "_")).replace("{{", "{").replace("}}", "}")))
    return out


_STRUCTURED_KEYS: Final = {"password": "password", "passphrase": "passphrase", "numeric_pin": "pin",
                           "aws_secret_key": "aws_secret_access_key", "generic_token": "access_token",
                           "azure_account_key": "AccountKey", "bearer_token": "authorization"}


def build_cases(seed: int = 7) -> list[Case]:
    """Every kind in every context on every carrier it applies to; each case with a
    secret of its own, so a leak is traced to the case that leaked it."""
    rng = random.Random(seed)
    cases: list[Case] = []

    def case(kind: str, carrier: str, template: str = "", key: str | None = None, lang: str = "en") -> None:
        value = _make(kind, rng)
        text = template.replace("{s}", value)
        extra = {} if template else {"value": value}
        cases.append(Case(kind, _needle(kind, value), carrier, text=text, key=key, lang=lang, extra=extra))

    for kind in KINDS:
        prose = _prose(kind)
        for lang, template in prose:
            for carrier in ("chat", "update", "tool_result", "openai_tool_args", "anthropic_tool_input"):
                case(kind, carrier, template, lang=lang)
            case(kind, "metadata", template, key="note", lang=lang)
        key = _STRUCTURED_KEYS.get(kind, "api_key")
        for carrier in ("metadata", "nested_metadata", "update_metadata", "openai_tool_args",
                        "anthropic_tool_input"):
            case(kind, carrier, key=key)
        for lang, template in (prose[0], prose[-1]):  # escaped the way json.dumps writes non-ASCII
            case(kind, "escaped_json", json.dumps({"note": template.replace("{s}", "\x00")})
                 .replace("\\u0000", "{s}"), lang=lang)
    for _ in range(2):
        case("github_token", "workspace_id", "https://x-access-token:{s}@github.com/acme/app")
    return cases
