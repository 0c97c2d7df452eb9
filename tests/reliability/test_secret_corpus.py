"""The secret corpus end to end (nothing reaches a file), hand-written cases, the real
conversations (nothing redacted), and the rules behind them.

The corpora of ``../shared/data`` are read where they are (never copied); without them
the precision test skips, unless ``HY_TEST_REQUIRE_DATA=1`` (CI), where it fails.
"""

from __future__ import annotations

import importlib
import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import CodingConfig, MemoryConfig
from hy_memory_langgraph.redact import name_class, redact_json_text, redact_text, redact_value
from hy_memory_langgraph.testing import HashingEmbeddings
from tests.productivity.support import tool_trace


def _bench(name: str) -> ModuleType:
    return importlib.import_module(f"bench.{name}")


@pytest.fixture(scope="module")
def corpus() -> ModuleType:
    return _bench("common.secret_corpus")


@pytest.fixture(scope="module")
def scanner() -> ModuleType:
    return _bench("secret_scan")


@pytest.mark.slow
def test_every_kind_on_every_carrier_stays_off_disk(corpus: ModuleType, scanner: ModuleType,
                                                    tmp_path: Path) -> None:
    """One case per (kind, carrier, language) of the corpus, written through a real client;
    ``bench/secret_scan.py`` runs all of them."""
    seen, cases = set(), []
    for case in corpus.build_cases(seed=11):
        if (case.kind, case.carrier, case.lang) not in seen:
            seen.add((case.kind, case.carrier, case.lang))
            cases.append(case)
    assert len({c.kind for c in cases}) == len(corpus.KINDS) and len(cases) > 250
    leaked = scanner.leaked_cases(cases, tmp_path)
    assert [(c.kind, c.carrier, c.text or c.key) for c in leaked] == []


def test_the_scan_sees_a_secret_when_redaction_is_off(corpus: ModuleType, scanner: ModuleType,
                                                      tmp_path: Path) -> None:
    case = next(c for c in corpus.build_cases() if c.carrier == "chat")
    config = MemoryConfig.from_env({"MEMORY_REDACT_SECRETS": "false"}, data_dir=tmp_path)
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(dims=32)) as client:
        scanner.write_case(client, case, user="u1")
    assert scanner.files_holding(tmp_path, [case.needle]) == {case.needle}


def test_hand_written_cases_are_redacted() -> None:
    held_out = _bench("common.secret_heldout").HELD_OUT
    assert [text for text, needle in held_out if needle in redact_text(text)] == []


def test_real_conversations_lose_nothing_to_redaction(scanner: ModuleType) -> None:
    if not (scanner.DATA / "locomo").is_dir():
        if os.environ.get("HY_TEST_REQUIRE_DATA") == "1":
            pytest.fail(f"HY_TEST_REQUIRE_DATA=1 but {scanner.DATA} holds no corpora")
        pytest.skip(f"no corpora at {scanner.DATA}")
    found = scanner.false_redactions(scanner.DATA)
    assert {name: (count, examples[:3]) for name, (_, count, examples) in found.items()} == \
        {name: (0, []) for name in found}
    assert all(messages > 300 for messages, _, _ in found.values())


# ------------------------------------------------------------------------------- the rules
@pytest.mark.parametrize(("name", "kind"), [
    ("password", "password"), ("db_password", "password"), ("dbPassword", "password"), ("DB_PASS", "password"),
    ("passphrase", "password"), ("pw", "password"), ("支付密码", "password"), ("口令", "password"),
    ("api_key", "secret"), ("X-API-Key", "secret"), ("AccountKey", "secret"), ("accessToken", "secret"),
    ("client_secret", "secret"), ("credentials", "secret"), ("Authorization", "secret"), ("密钥", "secret"),
    ("secret access key", "secret"), ("key", "weak"),
    ("passengers", None), ("passions", None), ("compass", None), ("max_tokens", None), ("token_count", None),
    ("token_type", None), ("password_hint", None), ("tokenizer", None), ("secretary", None), ("keyboard", None),
    ("token field", None), ("passport", None),
])
def test_names_are_read_word_by_word(name: str, kind: str | None) -> None:
    assert name_class(name) == kind


