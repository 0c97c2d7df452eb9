"""Detection by class, measured on a corpus generated from the classes' descriptions.

``bench/common/secret_classes.py`` writes secrets with random bodies and near misses for
each class of issue 50 in many languages, split into a development part and a held-out
part by template and language before the rules were written. Here:

* every class, on a corpus drawn with another seed than the benchmark's, keeps at least
  its measured share of secrets off disk (a floor a little under the figure measured), and
  every near miss as written (exact);
* each mechanism on variants of its own: seed phrases of every BIP39 list, numbered or
  not; private keys drawn with every dash, split over two messages, base64-encoded;
  ``Authorization`` of made-up schemes; labels inflected by random endings; connect and
  login calls; session cookies; 2FA keys in groups;
* redaction stays idempotent and linear on the new rules' worst inputs.
"""

from __future__ import annotations

import base64
import random
import unicodedata
import string
from collections import Counter

import pytest
from cpu_time import LINEAR_BUDGET_S, cpu_seconds
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.common.secret_bodies import SEED_LANGS, mnemonic
from bench.common.secret_classes import CLASSES, HELD_OUT_LANGS, NEAR_CLASSES, build_samples
from bench.secret_classes import caught, kept, measure
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.redact import redact_text, values
from hy_memory_langgraph.redact.keys import private_key_blocks
from hy_memory_langgraph.redact.seeds import seed_phrases

_SAMPLES = build_samples(seed=11)

#: Secrets kept off disk per class on the seed-11 corpus (all three parts together), a
#: little under what was measured (docs/benchmarks.md gives the benchmark's own seed): a
#: class falling below its floor is a regression.
_FLOORS = {"label_grammar": 0.96, "pin_card_code": 0.98, "auth_header": 0.98, "cli_password": 0.98,
           "connect_call": 0.95, "session_cookie": 0.92, "totp_key": 0.95, "seed_phrase": 0.98, "pem_key": 0.98,
           "config_line": 0.98, "long_value": 0.98, "labelled_token": 0.98, "tool_output": 0.94,
           "positional_credential": 0.98, "password_chat": 0.8, "across_messages": 0.96, "devops_token": 0.98,
           "ai_key": 0.98, "cloud_key": 0.98, "messaging_key": 0.98, "payment_key": 0.98, "connection_string": 0.98,
           "seed_layout": 0.98, "credential_list": 0.93, "backup_codes": 0.85, "pin_code": 0.85}
#: Held-out near misses altered on the seed-11 corpus, as measured: more is a regression
#: (the development part's near misses are all kept).
_HELD_OUT_ALTERED = {"label_grammar": 3, "pin_card_code": 6, "connect_call": 3, "public_key": 3,
                     "config_no_secret": 3, "masked_value": 3}


def test_the_corpus_is_split_by_template_and_language_before_rules() -> None:
    """No template and no held-out language is in both parts; both parts hold every class."""
    parts: dict[str, set[str]] = {}
    for sample in _SAMPLES:
        parts.setdefault(sample.template, set()).add(sample.part)
    assert all(len(p) == 1 for p in parts.values())
    assert {s.part for s in _SAMPLES if s.lang in HELD_OUT_LANGS} == {"heldout"}
    for part in ("dev", "heldout"):
        assert {s.cls for s in _SAMPLES if s.part == part and s.secret} == set(CLASSES)


@pytest.mark.parametrize("cls", [*CLASSES, *NEAR_CLASSES])
def test_each_class_keeps_its_secrets_off_disk_and_its_near_misses_as_written(cls: str) -> None:
    """The failures named are the development part's only (the held-out part is not read
    to tune the rules). A class of near misses only (``public_key``, ``placeholder``, …)
    holds no secret."""
    mine = [s for s in _SAMPLES if s.cls == cls]
    secrets = [s for s in mine if s.secret]
    missed = [s for s in secrets if not caught(s)]
    assert bool(secrets) == (cls in CLASSES)
    if secrets:
        assert (len(secrets) - len(missed)) / len(secrets) >= _FLOORS[cls], \
            [s.messages for s in missed if s.part == "dev"]
    altered = [s for s in mine if not s.secret and not kept(s)]
    assert [s.messages for s in altered if s.part == "dev"] == []
    assert len(altered) <= _HELD_OUT_ALTERED.get(cls, 0)


