"""``hy-memory add | search | get | history | delete | stats``: everyday memory commands.

``add`` reads conversations from a JSON or JSONL file, stdin (``-``) or ``--text``:

* a JSON string, or a message (``{"role", "content"}``), or a list of messages: one write;
* an object ``{"messages": [...], "user_id"?, "scene"?, "session_id"?, "agent_id"?,
  "workspace_id"?, "branch"?, "metadata"?, "memory_at"?}``: one write (its fields beat
  the command-line options);
* a list of such objects, or JSONL with one of the above per line: one write each.

Messages are in any format ``HyMemoryClient.add`` takes (OpenAI, Anthropic, LangChain dicts).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from hy_memory_langgraph.cli.common import (
    EXIT_INTERNAL,
    CliError,
    add_mode_option,
    add_user_option,
    dump_json,
    make_client,
    print_json,
    user_id_of,
)
from hy_memory_langgraph.cli.progress import Progress
from hy_memory_langgraph.scenes import SCENES

__all__ = ["register"]

_WRITE_KEYS: Final = ("messages", "user_id", "scene", "session_id", "agent_id", "workspace_id",
                      "branch", "metadata", "memory_at")


# -- input ------------------------------------------------------------------------------
def _read_text(source: str) -> str:
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError("INVALID_INPUT", f"cannot read {source}: {exc}") from exc


def _parse(text: str, source: str) -> list[Any]:
    """Values of a JSON document, or of each line of a JSONL document."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        pass
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise CliError("INVALID_JSON", f"{source} line {number} is not JSON: {exc.msg}") from exc
    if not values:
        raise CliError("INVALID_INPUT", f"{source} is empty: expected JSON or JSONL conversations")
    return values


def _is_write(value: Any) -> bool:
    return isinstance(value, dict) and "messages" in value


def _writes(values: list[Any], source: str) -> list[dict[str, Any]]:
    """One write dict per conversation in ``values`` (see the module docstring)."""
    writes: list[dict[str, Any]] = []
    for value in values:
        if isinstance(value, list) and value and all(_is_write(v) for v in value):
            writes.extend(value)
        elif _is_write(value):
            writes.append(value)
        elif isinstance(value, (str, list)) or (isinstance(value, dict) and "role" in value):
            writes.append({"messages": value if isinstance(value, (str, list)) else [value]})
        else:
            raise CliError("INVALID_INPUT", f"{source}: expected a conversation (a string, a message, "
                                            "a list of messages or an object with 'messages')")
    for write in writes:
        unknown = sorted(set(write) - set(_WRITE_KEYS))
        if unknown:
            raise CliError("INVALID_INPUT", f"{source}: unknown field(s) {', '.join(unknown)}; "
                                            f"allowed: {', '.join(_WRITE_KEYS)}")
    return writes


def _summary(result: dict[str, Any]) -> str:
    if result["scene"] == "chat":
        ops = " ".join(f"{k}={v}" for k, v in result["ops_summary"].items() if v)
        return f"chat  {ops or 'nothing new'}  {' '.join(result['memory_ids'])}".rstrip()
    facts = " ".join(f"{k}={v}" for k, v in result["fact_ops_summary"].items() if v)
    exps = " ".join(f"{k}={v}" for k, v in result["ops_summary"].items() if v)
    return (f"productivity  facts: {facts or '-'}  experiences: {exps or '-'}  "
            f"{' '.join(result['fact_ids'] + result['experience_ids'])}").rstrip()


def _add(args: argparse.Namespace) -> Any:
    if (args.source is None) == (args.text is None):
        raise CliError("INVALID_INPUT", "pass a FILE (or - for stdin) or --text, not both or neither")
    if args.text is not None:
        writes = [{"messages": args.text}]
    else:
        writes = _writes(_parse(_read_text(args.source), args.source), args.source)
    defaults = {"user_id": user_id_of(args), "scene": args.scene, "session_id": args.session_id,
                "workspace_id": args.workspace_id, "branch": args.branch, "memory_at": args.memory_at}
    results = []
    bar = Progress("writes", total=len(writes), enabled=None if len(writes) > 1 else False)
    with make_client(args) as client:
        for done, write in enumerate(writes, start=1):
            result = client.add(**{**defaults, **write})
            results.append(result)
            bar.update(done)
            if not args.json:
                print(_summary(result), flush=True)
    bar.close()
    return {"writes": len(results), "results": results}


