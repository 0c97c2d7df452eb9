"""LoCoMo question answering judged by a model (the "J" score memory systems compare).

For each conversation of a LoCoMo-format file, a fresh data dir is filled through
``client.add`` (every turn, ``--turns-per-add`` consecutive turns of one session per call,
as ``"{speaker}: {text}"`` with the session's date; the first speaker's turns as the
user's, the second's as the assistant's; ``--mode lite`` stores turns with no LLM call,
``--mode pro`` extracts memories with ``--model``). Then for each answerable question:

1. ``client.search(question, scene="chat", limit=--top-k)`` for that conversation;
2. an answer model (``--model``) answers from the memories found, each shown with its
   date (``bench/prompts/locomo_qa.toml``, ``[answer]``);
3. a judge model (``--judge-model``) labels the answer CORRECT or WRONG against the gold
   answer (``[judge]``).

J is the share of questions labelled CORRECT, per category and overall. Categories are
LoCoMo's own numbers: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop. Category 5
(adversarial: questions about things never said, with no gold answer) is left out, as
in the usual protocol. Also reported: the tokens of each question's answer and judge
calls (as the endpoint counts them), the memories read per question, the LLM tokens the
pro ingest spent, and the latency of ``client.search`` and ``client.add`` (p50 / p95).

The answer and judge models are the real ``ChatOpenAI`` at ``--base-url`` (any
OpenAI-compatible server: vLLM, Ollama, SGLang, OpenAI), temperature 0. Embeddings are
the embedded e5-small (``--embeddings local``) unless ``openai`` (``--embedding-model``
at the same endpoint) or ``hashing`` (no model; plumbing runs only, not a figure).

Results are saved per conversation in ``--out`` (``<sample_id>.json``, written when the
conversation is done; the data dir and its finished ingest are kept under
``memory/<sample_id>``): a rerun skips finished conversations, reuses a finished ingest,
and prints the table of everything saved. The settings (mode, models, endpoint, top k,
embeddings, questions, prompt file hash) are saved in ``run.json``; a rerun with other
settings into the same ``--out`` is refused.

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", 2024), CC BY-NC 4.0, read in place from ../shared; never copied.

Usage::

    python -m bench.locomo_qa --base-url http://localhost:8000/v1 --model MODEL \\
        [--judge-model MODEL] [--api-key KEY | $OPENAI_API_KEY] [--mode lite|pro] \\
        [--conversations conv-26 ...] [--out DIR] [--top-k 10] [--questions N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import time
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from bench.common.corpora import CATEGORIES
from bench.common.locomo import Conversation, Turn, iter_questions, load_locomo
from bench.common.paths import LOCOMO_PATH
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.models import E5Embeddings, resolve_chat_model, resolve_embeddings
from hy_memory_langgraph.testing import HashingEmbeddings

PROMPTS = Path(__file__).resolve().parent / "prompts" / "locomo_qa.toml"
#: Settings a rerun into the same ``--out`` must share.
SETTINGS = ("mode", "model", "judge_model", "base_url", "top_k", "turns_per_add", "embeddings",
            "embedding_model", "questions", "prompts_sha1", "data")
#: The order categories are reported in (single-hop, multi-hop, temporal, open-domain).
REPORT_ORDER = (4, 1, 2, 3)
_LABEL = re.compile(r'"label"\s*:\s*"(CORRECT|WRONG)"', re.IGNORECASE)
_WORD = re.compile(r"\b(CORRECT|WRONG)\b")


@dataclass(frozen=True)
class Prompts:
    """The answer and judge prompts of ``bench/prompts/locomo_qa.toml``."""

    answer_system: str
    answer_user: str
    judge_system: str
    judge_user: str
    sha1: str

    @classmethod
    def load(cls, path: Path = PROMPTS) -> Prompts:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        return cls(data["answer"]["system"], data["answer"]["user"], data["judge"]["system"],
                   data["judge"]["user"], hashlib.sha1(text.encode("utf-8")).hexdigest())

    def answer(self, memories: str, question: str) -> list[Any]:
        return [SystemMessage(self.answer_system), HumanMessage(self.answer_user.format(memories=memories,
                                                                                       question=question))]

    def judge(self, question: str, gold: str, answer: str) -> list[Any]:
        return [SystemMessage(self.judge_system.format()),
                HumanMessage(self.judge_user.format(question=question, gold=gold, answer=answer))]


def judge_label(reply: str) -> tuple[str, bool]:
    """``(label, parsed)`` of a judge reply: the JSON ``label``, else the one of CORRECT /
    WRONG the reply names; a reply naming neither or both counts as WRONG, unparsed.

    Example:
        >>> judge_label('{"reason": "same city", "label": "CORRECT"}')
        ('CORRECT', True)
        >>> judge_label("I cannot tell")
        ('WRONG', False)
    """
    match = _LABEL.search(reply)
    if match:
        return match.group(1).upper(), True
    words = set(_WORD.findall(reply.upper()))
    if len(words) == 1:
        return words.pop(), True
    return "WRONG", False


def render_memories(memories: Sequence[dict[str, Any]]) -> str:
    """One line per memory: ``[YYYY-MM-DD] content`` (``[undated]`` without a date)."""
    lines = []
    for memory in memories:
        date = str(memory.get("memory_at") or "")[:10] or "undated"
        lines.append(f"[{date}] {' '.join(str(memory.get('content', '')).split())}")
    return "\n".join(lines) or "(no notes found)"


def _usage(message: AIMessage) -> dict[str, int | None]:
    usage = message.usage_metadata or {}
    return {"input": usage.get("input_tokens"), "output": usage.get("output_tokens")}


def _text(message: AIMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


# --- one conversation ----------------------------------------------------------------------


def _windows(conv: Conversation, size: int) -> list[list[Turn]]:
    """Consecutive turns of one session, at most ``size`` per ``add``."""
    out: list[list[Turn]] = []
    for turn in conv.turns:
        if out and len(out[-1]) < size and out[-1][0].session == turn.session:
            out[-1].append(turn)
        else:
            out.append([turn])
    return out


def _embeddings(args: argparse.Namespace) -> Embeddings:
    if args.embeddings == "hashing":
        return HashingEmbeddings(dims=256)
    if args.embeddings == "openai":
        return resolve_embeddings(env={"OPENAI_API_KEY": args.api_key, "OPENAI_BASE_URL": args.base_url,
                                       "HY_MEMORY_EMBEDDING_MODEL": args.embedding_model})
    return E5Embeddings()


def _client(args: argparse.Namespace, data_dir: Path) -> HyMemoryClient:
    llm = None
    if args.mode == "pro":
        llm = resolve_chat_model(env={"OPENAI_API_KEY": args.api_key, "OPENAI_BASE_URL": args.base_url,
                                      "HY_MEMORY_LLM_MODEL": args.model})
    return HyMemoryClient(mode=args.mode, llm=llm, embeddings=_embeddings(args), data_dir=data_dir)


def _ingest(client: HyMemoryClient, conv: Conversation, turns_per_add: int) -> list[float]:
    """Write every turn; the latency of each ``add`` in ms."""
    latencies = []
    for window in _windows(conv, turns_per_add):
        messages = [{"role": "user" if t.speaker == conv.speaker_a else "assistant", "content": t.message()}
                    for t in window]
        started = time.perf_counter()
        client.add(messages, scene="chat", user_id=conv.sample_id,
                   session_id=f"{conv.sample_id}-session{window[0].session}", memory_at=window[0].session_date)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def _ingested(client: HyMemoryClient, conv: Conversation, args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    """The finished ingest of ``data_dir`` (``ingest.json``), else a new one."""
    marker = data_dir / "ingest.json"
    if marker.exists():
        return json.loads(marker.read_text(encoding="utf-8"))
    add_ms = _ingest(client, conv, args.turns_per_add)
    usage = client.llm_usage.snapshot()
    done = {"add_ms": add_ms, "turns": len(conv.turns),
            "llm_tokens": sum(int(s.get("prompt_tokens", 0)) + int(s.get("completion_tokens", 0))
                              for s in usage.values()),
            "llm_calls": sum(int(s.get("calls", 0)) for s in usage.values())}
    _write_json(marker, done)
    return done


def run_conversation(conv: Conversation, args: argparse.Namespace, prompts: Prompts,
                     answerer: ChatOpenAI, judge: ChatOpenAI) -> dict[str, Any]:
    """Ingest ``conv``, then answer and judge its questions (see the module docstring)."""
    data_dir = args.out / "memory" / conv.sample_id
    if data_dir.exists() and not (data_dir / "ingest.json").exists():
        shutil.rmtree(data_dir)  # an ingest cut short: start it again from nothing
    data_dir.mkdir(parents=True, exist_ok=True)
    client = _client(args, data_dir)
    try:
        ingest = _ingested(client, conv, args, data_dir)
        questions = list(iter_questions([conv], CATEGORIES))[:args.questions or None]
        records = []
        for number, (_, qa) in enumerate(questions, start=1):
            started = time.perf_counter()
            found = client.search(qa.question, scene="chat", user_ids=[conv.sample_id], limit=args.top_k)
            search_ms = (time.perf_counter() - started) * 1000
            reply = answerer.invoke(prompts.answer(render_memories(found["memories"]), qa.question))
            answer = _text(reply).strip()
            verdict = judge.invoke(prompts.judge(qa.question, qa.answer, answer))
            label, parsed = judge_label(_text(verdict))
            records.append({"question": qa.question, "category": qa.category, "gold": qa.answer,
                            "answer": answer, "label": label, "judge_parsed": parsed,
                            "judge_reply": _text(verdict).strip()[:500], "memories": len(found["memories"]),
                            "search_ms": search_ms, "answer_tokens": _usage(reply),
                            "judge_tokens": _usage(verdict)})
            print(f"  {conv.sample_id} {number}/{len(questions)} {CATEGORIES[qa.category]}: {label}",
                  file=sys.stderr, flush=True)
    finally:
        client.close()
    return {"sample_id": conv.sample_id, "ingest": ingest, "questions": records}


# --- the run and its table -----------------------------------------------------------------


def _write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON atomically (a file is either whole or absent)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def settings_of(args: argparse.Namespace, prompts: Prompts) -> dict[str, Any]:
    """What a run's results depend on (saved in ``run.json``)."""
    return {"mode": args.mode, "model": args.model, "judge_model": args.judge_model, "base_url": args.base_url,
            "top_k": args.top_k, "turns_per_add": args.turns_per_add, "embeddings": args.embeddings,
            "embedding_model": args.embedding_model if args.embeddings == "openai" else None,
            "questions": args.questions, "prompts_sha1": prompts.sha1, "data": str(Path(args.data).name)}


