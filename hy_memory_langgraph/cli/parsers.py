"""The ``hy-memory`` command line: every subcommand's arguments and help, nothing else.

Each subcommand names its handler as ``"module:function"`` of this package's ``cli``
folder (:data:`HANDLERS`); the handler's module, and with it the client and the models,
is imported only when that subcommand runs, so ``hy-memory --help`` stays quick.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any, Final, NoReturn

from hy_memory_langgraph.cli.common import USER_ENV
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES, SCENES

#: The productivity scenes as help texts name them (``working/coding``).
_PRODUCTIVITY: Final = "/".join(PRODUCTIVITY_SCENES)
#: Largest ``--limit`` of a search or a list page.
MAX_LIMIT: Final = 10_000

DESCRIPTION: Final = """\
Long-term memory for agents, on this machine: remember conversations, search them,
inspect and move a memory. Runs offline with no API key (lite mode, embedded
embeddings); set OPENAI_API_KEY for LLM extraction (pro mode).

Commands about one user's memory need the user: --user-id USER (-u USER), or the
HY_MEMORY_USER_ID environment variable.

examples:
  hy-memory add --text "I adopted a grey cat called Miso" -u alice
  hy-memory search "what is my cat called?" -u alice
  hy-memory list -u alice
  hy-memory export -o memory.jsonl && hy-memory --data-dir ./copy import memory.jsonl --all-users
"""

ADD_DESCRIPTION: Final = """\
Remember conversations, from a JSON or JSONL file, standard input (-) or --text:

  a JSON string, a message {"role", "content"} or a list of messages: one write;
  an object {"messages": [...], "user_id", "scene", "session_id", "agent_id",
    "workspace_id", "branch", "metadata", "memory_at"} (all but messages optional;
    its fields win over the command-line options): one write;
  a list of such objects, or JSONL with one of the above per line: one write each.

Messages may be in OpenAI, Anthropic or LangChain form, tool calls included.
"""

TRANSFER_DESCRIPTION: Final = """\
A whole memory as JSONL, an exact round trip: every memory of every scene and status
with its id, content, metadata, time and links; the history of each; conversation
traces; the coding version chain; workflow-memory files. Vectors and search indexes are
not exported (they are computed again on import), nor the embedding cache or the git
snapshots of the version chain. A progress bar is drawn on stderr when it is a
terminal (--progress forces it).
"""

WORKFLOW_DESCRIPTION: Final = f"""\
Workflow memory of business-process agents, JSON in, JSON out.

operations:
  workflow.memoryPrompt   input {{"workflowId"?, "memoryAppId"?}}
  workflow.memoryExtract  input {{"msgList" | "userMessage" + "assistantMessage",
                          "workflowId"?, "dynamicContext"?, "memoryAppId"?, "async"?}}

