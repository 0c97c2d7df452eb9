"""Secrets never stored: every write path replaces them with typed placeholders before
anything is stored, embedded or sent to a model; workflow memory refuses them."""

from __future__ import annotations

import json
import re
import string
import sys
from pathlib import Path
from typing import Any

import pytest
from cpu_time import LINEAR_BUDGET_S, cpu_seconds
from hypothesis import given, settings
from hypothesis import strategies as st

from hy_memory_langgraph.client import HyMemoryClient, WorkflowMemoryService
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.redact import find_secret, redact_text
from hy_memory_langgraph.redact import scan as scan_mod
from hy_memory_langgraph.redact.calls import call_spans
from hy_memory_langgraph.redact.cards import card_numbers
from hy_memory_langgraph.redact.keys import private_key_blocks
from hy_memory_langgraph.redact.lines import line_spans
from hy_memory_langgraph.redact.otp import otp_spans
from hy_memory_langgraph.redact.seeds import seed_phrases
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel
from hy_memory_langgraph.workflow.errors import CredentialsRefusedError
from tests.productivity.support import StageScript, extraction, tool_trace

SECRETS: dict[str, str] = {
    "openai_key": "sk-proj-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8L",
    "aws_access_key": "AKIAZ7QX3LMN4P2RT6WY",
    "github_token": "ghp_Q2w3E4r5T6y7U8i9O0p1A2s3D4f5G6h7J8k9",
    "url_password": "Tr0ub4dor-and-3",
    "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n"
                   "-----END OPENSSH PRIVATE KEY-----",
}
RAW = {"openai_key": SECRETS["openai_key"], "aws_access_key": SECRETS["aws_access_key"],
       "github_token": SECRETS["github_token"], "url_password": SECRETS["url_password"],
       "private_key": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"}


def _sentence() -> str:
    return (f"Deploy with key {SECRETS['openai_key']}, AWS {SECRETS['aws_access_key']}, "
            f"token {SECRETS['github_token']}, db postgres://app:{SECRETS['url_password']}@db/x "
            f"and this key:\n{SECRETS['private_key']}\nThe deploy target is Frankfurt.")


@pytest.mark.parametrize("kind", list(SECRETS))
def test_each_kind_becomes_its_placeholder_and_the_rest_is_kept(kind: str) -> None:
    text = f"before {SECRETS[kind] if kind != 'url_password' else 'https://u:' + SECRETS[kind] + '@h'} after"
    out = redact_text(text)
    assert f"[REDACTED:{kind}]" in out and RAW[kind] not in out
    assert out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize("text", [
    "the token field is the invoice number", "报销单里的 token 字段就是指发票号",
    "sk-learn and scikit-learn are the same", "password reset link sent",
    "commit e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "api_key: short", "see https://example.com/docs", "my cookie recipe uses butter",
])
def test_innocent_text_is_unchanged(text: str) -> None:
    assert redact_text(text) == text and find_secret(text) is None


def _files_hold(root: Path, needles: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {n[:12]}" for n in needles if n.encode() in data]
    return found


def _write_everything(client: Any) -> None:
    secret = _sentence()
    client.add([{"role": "user", "content": secret}, {"role": "assistant", "content": "Noted."}],
               user_id="u1", metadata={"note": f"key {SECRETS['openai_key']}"})
    patch = f"*** Begin Patch\n*** Update File: deploy.py\n-KEY = ''\n+KEY = '{SECRETS['openai_key']}'\n"
    for scene, tool, args in (
        ("working", "send_mail", {"body": secret}),
        ("coding", "apply_patch", {"patch": patch}),
        ("coding", "Edit", {"file_path": "cfg.py", "old_string": "TOKEN = None",
                            "new_string": f"TOKEN = '{SECRETS['github_token']}'"}),
    ):
        client.add(tool_trace(f"Use {SECRETS['aws_access_key']} for this", tool=tool, args=args,
                              result=secret), scene=scene, user_id="u1")


def test_no_write_path_stores_a_secret(make_client, tmp_path: Path) -> None:
    client = make_client("lite", data_dir=tmp_path / "data")
    _write_everything(client)
    client.close()
    assert _files_hold(tmp_path / "data", list(RAW.values())) == []


def test_the_check_would_see_them_with_redaction_off(tmp_path: Path) -> None:
    config = MemoryConfig.from_env({"MEMORY_REDACT_SECRETS": "false"}, data_dir=tmp_path / "raw")
    client = HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(dims=32))
    _write_everything(client)
    client.close()
    assert len(_files_hold(tmp_path / "raw", list(RAW.values()))) >= 5


def test_the_model_never_sees_a_secret(make_client) -> None:
    script = StageScript({"chat_extract": {"facts": [{"content": "The deploy target is Frankfurt",
                                                      "subject": "deploy", "owner": "user"}]},
                          "coding_extract": extraction()})
    client = make_client("pro", script.model())
    _write_everything(client)
    prompts = json.dumps([c.user for c in script.calls])
    assert script.calls and all(raw not in prompts for raw in RAW.values())
    assert "[REDACTED:openai_key]" in prompts


def test_search_results_and_history_hold_placeholders(make_client) -> None:
    client = make_client("lite")
    client.add(_sentence(), user_id="u1")
    found = client.search("deploy target", user_ids=["u1"])["memories"][0]
    assert "[REDACTED:aws_access_key]" in found["content"] and "Frankfurt" in found["content"]
    assert SECRETS["aws_access_key"] not in json.dumps(client.history(found["memory_id"]))
    updated = client.update(found["memory_id"], f"new key {SECRETS['openai_key']}")
    assert updated["content"] == "new key [REDACTED:openai_key]"


@pytest.mark.parametrize("value", [SECRETS["openai_key"], f"Cookie: sid={SECRETS['url_password']}",
                                   "ETEAMSID=4f9a8b7c6d"])
def test_workflow_memory_refuses_a_secret_value(tmp_path: Path, value: str) -> None:
    service = WorkflowMemoryService(tmp_path / "wf")
    with pytest.raises(CredentialsRefusedError, match="Nothing was saved"):
        service.memory_extract("u1", msg_list=[{"msgRole": "user", "msgValue": f"记住 {value}"}])
    assert not (tmp_path / "wf").exists()


def test_a_chat_model_garbage_reply_with_a_secret_is_not_stored(make_client, tmp_path: Path) -> None:
    model = ScriptedChatModel.from_stages({"chat_extract": "not json"})
    client = make_client("pro", model, data_dir=tmp_path / "g")
    client.add(_sentence(), user_id="u1")
    client.close()
    assert _files_hold(tmp_path / "g", list(RAW.values())) == []


@pytest.mark.parametrize("text", ["x" * 500_000, "word " * 100_000, "-" * 250_000 + "token: a1b2c3"],
                         ids=["one-letter", "words", "dashes-then-label"])
def test_detection_is_linear_on_long_text(text: str) -> None:
    _, spent = cpu_seconds(lambda: redact_text(text))
    assert spent < LINEAR_BUDGET_S / 2  # half a megabyte or less: half the budget


_LABEL_ALPHABET = ("abkeyPASSWORDtokenpinpwdKey\u212a\u017f\u0130\u0131密码是口令:=：\t _-.\"'1234!#"
                   "парольПАРОЛЬñÑcontraseñhłŁsdmtpvérfycoisé파스워드비밀번호는パスワードは")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_LABEL_ALPHABET, max_size=80))
