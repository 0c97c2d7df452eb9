"""Detection by mechanism, the rounds after held-out corpora #9 to #12 and an outside attack
on them: a user's and a password's literals side by side in any call, values by grammar
(a dot among random characters, compound labels, "as" words, abbreviations, possessives),
a network's key named in its sentence or on a note, sheets of backup codes, query strings
given as tokens, seed phrases and labels across messages and replies; and the near misses
of the same classes (open keys, keys of a key-value store, paths, counts, words with marks,
placeholders in any language, names and flags in code, markdown code spans).

Each test draws its variants from the class: random users, passwords, keys and words, call
names no rule lists, labels and qualifiers of several languages.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from cpu_time import LINEAR_BUDGET_S, cpu_seconds

import hy_memory_langgraph.redact
from bench.common.secret_bodies import SEED_LANGS, mnemonic
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.messages.types import Msg
from hy_memory_langgraph.redact import redact_text

_SEEDS = range(6)


def _word(rng: random.Random, low: int = 4, high: int = 8) -> str:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(low, high) // 2))


def _password(rng: random.Random, symbols: str = "!#$&*?@~") -> str:
    """A human password: a capitalised word, digits and a symbol, or a random one with a
    symbol inside (before its label, ``a=b is …`` reads as code, ``a;b`` as two tokens)."""
    if rng.random() < 0.5:
        return _word(rng, 6, 10).title() + str(rng.randint(10, 9999)) + rng.choice("!#$&*?@~")
    body = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase), rng.choice(string.digits)] \
        + rng.choices(string.ascii_letters + string.digits, k=rng.randint(6, 12))
    rng.shuffle(body)
    body.insert(rng.randint(1, len(body) - 1), rng.choice(symbols))
    return "".join(body)


_CALLS = ["{c}({q}{u}{q}, {q}{p}{q})", "x = {c}({q}https://{w}.corp.local{q}, {q}{u}{q}, {q}{p}{q})",
          "const c = new {c}({q}{u}{q}, {q}{p}{q}, {q}{w}.local{q}, 5432);", "{c} {q}DSN={w}{q}, {q}{u}{q}, {q}{p}{q}",
          "await {c}.open({q}{u}{q}, {q}{p}{q});"]


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_user_and_a_password_side_by_side_in_any_call(seed: int) -> None:
    rng = random.Random(seed)
    for frame in _CALLS:
        call = _word(rng).title() + rng.choice(["", "Client", "Session", "Api"])
        password = _password(rng, "!#$&*?@~|<>;^")
        text = frame.format(c=call, q=rng.choice("'\""), u=rng.choice([_word(rng), "admin", "svc_" + _word(rng)]),
                            p=password, w=_word(rng))
        out = redact_text(text)
        assert password not in out, out


@pytest.mark.parametrize("text", [
    "('f0', 'M8[D]'), ('f1', 'datetime64[Y]')", "'Modula2Lexer': ('pygments.lexers.modula2', 'Modula-2')",
    "'PythonUL4Lexer': ('pygments.lexers.ul4', 'Python+UL4')", "assert ('value', '_ScaledFloatTestDType64') in rep",
    "t('Hello', 'World')", "label('Name', 'Hi There1!')", "colour('fg', '#Aa11Bb')"])
def test_pairs_of_names_and_formats_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_key_of_a_key_value_store_is_no_secret(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(6):
        parts = [_word(rng)] + [rng.choice([_word(rng), str(rng.randint(1, 10**9))]) for _ in range(rng.randint(1, 3))]
        key = ":".join(parts)
        text = rng.choice(["2025-01-02T03:04:05Z DEBUG cache miss key={k}", "cache key={k}", "redis GET key={k}"])
        assert redact_text(text.format(k=key)) == text.format(k=key)
    token = "".join(rng.choices(string.ascii_letters + string.digits, k=32))
    assert token not in redact_text(f"api key={token}")


_PUBLIC = ["my public key: {v}", "Mein öffentlicher Schlüssel: {v}", "Ma clé publique : {v}", "Mi clave pública: {v}",
           "A chave pública: {v}", "Mój klucz publiczny: {v}", "Мой открытый ключ: {v}", "De publieke sleutel: {v}",
           "Mein öffentlicher GPG-Schlüssel hat den Fingerabdruck {v}", "публичный ключ сервера: PublicKey = {v}"]
_PRIVATE = ["my private key: {v}", "Ma clé privée : {v}", "the secret key is {v}", "Mein privater Schlüssel: {v}"]


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_key_meant_to_be_shared_stays_and_a_private_one_goes(seed: int) -> None:
    rng = random.Random(seed)
    for frame in _PUBLIC + _PRIVATE:
        value = "".join(rng.choices(string.ascii_letters + string.digits, k=rng.randint(32, 44)))
        value = value[:8] + "".join(rng.choices(string.digits, k=4)) + value[8:]  # random keys hold digits
        out = redact_text(frame.format(v=value))
        assert (value in out) == (frame in _PUBLIC), out


@pytest.mark.parametrize("text", [
    "password = getpass.getpass(\"Password: \")\nattempt_11 = hash_pw(password)",
    "pw = input('Password: ')\nuser_77 = check(password)", "token_2024 = derive(password, salt)",
    "The password must be 8-64 characters and cannot contain your username.",
    "Die PIN muss 4–6 Ziffern haben.", "S3 object key uploads/2025/03/9137214e3b7721d91c3fd50d.jpg",
    "Elfelejtettem a jelszavamat, hogyan kérhetek újat? (3. próbálkozás)",
    "curl -u usuario:contraseña es el ejemplo del manual", "machine host login USER password PASS', right?",
    "Dans le fichier d'exemple il y a DB_PASSWORD=changez-moi-crm, je mets quoi ?"])
def test_names_counts_paths_words_and_placeholders_near_labels_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("seed", _SEEDS)
def test_values_that_look_alike_still_go(seed: int) -> None:
    rng = random.Random(seed)
    password = _password(rng)
    for text in (f"{password} is the new wifi password", f"the password is {password}",
                 f"curl -u {_word(rng)}:{password} https://x.example.com", f"DB_PASSWORD={password}"):
        assert password not in redact_text(text), text


def _random_token(rng: random.Random, size: int) -> str:
    body = rng.choices(string.ascii_letters + string.digits, k=size)
    body[rng.randrange(size)] = rng.choice(string.digits)
    return "".join(body)


@pytest.mark.parametrize("seed", _SEEDS)
def test_values_by_grammar_of_this_round(seed: int) -> None:
    """Random characters with a dot among them, a compound label (ПИН-код), a value before
    an "as" word, a password's abbreviation before its value, a double quote between letters,
    a possessive copula before a symbol, a network's name and password after a slash."""
    rng = random.Random(seed)
    dotted = _random_token(rng, 8) + "." + _random_token(rng, 6)
    pin = str(rng.randint(1000, 9999))
    password = _password(rng)
    quoted = _word(rng) + '"' + _word(rng) + str(rng.randint(1, 99)) + "*"
    cases = [(f"POSTGRES_PASSWORD: {dotted}", dotted), (f"e-Devlet girişim: şifre {dotted}", dotted),
             (f"ПИН-код: {pin}", pin), (f"PIN-koodi: {pin}", pin),
             (f"Ho impostato {password} come password della PEC", password),
             (f"I set {password} as my password", password), (f"{password} als Passwort gesetzt", password),
             (f"Netflix: {_word(rng)}.{_word(rng)} pw {password} (shared)", password),
             (f"ww: {password}", password), (f"Login do banku: {_word(rng)}_dk5, hasło: {quoted}", quoted),
             (f"login is bob and the password's {_word(rng)}#{pin}=", f"#{pin}="),
             (f"2. WiFi: {_word(rng).title()}Net / {password}\n3. Checkout 11am", password),
             (f"Мой пароль {_word(rng)}7@VW._", "7@VW._")]
    for text, secret in cases:
        assert secret not in redact_text(text), text


