"""Detection by mechanism, third round: seed phrases in every layout, tables and lists of
accounts, backup codes of letters, codes that open something, and the near misses of the
same classes (postcodes, secret-store references, BIP39 words whose checksum fails).

Each test draws its variants from the mechanism's own data (every BIP39 list, every
layout, the code and object words of ``patterns.toml``, the password words of its
labels), so a class is tested, not a phrasing; the corpus figures by class are in
``test_secret_generalisation.py``.
"""

from __future__ import annotations

import random
import string

import pytest
from cpu_time import LINEAR_BUDGET_S, cpu_seconds

from bench.common.secret_bodies import FIELDS
from hy_memory_langgraph.redact import redact_text
from hy_memory_langgraph.redact.pins import pin_spans
from hy_memory_langgraph.redact.rules import load_rules

_LAYOUTS = ["line", "num", "numin", "grid", "gridrow", "md", "perline", "tab"]
_SEED_LANGS = ["en", "es", "fr", "it", "pt", "cs", "ja", "ko", "zh", "zh_tw"]


@pytest.mark.parametrize("layout", _LAYOUTS)
@pytest.mark.parametrize("lang", _SEED_LANGS)
def test_a_seed_phrase_goes_whole_in_every_layout(lang: str, layout: str) -> None:
    """Every two neighbouring words, with the numbering and line breaks between them, are
    gone (a grid numbered down its columns read in its numbers' order)."""
    rng = random.Random(f"{lang}{layout}")
    for count in (12, 24):
        text, pairs = FIELDS["seedl"](rng, f"{lang}:{count}:{layout}")
        out = redact_text(f"wallet words:\n{text}")
        assert [p for p in pairs if p in out] == [], out


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_a_seed_phrase_apart_by_the_ideographic_space_goes(lang: str) -> None:
    rng = random.Random(lang)
    text, pairs = FIELDS["seedl"](rng, f"{lang}:12:line:ideo")
    out = redact_text(text)
    assert "\u3000" in text and [p for p in pairs if p in out] == []


@pytest.mark.parametrize("layout", ["line", "num", "grid", "md", "perline"])
def test_list_words_whose_checksum_fails_stay_in_every_layout(layout: str) -> None:
    rng = random.Random(layout)
    for lang in _SEED_LANGS:
        text, _ = FIELDS["badseed"](rng, f"{lang}:12:{layout}")
        assert redact_text(text) == text


_STYLES = ["md", "csv", "tsv", "cols", "bul", "chrome", "bitwarden", "firefox", "rows", "urlrows"]


@pytest.mark.parametrize("style", _STYLES)
def test_every_password_of_a_table_or_a_list_of_accounts_goes(style: str) -> None:
    rng = random.Random(style)
    for _ in range(5):
        text, passwords = FIELDS["creds"](rng, style)
        out = redact_text(text)
        assert [p for p in passwords if p in out] == [], out


@pytest.mark.parametrize("word", ["password", "Passwort", "Kennwort", "Пароль", "パスワード", "密码", "Contraseña",
                                  "senha", "heslo", "Hasło", "salasana", "login_password", "pwd", "סיסמה"])
def test_a_password_column_is_found_by_any_password_word(word: str) -> None:
    rng = random.Random(word)
    for style in ("md", "csv", "tsv", "cols"):
        text, passwords = FIELDS["creds"](rng, f"{style}:site,user,{word}")
        out = redact_text(text)
        assert [p for p in passwords if p in out] == [], out


@pytest.mark.parametrize("text", [
    "| Field | Required |\n|---|---|\n| password | yes |\n| user | no |",
    "$ kubectl describe secret db\npassword:  16 bytes\nusername:  5 bytes",
    "| Setting | Password |\n|---|---|\n| smtp | ******** |\n| db | ${DB_PASSWORD} |\n| api | see the vault |",
    "- Paris: train / bus\n- Lyon: car / bike",
    "name,url,username,password,note",
])
def test_tables_and_lists_without_a_password_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("shape", ["d44", "d4d4", "d8", "d10", "a44", "x55", "a8"])
@pytest.mark.parametrize("sep", ["nl", "comma", "num", "sp"])
def test_every_backup_code_goes_in_any_shape_and_layout(shape: str, sep: str) -> None:
    rng = random.Random(shape + sep)
    codes_text, codes = FIELDS["bk3"](rng, f"{shape}:{sep}")
    for label in ("Backup codes:", "Recovery codes (each works once)\n", "Códigos de recuperación:",
                  "Резервні коди:", "バックアップコード\n"):
        out = redact_text(f"{label} {codes_text}")
        assert [c for c in codes if c in out] == [], out