Success prints {{"ok": true, "data": ...}} (exit 0); bad input prints
{{"ok": false, "error": {{"code", "message"}}}} (exit 2; 1 for internal errors). The user
comes from --user-id or {USER_ENV}. The OA context comes from MEMORY_OA_CONTEXT_PROVIDER
or MEMORY_OA_CONTEXT_FILE; an invalid value is a CONFIG_ERROR.
"""

#: Subcommand → ``"module:function"`` of its handler in ``hy_memory_langgraph.cli``.
HANDLERS: Final = {
    "add": "memories:add", "search": "memories:search", "list": "memories:list_memories",
    "get": "memories:get", "update": "memories:update", "history": "memories:history",
    "delete": "memories:delete", "log": "memories:log", "stats": "memories:stats",
    "export": "transfer:export", "import": "transfer:import_", "demo": "demo:demo",
    "workflow run": "workflow:run", "mcp": "mcp:serve", "worker": "worker:run",
}


class UsageError(Exception):
    """The command line cannot be parsed; ``suggestion`` is the closest option, if any."""

    def __init__(self, message: str, parser: argparse.ArgumentParser) -> None:
        super().__init__(message)
        self.message, self.parser = message, parser


class _CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`UsageError` instead of exiting and, for
    an unknown option, names the closest option of the subcommand given (it keeps its own
    list of options and subcommands: argparse has no public one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: Option strings of this parser and of its ``parents``; its subcommand parsers.
        self.option_names: list[str] = [o for parent in kwargs.get("parents") or []
                                        for o in getattr(parent, "option_names", [])]
        self.subcommands: list[_CommandParser] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.option_names += action.option_strings
        return action

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", _CommandParser)
        action = super().add_subparsers(**kwargs)
        make = action.add_parser

        def add_parser(name: str, **options: Any) -> _CommandParser:
            made: _CommandParser = make(name, **options)
            self.subcommands.append(made)
            return made

        action.add_parser = add_parser
        return action

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command_parser", None) or self
            raise UsageError(_unrecognized(extras, command, _options_of(self)), command)
        return parsed


def _options_of(parser: argparse.ArgumentParser) -> list[str]:
    found = list(getattr(parser, "option_names", []))
    for sub in getattr(parser, "subcommands", []):
        found += _options_of(sub)
    return sorted(set(found))


def _unrecognized(extras: Sequence[str], command: argparse.ArgumentParser, everywhere: list[str]) -> str:
    """The message for arguments ``command`` does not take: for each unknown option, the
    closest one ``command`` has, or that it belongs to other commands only."""
    known = _options_of(command)
    hints = []
    for option in dict.fromkeys(a.split("=", 1)[0] for a in extras if a.startswith("-")):
        close = difflib.get_close_matches(option, known, n=1, cutoff=0.6)
        if option in everywhere:
            hints.append(f"{option} is not an option of {command.prog}")
        elif close:
            hints.append(f"{option}: did you mean {close[0]}?")
    return f"unrecognized arguments: {' '.join(extras)}" + (" (" + "; ".join(hints) + ")" if hints else "")


def _whole(value: str, low: int, high: int | None = None) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < low or (high is not None and number > high):
        raise argparse.ArgumentTypeError(f"expected {low}..{high}, got {number}" if high is not None
                                         else f"expected {low} or more, got {number}")
    return number


def _limit(value: str) -> int:
    return _whole(value, 1, MAX_LIMIT)


def _offset(value: str) -> int:
    return _whole(value, 0)


def _version(value: str) -> int:
    return _whole(value, 1)


def _common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--data-dir``, ``--json``, ``--no-embedding-cache``: accepted before or after the
    subcommand; on a subcommand they never reset a value given before it."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument("--data-dir", default=default, metavar="DIR",
                        help="where the memory files live (default: $MEMORY_DATA_DIR, else ~/.hy_memory)")
    parser.add_argument("--json", action="store_true", default=False if top else argparse.SUPPRESS,
                        help="print one JSON envelope instead of text")
    parser.add_argument("--no-embedding-cache", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="do not keep embeddings in the data dir's cache/embeddings.db")


def _user(parser: argparse.ArgumentParser, help_text: str = "whose memory") -> None:
    parser.add_argument("--user-id", "-u", metavar="USER", help=f"{help_text} (default: ${USER_ENV})")


def _owner(parser: argparse.ArgumentParser) -> None:
    """``--user-id`` of a command given memory ids: only that user's memories count."""
    parser.add_argument("--user-id", "-u", metavar="USER",
                        help="only if the memory is USER's (another user's id reads as unknown)")


def _mode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=["lite", "pro"],
                        help="lite: no LLM calls; pro: LLM extraction (default: pro when "
                             "OPENAI_API_KEY is set, else lite)")


def _scope(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scene", choices=SCENES, help=f"{', '.join(SCENES[:-1])} or {SCENES[-1]} "
                                                        "(default: routing decides)")
    parser.add_argument("--workspace-id", help=f"{_PRODUCTIVITY} scope, e.g. a repository URL")
    parser.add_argument("--branch", help=f"{_PRODUCTIVITY} scope inside the workspace")


def _command(sub: Any, name: str, parent: argparse.ArgumentParser,
             help_text: str, description: str | None = None, handler: str | None = None) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, parents=[parent], help=help_text, description=description or help_text,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=handler or HANDLERS[name], command_parser=parser)
    return parser