@pytest.mark.parametrize("text", [
    "password = settings.DATABASE_PASSWORD", "password: self.config.db_password", "PASSWORD = env.str",
    "I use Bitwarden as password manager", "use the same as password", "hash_input1 = password",
    "the pw is on the fridge", "pw reset link sent to bob@x.com", "WiFi: 5GHz / 2.4GHz", "WiFi: on / off",
    "WLAN: Fritzbox 7590 / Mesh-Repeater", "How do I change the password on my Disney+ account? pls help",
    "Nama wifinya BELL512, passwordnya ada di stiker router — model 9821", "WW: 2024-01-05",
    "vault kv get -field=password secret/app/db", "the password will be «secret»", "my login is bob@example.com",
    "Cache key: node-macos-fc96757295af023df1fc7530d6657d7004e98c5d072e84282488f57cc7bffb01",
    "the build cache key is linux-25000f19df7b9704de099f7bc0766c9bc08a10377c4b694db00e1aacefcfde7a"])
def test_names_ids_brands_and_flags_near_labels_of_this_round_stay(text: str) -> None:
    assert redact_text(text) == text


def test_a_label_that_is_a_flags_value_keeps_its_own_value() -> None:
    secret = "LV+kI9!*7BGV3Id@1L"
    text = f"kubectl create secret generic db --from-literal=username=nguyen --from-literal=password='{secret}'"
    assert secret not in redact_text(text)


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_sheet_of_backup_codes_goes_whole_with_codes_of_letters_alone(seed: int) -> None:
    rng = random.Random(seed)
    codes = ["".join(rng.choices(string.ascii_lowercase + string.digits, k=10)) for _ in range(rng.randint(4, 8))]
    codes[0] = codes[0][:3] + "7" + codes[0][4:]  # the first holds a digit; the others may not
    codes[-1] = "".join(rng.choices(string.ascii_lowercase, k=10))
    sep = rng.choice(["  ", "\n"])
    text = rng.choice(["Recovery codes — keep safe:\n", "backup codes:\n", "my backup codes are\n"]) + sep.join(codes)
    out = redact_text(text)
    assert [c for c in codes if c in out] == [], out