def test_the_general_near_misses_and_the_reviews_examples_stay() -> None:
    texts = [s.messages for s in _SAMPLES if s.cls == "general"]
    texts += [("Season pass: $129",), ("Tokyo's Shibuya pass is 1500 yen",),
              ("Verification code sent to +44 7700 900123",), ("enter the one-time code we texted you",)]
    for messages in texts:
        msgs = normalize_messages([{"role": "user", "content": m} for m in messages])
        assert [m.content for m in redact_messages(msgs)] == list(messages)


def test_the_figures_by_part_hold() -> None:
    """The corpus figures as a regression floor: recall on each part at least what was
    measured less a small margin, near misses altered at most as measured."""
    figures = measure(_SAMPLES)
    for part, floor, altered in (("dev", 0.98, 0), ("heldout", 0.94, sum(_HELD_OUT_ALTERED.values())),
                                 ("fresh", 0.99, 0)):
        rows = [row for (_, p), row in figures.items() if p == part]
        got, total, kept_, near = (sum(column) for column in zip(*rows))
        assert got / total >= floor and near - kept_ <= altered, (part, got, total, kept_, near)


# ------------------------------------------------------------------ seed phrases
_LISTS = ["english", "spanish", "french", "italian", "portuguese", "czech", "japanese", "korean",
          "chinese_simplified", "chinese_traditional", "russian", "turkish"]


def _words(name: str) -> list[str]:
    from hy_memory_langgraph.redact.seeds import _LISTS as folder

    return (folder / f"{name}.txt").read_text(encoding="utf-8").split()


def _phrase(rng: random.Random, name: str, count: int) -> list[str]:
    """A mnemonic of ``count`` words of the list ``name``, its checksum right (as a wallet makes it)."""
    return mnemonic(rng.randbytes(count * 4 // 3), tuple(_words(name)))


@pytest.mark.parametrize("name", _LISTS)
@pytest.mark.parametrize("count", [12, 15, 18, 21, 24])
def test_a_seed_phrase_of_any_list_and_length_goes_numbered_or_not(name: str, count: int) -> None:
    """Typed composed (``é`` one character, Hangul syllables: what keyboards give) on
    even lengths, decomposed (as some lists ship) on odd ones."""
    rng = random.Random(f"{name}{count}")
    form = "NFD" if count % 2 else "NFC"
    words = [unicodedata.normalize(form, w) for w in _phrase(rng, name, count)]
    space = "\u3000" if name == "japanese" else " "
    for text in (space.join(words), " ".join(f"{i}. {w}" for i, w in enumerate(words, 1)),
                 "\n".join(f"{i}) {w}" for i, w in enumerate(words, 1)), ", ".join(words)):
        out = redact_text(f"my wallet words: {text} — keep safe")
        assert not any(w in out.split() for w in words[2:-2]), (name, out)
        assert out.startswith("my wallet words: ") and out.endswith(" — keep safe")


@pytest.mark.parametrize("name", sorted(SEED_LANGS.values()))
def test_list_words_whose_checksum_fails_stay(name: str) -> None:
    """The last word of a mnemonic changed in its last bit (a checksum bit): no wallet
    takes it, nor does the redactor; nor a list of tags separated by commas whose 15 last
    words would make a phrase (a list goes on alike, and is not cut into phrases to try)."""
    rng = random.Random(name)
    words = _words(name)
    for _ in range(20):
        phrase = _phrase(rng, name, 12)
        phrase[-1] = words[words.index(phrase[-1]) ^ 1]
        assert seed_phrases(" ".join(phrase)) == []
    tail = _phrase(rng, name, 15)
    tags = "tags: " + ", ".join([next(w for w in words if w not in tail), *tail])
    assert seed_phrases(tags) == [] and seed_phrases(f"my wallet {tail[0]} " + " ".join(tail)) != []


def test_lists_of_words_that_are_no_seed_phrase_stay() -> None:
    english = _words("english")
    texts = [" ".join(english[:11]),  # eleven words
             ", ".join(["True", "False"] * 8),  # flags in code
             "We went hiking near the lake and saw a deer, then had coffee at a small cafe in town",
             "我们明天一起去公园散步然后吃饭看电影再回家休息一下"]
    for text in texts:
        assert seed_phrases(text) == [] and redact_text(text) == text


# ------------------------------------------------------------------ private keys
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2500\u2501\u2796\ufe63\uff0d"


def _body(rng: random.Random, lines: int = 4) -> list[str]:
    alphabet = string.ascii_letters + string.digits + "+/"
    return ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(lines)]


@pytest.mark.parametrize("dash", list(_DASHES))
def test_a_private_key_drawn_with_any_dash_goes(dash: str) -> None:
    rng = random.Random(dash)
    body = _body(rng)
    line = dash * 5
    text = f"key:\n{line}BEGIN RSA PRIVATE KEY{line}\n" + "\n".join(body) + f"\n{line}END RSA PRIVATE KEY{line}\nthanks"
    out = redact_text(text)
    assert not any(b in out for b in body) and out.endswith("\nthanks")


def test_a_private_key_split_over_two_messages_goes_from_both() -> None:
    rng = random.Random(3)
    first, second = _body(rng, 3), _body(rng, 3)
    msgs = normalize_messages([
        {"role": "user", "content": "first half:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(first)},
        {"role": "user", "content": "\n".join(second) + "\n-----END OPENSSH PRIVATE KEY-----\nthat's all"}])
    out = "\n".join(m.content for m in redact_messages(msgs))
    assert not any(b in out for b in first + second)
    assert "first half:" in out and "that's all" in out


def test_a_base64_encoded_private_key_goes_and_a_certificate_stays() -> None:
    rng = random.Random(4)
    pem = "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(_body(rng)) + "\n-----END EC PRIVATE KEY-----\n"
    encoded = base64.b64encode(pem.encode()).decode()
    assert encoded not in redact_text(f"tls.key: {encoded}")
    cert = base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + "\n".join(_body(rng))).encode()).decode()
    assert redact_text(f"tls.crt: {cert}") == f"tls.crt: {cert}"


