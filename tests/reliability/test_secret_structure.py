"""Detection by mechanism, fourth round: the shape of a password made of words, the
structure around a value, and the near misses of the same classes.

Each test draws its variants from the class (random words and bodies, the label and copula
words of ``patterns.toml``, several languages), not from a corpus's examples: passphrases of
words joined by dots, values with quotes or separators inside, passphrase labels in many
languages, compound labels of Latin letters with marks, JSON documents inside prose, a
question answered in the same message, numbered seed phrases; and what must stay: masks,
template fields, placeholders, documentation samples, publishable keys, host names,
indented YAML, prose after a copula.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from cpu_time import LINEAR_BUDGET_S, cpu_seconds

from bench.common.secret_bodies import SEED_LANGS, mnemonic
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.redact import redact_text

import hy_memory_langgraph.redact

_SEEDS = range(6)
_BIP39 = Path(hy_memory_langgraph.redact.__file__).with_name("bip39")


def _word(rng: random.Random, low: int = 4, high: int = 8) -> str:
    """A pronounceable made-up word (no dictionary: the class, not a list)."""
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(low, high) // 2))


def _gone(text: str, *secrets: str) -> None:
    out = redact_text(text)
    assert [s for s in secrets if s in out] == [], out


def _kept(text: str) -> None:
    assert redact_text(text) == text


_DOTTED_FRAMES = ["The password is {v}", "Lösenordet är {v}", "Wifi şifresi: {v}", "la password è {v}",
                  "Passwort: {v}", "DB_PASSWORD={v}", "Contraseña: {v}", "A senha é {v}"]


@pytest.mark.parametrize("seed", _SEEDS)
def test_words_joined_by_dots_are_a_passphrase_after_a_password_label(seed: int) -> None:
    rng = random.Random(seed)
    for frame in _DOTTED_FRAMES:
        words = [_word(rng) for _ in range(rng.randint(3, 5))]
        value = ".".join(w.title() if rng.random() < 0.5 else w for w in words)
        _gone(frame.format(v=value), value)


@pytest.mark.parametrize("value", ["self.db.password", "os.environ.get", "settings.database.value",
                                   "np.random.seed", "config.secrets.token", "cfg.db.pass_word"])
def test_attribute_paths_of_code_stay_after_a_password_label(value: str) -> None:
    _kept(f"password = {value}")


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_quote_next_to_a_symbol_or_a_separator_inside_a_value_is_part_of_it(seed: int) -> None:
    rng = random.Random(seed)
    for inner in ('"', "'", ",", ";"):
        head = _word(rng).title()
        symbol = rng.choice("#&@!%^")
        value = f"{head}{symbol}{inner}{rng.randint(10, 999)}{_word(rng)}" if inner in "\"'" \
            else f"{head}{rng.randint(1, 9)}{inner}{_word(rng)}{symbol}"
        _gone(f"My password for the {_word(rng)} account is {value}, please keep it", value)


@pytest.mark.parametrize("text", ["the password is what it's always been, ask Anna",
                                  "Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd=Xk9!qz7;Database=shop",
                                  "password: it's on the sticky note"])
def test_contractions_and_the_next_parameter_are_no_part_of_a_value(text: str) -> None:
    out = redact_text(text)
    assert "it's" in out or "it’s" in out or "Database=shop" in out


_PASSPHRASE_LABELS = ["my passphrase is", "Ma phrase secrète est", "Mi frase de contraseña es", "Mijn wachtzin is",
                      "Min lösenfras är", "Minha frase-senha é", "Meine Passphrase ist", "моя парольная фраза это"]


@pytest.mark.parametrize("label", _PASSPHRASE_LABELS)
def test_a_passphrase_after_its_label_and_a_copula_goes_to_the_first_word_of_prose(label: str) -> None:
    rng = random.Random(label)
    words = " ".join(_word(rng) for _ in range(rng.randint(3, 5)))
    _gone(f"{label} {words}", words)
    _gone(f"{label} {words} and the server is Frankfurt", words)


@pytest.mark.parametrize("text", ["the passphrase is long, see the wiki", "Ma phrase secrète est dans le coffre",
                                  "my seed phrase is in the safe", "The password is reset automatically every night",
                                  "Das Passwort ist leider abgelaufen", "the password is now stored in the vault"])
def test_prose_after_a_label_and_a_copula_stays(text: str) -> None:
    _kept(text)


_COMPOUNDS = ["Netzschlüssel", "Nätverksnyckeln", "Netværksnøglen", "nettverksnøkkel", "wifilösenordet",
              "Inloggningslösenordet", "WLAN-Schlüssel"]


@pytest.mark.parametrize("label", _COMPOUNDS)
def test_a_compound_label_with_marks_names_a_password(label: str) -> None:
    rng = random.Random(label)
    for copula in (":", " ist", " är", " er"):
        value = f"{_word(rng).title()}{rng.choice('!#&')}{rng.randint(10, 99)}"
        _gone(f"{label}{copula} {value}", value)


@pytest.mark.parametrize("text", ["Der Schlüssel liegt unter der Matte", "Der Hausschlüssel ist beim Nachbarn",
                                  "Das Netz ist langsam heute"])
def test_keys_of_doors_and_networks_without_a_value_stay(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize("text", [
    "INFO user=lena58 login ok password=*** mfa=true", "验证码已发送至 138****5678，请注意查收",
    "password: {{ secrets.DEPLOY_PASSWORD }}  # step 4", "password: !vault-ref prod/db#53",
    "wifi_password: !secret wifi_pw", "postgresql://USER:PASSWORD@HOST:5432/DBNAME is the format",
    "the example is postgres://user:password@localhost:5432/mydb", "https://user:pass@example.com in the tutorial",
    "The AWS docs use AKIAIOSFODNN7EXAMPLE as the sample key id",
    "Stripe publishable key (safe to expose): pk_live_SfwDX9ErGTkYTdqn9rTfPIFq",
    "mysql -u root -p   (it will prompt for the password) on db-7.eu-west-1.rds.amazonaws.com",
    "password: <your password here>", "password: n/a", "password: java.util.Optional.empty",
    "password hashing uses org.springframework.security.crypto.bcrypt", "snmpwalk with the -A flag for auth",
    "When does the password expire? 2025-03-01.", "When is the password due to expire? 31/12/2025.",
    "Tokyo's Shibuya day pass is 16,100 yen, right?", "how do I reset my password on the router? model RT-AX58U",
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
    "| pass | price |\n|---|---|\n| day | $46 |\n| week | $280 |",
])
def test_masks_references_placeholders_samples_and_public_keys_stay(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_password_with_a_run_of_stars_inside_is_no_mask(seed: int) -> None:
    rng = random.Random(seed)
    value = f"{_word(rng).title()}***{rng.randint(10, 99)}{_word(rng)}"
    _gone(f"pwd={value}", value)
    _kept(f"Verification code sent to {rng.randint(130, 189)}****{rng.randint(1000, 9999)}")


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_value_that_only_begins_with_a_star_or_an_ampersand_goes(seed: int) -> None:
    rng = random.Random(seed)
    value = f"{rng.choice('*&')}{_word(rng)}@{rng.randint(10, 99)}{_word(rng).title()}"
    _gone(f"Password={value};Encrypt=True", value[1:])
    _gone(f'  password          = "{value}"', value)


@pytest.mark.parametrize("seed", _SEEDS)
def test_credentials_by_place_with_dotted_words_and_dotted_users(seed: int) -> None:
    rng = random.Random(seed)
    user = f"{_word(rng)}.{_word(rng, 3, 4)}"
    phrase = ".".join(_word(rng) for _ in range(4))
    for call in (f'smtp.PlainAuth("", "{user}", "{phrase}", "smtp.example.com")',
                 f'client.AuthenticateAsync("{user}", "{phrase}")', f'requests.get(url, auth=("{user}", "{phrase}"))',
                 f"ftp_login($conn, '{user}', '{phrase}')"):
        _gone(call, phrase)
    _kept(f'conn = connect("db.internal", "{_word(rng)}", "shop")')


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_json_document_inside_prose_is_read_as_structure(seed: int) -> None:
    rng = random.Random(seed)
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))
    name = rng.choice(["JSESSIONID", "sessionid", "SESSION", "laravel_session"])
    header = rng.choice(["X-API-Key", "Authorization", "X-Auth-Token"])
    _gone(f"From the HAR file:\n{json.dumps({'name': name, 'value': token, 'httpOnly': True})}", token)
    _gone(f'Postman export:\n"header": [\n  {json.dumps({"key": header, "value": token, "type": "text"})}\n],', token)
    _kept(f"the config {json.dumps({'name': 'theme', 'value': _word(rng)})} is fine")


def test_json_documents_inside_text_are_read_in_linear_time() -> None:
    """Many documents (each read once), one document of many escaped pairs (written whole,
    never searched for), and text that opens a document everywhere and closes none (a
    bounded number of failed tries)."""
    one = 'x {"name": "password", "value": "Ab1!xyz9"} '
    item = json.dumps({"name": "DB_PASSWORD", "value": "té1"})  # \u00e9: the text never holds the value as parsed
    many, escaped, nested = one * 20_000, "x [" + ", ".join([item] * 40_000) + "]", '{"a": [' * 150_000
    spent = sum(cpu_seconds(lambda t=t: redact_text(t))[1] for t in (many, escaped, nested))
    assert redact_text(one * 3).count("[REDACTED:password]") == 3
    assert redact_text("x [" + ", ".join([item] * 3) + "]").count("[REDACTED:password]") == 3
    assert spent < LINEAR_BUDGET_S * (len(many) + len(escaped) + len(nested)) / 1_000_000


def test_a_json_document_is_redacted_whole_never_at_another_string_of_the_text() -> None:
    """The pair's value goes; the same string in other fields and as a key stays (a search
    for the string in the text would land on the first of them)."""
    secret = "Rosewood7!"
    doc = {"a": secret, secret: {"b": secret}, "env": [{"name": "DB_PASSWORD", "value": secret}]}
    out = json.loads(redact_text("note: " + json.dumps(doc)).removeprefix("note: "))
    assert out["a"] == secret and out[secret] == {"b": secret}
    assert out["env"] == [{"name": "DB_PASSWORD", "value": "[REDACTED:password]"}]


@pytest.mark.parametrize("doc", [
    {"Name": "db_password", "Value": "Zx9!abcd", "Type": "SecureString"},  # AWS SSM
    [{"ParameterKey": "DBPassword", "ParameterValue": "Zx9!abcd"}],  # CloudFormation
    {"body": json.dumps({"name": "DB_PASSWORD", "value": "Zx9!abcd"})},  # a document escaped in a string
    [{"key": "X-Auth-Token", "value": "Zx9!abcdQwErTy12Zx9!abcd"}],
])
def test_pairs_in_any_case_and_documents_inside_strings(doc: object) -> None:
    for dumped in (json.dumps(doc), json.dumps(doc).replace("/", "\\/")):
        assert "Zx9!abcd" not in redact_text(f"here: {dumped} thanks")


def test_a_document_nested_deeper_than_the_limit_never_raises() -> None:
    text = "notes: " + "[" * 500 + '"x"' + "]" * 500
    assert redact_text(text) == text


@pytest.mark.parametrize("adverb", ["now", "jetzt", "maintenant", "ahora", "gewoon", "teraz"])
def test_an_adverb_between_a_copula_and_the_value(adverb: str) -> None:
    rng = random.Random(adverb)
    value = f"{_word(rng).title()}#{rng.randint(100, 999)}{_word(rng)}"
    _gone(f"the admin password is {adverb} {value}", value)


@pytest.mark.parametrize("seed", _SEEDS)
def test_a_question_answered_in_the_same_message(seed: int) -> None:
    rng = random.Random(seed)
    value = f"{_word(rng).title()}#{rng.randint(1000, 9999)}"
    _gone(f"The wifi password at {_word(rng).title()}'s house? It's {value}", value)
    _kept("Do you want to reset your password? yes please")
    _kept("What is the password? I forgot it again, sorry")


@pytest.mark.parametrize("lang", ["en", "es", "ko", "zh"])
def test_a_seed_phrase_numbered_with_dashes_and_one_in_two_halves(lang: str) -> None:
    rng = random.Random(lang)
    listed = (_BIP39 / f"{SEED_LANGS[lang]}.txt").read_text(encoding="utf-8").split()
    words = mnemonic(bytes(rng.randrange(256) for _ in range(16)), tuple(listed))
    numbered = "\n".join(f"{i} - {w}" for i, w in enumerate(words, 1))
    _gone(f"here are the 12 words from the backup screen\n{numbered}", *words)
    msgs = normalize_messages([{"role": "user", "content": "first half of my seed words: " + " ".join(words[:6])},
                               {"role": "user", "content": "and the rest: " + " ".join(words[6:])}])
    out = "\n".join(m.content for m in redact_messages(msgs))
    assert [w for w in words if f" {w} " in f" {out} "] == [], out


@pytest.mark.parametrize("word", ["parolası", "Passwörter", "şifresi"])
def test_label_words_with_marks_are_read_folded(word: str) -> None:
    rng = random.Random(word)
    value = f"{_word(rng).title()}%{rng.randint(10, 99)}T!{_word(rng)}"
    _gone(f"E-posta hesabımın {word} {value}.", value)


@pytest.mark.parametrize("seed", _SEEDS)
def test_command_lines_that_set_a_password_through_sudo_or_snmp(seed: int) -> None:
    rng = random.Random(seed)
    auth, priv = f"{_word(rng).title()}-{_word(rng)}-{rng.randint(10, 99)}", f"{_word(rng)}#{rng.randint(100, 999)}"
    _gone(f"echo '{_word(rng)}:{auth}' | sudo chpasswd", auth)
    _gone(f"snmpwalk -v3 -l authPriv -u {_word(rng)} -a SHA -A '{auth}' -x AES -X '{priv}' 10.0.0.{seed}", auth, priv)
    _kept(f"snmpwalk -v2c -c public 10.0.0.{seed}")


@pytest.mark.parametrize("text", ["my cash card PIN, in case I forget: {d}", "PIN-ul pentru bancomat: {d}",
                                  "the 3 digits on the back are {d}", "os três números atrás do cartão são {d}",
                                  "कार्ड के पीछे वाला सिक्योरिटी कोड {d} है"])
def test_card_codes_by_their_place_or_after_an_aside(text: str) -> None:
    digits = str(random.Random(text).randint(100, 9999))
    _gone(text.format(d=digits), digits)


@pytest.mark.parametrize("text", ["the serial number on the back is 4471", "the numbers on the back are printed in silver",
                                  "los precios son 12 euros", "Mis contraseñas son secretas"])
def test_numbers_and_prose_near_those_labels_stay(text: str) -> None:
    _kept(text)


def test_indented_lines_of_code_ending_in_commas_are_no_table() -> None:
    """An argument list, one argument a line, indented: no header row, no column of passwords."""
    _kept("return (\n            self.drivername,\n            self.username,\n            self.password,\n"
          "            self.host,\n            self.port,\n        )")
