"""Every Python example of the README runs on its own (fresh namespace, empty dir, lite mode).

Blocks fenced as ```python run; ```python no-run fragments (they need a real model or
tools) are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.compile(r"```python\n(.*?)```", re.S).findall(README.read_text(encoding="utf-8"))

#: Text each block (by the first line that names it) must print.
EXPECTED = {
    'limit=3)\nfor memory in found["memories"]': "Miso",
    "class State(TypedDict)": "fridge",
    "builder.add_sequence([(\"recall\", create_recall_node": "My cat is called Miso.",
    "middleware=[HyMemoryMiddleware(client, user_id=\"alice\")]": "My dog is called Rex.",
    "HyMemoryRetriever(client=client": "Miso",
    "HyMemoryKVStore(\"./memory/kv.db\")": "[b'hello', None] ['greeting']\nembedded: 1, from the cache: 0",
    "memory_extract(": "报销流程",
    "client.pipeline_log(result[\"request_id\"])": "scene_route",
    "scene=\"coding\", user_id=\"user_123\"": "fact_coding_",
}


def test_there_are_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs_alone(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    block = BLOCKS[index]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"readme_block_{index}"}
    try:
        exec(compile(block, f"{README}#block{index}", "exec"), namespace)  # noqa: S102 - our own README
    finally:
        client = namespace.get("client")
        close = getattr(client, "close", None)
        if callable(close):
            close()
    out = capsys.readouterr().out
    expected = [text for marker, text in EXPECTED.items() if marker in block]
    assert expected, f"block {index} has no expectation in EXPECTED: {block[:80]!r}"
    for text in expected:
        assert text in out, (index, out)


def test_the_workflow_commands_work_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The README's ``mem-extract.json`` and its two ``hy-memory`` lines, verbatim: the
    prompt read back holds what was saved (the same ``memoryAppId`` on both sides)."""
    import json
    import shlex

    from hy_memory_langgraph.cli import main

    text = README.read_text(encoding="utf-8")
    payload = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    commands = [line for line in re.search(r"```bash\n(hy-memory --json workflow run.*?)```", text, re.S)
                .group(1).splitlines() if line.strip()]
    assert len(commands) == 2 and "memoryAppId" in payload and "memoryAppId" in commands[1]
    (tmp_path / "mem-extract.json").write_text(payload, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "memory"))
    monkeypatch.delenv("HY_MEMORY_USER_ID", raising=False)
    outputs = []
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "hy-memory"
        assert main(argv[1:]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0]["data"]["saved"] is True
    assert "报销流程" in outputs[1]["data"]["memoryPrompt"]


def test_the_readme_is_a_newcomers_length() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 510  # background branch: +9 lines (Background memory); the lead trims
    assert "**Contents:**" in text.split("## Quickstart")[0]


def test_the_readme_links_only_to_absolute_urls() -> None:
    """The README is the package index's project page too, where a relative link (``docs/…``)
    leads nowhere and headings get no anchors (``#section``): name files and sections in
    words instead. Code is not prose, so fenced blocks and code spans are left out."""
    text = re.sub(r"```.*?```", "", README.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = re.findall(r"\]\(\s*<?([^)\s>]*)", text)  # [text](target)
    targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$", text, flags=re.M)  # [label]: target
    targets += re.findall(r"""(?:href|src)\s*=\s*["']([^"']*)""", text, flags=re.I)  # HTML
    assert targets, "no link found: the patterns no longer match the README's links"
    relative = [target for target in targets if not re.match(r"https?://", target)]
    assert not relative, relative