@pytest.mark.parametrize(("text", "word"), [("backup codes: 12345678, 90123456, whatever you do", "whatever"),
                                            ("backup codes: 1234abcd, 5678efgh and remember to print", "remember")])
def test_a_word_after_a_list_of_codes_in_prose_stays(text: str, word: str) -> None:
    assert word in redact_text(text)


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_query_string_given_as_a_token_goes_whole(seed: int) -> None:
    rng = random.Random(seed)
    signature = "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=43)) + "%3D"
    extra = "".join(rng.choices(string.ascii_letters + string.digits, k=rng.randint(40, 600)))
    query = f"?sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdl&se=2025-12-31T23:59:59Z&sig={signature}&x={extra}"
    text = rng.choice(["SAS token: {q}", "Here is the token: {q}", "api key = {q}"]).format(q=query)
    out = redact_text(text)
    assert "sv=2022-11-02" not in out and signature not in out and extra[-32:] not in out, out
    assert redact_text("the token endpoint is /oauth?grant_type=x&scope=y") == \
        "the token endpoint is /oauth?grant_type=x&scope=y"


def _conversation(*texts: str, alternate: bool = True) -> list[str]:
    """``texts`` as a conversation (user and assistant turns alternating, or the user's
    alone), redacted."""
    msgs = [Msg(role="assistant" if alternate and i % 2 else "user", content=t) for i, t in enumerate(texts)]
    return [m.content for m in redact_messages(msgs)]