def _memory_commands(sub: Any, parent: argparse.ArgumentParser) -> None:
    add = _command(sub, "add", parent, "remember conversations (JSON / JSONL file, stdin or --text)",
                   ADD_DESCRIPTION)
    add.add_argument("source", nargs="?", metavar="FILE", help="a JSON or JSONL file, or - for stdin")
    add.add_argument("--text", help="remember one user message")
    _user(add, "whose memory (a user_id field in the file wins)")
    _scope(add)
    add.add_argument("--session-id", help="the conversation this belongs to")
    add.add_argument("--memory-at", metavar="TIME", help="when it was said (ISO 8601; default now)")
    _mode(add)

    search = _command(sub, "search", parent, "find a user's memories")
    search.add_argument("query", metavar="QUERY", help="what to look for, in any language")
    _user(search)
    _scope(search)
    search.add_argument("--limit", "-k", type=_limit, default=5, metavar="N",
                        help=f"results (per layer for {_PRODUCTIVITY}; default 5)")
    search.add_argument("--after", metavar="TIME", help="only memories from this date/time on (ISO 8601)")
    search.add_argument("--before", metavar="TIME", help="only memories up to this date/time (ISO 8601)")
    search.add_argument("--min-score", type=float, metavar="S", help="drop hits scoring below this")
    search.add_argument("--agentic", action="store_true", help="let the model rewrite the query (pro mode)")
    _mode(search)

    listing = _command(sub, "list", parent, "a user's memories, newest first, a page at a time")
    _user(listing)
    listing.add_argument("--scene", choices=SCENES, help="only this scene (default: every scene)")
    listing.add_argument("--limit", "-k", type=_limit, default=20, metavar="N", help="memories per page (default 20)")
    listing.add_argument("--offset", type=_offset, default=0, metavar="N", help="skip this many (default 0)")
    listing.add_argument("--page", type=_limit, metavar="P", help="page P of --limit memories (sets --offset)")

    get = _command(sub, "get", parent, "show one memory by id")
    get.add_argument("memory_id", metavar="MEMORY_ID")
    _owner(get)

    update = _command(sub, "update", parent, "replace a chat memory's text (a new version)")
    update.add_argument("memory_id", metavar="MEMORY_ID")
    update.add_argument("text", metavar="TEXT", help="the memory's new text")
    _owner(update)
    update.add_argument("--memory-at", metavar="TIME", help="when it holds from (ISO 8601; default: unchanged)")
    update.add_argument("--expected-version", type=_version, metavar="N",
                        help="only if the memory is still at version N (else CONFLICT, exit 1)")

    history = _command(sub, "history", parent, "every version of one memory")
    history.add_argument("memory_id", metavar="MEMORY_ID")
    _owner(history)

    delete = _command(sub, "delete", parent, "delete memories by id, or all of a user")
    delete.add_argument("memory_ids", nargs="*", metavar="MEMORY_ID")
    delete.add_argument("--all", action="store_true", help="delete every memory of --user-id")
    delete.add_argument("--user-id", "-u", metavar="USER",
                        help="with --all: the user whose memories are deleted; with ids: only if they are "
                             "USER's (never from the environment)")

    log = _command(sub, "log", parent, "the stages one add or search went through (its request_id)")
    log.add_argument("request_id", metavar="REQUEST_ID")

    _command(sub, "stats", parent, "what the data dir holds")


def _transfer_commands(sub: Any, parent: argparse.ArgumentParser) -> None:
    export = _command(sub, "export", parent, "write every memory to JSONL (exact round trip)",
                      TRANSFER_DESCRIPTION)
    export.add_argument("--output", "-o", metavar="FILE", help="the JSONL file (default: stdout)")
    export.add_argument("--user-id", "-u", dest="user_ids", action="append", metavar="USER",
                        help="export only this user (repeatable; default: everyone)")
    export.add_argument("--progress", action="store_true", default=None,
                        help="draw the progress bar even when stderr is not a terminal")

    imp = _command(sub, "import", parent, "read a JSONL export into the data dir", TRANSFER_DESCRIPTION)
    imp.add_argument("source", metavar="FILE", help="a file written by hy-memory export, or - for stdin")
    whose = imp.add_mutually_exclusive_group()
    whose.add_argument("--user-id", "-u", dest="user_ids", action="append", metavar="USER",
                       help="write only this user's rows (repeatable; rows of other users are refused)")
    whose.add_argument("--all-users", action="store_true",
                       help="write every user of the file (restoring a whole data dir)")
    imp.add_argument("--progress", action="store_true", default=None,
                     help="draw the progress bar even when stderr is not a terminal")


