"""An MCP server of one user's memory (Model Context Protocol, the official ``mcp`` SDK).

Coding agents and IDEs that speak MCP reach the memory through four tools, each marked
with MCP annotations (read-only, destructive, idempotent) so a client can decide which
to confirm with its user:

* ``search_memory(query, scene="chat", limit=None)``: chat memories, or the facts and
  experiences of a productivity scene (working, coding: with the version-chain block),
  best first, with ids (read-only);
* ``save_memory(content)``: remember one self-contained statement (chat; destructive in
  pro mode, where it may update or replace what is known);
* ``record_work(scene, messages)``: remember a finished piece of work: the conversation
  (OpenAI-style messages, tool calls and results included) through the working or
  coding pipeline (destructive in pro mode, as above);
* ``forget_memory(memory_id)``: delete one of the user's memories (destructive,
  idempotent).

and one resource, ``memory://recent``: the user's 20 memories changed last (any scene,
newest first, as a data block with ids), for clients that attach resources to a
conversation (Claude Desktop, Claude Code's ``@`` mentions).

Whose memory it is (user, session, workspace, branch) is fixed when the server is
built (``hy-memory mcp -u alice``), never a tool argument a model fills: an argument
the tool does not declare (``user_id``) is refused. Arguments are held to the client's
limits (:mod:`hy_memory_langgraph.limits`) before they are validated. A failed call comes
back as an MCP tool error with the library's message. The server reports this
package's version. ``pip install 'hy-memory-langgraph[mcp]'`` brings the SDK.

Over streamable HTTP (:func:`serve_http`, ``hy-memory mcp --http``) every request needs the
bearer token the server was given (``--token`` or :data:`TOKEN_ENV`; compared in
constant time; anything else gets ``401`` with a ``WWW-Authenticate`` header), and only
the ``Host`` and ``Origin`` values of :func:`allowed_hosts` are answered (DNS-rebinding
protection, on for every address). There is no HTTP without a token.

Example:
    >>> server = build_mcp_server(client, user_id="alice")  # doctest: +SKIP
    >>> serve_stdio(server)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hy_memory_langgraph import __version__
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.errors import ConfigError, HyMemoryError, InvalidInputError, MissingExtraError
from hy_memory_langgraph.integrations.render import render_recent
from hy_memory_langgraph.integrations.scope import MemoryScope
from hy_memory_langgraph.integrations.tools import MAX_LIMIT, SAVE_DESCRIPTION, MemoryOps
from hy_memory_langgraph.limits import check_nesting
from hy_memory_langgraph.prompts import scene_definitions
from hy_memory_langgraph.scenes import CHAT_PIPELINE, CHAT_SCENE, PRODUCTIVITY_SCENES, SCENES

logger = logging.getLogger(__name__)

#: The environment variable holding the bearer token of the HTTP server.
TOKEN_ENV: Final = "HY_MEMORY_MCP_TOKEN"
#: The environment variable listing extra ``Host`` values the HTTP server answers.
ALLOWED_HOSTS_ENV: Final = "HY_MEMORY_MCP_ALLOWED_HOSTS"
#: Shortest bearer token accepted (``secrets.token_urlsafe(32)`` gives 43 characters).
MIN_TOKEN_CHARS: Final = 32
#: Where streamable HTTP is served.
MCP_PATH: Final = "/mcp"
_TOKEN_CHARS: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 b64token
_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
#: The resource of the user's recent memories, and how many it shows.
RECENT_URI: Final = "memory://recent"
RECENT_COUNT: Final = 20
_INSTRUCTIONS: Final = (
    "Long-term memory of the current user: search it before answering questions about the user or "
    "about earlier work; save what will still matter later; record finished work (with its tool calls) "
    "so how it was done can be found again.")

# The scene parameters come from the registry (hy_memory_langgraph.scenes), as do their
# descriptions (the definitions the routing prompts use): a registered scene is a tool value.
_SearchScene = Literal[SCENES]  # type: ignore[valid-type]
_WorkScene = Literal[PRODUCTIVITY_SCENES]  # type: ignore[valid-type]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")  # whose memory is never an argument


class _Search(_Arguments):
    query: Annotated[str, Field(description="What to look for (a question or keywords).")]
    scene: Annotated[_SearchScene, Field(description="Which memory to search:\n"
                                                     + scene_definitions("search", "en", SCENES))] = CHAT_SCENE
    limit: Annotated[int | None, Field(ge=1, le=MAX_LIMIT, description=f"How many results at most (1-{MAX_LIMIT}); "
                                                                       "omit for the default.")] = None


class _Save(_Arguments):
    content: Annotated[str, Field(description="One self-contained statement to remember.")]


class _Record(_Arguments):
    scene: Annotated[_WorkScene, Field(description="Which memory the work belongs to:\n"
                                                   + scene_definitions("write", "en", PRODUCTIVITY_SCENES))]
    messages: Annotated[list[dict[str, Any]], Field(
        min_length=1, description="The work's messages, OpenAI style: {role, content, tool_calls?, tool_call_id?}.")]


class _Forget(_Arguments):
    memory_id: Annotated[str, Field(description="The memory's id (as search_memory showed it).")]


@dataclass(frozen=True)
class _Tool:
    """One MCP tool: what a client lists, and what a call runs."""

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    hints: dict[str, bool]
    run: Callable[[Any], Awaitable[str]]


def _outcome(scene: str, result: dict[str, Any]) -> str:
    if result.get("status") == "queued":
        return f"Queued for {scene} memory (request {result['request_id']}): recorded in the background."
    if not result.get("success", True):
        return f"Nothing recorded: {result.get('error') or result.get('reason') or 'the write failed'}."
    if result.get("scene") == CHAT_PIPELINE:
        return "Recorded as chat memory: the messages hold no tool calls, so they are not a piece of work."
    ids = [*(result.get("experience_ids") or []), *([result["memory_id"]] if result.get("memory_id") else [])]
    return f"Recorded in {scene} memory ({', '.join(ids) or 'nothing new'})."


def _tools(client: HyMemoryClient, scope: MemoryScope, k: int, background: bool) -> list[_Tool]:
    ops = {scene: MemoryOps(client, scene, k, background=background) for scene in SCENES}
    rewrites = client.mode == "pro"  # pro mode reconciles: a write may update or replace memories

    async def search(args: _Search) -> str:
        return await ops[args.scene].asearch(scope, args.query, args.limit)

    async def save(args: _Save) -> str:
        return await ops[CHAT_SCENE].asave(scope, args.content)

    async def record(args: _Record) -> str:
        result = await client.aadd(args.messages, scene=args.scene, user_id=scope.user_id,
                                   session_id=scope.session_id, workspace_id=scope.workspace_id,
                                   branch=scope.branch, metadata={"saved_by": "mcp"}, background=background)
        return _outcome(args.scene, dict(result))

    async def forget(args: _Forget) -> str:
        return await ops[CHAT_SCENE].aforget(scope, args.memory_id)

    closed = {"openWorldHint": False}  # the tools act on this memory only
    return [
        _Tool("search_memory", "Search memory",
              "Search the user's long-term memory; returns the best matches with their ids.", _Search,
              {"readOnlyHint": True, **closed}, search),
        _Tool("save_memory", "Save a memory", SAVE_DESCRIPTION, _Save,
              {"readOnlyHint": False, "destructiveHint": rewrites, "idempotentHint": False, **closed}, save),
        _Tool("record_work", "Record finished work",
              "Record a finished piece of work (the conversation with its tool calls and results) in "
              f"{' or '.join(PRODUCTIVITY_SCENES)} memory.", _Record,
              {"readOnlyHint": False, "destructiveHint": rewrites, "idempotentHint": False, **closed}, record),
        _Tool("forget_memory", "Forget a memory",
              "Delete one of the user's memories by its id (as search_memory showed it).", _Forget,
              {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, **closed}, forget),
    ]


def _mcp() -> Any:
    try:
        from mcp import types
        from mcp.server.lowlevel import Server
        from mcp.server.lowlevel.helper_types import ReadResourceContents
    except ImportError as exc:
        raise MissingExtraError("the MCP server needs the mcp package: pip install 'hy-memory-langgraph[mcp]'") from exc
    return Server, types, ReadResourceContents


def _invalid(tool: str, exc: ValidationError) -> InvalidInputError:
    """The argument errors of a call, without echoing the values."""
    problems = "; ".join(f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
                         for error in exc.errors(include_url=False, include_input=False))
    return InvalidInputError(f"{tool} got invalid arguments: {problems}")


def build_mcp_server(client: HyMemoryClient, *, user_id: str, session_id: str | None = None,
                     workspace_id: str | None = None, branch: str | None = None, k: int = 5,
                     background: bool = True) -> Any:
    """An MCP server (the SDK's low-level ``Server``) whose tools read and write
    ``user_id``'s memory; run it with :func:`serve_stdio` or :func:`serve_http`.

    Args:
        client: The memory client (the server does not close it).
        user_id: Whose memory; fixed for the server's life.
        session_id: The session writes are recorded under.
        workspace_id: Working/coding scope of searches and writes (e.g. a repository).
        branch: Scope within ``workspace_id``.
        k: Default number of results of ``search_memory``.
        background: ``save_memory`` and ``record_work`` queue their write (pro mode:
            the tool answers without waiting for the model calls of memory); ``False``
            writes before answering. Lite mode writes at once either way.

    Raises:
        InvalidInputError: ``user_id`` is empty.
        ConfigError: The ``mcp`` package is not installed.
    """
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInputError("user_id is required: the MCP server serves one user's memory")
    server_class, types, ReadResourceContents = _mcp()
    server = server_class("hy-memory", version=__version__, instructions=_INSTRUCTIONS)
    scope = MemoryScope(user_id.strip(), session_id, workspace_id, branch)
    tools = {t.name: t for t in _tools(client, scope, k, background)}
    limits = client.config.limits

    @server.list_tools()  # type: ignore[untyped-decorator]
    async def list_tools() -> list[Any]:
        return [types.Tool(name=t.name, title=t.title, description=t.description,
                           inputSchema=t.arguments.model_json_schema(),
                           annotations=types.ToolAnnotations(title=t.title, **t.hints)) for t in tools.values()]

    @server.list_resources()  # type: ignore[untyped-decorator]
    async def list_resources() -> list[Any]:
        return [types.Resource(uri=RECENT_URI, name="recent-memories", title="Recent memories",
                               description=f"The {RECENT_COUNT} memories of this user changed last (chat, "
                                           "working and coding), newest first, as a data block.",
                               mimeType="text/plain")]

    @server.read_resource()  # type: ignore[untyped-decorator]
    async def read_resource(uri: Any) -> list[Any]:
        if str(uri) != RECENT_URI:
            raise InvalidInputError(f"unknown resource {str(uri)!r}: the server has {RECENT_URI}")
        page = await client.alist_memories(user_id.strip(), limit=RECENT_COUNT)
        text = render_recent(page["memories"]) or "No memories yet."
        return [ReadResourceContents(content=text, mime_type="text/plain")]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[Any]:
        tool = tools.get(name)
        if tool is None:
            raise InvalidInputError(f"unknown tool {name!r}: the tools are {', '.join(tools)}")
        try:
            check_nesting(limits, arguments, f"the arguments of {name}", wrapping=1)  # before recursive code
            try:
                args = tool.arguments.model_validate(arguments)
            except ValidationError as exc:
                raise _invalid(name, exc) from None
            text = await tool.run(args)
        except HyMemoryError:
            raise
        except Exception:
            logger.exception("MCP tool %s failed", name)
            raise RuntimeError(f"{name} failed with an internal error; the server's log has the details") from None
        return [types.TextContent(type="text", text=text)]

    return server


def serve_stdio(server: Any) -> None:
    """Serve ``server`` over stdin/stdout until the client goes away."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


# --------------------------------------------------------------------------- HTTP


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host == ""


def _host_header(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(host: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The ``Host`` values the HTTP server answers: the loopback names (any port) when it
    listens on a loopback address or a wildcard one, the address itself at ``port``
    otherwise, plus ``extra`` (``name``, ``name:port`` or ``name:*``; a bare name allows any
    port).

    Raises:
        ConfigError: A wildcard address (``0.0.0.0``, ``::``) without ``extra``: the names
            clients reach this machine by must be said.

    Example:
        >>> allowed_hosts("127.0.0.1", 8000)
        ['127.0.0.1:*', 'localhost:*', '[::1]:*']
        >>> allowed_hosts("10.0.0.5", 8000, ["mem.internal"])
        ['10.0.0.5:8000', 'mem.internal', 'mem.internal:*']
    """
    extra = [name.strip() for name in extra if name.strip()]  # an empty setting names none
    names: list[str] = []
    if _is_loopback(host) or _is_wildcard(host):
        names += [f"{name}:*" for name in _LOOPBACK_NAMES]
    else:
        names.append(f"{_host_header(host)}:{port}")
    if _is_wildcard(host) and not extra:
        raise ConfigError(
            f"--host {host} listens on every address, so the Host names clients use must be listed: pass "
            f"--allowed-host NAME[:PORT] (repeatable) or set {ALLOWED_HOSTS_ENV}=name1,name2 (DNS-rebinding "
            "protection answers only these)")
    for name in extra:
        names += [name] if name.rsplit("]", 1)[-1].count(":") else [name, f"{name}:*"]
    return list(dict.fromkeys(names))


def _check_token(token: str | None, host: str) -> str:
    where = "a loopback address" if _is_loopback(host) else f"{host} (reachable from other machines)"
    if token is None or not token.strip():
        raise ConfigError(
            f"serving memory over HTTP on {where} needs a bearer token: pass --token TOKEN or set "
            f"{TOKEN_ENV} (e.g. python -c \"import secrets; print(secrets.token_urlsafe(32))\"); every request "
            "must then send Authorization: Bearer TOKEN")
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN_CHARS.fullmatch(token):
        raise ConfigError(
            f"the MCP bearer token (--token / {TOKEN_ENV}) must be at least {MIN_TOKEN_CHARS} characters of "
            "letters, digits and -._~+/ (e.g. python -c \"import secrets; print(secrets.token_urlsafe(32))\")")
    return token


class _BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401
    (the token compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode("ascii")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization")
            scheme, _, presented = (given or b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(presented.strip(), self.expected):
                challenge = b'Bearer realm="hy-memory"' + (b', error="invalid_token"' if given else b"")
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"www-authenticate", challenge),
                                        (b"content-type", b"text/plain; charset=utf-8")]})
                await send({"type": "http.response.body", "body": b"a bearer token is required"})
                return
        await self.app(scope, receive, send)


class _Sessions:
    """The session manager as the ASGI endpoint of a Starlette route (an instance, not a
    function, is served as ASGI)."""

    def __init__(self, sessions: Any) -> None:
        self.sessions = sessions

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.sessions.handle_request(scope, receive, send)


@dataclass(frozen=True)
class _HttpAccess:
    """Who may use the HTTP server: the bearer token every request must send, and the
    ``Host`` values answered (:func:`http_access` checks and builds it)."""

    token: str
    hosts: tuple[str, ...]


def http_access(token: str | None, host: str, port: int, extra_hosts: Sequence[str] = ()) -> _HttpAccess:
    """The access rules of an HTTP server on ``host:port``, checked before anything listens.

    Raises:
        ConfigError: No token or a token too short (any address: a loopback port is open
            to every local user), or a wildcard ``host`` without ``extra_hosts``.
    """
    return _HttpAccess(_check_token(token, host), tuple(allowed_hosts(host, port, extra_hosts)))


def http_app(server: Any, access: _HttpAccess) -> Any:
    """The ASGI app serving ``server`` over streamable HTTP at ``/mcp``: the bearer token
    required, ``Host`` and ``Origin`` checked against ``access.hosts``."""
    _mcp()
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=list(access.hosts),
        allowed_origins=[f"{scheme}://{name}" for name in access.hosts for scheme in ("http", "https")])
    sessions = StreamableHTTPSessionManager(app=server, security_settings=security)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with sessions.run():
            yield

    app = Starlette(routes=[Route(MCP_PATH, endpoint=_Sessions(sessions), methods=["GET", "POST", "DELETE"])],
                    lifespan=lifespan)
    return _BearerAuth(app, access.token)


def serve_http(server: Any, access: _HttpAccess, *, host: str, port: int) -> None:
    """Serve :func:`http_app` with uvicorn on ``host:port`` until interrupted."""
    import uvicorn

    uvicorn.run(http_app(server, access), host=host.strip("[]"), port=port, log_level="warning")