@pytest.mark.parametrize(("text", "kept"), [
    ("passengers: Anna and Ben Ortiz", True), ("passions: music and hiking", True),
    ("the token field is the invoice number", True), ("报销单里的 token 字段就是指发票号", True),
    ("my password is strong", True), ("password reset link sent", True), ("api_key: short", True),
    ("https://example.com:8080/users/@alice", True), ("max_tokens: 4096", True),
    ("我的key是sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB在生产环境", False), ("token：a9F3kL0pQ7zX2mN8", False),
    ("支付密码：723901", False), ("password: correct horse battery staple", False),
])
def test_prose_keeps_words_and_loses_secrets(text: str, kept: bool) -> None:
    assert (redact_text(text) == text) is kept


def test_values_under_secret_keys_go_at_any_depth() -> None:
    value = {"password": "hunter22", "db": {"api_key": "abc123def", "host": "db.local",
                                            "users": [{"pin": 4821}]},
             "max_tokens": 512, "note": "sk-proj-4fG7hJ2kL9mN3pQ8rS1tV6wX0yZ5aB", "token": "the invoice field"}
    out = redact_value(value)
    assert out == {"password": "[REDACTED:password]",
                   "db": {"api_key": "[REDACTED:secret_value]", "host": "db.local",
                          "users": [{"pin": "[REDACTED:password]"}]},
                   "max_tokens": 512, "note": "[REDACTED:openai_key]", "token": "the invoice field"}
    assert redact_value(out) == out  # placeholders stay as they are


def test_escaped_json_labels_are_read_as_text() -> None:
    raw = '{"note": "\\u5bc6\\u7801\\uff1ahunter22x"}'
    assert "hunter22x" not in redact_json_text(raw) and "hunter22x" not in redact_text(raw)
    assert redact_json_text('{"password": "hunter22x", "ok": true}') == '{"password": "[REDACTED:password]", "ok": true}'
    assert redact_json_text("not json {") == "not json {"


def test_a_token_in_a_workspace_url_is_redacted_and_the_scope_still_matches(make_client) -> None:
    client = make_client("lite")
    url = "https://x-access-token:ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789@github.com/acme/app"
    client.add(tool_trace("Fix the flaky build", tool="Edit",
                          args={"file_path": "ci.yml", "old_string": "a", "new_string": "b"}),
               scene="coding", user_id="u1", workspace_id=url)
    found = client.search("flaky build", scene="coding", user_ids=["u1"], workspace_id=url, min_score=-1.0)
    assert found["facts"] and found["facts"][0]["workspace_id"] == \
        "https://x-access-token:[REDACTED:github_token]@github.com/acme/app"
    other = client.search("flaky build", scene="coding", user_ids=["u1"], min_score=-1.0,
                          workspace_id="https://github.com/acme/other")
    assert other["facts"] == []


def test_chain_snapshots_of_the_work_tree_hold_no_secret(tmp_path: Path) -> None:
    """A file with keys where the agent changed one unrelated line: the version chain
    keeps the work tree redacted (snapshots and rounds)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    secrets = ["sk-proj-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8L", "Sup3rS3cretPw", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]
    settings = (f'OPENAI_API_KEY = "{secrets[0]}"\nDB_URL = "postgres://app:{secrets[1]}@db/x"\n'
                f'aws_secret_access_key = "{secrets[2]}"\nDEBUG = False\n')
    (repo / "settings.py").write_text(settings)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    (repo / "settings.py").write_text(settings.replace("DEBUG = False", "DEBUG = True"))
    config = MemoryConfig.from_env(data_dir=tmp_path / "data", coding=CodingConfig(chain_repo_root=repo))
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(dims=32)) as client:
        result = client.add(tool_trace("Turn debug on", tool="Bash", args={"command": "sed -i s/False/True/ settings.py"},
                                       result="ok"), scene="coding", user_id="u1")
        assert result["chain_rounds"] >= 0
    assert _bench("secret_scan").files_holding(tmp_path / "data", secrets) == set()