@pytest.mark.parametrize("lang", ["en", "es", "cs"])
def test_a_seed_phrase_in_two_messages_with_commas_or_numbering(lang: str) -> None:
    rng = random.Random(lang)
    listed = (Path(hy_memory_langgraph.redact.__file__).with_name("bip39") / f"{SEED_LANGS[lang]}.txt")
    words = mnemonic(bytes(rng.randrange(256) for _ in range(16)), tuple(listed.read_text(encoding="utf-8").split()))
    for first, second in ((", ".join(words[:6]), ", ".join(words[6:])),
                          ("   ".join(f"{i + 1:02d} {w}" for i, w in enumerate(words[:6])),
                           "   ".join(f"{i + 7:02d} {w}" for i, w in enumerate(words[6:])))):
        for turns in ((f"my recovery phrase: {first}", second),
                      (f"my recovery phrase: {first}", "Got it, and the rest?", second)):
            out = " ".join(_conversation(*turns, alternate=len(turns) > 2)).replace(",", " ")
            assert [w for w in words if f" {w} " in f" {out} "] == [], out


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_writer_continues_their_own_message_across_a_reply(seed: int) -> None:
    rng = random.Random(seed)
    password = _password(rng)
    out = _conversation("I'll send the router password in the next message:", "Okay, waiting for the rest.", password)
    assert out[1] == "Okay, waiting for the rest." and password not in out[2], out
    out = _conversation("What is my wifi password?", f"It is {password}", "thanks")
    assert password not in out[1], out


@pytest.mark.parametrize("seed", _SEEDS)
def test_open_key_words_qualify_a_keys_label_only(seed: int) -> None:
    """A cache, public or primary word beside a password's or a token's name, or a primary
    or routing key, keeps its value a secret; a cache or public key's value stays."""
    rng = random.Random(seed)
    password, token = _password(rng), _random_token(rng, 32)
    for text, secret in ((f"REDIS_CACHE_PASSWORD={password}", password), (f"PRIMARY_DB_PASSWORD={password}", password),
                         (f"cache_password: {password}", password), (f"CACHE_TOKEN={token}", token),
                         (f"OBJECT_STORAGE_SECRET_KEY={token}", token), (f"AZURE_COSMOS_PRIMARY_KEY={token}", token),
                         (f"Cosmos DB — Primary Key: {token}", token), (f"PagerDuty routing key: {token}", token),
                         (f"GENEL_API_KEY={token}", token), (f"Kata sandi publik wifi: {password}", password)):
        assert secret not in redact_text(text), text
    digest = "".join(rng.choices("0123456789abcdef", k=64))
    for text in (f"Cache key: node-linux-{digest}", f"my public key: {token}", f"Ma clé publique : {token}"):
        assert redact_text(text) == text


@pytest.mark.parametrize("text", [
    "Alarm PIN: 4827-1190 won't disarm it", "PIN: 2580–1379 pm me if it fails", "Tresor-PIN 8803-4412 am Schrank",
    "Tu contraseña temporal es Cambiame2024!", "Votre mot de passe provisoire : ChangezMoi-8841",
    "Mivo36ze was set as the new password", "Hunter2024x ist jetzt als Passwort gesetzt",
    "Mivo36ze is the new [password]"])
def test_secrets_near_this_rounds_exceptions_still_go(text: str) -> None:
    out = redact_text(text)
    assert "[REDACTED:" in out and not any(tok in out for tok in ("4827-1190", "2580–1379", "8803-4412",
                                                                  "Cambiame2024", "ChangezMoi-8841", "Mivo36ze",
                                                                  "Hunter2024x")), out


@pytest.mark.parametrize("text", [
    "assert b64('foobar1') == ('foobar1', 'Zm9vYmFyMQ==')", "ws.update_acell('B1', '=Sheet2!A1*2')",
    "el.attr('href', '#Chapter10')", "requests.get(url, ('Lang', 'Lang=en&Page=3'))",
    "Wi-Fi: Intel AX211 / Bluetooth5.3", "WiFi: eduroam / WPA2-Enterprise", "WiFi: 802.11ax / Wi-Fi6E",
    "bcrypt.checkpw(pw, stored_hash1)", "Kindle PW 11th-gen", "SELECT name, sha2_256 as password FROM t",
    "Argon2id as password hashing algorithm", "password = settings.Neo4j.password", "cfg = cfg.oAuth2.clientSecret",
    "The password's ≥12 chars requirement", "the password's —finally— accepted"])
