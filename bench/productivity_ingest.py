"""Ingest 100 real airline tool-call dialogues (tau-bench) through the working pipeline.

Every dialogue of ``airline_dev100.json`` (an OpenAI-style ``traj`` with tool calls and
tool results) becomes one ``client.add(messages, scene="working", user_id=...)``; the
user id is the task's customer, the session id the task id. Two modes:

* ``lite``: zero LLM calls, one deterministic fact per add;
* ``pro``: a counting fake chat model that answers each stage instantly with plausible
  JSON and reports ``usage_metadata`` (prompt tokens approximated as words + punctuation
  marks). ``--drafts fixed`` (default): the same experience and fact for every dialogue,
  SKIP on reconcile, no supersede. ``--drafts dialogue``: the experience's task is the
  dialogue's first user message (each dialogue asks something else), ADD on reconcile
  (every task is kept, so later ones can meet it), the same fact subject; this is the
  run that shows how often the experience-candidate gate lets a reconcile call through.

Printed per mode: add latency p50/p95 in ms excluding the time spent in model calls,
LLM calls and prompt tokens per add (average), calls per stage and per add (reconcile
calls per add among them), database sizes on disk, and the latency of a few searches.
A dialogue that raises fails the run (exit code 1).

Usage::

    python -m bench.productivity_ingest [--fast] [--mode lite|pro|both] [--limit N]
                                        [--drafts fixed|dialogue] [--one-user]
                                        [--keep-system] [--data-dir DIR]

``--fast`` uses :class:`HashingEmbeddings` instead of the embedded e5 model.
``--nearest`` prints, for each dialogue's request (its first user message), the cosine and
the calibrated similarity of the nearest earlier request (as the experience-candidate
search compares a new task with stored ones): how related consecutive requests are.
``--one-user`` writes every dialogue as one user (an agent's own working memory): each
write then meets the experiences of all earlier dialogues, related or not, instead of
only those of the same customer.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage

from bench.common.paths import TAU_PATH
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.fences import read_fences
from hy_memory_langgraph.models import E5Embeddings
from hy_memory_langgraph.models.calibration import calibrate
from hy_memory_langgraph.testing import HashingEmbeddings, ScriptedChatModel

QUERIES = ("change the flight of my reservation", "cancel a booking and refund",
           "baggage allowance for gold members", "upgrade cabin class to business",
           "payment with travel certificate")
_TOKEN = re.compile(r"\w+|[^\w\s]")

_EXTRACT = {
    "experiences": [{
        "task": "change or book an airline reservation for a customer",
        "search_keys": ["airline reservation", "flight change", "booking payment"],
        "solution": "Look up the user, then the reservation, check the policy, confirm with the "
                    "customer before any update, then call the update tool once.",
        "boundary_envs": ["airline tools API"], "confidence": 0.6, "files": [],
    }],
    "fact": {"subject": "airline reservation", "statement": "Handled the customer's airline "
             "request with the reservation tools; the final outcome is in the last reply.",
             "files": [], "details": "see trace"},
}
_REPLIES = {
    "extract": _EXTRACT,
    "experience_reconcile": {"operations": [{"draft": "d0", "op": "SKIP", "target": "e_0",
                                             "merged": None}]},
    "fact_reconcile": {"supersede": [], "reason": "different requests"},
    "progress_summary": {"summary": "progress"},
}


def _stage(system: str) -> str:
    if "memory writer" in system or "记忆整理员" in system:
        return "extract"
    if "library of reusable" in system or "经验库" in system:
        return "experience_reconcile"
    if "timeline" in system or "时间线" in system:
        return "fact_reconcile"
    return "progress_summary"


def _first_request(prompt: str) -> str:
    """The first user message of the prompt's NEW MESSAGES section (one line, cut)."""
    for region in read_fences(prompt):
        for row in region.rows if region.name == "new_messages" else []:
            if "user" in row:
                return " ".join(str(row["user"]).split())[:160]
    return "help a customer with an airline reservation"


def _dialogue_reply(stage: str, prompt: str) -> dict[str, Any]:
    """``--drafts dialogue``: the task is the dialogue's request; reconcile adds it."""
    if stage == "extract":
        task = _first_request(prompt)
        return {"experiences": [{**_EXTRACT["experiences"][0], "task": task,
                                 "search_keys": [" ".join(task.split()[:6])]}],
                "fact": _EXTRACT["fact"]}
    if stage == "experience_reconcile":
        return {"operations": [{"draft": "d0", "op": "ADD"}]}
    return _REPLIES[stage]