def test_label_patterns_tried_only_where_they_can_match_find_what_a_full_scan_finds(text: str) -> None:
    """The label scan tries its patterns at token starts holding a label word and at
    Chinese labels only; it must find exactly what scanning every position finds."""
    starts = scan_mod._label_starts(text)
    for pattern in (scan_mod._label_pattern(), scan_mod._near_pattern()):
        full = [(m.start(), m.end(), m.groupdict()) for m in pattern.finditer(text)]
        tried = [(m.start(), m.end(), m.groupdict()) for m in scan_mod._matches_at(pattern, text, starts)]
        assert tried == full


def _every_rule_everywhere(text: str) -> list[tuple[int, int, str]]:
    """The shape and marker spans of ``text`` with every rule tried (no needles, no sizes,
    the structural detectors without their cheap first tests)."""
    tokens, headers = scan_mod._sized_rules()
    found = [(m.start(), m.end(), kind) for kind, pattern, *_ in tokens for m in pattern.finditer(text)
             if not scan_mod._FILLER_RUN.search(m.group())]
    found += private_key_blocks(text) + card_numbers(text) + seed_phrases(text)
    folded = text.translate(scan_mod._FOLD)
    found += otp_spans(text, folded) + call_spans(text, folded) + line_spans(text)
    return found + scan_mod.marker_spans(headers, text)


