"""``hy-memory mcp``: serve one user's memory over the Model Context Protocol."""

from __future__ import annotations

import argparse

from hy_memory_langgraph.cli.common import CliError, user_id_of
from hy_memory_langgraph.cli.session import open_client
from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.integrations.mcp_server import build_mcp_server

__all__ = ["serve"]


def serve(args: argparse.Namespace) -> int:
    """Run the MCP server until its client goes away (stdio) or it is interrupted (HTTP)."""
    user_id = user_id_of(args)
    with open_client(args, writes=True) as client:
        try:
            server = build_mcp_server(client, user_id=user_id, session_id=args.session_id,
                                      workspace_id=args.workspace_id, branch=args.branch,
                                      host=args.host, port=args.port)
        except ConfigError as exc:
            raise CliError("CONFIG_ERROR", str(exc)) from exc
        server.run("streamable-http" if args.http else "stdio")
    return 0
