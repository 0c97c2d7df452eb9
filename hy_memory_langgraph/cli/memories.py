"""``hy-memory add | search | list | get | update | history | delete | log | stats``.

Handlers of the everyday memory commands (their arguments are in
:mod:`~hy_memory_langgraph.cli.parsers`). Each returns what ``--json`` prints as
``data``; without ``--json`` it prints readable lines itself. Answers about one user's
memory name that user.
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
    dump_json,
    print_json,
    user_id_of,
)
from hy_memory_langgraph.cli.progress import Progress
from hy_memory_langgraph.cli.session import checked_json, open_client, open_reader
from hy_memory_langgraph.errors import ConflictError
from hy_memory_langgraph.scenes import CHAT_PIPELINE, CHAT_SCENE

_WRITE_KEYS: Final = ("messages", "user_id", "scene", "session_id", "agent_id", "workspace_id",
                      "branch", "metadata", "memory_at")


# -- input of add -------------------------------------------------------------------------
def _read_text(source: str) -> str:
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError("INVALID_INPUT", f"cannot read {source}: {exc}") from exc


def _parse(text: str, source: str) -> list[Any]:
    """Values of a JSON document, or of each line of a JSONL document."""
    try:
        return [json.loads(checked_json(text, source))]
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
    """One write dict per conversation in ``values`` (see ``hy-memory add --help``)."""
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


def _summary(result: dict[str, Any], user_id: str) -> str:
    if result["scene"] == CHAT_PIPELINE:
        ops = " ".join(f"{k}={v}" for k, v in result["ops_summary"].items() if v)
        return f"{user_id}  chat  {ops or 'nothing new'}  {' '.join(result['memory_ids'])}".rstrip()
    facts = " ".join(f"{k}={v}" for k, v in result["fact_ops_summary"].items() if v)
    exps = " ".join(f"{k}={v}" for k, v in result["ops_summary"].items() if v)
    return (f"{user_id}  productivity  facts: {facts or '-'}  experiences: {exps or '-'}  "
            f"{' '.join(result['fact_ids'] + result['experience_ids'])}").rstrip()


def add(args: argparse.Namespace) -> Any:
    if (args.source is None) == (args.text is None):
        raise CliError("INVALID_INPUT", "pass a FILE (or - for stdin) or --text, not both or neither")
    if args.text is not None:
        writes = [{"messages": args.text}]
    else:
        writes = _writes(_parse(_read_text(args.source), args.source), args.source)
    fallback_user = None if all(w.get("user_id") for w in writes) else user_id_of(args)
    defaults = {"user_id": fallback_user, "scene": args.scene, "session_id": args.session_id,
                "workspace_id": args.workspace_id, "branch": args.branch, "memory_at": args.memory_at}
    results = []
    bar = Progress("writes", total=len(writes), enabled=None if len(writes) > 1 else False)
    with open_client(args, writes=True) as client:
        for done, write in enumerate(writes, start=1):
            call = {**defaults, **write}
            result = client.add(**call)
            results.append({**result, "user_id": call["user_id"]})
            bar.update(done)
            if not args.json:
                print(_summary(result, call["user_id"]), flush=True)
    bar.close()
    return {"writes": len(results), "results": results}


# -- search / list / get / update / history -----------------------------------------------
def _print_search(result: dict[str, Any], user_id: str) -> None:
    if not (result.get("memories") or result.get("facts") or result.get("experiences")):
        print(f"no memories of {user_id} found")
        return
    print(f"memories of {user_id}:")
    if result["scene"] == CHAT_PIPELINE:
        for m in result["memories"]:
            print(f"{m['score']:.3f}  {m['memory_at'][:10]}  {m['content']}  [{m['memory_id']}]")
        return
    for fact in result["facts"]:
        print(f"fact  {fact.get('score') or 0:.3f}  {fact['memory_at'][:10]}  "
              f"{fact['subject']}: {fact['statement']}  [{fact['memory_id']}]")
    for exp in result["experiences"]:
        print(f"experience  {exp.get('score') or 0:.3f}  {exp['task']}  [{exp['memory_id']}]")
    if result.get("chain_block"):
        print("\n" + result["chain_block"])


def search(args: argparse.Namespace) -> Any:
    if not args.query.strip():
        raise CliError("INVALID_INPUT", "QUERY is empty: say what to look for")
    user_id = user_id_of(args)
    with open_client(args, writes=False) as client:
        result = client.search(args.query, scene=args.scene, user_ids=[user_id],
                               search_mode="agentic" if args.agentic else "default",
                               workspace_id=args.workspace_id, branch=args.branch, limit=args.limit,
                               min_score=args.min_score, created_after=args.after,
                               created_before=args.before)
    if not args.json:
        _print_search(result, user_id)
    return {"user_id": user_id, **result}


def _text_of(memory: dict[str, Any]) -> str:
    if memory["scene"] == CHAT_SCENE:
        return str(memory["content"])
    if "task" in memory:
        return f"experience: {memory['task']}"
    return f"fact: {memory.get('subject', '')}: {memory.get('statement', '')}"


def list_memories(args: argparse.Namespace) -> Any:
    user_id = user_id_of(args)
    offset = args.offset if args.page is None else (args.page - 1) * args.limit
    with open_reader(args) as reader:
        page = reader.list_memories(user_id, scene=args.scene, limit=args.limit, offset=offset)
    if not args.json:
        shown = len(page["memories"])
        if not shown:
            print(f"no memories of {user_id}" + (f" after the first {offset}" if offset else ""))
        else:
            print(f"memories of {user_id}, newest first: {offset + 1}-{offset + shown}"
                  + (" (more: --offset " + str(offset + shown) + ")" if page["has_more"] else ""))
        for m in page["memories"]:
            print(f"{m['updated_at'][:19]}  {m['scene']:<8} {_text_of(m)}  [{m['memory_id']}]")
    return page


def _not_found(what: str, args: argparse.Namespace) -> CliError:
    """``NOT_FOUND`` for an id, naming the user when ``-u`` asked for theirs only."""
    owner = f" of {args.user_id}" if getattr(args, "user_id", None) else ""
    return CliError("NOT_FOUND", f"no {what}{owner} in this data dir", EXIT_INTERNAL)


def get(args: argparse.Namespace) -> Any:
    with open_reader(args) as reader:
        memory = reader.get(args.memory_id, user_id=args.user_id)
    if memory is None:
        raise _not_found(f"memory {args.memory_id!r}", args)
    if not args.json:
        print_json(memory, compact=False)
    return memory


def update(args: argparse.Namespace) -> Any:
    if not args.text.strip():
        raise CliError("INVALID_INPUT", "TEXT is empty: give the memory's new text")
    with open_client(args, writes=False) as client:
        if client.get(args.memory_id, user_id=args.user_id) is None:
            raise _not_found(f"memory {args.memory_id!r}", args)
        try:
            memory = client.update(args.memory_id, args.text, memory_at=args.memory_at,
                                   expected_version=args.expected_version, user_id=args.user_id)
        except ConflictError as exc:
            raise CliError("CONFLICT", str(exc), EXIT_INTERNAL) from exc
    if not args.json:
        print(f"updated {memory['memory_id']} of {memory['user_id']} to version {memory['version']}: "
              f"{memory['content']}")
    return memory


def log(args: argparse.Namespace) -> Any:
    with open_reader(args) as reader:
        records = reader.pipeline_log(args.request_id)
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


def history(args: argparse.Namespace) -> Any:
    with open_reader(args) as reader:
        events = reader.history(args.memory_id, user_id=args.user_id)
    if not events:
        raise _not_found(f"history for {args.memory_id!r}", args)
    if not args.json:
        for e in events:
            content = e.get("content") or ""
            print(f"{e['at'][:19]}  {e['op']:<10}  v{e.get('version') or '-'}  {content}  [{e['memory_id']}]")
    return events


# -- delete / stats -----------------------------------------------------------------------
def delete(args: argparse.Namespace) -> Any:
    if args.all == bool(args.memory_ids):
        raise CliError("INVALID_INPUT", "pass memory ids, or --all with --user-id (every memory of that user)")
    if args.all and not args.user_id:
        raise CliError("INVALID_INPUT", "--all needs an explicit --user-id (no default for deleting everything)")
    with open_client(args, writes=False) as client:
        if args.all:
            data: dict[str, Any] = {"user_id": args.user_id, "deleted": client.delete_all(args.user_id)}
        else:
            outcome = {memory_id: client.delete(memory_id, user_id=args.user_id) for memory_id in args.memory_ids}
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
        raise _not_found(f"memory {', '.join(data['not_found'])}", args)
    return data


def stats(args: argparse.Namespace) -> Any:
    with open_reader(args) as reader:
        summary = reader.stats()
    if not args.json:
        print(f"data dir: {summary['data_dir']}")
        print(f"users with memories: {summary['users']}   history events: {summary['history_events']}   "
              f"chain threads: {summary['chain_threads']}   workflow users: {summary['workflow_users']}")
        for scene, info in summary["scenes"].items():
            kinds = ", ".join(f"{kind} " + " ".join(f"{status}={n}" for status, n in counts.items())
                              for kind, counts in info["kinds"].items())
            print(f"{scene:<8} {kinds or 'empty'}")
        print(f"files: {sum(summary['files'].values()) / 1e6:.2f} MB in {len(summary['files'])} files")
    return summary