@pytest.mark.parametrize("text", [
    "paste the -----BEGIN PRIVATE KEY----- block into the field", "—————— section two ——————",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "the key ends with -----END PRIVATE KEY----- as usual",
])
def test_markers_without_a_body_and_public_keys_stay(text: str) -> None:
    assert private_key_blocks(text) == [] and redact_text(text) == text


# ------------------------------------------------------------------ headers, cookies, calls, 2FA
def _token(rng: random.Random, n: int = 32) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def test_authorization_headers_of_made_up_schemes_lose_their_credential() -> None:
    rng = random.Random(5)
    for _ in range(40):
        scheme = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(3, 12)))
        token = _token(rng, rng.randint(16, 60))
        for text in (f"Authorization: {scheme} {token}", f'{{"authorization": "{scheme} {token}"}}',
                     f"curl -H 'Authorization: {scheme} {token}' https://api.example.com"):
            out = redact_text(text)
            assert token not in out and "https://api.example.com" in out or "curl" not in text, out


@pytest.mark.parametrize("text", [
    "Authorization: Bearer <token>", "Authorization: Bearer ${TOKEN}", "Authorization: Bearer YOUR_API_KEY",
    "authorization: pending manager approval", "the Authorization header must start with Bearer",
])
def test_authorization_placeholders_and_prose_stay(text: str) -> None:
    assert redact_text(text) == text


def test_session_cookies_by_name_go_and_our_session_ids_in_prose_stay() -> None:
    rng = random.Random(6)
    for name in ("sessionid", "JSESSIONID", "PHPSESSID", "connect.sid", "_gh_sess", "laravel_session", "sid",
                 "ASP.NET_SessionId", "__Secure-next-auth.session-token"):
        token = _token(rng, 32)
        for text in (f"Cookie: {name}={token}", f"{name}={token}; Path=/", f"the {name} cookie is {token}"):
            assert token not in redact_text(text), text
    for text in ("session 3 of the course starts at 10:30", "the sessionid cookie is HttpOnly",
                 "session_id = request.cookies.get('sessionid')"):
        assert redact_text(text) == text