def fake_model(drafts: str = "fixed") -> ScriptedChatModel:
    """An instant model: JSON per stage (see the module docstring), usage from the prompt size."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        text = "\n".join(str(m.content) for m in messages)
        stage = _stage(str(messages[0].content))
        answer = _dialogue_reply(stage, text) if drafts == "dialogue" else _REPLIES[stage]
        reply = json.dumps(answer)
        prompt, completion = len(_TOKEN.findall(text)), len(_TOKEN.findall(reply))
        return AIMessage(content=reply, usage_metadata={
            "input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion})

    return ScriptedChatModel.from_script(respond)


def load_dialogues(path: Path, keep_system: bool) -> list[dict[str, Any]]:
    """``[{"user_id", "session_id", "messages"}]`` in file order."""
    out = []
    for row in json.loads(path.read_text(encoding="utf-8")):
        messages = [dict(m) for m in row["traj"] if keep_system or m.get("role") != "system"]
        out.append({"user_id": row["info"]["task"]["user_id"],
                    "session_id": f"task{row['task_id']}-trial{row.get('trial', 0)}",
                    "messages": messages})
    return out


def _timed_gateway(client: HyMemoryClient) -> list[float]:
    """Wrap the client's LLM gateway so model time can be subtracted; returns the sink."""
    spent: list[float] = []
    gateway = client.context.llm
    if gateway is None:
        return spent
    original: Callable[..., str] = gateway.invoke

    def invoke(*args: Any, **kwargs: Any) -> str:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    gateway.invoke = invoke  # type: ignore[method-assign]
    return spent


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _sizes(data_dir: Path) -> dict[str, int]:
    return {str(p.relative_to(data_dir)): p.stat().st_size
            for p in sorted(data_dir.rglob("*")) if p.is_file()}


def run(mode: str, dialogues: list[dict[str, Any]], embeddings: Embeddings, data_dir: Path,
        drafts: str = "fixed") -> bool:
    """Ingest every dialogue in ``mode``; print the figures; ``False`` if any add raised."""
    config = MemoryConfig.from_env({}, data_dir=data_dir)
    llm = fake_model(drafts) if mode == "pro" else None
    client = HyMemoryClient(mode=mode, llm=llm, embeddings=embeddings, config=config)
    spent = _timed_gateway(client)
    latencies: list[float] = []
    productive: list[float] = []
    failures: list[str] = []
    facts = experiences = chat = 0
    for dialogue in dialogues:
        before = len(spent)
        start = time.perf_counter()
        try:
            result = client.add(dialogue["messages"], scene="working", user_id=dialogue["user_id"],
                                session_id=dialogue["session_id"])
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
            failures.append(f"{dialogue['session_id']}: {type(exc).__name__}: {exc}")
            continue
        latencies.append((time.perf_counter() - start - sum(spent[before:])) * 1000.0)
        if result["scene"] != "productivity":  # no tool trace: routing falls back to chat
            chat += 1
            continue
        productive.append(latencies[-1])
        facts += len(result["fact_ids"])
        experiences += len(result["experience_ids"])
    search_ms = []
    for query in QUERIES:
        start = time.perf_counter()
        client.search(query, scene="working", user_ids=sorted({d["user_id"] for d in dialogues}))
        search_ms.append((time.perf_counter() - start) * 1000.0)
    usage = client.llm_usage.snapshot()
    client.close()
    n = max(1, len(latencies))
    calls = sum(s["calls"] for s in usage.values())
    prompt_tokens = sum(s["prompt_tokens"] for s in usage.values())
    sizes = _sizes(data_dir)
    print(f"\n== mode={mode}  adds={len(latencies)}/{len(dialogues)}  failures={len(failures)}")
    print(f"add latency excl. model: p50={_pct(latencies, 0.5):.1f} ms  p95={_pct(latencies, 0.95):.1f} ms"
          f"  mean={statistics.fmean(latencies):.1f} ms")
    print(f"  working adds only ({len(productive)}): p50={_pct(productive, 0.5):.1f} ms"
          f"  p95={_pct(productive, 0.95):.1f} ms")
    print(f"LLM calls/add={calls / n:.2f}  prompt tokens/add={prompt_tokens / n:.0f}"
          f"  (model time total {sum(spent) * 1000:.0f} ms)")
    for stage, entry in sorted(usage.items()):
        print(f"  {stage:<22} calls={entry['calls']:<4} per add={entry['calls'] / n:.2f}"
              f"  prompt_tokens={entry['prompt_tokens']}")
    reconcile = sum(usage.get(s, {}).get("calls", 0) for s in ("experience_reconcile", "fact_reconcile"))
    print(f"reconcile calls/add={reconcile / n:.2f}  (experience "
          f"{usage.get('experience_reconcile', {}).get('calls', 0) / n:.2f}, fact "
          f"{usage.get('fact_reconcile', {}).get('calls', 0) / n:.2f})")
    print(f"written: facts={facts} experiences(added/updated)={experiences}"
          f"  chat fallbacks (no tool trace)={chat}")
    print(f"search latency ({len(QUERIES)} queries, {len({d['user_id'] for d in dialogues})} users):"
          f" p50={_pct(search_ms, 0.5):.1f} ms  max={max(search_ms):.1f} ms")
    print(f"on disk: total={sum(sizes.values()) / 1024:.0f} KiB")
    for name, size in sizes.items():
        print(f"  {name:<44} {size / 1024:>8.0f} KiB")
    for failure in failures:
        print(f"  FAILED {failure}")
    return not failures