def check_settings(out: Path, settings: dict[str, Any]) -> None:
    """Save the settings of a new ``out``; refuse an ``out`` holding another run's."""
    path = out / "run.json"
    if path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        differ = [k for k in SETTINGS if saved.get(k) != settings.get(k)]
        if differ:
            raise SystemExit(f"locomo_qa: {out} holds results of other settings ("
                             + ", ".join(f"{k}: {saved.get(k)!r} there, {settings.get(k)!r} now" for k in differ)
                             + "); pass another --out, or the same settings to resume")
        return
    out.mkdir(parents=True, exist_ok=True)
    _write_json(path, settings)


def summary(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """J per category and overall, tokens per question, latencies (from saved results)."""
    by_cat: dict[str, list[bool]] = defaultdict(list)
    records = [r for conv in results for r in conv["questions"]]
    for r in records:
        by_cat[CATEGORIES[r["category"]]].append(r["label"] == "CORRECT")

    def mean_of(key: str, side: str) -> float | None:
        values = [r[key][side] for r in records if r[key][side] is not None]
        return statistics.fmean(values) if values else None

    search = [r["search_ms"] for r in records]
    add = [ms for conv in results for ms in conv["ingest"]["add_ms"]]
    return {
        "j": {name: (sum(v) / len(v), len(v)) for name, v in by_cat.items()},
        "overall": (sum(r["label"] == "CORRECT" for r in records) / len(records), len(records)) if records else None,
        "per_conversation": {c["sample_id"]: statistics.fmean(r["label"] == "CORRECT" for r in c["questions"])
                             for c in results if c["questions"]},
        "tokens": {f"{key} {side}": mean_of(key, side) for key in ("answer_tokens", "judge_tokens")
                   for side in ("input", "output")},
        "memories": statistics.fmean(r["memories"] for r in records) if records else None,
        "unparsed": sum(not r["judge_parsed"] for r in records),
        "search_ms": (_percentile(search, 0.5), _percentile(search, 0.95)),
        "add_ms": (_percentile(add, 0.5), _percentile(add, 0.95)),
        "adds": len(add),
        "ingest_llm_tokens": sum(c["ingest"].get("llm_tokens", 0) for c in results),
        "turns": sum(c["ingest"]["turns"] for c in results),
    }


def print_table(settings: dict[str, Any], results: Sequence[dict[str, Any]]) -> None:
    s = summary(results)
    print(f"LoCoMo QA, judged by a model: mode {settings['mode']}, answer model {settings['model']}, judge "
          f"{settings['judge_model']}, top {settings['top_k']} memories, embeddings {settings['embeddings']}; "
          f"{len(results)} conversation(s) of {settings['data']} (category 5, adversarial, left out)\n")
    print("| category | questions | J |")
    print("|---|---:|---:|")
    for name in (CATEGORIES[c] for c in REPORT_ORDER):
        if name in s["j"]:
            j, n = s["j"][name]
            print(f"| {name} | {n} | {j:.3f} |")
    if s["overall"]:
        print(f"| **overall** | {s['overall'][1]} | **{s['overall'][0]:.3f}** |")
    print("\nper conversation: " + ", ".join(f"{k} {v:.3f}" for k, v in s["per_conversation"].items()))
    tokens = s["tokens"]

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.0f}"

    print(f"tokens per question: answer {fmt(tokens['answer_tokens input'])} in + "
          f"{fmt(tokens['answer_tokens output'])} out, judge {fmt(tokens['judge_tokens input'])} in + "
          f"{fmt(tokens['judge_tokens output'])} out; memories read per question: "
          f"{s['memories']:.1f}" if s["memories"] is not None else "no questions answered")
    print(f"ingest: {s['turns']} turns in {s['adds']} adds, LLM tokens {s['ingest_llm_tokens']}")
    print(f"latency: search p50 {s['search_ms'][0]:.1f} ms, p95 {s['search_ms'][1]:.1f} ms; "
          f"add p50 {s['add_ms'][0]:.1f} ms, p95 {s['add_ms'][1]:.1f} ms")
    if s["unparsed"]:
        print(f"judge replies with no label (counted WRONG): {s['unparsed']}")