def _tried_spans(text: str) -> list[tuple[int, int, str]]:
    return [(start, end, kind) for start, end, kind, source in scan_mod._spans(text)
            if source not in (scan_mod._LABEL, scan_mod._PREFIXED)]


_NEEDLE_PIECES = [
    "sk-ant-", "sk-", "AKIA", "ASIA", "gh", "github_pat_", "glpat-", "xox", "AIza", "ya29.", "sk_live_",
    "rk_test_", "eyJ", "hf_", "npm_", "SG.", "SK", "do", "_v1_", "shpat_", "key-", "sq0atp-", "AKID", "LTAI",
    "-----BEGIN", " PRIVATE KEY-----", "PuTTY-User-Key-File-", "Authorization", "BEARER", "bAsIc", "Cookie",
    "eteamsid", "ETEAMS\u0130D", "\u212aey-", "-token", "-Key", "https://hooks.slack.com/services/", "://u:",
    "@h", "?sig=", "&sig=", "123456789", ":AA", ":", "=", " ", "\n", "_", "-", ".", "Zz9", "a1B2c3D4e5F6g7H8",
    "Q7RX2M9KL4TZ8WPN", "0123456789abcdef", "AbCdEfGhIjKlMnOpQrStUv%2Bw=",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_NEEDLE_PIECES), max_size=24).map("".join))
def test_rules_skipped_for_a_missing_needle_find_what_every_rule_finds(text: str) -> None:
    """A shape or marker rule is tried only on texts holding one of its needles (literal
    runs every match of it holds); the spans must be exactly those of every rule tried
    everywhere."""
    assert sorted(_tried_spans(text)) == sorted(_every_rule_everywhere(text))


def test_every_rule_has_needles() -> None:
    """Every rule skips texts without its needles (a rule without them scans every text)."""
    tokens, headers = scan_mod._sized_rules()
    assert [kind for kind, _, needles, *_ in (*tokens, *headers) if not needles] == []


def test_every_corpus_case_gets_the_spans_every_rule_finds() -> None:
    """The secret corpus (every kind in its contexts, and the held-out one): the rules
    tried find exactly what every rule tried everywhere finds."""
    from bench.common import secret_corpus, secret_heldout

    texts = {t for c in secret_corpus.build_cases(seed=3) for t in (c.text, c.needle, c.key) if t}
    texts |= {t for pair in secret_heldout.HELD_OUT for t in pair if t}
    assert len(texts) > 300
    for text in texts:
        assert sorted(_tried_spans(text)) == sorted(_every_rule_everywhere(text)), text


def test_case_folding_matches_what_ignorecase_matches() -> None:
    """The needles of case-insensitive rules are looked for in the text folded by
    ``_FOLD``: every character ``re.IGNORECASE`` matches with an ASCII letter folds to it."""
    letters = re.compile("[a-z]", re.IGNORECASE)
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if letters.fullmatch(char):
            folded = char.translate(scan_mod._FOLD)
            assert folded in string.ascii_lowercase and re.fullmatch(folded, char, re.IGNORECASE), hex(point)