@pytest.mark.parametrize("text", ["Backup codes: keep them safe, print them once",
                                  "recovery codes are in the drawer - well-known place",
                                  "backup codes\nwell-made, long-lived, half-baked, good-natured"])
def test_words_after_a_backup_code_label_stay(text: str) -> None:
    assert redact_text(text) == text


def _code_words() -> tuple[list[str], list[str]]:
    rules = load_rules()
    return list(rules.pin_codes), list(rules.pin_opens)


def test_a_code_word_and_an_object_word_take_the_digits_after_them_in_either_order() -> None:
    """Every pairing of the lists (sampled), a few short words apart, in either order:
    the digits after them go."""
    codes, opens = _code_words()
    rng = random.Random(7)
    misses = []
    for _ in range(600):
        code, thing = rng.choice(codes), rng.choice(opens)
        digits = "".join(rng.choices(string.digits, k=rng.choice((4, 5, 6, 8))))
        for label in (f"{code} {thing}", f"{thing} {code}", f"{code} of the {thing}"):
            text = f"{label}: {digits}"
            if digits in redact_text(text):
                misses.append(text)
    assert misses == []


@pytest.mark.parametrize("text", [
    "Türcode 3790", "le code du portail c'est 8674", "kod do drzwi: 8613", "код от сейфа: 415325",
    "ovikoodi 9364", "รหัสประตู 1234", "SIM PIN 4974, PUK 57776531", "Entsperrcode vom Handy 746335",
])
def test_codes_named_in_compounds_and_phrases_go(text: str) -> None:
    digits = text.split()[-1]
    assert digits not in redact_text(text)


@pytest.mark.parametrize("text", [
    "the gate opens at 0700, door code sent to +44 20 7946 0958",
    "the code runs on port 8080",
    "door 12, floor 3; the code was sent to your phone",
    "Flat 4, 27 Park Lane, Mumbai, PIN code: 400001",
    "Digicode de l'immeuble indiqué sur la facture : bâtiment B, 3e étage, 69003 Lyon",
    "Adresse : 12 rue de Rivoli, code postal 75004 Paris",
    "Adres: ul. Marszałkowska 84/92 m. 15, kod pocztowy 00-514 Warszawa",
    "the alarm code has 6 digits", "the safe code changed in 2021",
    "card ending 4242, the PIN was reset", "Karte •••• 4242 wurde belastet",
])
def test_postcodes_quantities_and_numbers_in_other_senses_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("text", [
    "password: vault:secret/data/db#password", 'db_password = "{{ vault_db_password }}"',
    "password: {{ vault_db_password }}", "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    'passwd="$(cat ~/.secrets/pw)"', "secret_key: ref+vault://secret/app#/key",
    "password: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db", "token: op://vault/item/field",
    "Le mot de passe Wi-Fi est collé sous la box",
])
def test_references_to_a_secret_store_and_templates_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("text", [
    "door code " + "1234 " * 100_000, "12 Main Street, 12345 " * 30_000, "password,user\n" + "a,b\n" * 100_000,
    "- a: b / c9!x\n" * 50_000, "https://a,b,c9!x\n" * 50_000, "backup codes: " + "abcd-efgh " * 50_000,
    " 1. abandon    5. ability" * 25_000, "Türcode " * 50_000 + "1234", "password,user\n" + "a,\"b" * 150_000,
], ids=["door-codes", "addresses", "table", "accounts", "export-rows", "letter-codes", "grid", "compounds",
        "long-csv-row"])
def test_the_third_rounds_rules_are_linear_on_long_text(text: str) -> None:
    _, spent = cpu_seconds(lambda: redact_text(text))
    assert spent < LINEAR_BUDGET_S / 2  # half a megabyte or less: half the budget


def test_codes_before_a_number_are_looked_for_only_near_it() -> None:
    """A code's label is read in the 80 characters before its digits: a code word far
    before a number leaves it."""
    assert pin_spans("door code — " + "the weather was lovely and we walked " * 4 + "4821") == []