def _chat(args: argparse.Namespace, model: str) -> ChatOpenAI:
    return ChatOpenAI(model=model, base_url=args.base_url, api_key=args.api_key,  # type: ignore[arg-type]
                      temperature=0, timeout=args.timeout, max_retries=3)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    parser.add_argument("--model", required=True, help="the answer model (and pro mode's memory model)")
    parser.add_argument("--judge-model", default=None, help="the judge model (default: --model)")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"),
                        help="the endpoint's key (default: $OPENAI_API_KEY)")
    parser.add_argument("--mode", choices=["lite", "pro"], default="lite")
    parser.add_argument("--conversations", nargs="+", metavar="SAMPLE_ID",
                        help="sample ids to run (default: every conversation of --data)")
    parser.add_argument("--out", type=Path, default=Path("locomo_qa_out"), help="results, one file a conversation")
    parser.add_argument("--data", type=Path, default=LOCOMO_PATH)
    parser.add_argument("--top-k", type=int, default=10, help="memories given to the answer model")
    parser.add_argument("--turns-per-add", type=int, default=2, help="consecutive turns of a session per add")
    parser.add_argument("--embeddings", choices=["local", "openai", "hashing"], default="local")
    parser.add_argument("--embedding-model", default="text-embedding-3-small", help="with --embeddings openai")
    parser.add_argument("--questions", type=int, default=None, help="only the first N questions a conversation")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per model call")
    args = parser.parse_args(argv)
    args.judge_model = args.judge_model or args.model
    if not args.api_key:
        parser.error("--api-key or $OPENAI_API_KEY is required (any value for a server that checks none)")
    for name in ("top_k", "turns_per_add", "questions"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1 (got {value})")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prompts = Prompts.load()
    convs = load_locomo(args.data)
    if args.conversations:
        known = {c.sample_id for c in convs}
        unknown = [c for c in args.conversations if c not in known]
        if unknown:
            raise SystemExit(f"locomo_qa: no conversation {', '.join(unknown)} in {args.data}; "
                             f"it holds {', '.join(sorted(known))}")
        convs = [c for c in convs if c.sample_id in set(args.conversations)]
    settings = settings_of(args, prompts)
    check_settings(args.out, settings)
    answerer, judge = _chat(args, args.model), _chat(args, args.judge_model)
    for conv in convs:
        path = args.out / f"{conv.sample_id}.json"
        if path.exists():
            print(f"{conv.sample_id}: done before, skipped", file=sys.stderr)
            continue
        _write_json(path, run_conversation(conv, args, prompts, answerer, judge))
    results = [json.loads((args.out / f"{c.sample_id}.json").read_text(encoding="utf-8")) for c in convs]
    print_table(settings, results)


if __name__ == "__main__":
    main()
