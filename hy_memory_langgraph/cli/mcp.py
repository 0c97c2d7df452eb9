"""``hy-memory mcp``: serve one user's memory over the Model Context Protocol."""

from __future__ import annotations

import argparse
import os

from hy_memory_langgraph.cli.common import CliError, user_id_of
from hy_memory_langgraph.cli.session import open_client
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.integrations.mcp_server import (
    ALLOWED_HOSTS_ENV,
    TOKEN_ENV,
    build_mcp_server,
    http_access,
    serve_http,
    serve_stdio,
)


def serve(args: argparse.Namespace) -> int:
    """Run the MCP server until its client goes away (stdio) or it is interrupted (HTTP).

    Over HTTP the token (``--token``, else ``$HY_MEMORY_MCP_TOKEN``) and the allowed
    hosts are checked before the client opens and anything listens.
    """
    user_id = user_id_of(args)
    token = args.token or os.environ.get(TOKEN_ENV)
    extra_hosts = args.allowed_hosts or os.environ.get(ALLOWED_HOSTS_ENV, "").split(",")
    try:
        access = http_access(token, args.host, args.port, extra_hosts) if args.http else None
        with open_client(args, writes=True) as client:
            server = build_mcp_server(client, user_id=user_id, session_id=args.session_id,
                                      workspace_id=args.workspace_id, branch=args.branch)
            if access is not None:
                serve_http(server, access, host=args.host, port=args.port)
            else:
                serve_stdio(server)
    except ConfigError as exc:
        raise CliError("CONFIG_ERROR", str(exc)) from exc
    return 0