# ------------------------------------------------------------------ a card's details
def _card(rng: random.Random, prefix: str, length: int) -> str:
    """A number of ``length`` digits starting ``prefix`` whose Luhn check digit is right."""
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        digits = body + check
        total = sum(int(c) if i % 2 == 0 else sum(divmod(int(c) * 2, 10)) for i, c in enumerate(reversed(digits)))
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


# Words that may stand between an expiry and the code, in any language or none at all.
_CODE_WORDS = ["", "code", "CVV", "sec", "Prüfziffer", "код", "الرمز", "セキュリティコード", "安全码", "cód.", "kod"]


@pytest.mark.parametrize("seed", range(12))
def test_a_cards_code_after_its_expiry_goes_in_the_message_or_the_next(seed: int) -> None:
    rng = random.Random(seed)
    prefix, length = rng.choice([("4", 16), ("51", 16), ("2221", 16), ("37", 15), ("6011", 16), ("3530", 16),
                                 ("2201", 16), ("6759", 16), ("5018", 16)])
    number = _card(rng, prefix, length)
    written = " ".join(number[i:i + 4] for i in range(0, length, 4)) if rng.random() < 0.5 else number
    expiry = f"{rng.randint(1, 12):02d}/{rng.choice([str(rng.randint(26, 33)), str(rng.randint(2026, 2033))])}"
    code = "".join(rng.choice(string.digits) for _ in range(4 if prefix == "37" else 3))
    details = f"{expiry}{rng.choice([', ', ' ', ' - '])}{rng.choice(_CODE_WORDS)} {code}".replace("  ", " ")
    for one in (redact_text(f"card {written} exp {details}"), redact_text(f"{written} {details} - A. Name")):
        assert number[-4:] not in one and code not in one.split("/")[-1], one
    from hy_memory_langgraph.redact.dialogue import carried_spans

    spans = carried_spans(f"use this one: {written}", f"exp {details}")
    assert [f"exp {details}"[s:e] for s, e, _ in spans] == [code]


@pytest.mark.parametrize(("text", "kept"), [
    ("exp 11/26, code 466", "466"),  # no card before it
    ("card 4111 1111 1111 1111 expires 12/2027 and the zip is 94107", "94107"),  # five digits: no code
    ("meeting 11/26 room 466", "466"),
    ("order 4111 1111 1111 1112 shipped 11/26, box 466", "466"),  # no card: its check digit fails
])
def test_numbers_after_a_date_without_a_card_before_them_stay(text: str, kept: str) -> None:
    assert kept in redact_text(text).split()


# ------------------------------------------------------------------ a value announced, then sent
_NOTES = ["", " (case sensitive)", "\n\ngot it?", " - delete it after saving", "\nthanks!"]
_WRAPS = ["{}", "`{}`", '"{}"', "→ {}", "it's {}", "'{}'"]


@pytest.mark.parametrize("seed", range(16))
def test_a_password_sent_in_the_message_after_its_announcement_goes(seed: int) -> None:
    """The previous message names a password (any of the label words) and says it comes
    next; the next one is a single token, wrapped or not, with a note of its own or none."""
    from hy_memory_langgraph.redact.dialogue import carried_spans

    rng = random.Random(seed)
    word = rng.choice(sorted(w for w in load_rules().password if w.isalpha()))
    value = "".join(rng.choice(string.ascii_letters + string.digits + "#$%&*@!_-") for _ in range(rng.randint(8, 20)))
    value = value[:3] + rng.choice(string.digits) + rng.choice("#$%&*@_") + value[3:]
    current = rng.choice(_WRAPS).format(value) + rng.choice(_NOTES)
    for previous in (f"I'll send the {word} for the router in the next message", f"the {word} is", f"{word}:"):
        assert [current[s:e] for s, e, _ in carried_spans(previous, current)] == [value], (previous, current)


@pytest.mark.parametrize(("previous", "current"), [
    ("I'll send the password in the next message", "ok (sure)"),
    ("I forgot my password again", "no worries - happens"),
    ("what's the PIN length?", "6 digits"),
    ("Do you want to reset your password?", "yes please"),
])
def test_words_after_a_password_is_named_stay(previous: str, current: str) -> None:
    from hy_memory_langgraph.redact.dialogue import carried_spans

    assert carried_spans(previous, current) == []


# ------------------------------------------------------------------ a wireless network's key
_KEY_WORDS = ["key", "Schlüssel", "clave", "klucz", "ключ", "netwerksleutel", "nyckel", "anahtar", "psk"]


