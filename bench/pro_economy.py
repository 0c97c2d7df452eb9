"""Pro-mode economy side by side: this package and hy-memory against one OpenAI stub.

Both systems run in pro mode, each in its own process, against the same loopback
OpenAI-compatible stub (chat completions and embeddings, ``tests/openai_stub.py``),
on the same writes:

* ``chat``: sessions of one LoCoMo conversation (CC BY-NC 4.0, Maharana et al. 2024),
  one ``add`` per session;
* ``working``: τ-bench airline dialogues that call tools (MIT), one
  ``add(scene="working")`` per dialogue.

The stub answers every stage of each system in that system's own schema, with the
same content for both: a chat write yields the session's first three user messages
as facts and every reconcile adds them (so the reconcile stage is reached and its
prompt counted); a working write yields one experience (the dialogue's first request)
and one fact, experience reconcile adds, fact reconcile supersedes nothing. A prompt
the responder cannot place is answered ``{}`` and counted under ``unknown``.

Printed per system and scene: LLM calls and prompt tokens per add (the stub's count:
words, punctuation marks and CJK characters, as ``usage`` reports it; and cl100k when
``bpe-openai`` is installed), calls per stage, embedding requests and texts per add,
and add wall time p50 minus the time the stub spent answering. The peer runs from
another interpreter (``--peer-python``, default ``$HY_PEER_PYTHON``) that has
``hy-memory`` installed (``python -m venv P && P/bin/pip install hy-memory==2.0.6``);
without one, only this package is measured and the run says so.

Usage::

    python -m bench.pro_economy [--chat-sessions N] [--conversation K] [--working N]
                                [--working-skip N] [--peer-python PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common.peers import ROOT, add_peer_arguments, run_child

_FENCE = "```json\n{}\n```"


# ---------------------------------------------------------------- the writes


def _chat_items(sessions: int, conversation: int = 0) -> list[dict[str, Any]]:
    from bench.common.locomo import load_locomo
    from bench.common.paths import LOCOMO_PATH

    conv = load_locomo(LOCOMO_PATH)[conversation]
    by_session: dict[int, list[Any]] = defaultdict(list)
    for turn in conv.turns:
        by_session[turn.session].append(turn)
    items = []
    for number in sorted(by_session)[:sessions]:
        turns = by_session[number]
        msgs = [{"role": "user" if t.speaker == conv.speaker_a else "assistant",
                 "content": t.message(captions=False)} for t in turns]
        facts = [m["content"][:120] for m in msgs if m["role"] == "user"][:3]
        date = turns[0].session_date
        items.append({"scene": "chat", "messages": msgs, "user_id": "u", "session_id": f"s{number}",
                      "memory_at": date.isoformat() if date else None, "facts": facts})
    return items


def _working_items(limit: int, skip: int = 0) -> list[dict[str, Any]]:
    from bench.common.paths import TAU_PATH

    items = []
    for row in json.loads(TAU_PATH.read_text(encoding="utf-8")):
        msgs = [dict(m) for m in row["traj"] if m.get("role") != "system"]
        if not any(m.get("role") == "tool" for m in msgs):
            continue
        if skip:
            skip -= 1
            continue
        first = next((m["content"] for m in msgs if m.get("role") == "user"), "")
        items.append({"scene": "working", "messages": msgs, "user_id": row["info"]["task"]["user_id"],
                      "session_id": f"task{row['task_id']}", "memory_at": None,
                      "task": " ".join(str(first).split())[:160]})
        if len(items) == limit:
            break
    return items


# ---------------------------------------------------------------- the stub's answers


#: (stage, where to look, phrases that must all be there), tried in order: each system's
#: stages told apart by the output schema (or the heading) its prompt asks for.
_STAGE_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("peer.chat_extract", "prompt", ('"intentions"', '"memory"')),
    ("peer.chat_queries", "prompt", ("search query generator",)),
    ("peer.chat_reconcile", "prompt", ("memory management system", '"op"')),
    ("peer.experience_reconcile", "prompt", ('"draft_idx"', '"action"')),
    ("peer.fact_reconcile", "prompt", ('"supersedes"',)),
    ("peer.working_extract", "prompt", ("EXPERIENCE FIELDS",)),
    ("ours.working_extract", "system", ('"experiences"',)),
    ("ours.experience_reconcile", "system", ('"operations"', '"draft"')),
    ("ours.chat_reconcile", "system", ('"operations"', '"fact"')),
    ("ours.fact_reconcile", "system", ('"supersede"',)),
    ("ours.chat_extract", "system", ('"facts"',)),
)


def _stage(system: str, prompt: str) -> str:
    """Which stage of which system a request is (``unknown`` when no rule fits)."""
    texts = {"system": system, "prompt": prompt}
    for stage, where, phrases in _STAGE_RULES:
        if all(phrase in texts[where] for phrase in phrases):
            return stage
    return "unknown"


def _answer(stage: str, item: dict[str, Any], prompt: str) -> str:
    facts = item.get("facts") or []
    task = item.get("task") or "help a customer with an airline reservation"
    experience = {"task": task, "search_keys": [" ".join(task.split()[:6])],
                  "solution": "Look up the user and the reservation, check the policy, confirm with the "
                              "customer, then call the update tool once.",
                  "confidence": 0.6, "files": []}
    fact = {"subject": "airline reservation", "statement": f"The agent handled: {task}",
            "files": [], "details": "see trace"}
    answers: dict[str, Any] = {
        "ours.chat_extract": {"facts": [{"content": f, "subject": "user", "owner": "user"} for f in facts]},
        "ours.chat_reconcile": {"operations": [{"fact": f"n{i}", "op": "ADD", "target": None}
                                               for i in range(len(facts)) if f'"id": "n{i}"' in prompt]},
        "ours.working_extract": {"experiences": [{**experience, "boundary_envs": ["airline tools API"]}],
                                 "fact": fact},
        "ours.experience_reconcile": {"operations": [{"draft": "d0", "op": "ADD"}]},
        "ours.fact_reconcile": {"supersede": [], "reason": "different requests"},
        "peer.chat_queries": [f[:40] for f in facts],
        "peer.chat_reconcile": [{"op": "ADD", "content": f, "owner": "user", "tags": ["chat"]} for f in facts],
        "peer.working_extract": {"experiences": [{**experience, "boundary_envs": "airline tools API"}],
                                 "fact": fact},
        "peer.experience_reconcile": {"ops": [{"draft_idx": 0, "action": "ADD"}]},
        "peer.fact_reconcile": {"ops": []},
    }
    if stage == "peer.chat_extract":
        memory = [{"content": f, "tags": ["chat"], "owner": "user"} for f in facts]
        return _FENCE.format(json.dumps({"memory": memory, "intentions": [], "basic_info": {}}))
    return json.dumps(answers.get(stage, {}))


class _Ledger:
    """What the stub saw, attributed to the write the child announced last."""

    def __init__(self, items: list[dict[str, Any]], marker: Path) -> None:
        self.items, self.marker = items, marker
        self.rows: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def current(self) -> int:
        try:
            return int(self.marker.read_text() or -1)
        except (OSError, ValueError):
            return -1

    def respond(self, body: dict[str, Any]) -> str:
        started = time.perf_counter()
        messages = body.get("messages") or []
        texts = [m.get("content") if isinstance(m.get("content"), str) else "" for m in messages]
        system = texts[0] if messages and messages[0].get("role") == "system" else ""
        prompt = "\n".join(texts)
        index = self.current()
        item = self.items[index] if 0 <= index < len(self.items) else {}
        stage = _stage(system, prompt)
        reply = _answer(stage, item, prompt)
        with self.lock:
            self.rows.append({"index": index, "stage": stage, "text": prompt,
                              "seconds": time.perf_counter() - started})
        return reply


# ---------------------------------------------------------------- the children


def _child_ours(job: dict[str, Any]) -> list[float]:
    from hy_memory_langgraph.client import HyMemoryClient

    client = HyMemoryClient(mode="pro", data_dir=job["data_dir"])
    return _drive(job, lambda item, when: client.add(
        item["messages"], user_id=item["user_id"], session_id=item["session_id"],
        memory_at=when, **({"scene": "working"} if item["scene"] == "working" else {})), client.close)


def _child_peer(job: dict[str, Any]) -> list[float]:
    from hy_memory import HyMemoryClient  # type: ignore[import-not-found]

    client = HyMemoryClient(mode="pro")
    return _drive(job, lambda item, when: client.add(
        item["messages"], user_id=item["user_id"], session_id=item["session_id"],
        memory_at=when, **({"scene": "working"} if item["scene"] == "working" else {})),
        getattr(client, "close", lambda: None))


def _drive(job: dict[str, Any], add: Any, close: Any) -> list[float]:
    from datetime import datetime

    marker = Path(job["marker"])
    walls = []
    for index, item in enumerate(job["items"]):
        marker.write_text(str(index))
        when = datetime.fromisoformat(item["memory_at"]) if item.get("memory_at") else None
        started = time.perf_counter()
        add(item, when)
        walls.append(time.perf_counter() - started)
    marker.write_text(str(len(job["items"])))
    close()
    return walls


def _child_main(system: str, job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    walls = (_child_ours if system == "ours" else _child_peer)(job)
    Path(job["out"]).write_text(json.dumps(walls))
    return 0


# ---------------------------------------------------------------- the parent


def _token_counters() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from openai_stub import count_tokens  # the count the stub reports as usage

    counters: dict[str, Any] = {"tokens": count_tokens}
    try:
        import bpe_openai

        encoding = bpe_openai.get_encoding("cl100k_base")
        counters["cl100k"] = lambda text: len(encoding.encode(text))
    except ImportError:
        pass
    return counters


def _run_system(system: str, python: str, items: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from openai_stub import OpenAIStub

    marker = workdir / f"{system}.current"
    marker.write_text("-1")
    ledger = _Ledger(items, marker)
    with OpenAIStub(responder=ledger.respond, embedding_dims=64, tagger=ledger.current) as stub:
        data_dir = workdir / f"{system}-data"
        job = {"items": items, "marker": str(marker), "data_dir": str(data_dir),
               "out": str(workdir / f"{system}.walls.json")}
        env = {**stub.env(), "MEMORY_LLM_API_KEY": "stub", "MEMORY_LLM_BASE_URL": stub.base_url,
               "MEMORY_EMBEDDER_API_KEY": "stub", "MEMORY_EMBEDDER_BASE_URL": stub.base_url,
               "MEMORY_EMBEDDING_DIMS": "64", "MEMORY_DATA_DIR": str(data_dir), "HY_MEMORY_DATA_DIR": str(data_dir)}
        walls = run_child("bench.pro_economy", system, python, job, workdir, env)
        embeddings = [r for r in stub.requests if r.path.endswith("/embeddings")]
    return {"rows": ledger.rows, "walls": walls, "embeddings": embeddings}


def _report(name: str, result: dict[str, Any], items: list[dict[str, Any]], counters: dict[str, Any]) -> None:
    for scene in ("chat", "working"):
        indexes = [i for i, item in enumerate(items) if item["scene"] == scene]
        if not indexes:
            continue
        rows = [r for r in result["rows"] if r["index"] in indexes]
        n = len(indexes)
        tokens = {k: sum(f(r["text"]) for r in rows) / n for k, f in counters.items()}
        model = defaultdict(float)
        for r in rows:
            model[r["index"]] += r["seconds"]
        own = [result["walls"][i] - model[i] for i in indexes]
        emb = [r for r in result["embeddings"] if r.tag in indexes]
        print(f"{name:<6} {scene:<8} adds={n:<3} calls/add={len(rows) / n:.2f}  "
              + "  ".join(f"{k}/add={v:,.0f}" for k, v in tokens.items())
              + f"  add p50 excl. model={statistics.median(own) * 1000:.0f} ms")
        stages: dict[str, int] = defaultdict(int)
        for r in rows:
            stages[r["stage"]] += 1
        print("       stages: " + ", ".join(f"{k}={v / n:.2f}" for k, v in sorted(stages.items())))
        if result["embeddings"]:
            texts = sum(len(_inputs(r)) for r in emb)
            print(f"       embedding requests/add={len(emb) / n:.2f} texts/add={texts / n:.1f}")


def _inputs(request: Any) -> list[Any]:
    value = request.body.get("input")
    return value if isinstance(value, list) else [value]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chat-sessions", type=int, default=10)
    parser.add_argument("--working", type=int, default=30)
    parser.add_argument("--conversation", type=int, default=0,
                        help="which LoCoMo conversation the chat sessions come from (0-4)")
    parser.add_argument("--working-skip", type=int, default=0,
                        help="skip this many tool-call dialogues first (e.g. 30: dialogues the default run did not use)")
    add_peer_arguments(parser)
    args = parser.parse_args(argv)
    if args.child:
        return _child_main(*args.child)
    items = _chat_items(args.chat_sessions, args.conversation) + _working_items(args.working, args.working_skip)
    counters = _token_counters()
    systems = [("ours", sys.executable)]
    if args.peer_python:
        systems.append(("peer", args.peer_python))
    else:
        print("hy-memory: no --peer-python / $HY_PEER_PYTHON given; measuring this package only")
    with tempfile.TemporaryDirectory() as tmp:
        for name, python in systems:
            result = _run_system(name, python, items, Path(tmp))
            _report(name, result, items, counters)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