def nearest_report(dialogues: list[dict[str, Any]], embeddings: Embeddings) -> None:
    """Raw and calibrated similarity of each request to the nearest earlier one."""
    requests = [next((str(m["content"]) for m in d["messages"] if m.get("role") == "user"), "")
                for d in dialogues]
    calibration = calibrate(embeddings)
    docs = np.asarray(embeddings.embed_documents(requests))
    queries = np.asarray([embeddings.embed_query(r) for r in requests])
    raw, calibrated = [], []
    for i in range(1, len(requests)):
        cosine = float(np.max(queries[i] @ docs[:i].T))
        raw.append(cosine)
        calibrated.append(calibration.for_text(requests[i]).similarity(cosine))
    for name, values in (("cosine", raw), ("calibrated", calibrated)):
        q = np.percentile(values, [0, 10, 50, 90, 100])
        print(f"nearest earlier request, {name}: min {q[0]:.3f}  p10 {q[1]:.3f}  median {q[2]:.3f}"
              f"  p90 {q[3]:.3f}  max {q[4]:.3f}")
    for gate in (0.3, 0.4, 0.5):
        share = sum(v >= gate for v in calibrated) / len(calibrated)
        print(f"  calibrated >= {gate}: {share:.0%} of requests  (raw cosine >= {gate}: "
              f"{sum(v >= gate for v in raw) / len(raw):.0%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("path", nargs="?", type=Path, default=TAU_PATH)
    parser.add_argument("--fast", action="store_true", help="HashingEmbeddings instead of e5")
    parser.add_argument("--mode", choices=("lite", "pro", "both"), default="both")
    parser.add_argument("--limit", type=int, default=None, help="first N dialogues only")
    parser.add_argument("--keep-system", action="store_true", help="keep the agent system prompt")
    parser.add_argument("--drafts", choices=("fixed", "dialogue"), default="fixed",
                        help="pro: the fake model's drafts (see the module docstring)")
    parser.add_argument("--one-user", action="store_true",
                        help="write every dialogue as the same user")
    parser.add_argument("--nearest", action="store_true",
                        help="only report how similar each request is to the nearest earlier one")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    dialogues = load_dialogues(args.path, args.keep_system)[: args.limit]
    if args.one_user:
        dialogues = [{**d, "user_id": "agent"} for d in dialogues]
    embeddings: Embeddings = HashingEmbeddings(dims=256) if args.fast else E5Embeddings()
    if not args.fast:
        embeddings.embed_query("warm up")  # load the model outside the timed adds
    if args.nearest:
        nearest_report(dialogues, embeddings)
        return 0
    print(f"{len(dialogues)} dialogues from {args.path.name}; embeddings="
          f"{type(embeddings).__name__}; system prompt {'kept' if args.keep_system else 'dropped'}")
    ok = True
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="hy_prod_bench_"))
    for mode in (("lite", "pro") if args.mode == "both" else (args.mode,)):
        ok = run(mode, dialogues, embeddings, root / mode, args.drafts) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