# -- search / get / history --------------------------------------------------------------
def _print_search(result: dict[str, Any]) -> None:
    if result["scene"] == "chat":
        if not result["memories"]:
            print("no memories found")
        for m in result["memories"]:
            print(f"{m['score']:.3f}  {m['memory_at'][:10]}  {m['content']}  [{m['memory_id']}]")
        return
    for fact in result["facts"]:
        print(f"fact  {fact.get('score') or 0:.3f}  {fact['memory_at'][:10]}  "
              f"{fact['subject']}: {fact['statement']}  [{fact['memory_id']}]")
    for exp in result["experiences"]:
        print(f"experience  {exp.get('score') or 0:.3f}  {exp['task']}  [{exp['memory_id']}]")
    if not result["facts"] and not result["experiences"]:
        print("no memories found")
    if result.get("chain_block"):
        print("\n" + result["chain_block"])


def _search(args: argparse.Namespace) -> Any:
    with make_client(args) as client:
        result = client.search(args.query, scene=args.scene, user_ids=[user_id_of(args)],
                               search_mode="agentic" if args.agentic else "default",
                               workspace_id=args.workspace_id, branch=args.branch, limit=args.limit,
                               min_score=args.min_score, created_after=args.after,
                               created_before=args.before)
    if not args.json:
        _print_search(result)
    return result


def _get(args: argparse.Namespace) -> Any:
    with make_client(args) as client:
        memory = client.get(args.memory_id)
    if memory is None:
        raise CliError("NOT_FOUND", f"no memory {args.memory_id!r} in this data dir", EXIT_INTERNAL)
    if not args.json:
        print_json(memory, compact=False)
    return memory


def _log(args: argparse.Namespace) -> Any:
    with make_client(args) as client:
        records = client.pipeline_log(args.request_id)
    if not records:
        raise CliError("NOT_FOUND", f"no pipeline log for request {args.request_id!r} in this "
                       "data dir (unknown, or older than MEMORY_PIPELINE_LOG_DAYS)", EXIT_INTERNAL)
    if not args.json:
        for r in records:
            llm = f"  llm={r['llm_calls']} ({r.get('prompt_tokens', 0)}+{r.get('completion_tokens', 0)} tok)" \
                if r.get("llm_calls") else ""
            extra = {k: r[k] for k in ("decision", "decided", "applied", "fallback", "error") if k in r}
            print(f"{r['seq']:>2}  {r['stage']:<22} {r['duration_ms']:>9.1f} ms{llm}"
                  + (f"  {dump_json(extra)}" if extra else ""))
    return records


def _history(args: argparse.Namespace) -> Any:
    with make_client(args) as client:
        events = client.history(args.memory_id)
    if not events:
        raise CliError("NOT_FOUND", f"no history for {args.memory_id!r} in this data dir", EXIT_INTERNAL)
    if not args.json:
        for e in events:
            content = e.get("content") or ""
            print(f"{e['at'][:19]}  {e['op']:<10}  v{e.get('version') or '-'}  {content}  [{e['memory_id']}]")
    return events