@pytest.mark.parametrize("seed", range(12))
def test_a_networks_key_in_any_language_is_its_password(seed: int) -> None:
    """A word naming a key (any language) is a password where a network is named: in its
    sentence, or on the line before it (an SSID / key block)."""
    rng = random.Random(seed)
    network = rng.choice(sorted(load_rules().networks))
    key = rng.choice(_KEY_WORDS)
    value = rng.choice(["Sommer", "Kasztan", "Ferrari", "Pagoda"]) + str(rng.randint(10, 9999)) + rng.choice("!@#*&?")
    name = rng.choice(["Home_5G", "FRITZ!Box 7590 XY", "Livebox-93F2", "Keller WLAN"])
    for text in (f"{network}: {name}\n{key}: {value}", f"{network} {name}, {key}: {value}",
                 f"the {network} {key} is {value}"):
        assert value not in redact_text(text), text


# ------------------------------------------------------------------ any client's password flag
@pytest.mark.parametrize("seed", range(16))
def test_any_clients_password_flag_after_its_user_flag_goes(seed: int) -> None:
    """The client is a made-up name: the rule is the user flag then the password flag."""
    rng = random.Random(seed)
    tool = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
    user_flag, password_flag = rng.choice([("-u", "-p"), ("-U", "-P"), ("-l", "-p"), ("--user", "--pass"),
                                           ("-u", "-pw"), ("--username", "-P")])
    value = rng.choice(["Sunflower8206&", "atrmMIUs7JA@KbrITn", "velvet.marble.hammock", "x8FGsLsIrfKTx6a"])
    quote = rng.choice(["", "'", '"']) if any(not c.isalpha() for c in value) else rng.choice(["'", '"'])
    line = f"{tool} -H db-{seed}.corp.local {user_flag} admin {password_flag} {quote}{value}{quote} status"
    assert value not in redact_text(line), line


@pytest.mark.parametrize("line", [
    "ssh -l admin -p 2222 host.example.com", "docker run -u 1000 -p 8080:80 nginx",
    "psql -U postgres -p 5432 -h localhost mydb", "mysql -u backup -p crm   # prompts for the password",
    "mysql -u root -p\nEnter password:", "sort -u names.txt | mkdir -p out",
])
def test_ports_databases_and_prompts_after_a_user_flag_stay(line: str) -> None:
    assert redact_text(line) == line


# ------------------------------------------------------------------ session ids and one recovery code
_SESSION_LABELS = ["session id", "oturum kimliği", "세션 ID", "identyfikator sesji", "ID relace", "sessionid",
                   "セッションID", "istunnon tunnus"]


@pytest.mark.parametrize("seed", range(8))
def test_a_session_id_by_its_name_in_any_language_goes(seed: int) -> None:
    rng = random.Random(seed)
    value = "".join(rng.choice(rng.choice([string.hexdigits, string.ascii_letters + string.digits]))
                    for _ in range(rng.randint(24, 48)))
    for label in _SESSION_LABELS:
        text = f"{label}{rng.choice([': ', ' ', ' = '])}{value}"
        assert value not in redact_text(text), text


@pytest.mark.parametrize("seed", range(8))
def test_one_recovery_code_of_groups_goes_after_a_singular_label(seed: int) -> None:
    rng = random.Random(seed)
    groups = "-".join("".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(5))
                      for _ in range(rng.randint(3, 6)))
    label = rng.choice(sorted(w for w in load_rules().code_lists if "code" in w or "código" in w or "kód" in w))
    for text in (f"{label}: {groups}", f"Der {label} lautet {groups}", f"the {label} is {groups}"):
        assert groups.split("-")[-1] not in redact_text(text), text


# ------------------------------------------------------------------ passphrases after a password word
_PHRASE_WORDS = ["nimbus", "meadow", "pepper", "tundra", "lynx", "lantern", "otter", "violet", "raven", "basalt"]
_OPEN_CLOSE = [('"', '"'), ("“", "”"), ("„", "“"), ("« ", " »"), ("'", "'")]
_CONNECTORS = ["na", "para", "naar", "brzmi", "est", "on", "je", "is", "è", "ist"]


