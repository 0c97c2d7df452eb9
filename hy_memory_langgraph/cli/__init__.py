"""The ``hy-memory`` command.

``hy-memory demo`` writes a few memories into a local store (lite mode, embedded
embeddings, no API key) and searches them, printing what it finds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hy_memory_langgraph.cli.workflow import (
    CliError,
    load_input,
    run_operation,
    service_from_env,
)
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.models import E5Embeddings

__all__ = ["main"]

_DEMO_TURNS = [
    ("2024-05-01T09:00:00Z", "I just adopted a grey cat and named her Miso."),
    ("2024-05-03T18:30:00Z", "I'm training for the Berlin marathon in September."),
    ("2024-05-10T12:00:00Z", "我最喜欢的茶是龙井，每天早上都喝。"),
    ("2024-06-02T08:15:00Z", "We moved to Lisbon last week, the new flat is near the river."),
]
_DEMO_QUERIES = [
    "What is the name of my pet?",
    "我喜欢喝什么茶？",
    "Which city do I live in now?",
    "running race plans",
]


def _demo(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="hy-memory-demo-"))
    print(f"data dir: {data_dir}")
    with HyMemoryClient(mode="lite", data_dir=data_dir, embeddings=E5Embeddings()) as client:
        for at, text in _DEMO_TURNS:
            result = client.add([{"role": "user", "content": text}], user_id="demo_user", memory_at=at)
            print(f"add  [{result['scene']}] {result['ops_summary']}  {text}")
        for query in _DEMO_QUERIES:
            found = client.search(query, user_ids=["demo_user"], limit=2)
            print(f"\nsearch: {query}  ({found['elapsed_ms']:.1f} ms)")
            for memory in found["memories"]:
                print(f"  {memory['score']:.3f}  {memory['memory_at'][:10]}  {memory['content']}")
        print(f"\nLLM calls: {client.llm_usage.total_calls} (lite mode)")
    return 0


def _workflow_run(args: argparse.Namespace) -> int:
    """``workflow run OP``: always prints one JSON envelope (see :mod:`.workflow`)."""

    user_id = args.user_id or os.environ.get("HY_MEMORY_USER_ID") or "default"
    try:
        payload = load_input(args.input_json, args.input_file)
    except CliError as exc:
        envelope, code = {"ok": False, "error": {"code": exc.code, "message": exc.message}}, exc.exit_code
    else:
        envelope, code = run_operation(args.op, payload, user_id=user_id,
                                       service_factory=lambda: service_from_env(args.mode))
    utf8 = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").startswith("utf8")
    print(json.dumps(envelope, ensure_ascii=not utf8, indent=None if args.json else 2))
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hy-memory", description="Long-term memory for agents.")
    parser.add_argument("--json", action="store_true", help="print JSON envelopes")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="write and search a few memories locally (no API key)")
    demo.add_argument("--data-dir", help="where to keep the files (default: a new temp dir)")
    demo.set_defaults(handler=_demo)
    workflow = sub.add_parser("workflow", help="workflow memory operations, JSON in / JSON out")
    workflow_sub = workflow.add_subparsers(dest="workflow_command", required=True)
    run = workflow_sub.add_parser("run", help="run an operation, e.g. workflow.memoryPrompt")
    run.add_argument("op", help="workflow.memoryPrompt | workflow.memoryExtract")
    run.add_argument("--input-json", help="the operation input as a JSON object")
    run.add_argument("--input", dest="input_file", help="a UTF-8 JSON file with the input ('-' = stdin)")
    run.add_argument("--user-id", help="the user (default: $HY_MEMORY_USER_ID, else 'default')")
    run.add_argument("--mode", choices=["lite", "pro"], help="default: pro when a chat model is configured")
    run.set_defaults(handler=_workflow_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hy-memory`` command.

    The command owns its process, so it asks OpenMP (FAISS, the e5 engine) for
    passive waits before either runtime loads; a value in the environment wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    args = _parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except Exception as exc:  # noqa: BLE001 - the CLI reports every failure as an envelope
        if args.json:
            print(json.dumps({"ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}))
        else:
            print(f"hy-memory: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