def test_code_specs_and_prose_near_this_rounds_rules_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_networks_key_named_in_its_sentence_or_on_a_note(seed: int) -> None:
    """A key's label in a sentence naming a network takes a password's value (any words
    between); a network's key may be digits alone when long (a FRITZ!Box's has twenty)."""
    rng = random.Random(seed)
    password = _word(rng) + str(rng.randint(100, 999)) + _word(rng)
    digits = "".join(rng.choices(string.digits, k=20))
    name = _word(rng).title() + rng.choice(["_Home", "-5G", ""])
    for text, secret in ((f"сеть {name}, ключ безопасности {password}", password),
                         (f"Rete {name}, chiave di rete {digits}", digits),
                         (f"the note on the fridge says WiFi: {name} / {digits}", digits),
                         (f"WiFi:{name} / {password}#", f"{password}#")):
        assert secret not in redact_text(text), text
    assert redact_text("WiFi 6 / 6E") == "WiFi 6 / 6E"


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_markdown_code_spans_backtick_is_no_part_of_a_value(seed: int) -> None:
    rng = random.Random(seed)
    token, password = _random_token(rng, 28), _password(rng)
    for text, secret in ((f"`X-API-Key: {token}`", token), (f"run `curl -u admin:{password}` now", password)):
        out = redact_text(text)
        assert secret not in out and out.endswith(text[text.rindex("`"):]), out
    for text in ("The docs say `X-API-Key: <api-key>` must be sent with every request.",
                 "Example in the docs: `curl https://api.stripe.com/v1/charges -u sk_test_YOUR_KEY:` — the colon?"):
        assert redact_text(text) == text


@pytest.mark.parametrize("text", [
    "The mesh network secret handshake uses Curve25519 keys", "In our network the token refresh happens via oauth2 flow",
    "The box secret compartment fits an iPhone15 easily", "Our wifi signing secret lives on host db01prod",
    "My SIM PIN got locked, the ICCID on the card is 8944100030123456789",
    "I changed my wifi password, the order number is 1234567890123456789",
    "Wi-Fi 6 / IEEE802.11ax", "WLAN Dual-Band / 2.4GHz+5GHz"])
def test_a_networks_word_makes_only_a_keys_label_a_passwords(text: str) -> None:
    """A token's or a secret's label near a network word keeps its own class; long digits
    count only as a network key's; a spec sheet's slash is no password's."""
    assert redact_text(text) == text


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_reply_and_the_writers_own_message_across_it(seed: int) -> None:
    """An answer to a request without a question mark still goes; across another's reply
    only a label that awaits its value (a colon) carries."""
    rng = random.Random(seed)
    password, pin = _password(rng), str(rng.randint(1000, 9999))
    for question, answer in (("what's the wifi password", password), ("What's the router admin password? 🙏", password),
                             ("remind me my bank PIN pls", pin), ("Generate a new wifi password for me", password)):
        assert answer not in _conversation(question, answer)[1]
    for turns in (("I can't remember my password", "Which service is it for?", "Office365"),
                  ("I forgot my password", "Which account?", "my work one, alice.w2024")):
        assert _conversation(*turns) == list(turns)


def test_a_run_of_labels_without_spaces_is_read_in_linear_time() -> None:
    """Labels of scripts read without word edges (密钥, ключ, clé) in one unbroken run: each
    label's compound is read within a bounded reach."""
    texts = [(word * (100_000 // len(word) + 1))[:100_000] for word in ("密钥", "ключ", "clé", "schlüssel")]
    spent = sum(cpu_seconds(lambda t=t: redact_text(t))[1] for t in texts)
    assert spent < LINEAR_BUDGET_S * sum(map(len, texts)) / 1_000_000