@pytest.mark.parametrize("seed", range(16))
def test_a_passphrase_of_words_after_a_password_word_goes_quoted_dotted_or_dashed(seed: int) -> None:
    """Whatever word joins the label to it (the connector is drawn from many languages'):
    in quotes (spaces and all), words joined by dots ending in digits, or by dashes."""
    rng = random.Random(seed)
    words = rng.sample(_PHRASE_WORDS, rng.randint(3, 5))
    word = rng.choice(sorted(w for w in load_rules().password if w.isalpha() and len(w) > 4))
    connector = rng.choice(_CONNECTORS)
    opening, closing = rng.choice(_OPEN_CLOSE)
    for phrase, written in ((" ".join(words) + f" {rng.randint(1, 99)}", None),
                            (".".join(words) + str(rng.randint(10, 99)), ""), ("-".join(words), "")):
        shown = f"{opening}{phrase}{closing}" if written is None else phrase
        text = f"my {word} {connector} {shown} thanks"
        assert phrase not in redact_text(text), text


@pytest.mark.parametrize("text", [
    'the password field says "too short" when I type', "password_hash = hashlib.sha3_256",
    "the password manager is well-known", "dtype for the password embeddings is np.float16",
])
def test_prose_in_quotes_compounds_and_types_after_a_password_word_stay(text: str) -> None:
    assert redact_text(text) == text


# ------------------------------------------------------------------ scripts, .pgpass in prose, literal passphrases
@pytest.mark.parametrize("seed", range(8))
def test_what_a_script_sends_after_a_password_prompt_goes(seed: int) -> None:
    rng = random.Random(seed)
    value = "".join(rng.choice(string.ascii_letters + string.digits + "#@&*") for _ in range(rng.randint(8, 18)))
    wait, send = rng.choice([("tn.read_until", "tn.write"), ("child.expect", "child.sendline"), ("s.expect", "s.send")])
    prompt = rng.choice(["Password: ", "password:", "Enter passphrase", "Passwd:"])
    prefix = "b" if "read_until" in wait else ""
    joiner = rng.choice(["; ", "\n", "\n    "])
    text = f"{wait}({prefix}\"{prompt}\"){joiner}{send}({prefix}'{value}\\n')"
    assert value not in redact_text(text), text


@pytest.mark.parametrize("quote", ["`", "'", '"', ""])
def test_a_pgpass_line_quoted_in_prose_goes(quote: str) -> None:
    text = f"my .pgpass line is {quote}db.prod.internal:6543:*:sven:gecko#5Qip2%823{quote} but psql prompts"
    assert "gecko#5Qip2%823" not in redact_text(text)


def test_a_passphrase_literal_of_dotted_words_is_a_password_and_a_module_path_stays() -> None:
    from hy_memory_langgraph.redact.judge import literal_password

    assert literal_password("velvet.tango.ember") and literal_password("lynx-violet-mango")
    assert not literal_password("ab.cd") and not literal_password("hello")


# ------------------------------------------------------------------ short answers, bearer tokens by pair
_AROUND = [("claro → ", ""), ("", " です"), ("ok: ", " thanks"), ("", ""), ("→ ", " (new)")]


@pytest.mark.parametrize("seed", range(10))
def test_the_one_password_like_token_of_a_short_answer_goes(seed: int) -> None:
    from hy_memory_langgraph.redact.dialogue import carried_spans

    rng = random.Random(seed)
    word = rng.choice(sorted(w for w in load_rules().password if w.isalpha() and len(w) > 4))
    value = rng.choice(["Marble", "Comet", "Harbor"]) + rng.choice("@#&\"'") + str(rng.randint(100, 9999)) + "xQ9"
    before, after = rng.choice(_AROUND)
    current = f"{before}{value}{after}"
    assert [current[s:e] for s, e, _ in carried_spans(f"what is the {word} of the server?", current)] == [value]


@pytest.mark.parametrize("current", ["not sure, ask Tom2", "it's on the fridge", "v2 maybe",
                                     "either Abc123!x or Def456!y, try both now please"])
def test_answers_without_exactly_one_password_like_token_stay(current: str) -> None:
    from hy_memory_langgraph.redact.dialogue import carried_spans

    assert carried_spans("what's the wifi password?", current) == []


@pytest.mark.parametrize(("name", "kind"), [("id_token", "secret"), ("idToken", "secret"), ("SAMLResponse", "secret"),
                                            ("token_id", None), ("api_key_id", None), ("max_tokens", None)])
def test_a_pair_naming_a_credential_is_not_qualified_by_its_own_words(name: str, kind: str | None) -> None:
    from hy_memory_langgraph.redact.rules import name_class

    assert name_class(name) == kind