def _other_commands(sub: Any, parent: argparse.ArgumentParser) -> None:
    _command(sub, "demo", parent, "write and search a few memories (no API key needed)",
             "Write a few memories and search them (lite mode, no API key), in a new temporary\n"
             "data dir that is removed afterwards, or in --data-dir (kept).")
    workflow = sub.add_parser("workflow", parents=[parent], description=WORKFLOW_DESCRIPTION,
                              help="workflow memory of business-process agents, JSON in / JSON out",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    workflow_sub = workflow.add_subparsers(dest="workflow_command", required=True, metavar="COMMAND")
    run = _command(workflow_sub, "run", parent, "run an operation, e.g. workflow.memoryPrompt",
                   WORKFLOW_DESCRIPTION, handler=HANDLERS["workflow run"])
    run.add_argument("op", metavar="OP", help="workflow.memoryPrompt | workflow.memoryExtract")
    run.add_argument("--input-json", metavar="JSON", help="the operation input as a JSON object")
    run.add_argument("--input", dest="input_file", metavar="FILE", help="a UTF-8 JSON file with the input ('-' = stdin)")
    _user(run)
    run.add_argument("--mode", choices=["lite", "pro"], help="default: pro when a chat model is configured")
    run.set_defaults(raw_exit=True)


MCP_DESCRIPTION: Final = f"""\
Serve one user's memory to MCP clients (coding agents, IDEs). Tools: search_memory
(recall memories about a question; read-only), save_memory (remember a fact or
preference), record_work (remember how a task was done: the request, tool calls, outcome)
and forget_memory (erase one memory by id); resource memory://recent (the user's 20
memories changed last). The user, session, workspace and branch are
fixed here, never by a tool argument. Standard input/output by default; --http serves
streamable HTTP at http://HOST:PORT/mcp instead, to requests that send the bearer token
(--token or HY_MEMORY_MCP_TOKEN; no token, no HTTP) with a Host the server answers (the
loopback names, the --host address, --allowed-host names). Needs: pip install
'hy-memory-langgraph[mcp]'.
The user comes from --user-id or {USER_ENV}.

Set up a client (replace alice; the token: e.g. python -c "import secrets; print(secrets.token_urlsafe(32))"):
  Claude Code:     claude mcp add hy-memory -- hy-memory mcp -u alice
       over HTTP:  claude mcp add --transport http hy-memory http://127.0.0.1:8000/mcp \\
                     --header "Authorization: Bearer $HY_MEMORY_MCP_TOKEN"
  Claude Desktop (claude_desktop_config.json) and Cursor (.cursor/mcp.json):
    {{"mcpServers": {{"hy-memory": {{"command": "hy-memory", "args": ["mcp", "-u", "alice"]}}}}}}
       over HTTP (Cursor): {{"mcpServers": {{"hy-memory": {{"url": "http://127.0.0.1:8000/mcp",
                     "headers": {{"Authorization": "Bearer <token>"}}}}}}}}
  The HTTP server: HY_MEMORY_MCP_TOKEN=<token> hy-memory mcp -u alice --http
"""


def _mcp_command(sub: Any, parent: argparse.ArgumentParser) -> None:
    mcp = _command(sub, "mcp", parent, "serve a user's memory over the Model Context Protocol", MCP_DESCRIPTION)
    _user(mcp)
    mcp.add_argument("--session-id", help="the session writes are recorded under")
    mcp.add_argument("--workspace-id", help=f"{_PRODUCTIVITY} scope, e.g. a repository URL")
    mcp.add_argument("--branch", help=f"{_PRODUCTIVITY} scope inside the workspace")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --http: the address (default 127.0.0.1)")
    mcp.add_argument("--port", type=lambda v: _whole(v, 1), default=8000, help="with --http: the port (default 8000)")
    mcp.add_argument("--token", help="with --http: the bearer token every request must send (default: "
                                     "$HY_MEMORY_MCP_TOKEN; required, at least 32 characters)")
    mcp.add_argument("--allowed-host", dest="allowed_hosts", action="append", metavar="NAME[:PORT]",
                     help="with --http: a Host value clients use to reach the server (repeatable; default: "
                          "$HY_MEMORY_MCP_ALLOWED_HOSTS; required with --host 0.0.0.0)")
    _mode(mcp)
    mcp.set_defaults(raw_exit=True)


WORKER_DESCRIPTION: Final = """\
Process the background writes of a data dir (or of MEMORY_DB_URL): the requests that
add(..., background=True) and the agent faces queue in pro mode. Runs until interrupted
(SIGINT/SIGTERM end it after the step in progress; the run is resumed by the next
worker), or with --drain until nothing is queued. Several workers may share one
PostgreSQL database, on any machines; on SQLite one worker per data dir works at a
time and the others wait. Needs a chat model (OPENAI_API_KEY...) unless --mode lite.
"""


def _worker_command(sub: Any, parent: argparse.ArgumentParser) -> None:
    worker = _command(sub, "worker", parent, "process queued background writes", WORKER_DESCRIPTION)
    worker.add_argument("--drain", action="store_true", help="exit once nothing is queued or running")
    worker.add_argument("--retry-failed", action="store_true",
                        help="queue again, first, the failed writes that were kept")
    worker.add_argument("--mode", choices=["lite", "pro"],
                        help="pro (default): the write graph with the model; lite: store raw turns only")
    worker.set_defaults(raw_exit=True)


def build_parser(version: str) -> _CommandParser:
    """The full parser; ``--data-dir`` and ``--json`` work before or after the subcommand."""
    parser = _CommandParser(prog="hy-memory", description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"hy-memory {version}")
    _common(parser, top=True)
    parent = _CommandParser(add_help=False)
    _common(parent)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _memory_commands(sub, parent)
    _transfer_commands(sub, parent)
    _other_commands(sub, parent)
    _mcp_command(sub, parent)
    _worker_command(sub, parent)
    return parser


def wants_json(argv: Sequence[str]) -> bool:
    """``--json`` among the arguments (before a ``--``), for errors found while parsing."""
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False