@pytest.mark.parametrize("call", [
    'psycopg2.connect("db", "app", "{pw}")', 'pymysql.connect("localhost", "root", "{pw}", "shop")',
    'ftp.login("bob", "{pw}")', 'smtp.login(EMAIL, "{pw}")', 'HTTPBasicAuth("bob", "{pw}")',
    'requests.get(url, auth=("bob", "{pw}"))', 'ssh.connect(host, 22, "root", "{pw}")',
    'l.simple_bind_s("cn=admin,dc=example", "{pw}")', 'DriverManager.getConnection(url, "sa", "{pw}")',
])
def test_passwords_passed_to_connect_and_login_calls_go(call: str) -> None:
    rng = random.Random(call)
    for _ in range(5):
        password = "".join(rng.choice(string.ascii_letters + string.digits + "!#%&*-") for _ in range(12))
        assert password not in redact_text(call.format(pw=password))


@pytest.mark.parametrize("text", [
    "psycopg2.connect(host, user, password)", 'pymysql.connect("localhost", "root", "", "shop")',
    'ssh.connect("web1", 22, "deploy", key_filename="~/.ssh/id_ed25519")', 'sock.connect(("localhost", 8080))',
    "HTTPBasicAuth(username, password)",
])
def test_calls_passing_variables_or_no_password_stay(text: str) -> None:
    assert redact_text(text) == text


def test_2fa_keys_in_groups_or_in_a_setup_uri_go() -> None:
    rng = random.Random(7)
    for _ in range(30):
        key = "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(32))
        grouped = " ".join(key[i:i + 4] for i in range(0, 32, 4)).lower()
        for text in (f"2FA setup key: {grouped}", f"the authenticator key is {grouped} ok",
                     f"otpauth://totp/Acme:bob?secret={key}&issuer=Acme"):
            out = redact_text(text)
            assert key not in out and grouped[5:19] not in out, out


# ------------------------------------------------------------------ labels in ordinary grammar
_STEMS = [("salasana", "fi"), ("jelszav", "hu"), ("şifre", "tr"), ("парол", "ru"), ("hasł", "pl"), ("hesl", "cs")]


@pytest.mark.parametrize(("stem", "lang"), _STEMS)
def test_a_labels_inflected_forms_take_its_value(stem: str, lang: str) -> None:
    """A stem with endings the lexicon does not list, the value after a few words."""
    rng = random.Random(stem)
    for _ in range(10):
        ending = "".join(rng.choice("aeimnsu") for _ in range(rng.randint(0, 4)))
        password = f"{rng.choice(['Kx', 'pQ', 'zz'])}{rng.randint(10, 99)}!{_token(rng, 5)}"
        text = f"{stem}{ending} wifi {password}"
        assert password not in redact_text(text), text


@pytest.mark.parametrize("text", [
    "salasanani on unohtunut", "a jelszavam túl rövid", "şifremi unuttum", "пароль от вайфая я забыл",
    "the password must have at least 12 characters", "the PIN has 4 digits", "your PIN expires in 30 days",
    "call +1 415 555 0100 to reset your PIN", "the CVV is the 3-digit number on the back",
])
def test_labels_in_prose_with_no_value_stay(text: str) -> None:
    assert redact_text(text) == text


def test_a_lone_key_in_the_sentence_of_a_wireless_network_is_its_password() -> None:
    rng = random.Random(9)
    for _ in range(20):
        password = f"{_token(rng, 4).lower()}{rng.randint(10, 99)}{rng.choice(['me', '!', 'x'])}"
        network = rng.choice(["guest network", "wifi", "WLAN", "hotspot", "router"])
        for text in (f"the {network} is Home-5G and the key is {password}", f"the key for the {network} is {password}"):
            assert password not in redact_text(text), text
    for text in ("the key is to restart the router first", "the network key is stored in the keychain",
                 "the key is dese04me"):
        assert redact_text(text) == text


@pytest.mark.parametrize("text", [
    "DB_PASSWORD=\nDB_USER=app", "password:\n  user: bob", "api_key:\nregion: eu-west-1",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)",
])
def test_an_empty_setting_takes_no_value_from_the_next_setting(text: str) -> None:
    assert redact_text(text) == text


def test_a_value_on_the_line_after_its_label_still_goes() -> None:
    rng = random.Random(10)
    password = f"Kx{rng.randint(10, 99)}-{_token(rng, 6)}"
    assert password not in redact_text(f"password:\n{password}")