def _delete(args: argparse.Namespace) -> Any:
    if args.all == bool(args.memory_ids):
        raise CliError("INVALID_INPUT", "pass memory ids, or --all with --user-id (every memory of that user)")
    if args.all and not args.user_id:
        raise CliError("INVALID_INPUT", "--all needs an explicit --user-id (no default for deleting everything)")
    with make_client(args) as client:
        if args.all:
            data: dict[str, Any] = {"user_id": args.user_id, "deleted": client.delete_all(args.user_id)}
        else:
            outcome = {memory_id: client.delete(memory_id) for memory_id in args.memory_ids}
            data = {"deleted": [i for i, ok in outcome.items() if ok],
                    "not_found": [i for i, ok in outcome.items() if not ok]}
    if not args.json:
        if args.all:
            print(f"deleted {data['deleted']} memories of {args.user_id}")
        else:
            for memory_id in data["deleted"]:
                print(f"deleted {memory_id}")
            for memory_id in data["not_found"]:
                print(f"not found {memory_id}", file=sys.stderr)
    if not args.all and data["not_found"] and not data["deleted"]:
        raise CliError("NOT_FOUND", f"no memory {', '.join(data['not_found'])} in this data dir", EXIT_INTERNAL)
    return data


def _stats(args: argparse.Namespace) -> Any:
    with make_client(args) as client:
        stats = client.stats()
    if not args.json:
        print(f"data dir: {stats['data_dir']}")
        print(f"users with memories: {stats['users']}   history events: {stats['history_events']}   "
              f"chain threads: {stats['chain_threads']}   workflow users: {stats['workflow_users']}")
        for scene, info in stats["scenes"].items():
            kinds = ", ".join(f"{kind} " + " ".join(f"{status}={n}" for status, n in counts.items())
                              for kind, counts in info["kinds"].items())
            print(f"{scene:<8} {kinds or 'empty'}")
        print(f"files: {sum(stats['files'].values()) / 1e6:.2f} MB in {len(stats['files'])} files")
    return stats


# -- parsers ----------------------------------------------------------------------------
def _scope_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scene", choices=SCENES, help="chat, working or coding (default: routing decides)")
    parser.add_argument("--workspace-id", help="working/coding scope, e.g. a repository URL")
    parser.add_argument("--branch", help="working/coding scope inside the workspace")


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """Add the memory subcommands to ``sub`` (``parent`` carries the shared options)."""
    add = sub.add_parser("add", parents=[parent], help="remember conversations (JSON / JSONL file, stdin or --text)",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add.add_argument("source", nargs="?", help="a JSON or JSONL file, or - for stdin")
    add.add_argument("--text", help="remember one user message")
    add_user_option(add, "whose memories (a field in the file wins)")
    _scope_options(add)
    add.add_argument("--session-id", help="the conversation this belongs to")
    add.add_argument("--memory-at", help="when it was said (ISO 8601; default now)")
    add_mode_option(add)
    add.set_defaults(handler=_add)

    search = sub.add_parser("search", parents=[parent], help="find a user's memories")
    search.add_argument("query", help="what to look for, in any language")
    add_user_option(search)
    _scope_options(search)
    search.add_argument("--limit", "-k", type=int, default=5, help="results (per layer for working/coding)")
    search.add_argument("--after", help="only memories from this date/time on (ISO 8601)")
    search.add_argument("--before", help="only memories up to this date/time (ISO 8601)")
    search.add_argument("--min-score", type=float, help="drop hits scoring below this")
    search.add_argument("--agentic", action="store_true", help="let the model rewrite the query (pro mode)")
    add_mode_option(search)
    search.set_defaults(handler=_search)

    get = sub.add_parser("get", parents=[parent], help="show one memory by id")
    get.add_argument("memory_id")
    get.set_defaults(handler=_get)

    history = sub.add_parser("history", parents=[parent], help="every version of one memory")
    history.add_argument("memory_id")
    history.set_defaults(handler=_history)

    delete = sub.add_parser("delete", parents=[parent], help="delete memories by id, or all of a user")
    delete.add_argument("memory_ids", nargs="*", metavar="MEMORY_ID")
    delete.add_argument("--all", action="store_true", help="delete every memory of --user-id")
    add_user_option(delete, "with --all: the user whose memories are deleted")
    delete.set_defaults(handler=_delete)

    log = sub.add_parser("log", parents=[parent],
                         help="the stages one add or search went through (its request_id)")
    log.add_argument("request_id")
    log.set_defaults(handler=_log)

    stats = sub.add_parser("stats", parents=[parent], help="what the data dir holds")
    stats.set_defaults(handler=_stats)
