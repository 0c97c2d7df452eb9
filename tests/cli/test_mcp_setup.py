"""The MCP client setups the README and ``hy-memory mcp --help`` give are the same, are
valid JSON, and name a command line our own parser accepts."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from hy_memory_langgraph.cli.parsers import MCP_DESCRIPTION, build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_configs() -> list[dict]:
    section = README.read_text(encoding="utf-8").split("**MCP clients**", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    return [json.loads(line) for line in block.splitlines() if line.strip()]


def _help_configs() -> list[dict]:
    text = MCP_DESCRIPTION.split("Set up a client", 1)[1]
    found = re.findall(r'\{"mcpServers": .*?\}\}\}\}?', text.replace("\n", " "), flags=re.S)
    return [json.loads(re.sub(r"\s+", " ", f)) for f in found]


def test_the_readme_and_the_help_give_the_same_configurations() -> None:
    readme, shown = _readme_configs(), _help_configs()
    assert len(readme) == 2 and readme == shown


def test_the_stdio_configuration_is_a_command_line_we_accept() -> None:
    server = _readme_configs()[0]["mcpServers"]["hy-memory"]
    assert server["command"] == "hy-memory"
    args = build_parser("0").parse_args(server["args"])
    assert (args.handler, args.user_id, args.http) == ("mcp:serve", "alice", False)


def test_the_claude_code_commands_end_in_a_command_line_we_accept() -> None:
    text = README.read_text(encoding="utf-8")
    stdio = re.search(r"`(claude mcp add hy-memory -- [^`]+)`", text).group(1)
    args = build_parser("0").parse_args(shlex.split(stdio.split(" -- ", 1)[1])[1:])
    assert args.handler == "mcp:serve" and args.user_id == "alice"
    http = re.search(r"`HY_MEMORY_MCP_TOKEN=<token> (hy-memory mcp [^`]+)`", text).group(1)
    args = build_parser("0").parse_args(shlex.split(http)[1:])
    assert args.http is True and (args.host, args.port) == ("127.0.0.1", 8000)
    url = _readme_configs()[1]["mcpServers"]["hy-memory"]["url"]
    assert url == f"http://{args.host}:{args.port}/mcp" and url in re.sub(r"\s+", " ", text)