def test_a_long_labelled_value_goes_whole() -> None:
    rng = random.Random(8)
    for size in (250, 719, 3000):
        token = "IQoJ" + "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(size))
        for text in (f"aws_session_token = {token}", f"the session token is {token} thanks", f"token: {token}"):
            out = redact_text(text)
            assert token[-40:] not in out and token[200:240] not in out, out[:80]


# ------------------------------------------------------------------ properties and cost
_PIECES = ["abandon", "ability", "able", "about", " ", "\n", "1.", ",", "-----BEGIN RSA PRIVATE KEY-----",
           "-----END RSA PRIVATE KEY-----", "\u2013\u2013\u2013\u2013\u2013", "MIIEowIBAAKCAQEAx9Zk3mQ8",
           "LS0tLS1CRUdJTi",
           "Authorization: ", "Digest ", 'response="', '"', "sessionid=", "a1B2c3D4e5F6g7H8i9", "salasanani on ",
           "PIN ", "1234", "connect(", '"h", ', '"u", ', '"p4ss!"', ")", "otpauth://totp/x?secret=", "JBSWY3DPEHPK3PXP",
           "machine h login u password ", "Pwd={", "}", "ftp host\nuser bob ", "$129", "+44 ", "jbsw y3dp ehpk 3pxp"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@example("-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEAx9Zk3mQ8-----END RSA PRIVATE KEY-----")
def test_the_new_rules_keep_redaction_idempotent(text: str) -> None:
    once = redact_text(text)
    values._CLEAN.clear()
    assert redact_text(once) == once


@pytest.mark.parametrize("text", [
    "abandon " * 100_000, "1. abandon " * 50_000, "-----END RSA PRIVATE KEY-----\n" * 15_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" * 15_000, "MIIEowIBAAKCAQEAx9Zk3mQ8\n" * 25_000 + "-----END PRIVATE KEY-----",
    "LS0tLS1CRUdJTi" * 25_000, "пароль от " * 30_000, "salasanani on " * 30_000, "connect(a, " * 40_000,
    "Authorization: " + "x" * 500_000, "https://a:" + "@" * 150_000, "sessionid=" * 40_000,
    "machine h " * 40_000, "Pwd={" * 50_000, "ftp x\n" * 50_000, "a:5432:" * 50_000, "jbsw " * 100_000,
    "PIN for the " * 30_000, "IQoJ" + "A" * 500_000,
], ids=["seed-words", "numbered-words", "end-markers", "begin-markers", "body-then-end", "encoded-keys",
        "cyrillic-bridge", "finnish-bridge", "connect-calls", "authorization", "url-at-signs", "session-names",
        "netrc", "odbc-braces", "ftp-scripts", "pgpass", "groups", "pin-windows", "long-token"])
def test_the_new_rules_are_linear_on_long_text(text: str) -> None:
    _, spent = cpu_seconds(lambda: redact_text(text))
    assert spent < LINEAR_BUDGET_S / 2  # half a megabyte or less: half the budget


def test_the_corpus_draws_bodies_at_random() -> None:
    """Two seeds draw different secrets from the same templates (the figures are not about
    one fixed body per template)."""
    other = build_samples(seed=12)
    same = Counter(a.needles == b.needles for a, b in zip(_SAMPLES, other) if a.secret)
    assert same[False] > 0.95 * sum(same.values())


@pytest.mark.parametrize("name", _LISTS)
def test_a_labelled_run_of_list_words_goes_whatever_its_checksum(name: str) -> None:
    """A phrase copied with a typo (its checksum fails) after words naming a seed phrase;
    the same words after a label that names none stay."""
    from hy_memory_langgraph.redact.rules import load_rules

    rng = random.Random(f"typo-{name}")
    words = _words(name)
    phrase = _phrase(rng, name, 12)
    phrase[-1] = words[words.index(phrase[-1]) ^ 1]  # a checksum bit flipped
    label = rng.choice(load_rules().seed_labels)
    space = "\u3000" if name == "japanese" else " "
    out = redact_text(f"my {label}: {space.join(phrase)}")
    assert not any(w in out.split() for w in phrase[1:-1]), out
    assert seed_phrases(f"tags: {', '.join(phrase)}") == []
