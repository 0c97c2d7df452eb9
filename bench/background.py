"""Background memory formation, measured against a loopback OpenAI-compatible stub whose
every answer takes 500 ms (``tests/openai_stub.py``, answering each stage in its schema,
so reconcile runs); the memory's model is the real ``ChatOpenAI`` client.

``python -m bench.background latency|economy|kills|throughput|all``:

* ``latency``: memory's added latency per agent turn (the remember node in a
  ``StateGraph``; ``HyMemoryMiddleware.after_agent`` in ``create_agent``), p50/p95,
  synchronous vs background. The agent's own model is an instant scripted one, turns run
  back to back (the worker runs meanwhile, in the same process).
* ``economy``: model calls and prompt tokens of one 20-turn session, turns 0.5 s apart (the
  agent's own model call), per-turn synchronous writes vs background writes at the default
  coalescing delay; the stub extracts one fact per user message, deterministically, and
  reconcile adds, so both must end with the same facts.
* ``kills``: ``hy-memory worker --drain`` processes, each ``SIGKILL`` ed at a random point
  once it started calling the model, 20 times, on SQLite and PostgreSQL (``HY_TEST_PG_URL``):
  requests lost, duplicate memories, extraction calls beyond one per request.
* ``throughput``: PostgreSQL, 1 vs 2 worker processes over distinct sessions: wall time,
  ratio, CPU busy share of the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common.peers import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from openai_stub import OpenAIStub, StageResponder  # noqa: E402

MODEL_S = 0.5
_NOTE = re.compile(r"note (\d+) is ([a-z]+-\d+)")


def _section(body: dict[str, Any], tag: str) -> list[Any]:
    """The JSON values of one data section of a rendered prompt (one per line)."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
    inside = prompt.split(f"<{tag} ")[-1].split(f"</{tag} ")[0]
    values = []
    for line in inside.splitlines():
        try:
            values.append(json.loads(line))
        except ValueError:
            continue
    return values


def _extract(body: dict[str, Any]) -> dict[str, Any]:
    """One fact per user message of the new messages, derived from its text alone."""
    said = [v["user"] for v in _section(body, "new_messages") if isinstance(v, dict) and "user" in v]
    return {"facts": [{"content": f"The user said: {text}", "subject": "user", "owner": "user"} for text in said]}


def _reconcile(body: dict[str, Any]) -> dict[str, Any]:
    facts = [v["id"] for v in _section(body, "new_facts") if isinstance(v, dict) and "id" in v]
    return {"operations": [{"fact": fact, "op": "ADD"} for fact in facts]}


def _responder(delay: float = MODEL_S) -> StageResponder:
    return StageResponder({"chat_extract": _extract, "chat_reconcile": _reconcile}, delay_s=delay)


def _chat_model(stub: OpenAIStub) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="stub", max_retries=0, timeout=60)


def _client(stub: OpenAIStub, data_dir: Path, **config: Any) -> Any:
    from hy_memory_langgraph.client import HyMemoryClient
    from hy_memory_langgraph.config import MemoryConfig
    from hy_memory_langgraph.testing import HashingEmbeddings

    return HyMemoryClient(mode="pro", llm=_chat_model(stub), embeddings=HashingEmbeddings(dims=64),
                          config=MemoryConfig.from_env({}, data_dir=data_dir, **config))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


SESSION = [
    ("I adopted a grey cat called Miso last spring.", "Miso is a lovely name!"),
    ("My sister Lena moved to Lisbon in March.", "Lisbon is beautiful."),
    ("I work as a nurse at the Charité in Berlin.", "That must be demanding."),
    ("I'm training for the Berlin marathon in September.", "Good luck with the training!"),
    ("I don't eat meat, I'm vegetarian since 2019.", "Noted, vegetarian."),
    ("My favourite tea is a smoky lapsang souchong.", "A bold choice."),
    ("I play the cello in an amateur orchestra.", "How lovely."),
    ("We rehearse every Thursday evening.", "Thursdays, got it."),
    ("My daughter Ana starts school in August.", "A big step for her."),
    ("I'm allergic to penicillin.", "Important to know."),
    ("I drive a 2015 blue Škoda Octavia.", "A reliable car."),
    ("My partner Tom is a carpenter.", "Handy to have around."),
    ("We plan a trip to Japan next April.", "Exciting!"),
    ("I'd like to see Kyoto's temples in particular.", "Kyoto is wonderful in spring."),
    ("My birthday is on 14 November.", "I'll remember."),
    ("I learn Portuguese on Tuesdays.", "Boa sorte!"),
    ("My mother lives in Porto.", "Close to your sister then."),
    ("I prefer trains over flying in Europe.", "Greener, too."),
    ("I'm reading 'The Left Hand of Darkness' right now.", "A classic."),
    ("My cat Miso hates the vacuum cleaner.", "Most cats do."),
]


# ---------------------------------------------------------------- latency


def latency(turns: int = 40) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import END, START, MessagesState, StateGraph

    from hy_memory_langgraph.integrations import HyMemoryMiddleware, create_remember_node
    from hy_memory_langgraph.testing import ScriptedChatModel

    print(f"added latency per agent turn ({turns} turns, stub answers in {MODEL_S * 1000:.0f} ms):")
    with OpenAIStub(responder=_responder(), embedding_dims=64) as stub, tempfile.TemporaryDirectory() as tmp:
        for face in ("remember node", "middleware"):
            for background in (False, True):
                client = _client(stub, Path(tmp) / f"{face}-{background}")
                client.add("warm-up", user_id="warm", background=background)  # opens stores, queue, thread
                client.flush()
                added: list[float] = []
                if face == "remember node":
                    remember = create_remember_node(client, background=background)

                    def timed(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
                        started = time.perf_counter()
                        remember.invoke(state, config)
                        added.append(time.perf_counter() - started)
                        return {}

                    builder = StateGraph(MessagesState)
                    builder.add_node("model", lambda state: {"messages": [AIMessage("Noted.")]})
                    builder.add_node("remember", timed)
                    builder.add_edge(START, "model")
                    builder.add_edge("model", "remember")
                    builder.add_edge("remember", END)
                    graph = builder.compile()
                    for i in range(turns):
                        text, _ = SESSION[i % len(SESSION)]
                        graph.invoke({"messages": [HumanMessage(text)]},
                                     {"configurable": {"user_id": "u1", "thread_id": f"s{i // 20}"}})
                else:
                    class Timed(HyMemoryMiddleware):
                        def after_agent(self, state: Any, runtime: Any) -> Any:
                            started = time.perf_counter()
                            out = super().after_agent(state, runtime)
                            added.append(time.perf_counter() - started)
                            return out

                    agent = create_agent(ScriptedChatModel.from_script(lambda _: "Noted."), tools=[],
                                         middleware=[Timed(client, user_id="u1", limit=3, background=background)])
                    for i in range(turns):
                        agent.invoke({"messages": [{"role": "user", "content": SESSION[i % len(SESSION)][0]}]})
                client.flush()
                client.close()
                ms = [a * 1000 for a in added]
                print(f"  {face:<14} {'background' if background else 'synchronous':<12} "
                      f"p50 {statistics.median(ms):8.1f} ms   p95 {_pct(ms, 0.95):8.1f} ms")


# ---------------------------------------------------------------- economy


def economy(gap_s: float = MODEL_S) -> None:
    from hy_memory_langgraph.config import MemoryConfig

    delay = MemoryConfig.from_env({}).background_delay_s
    print(f"one 20-turn session, turns {gap_s:.1f} s apart, default delay {delay:g} s:")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for background in (False, True):
            responder = _responder()
            with OpenAIStub(responder=responder, embedding_dims=64) as stub:
                client = _client(stub, Path(tmp) / f"e-{background}")
                for text, reply in SESSION:
                    time.sleep(gap_s)  # the agent's own model call
                    client.add([{"role": "user", "content": text}, {"role": "assistant", "content": reply}],
                               user_id="u1", session_id="s1", background=background)
                client.flush()
                facts = sorted(m["content"] for m in client.list_memories("u1", limit=100)["memories"])
                client.close()
                chats = stub.chat_requests
            stages = [responder.stages[i] for i in range(len(chats))]
            results[background] = (len(chats), sum(r.usage["prompt_tokens"] for r in chats if r.usage), facts,
                                   {s: stages.count(s) for s in sorted(set(stages))})
    for background, (calls, tokens, facts, stages) in results.items():
        print(f"  {'coalesced' if background else 'per-turn':<10} calls {calls:3d} {stages}  prompt tokens {tokens:6d}  "
              f"facts {len(facts)}")
    (sync_calls, sync_tokens, sync_facts, _), (bg_calls, bg_tokens, bg_facts, _) = results[False], results[True]
    print(f"  coalesced / per-turn: calls {bg_calls / sync_calls:.2f}x, prompt tokens {bg_tokens / sync_tokens:.2f}x, "
          f"same facts: {sync_facts == bg_facts}")


# ---------------------------------------------------------------- kills


def _worker(env: dict[str, str], data_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "hy_memory_langgraph.cli", "worker", "--drain",
                             "--no-embedding-cache", "--data-dir", str(data_dir)],
                            cwd=ROOT, env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _env(stub: OpenAIStub, db: dict[str, str]) -> dict[str, str]:
    return {**stub.env(), **db, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "MEMORY_BACKGROUND_DELAY_S": "3600"}


def _queue_notes(env: dict[str, str], data_dir: Path, count: int, start: int = 0) -> None:
    """``count`` requests, each in its own session (each a run of its own), one user."""
    from hy_memory_langgraph.client import HyMemoryClient

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = HyMemoryClient(mode="pro", data_dir=data_dir, embedding_cache=False)
        for i in range(start, start + count):
            client.add(f"note {i} is kiwi-{i}", user_id="u1", session_id=f"s{i}", background=True)
        client.close()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def kills(backend: str, rounds: int = 20, requests: int = 60, seed: int = 7) -> dict[str, Any]:
    from hy_memory_langgraph.client import HyMemoryClient

    rng = random.Random(seed)
    responder = _responder()
    with OpenAIStub(responder=responder, embedding_dims=64) as stub, tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "d"
        db = {}
        if backend == "postgres":
            db = {"MEMORY_DB_URL": os.environ["HY_TEST_PG_URL"], "MEMORY_DB_SCHEMA_PREFIX": f"b{uuid.uuid4().hex[:8]}_"}
        env = _env(stub, db)
        _queue_notes(env, data_dir, requests)
        queued, killed = requests, 0
        while killed < rounds:
            seen = len(stub.chat_requests)
            worker = _worker(env, data_dir)
            while len(stub.chat_requests) == seen and worker.poll() is None:
                time.sleep(0.01)  # until this worker calls the model
            time.sleep(rng.uniform(0.0, 2.0))
            if worker.poll() is not None:  # drained before the kill: more work
                _queue_notes(env, data_dir, 10, start=queued)
                queued += 10
                continue
            worker.send_signal(signal.SIGKILL)
            worker.wait()
            killed += 1
        done = _worker(env, data_dir)
        done.wait()
        os.environ.update(env)
        client = HyMemoryClient(mode="pro", data_dir=data_dir, embedding_cache=False)
        memories = client.list_memories("u1", limit=10_000)["memories"]
        left = client.background.counts()
        client.close()
        for key in env:
            os.environ.pop(key, None)
    notes = [int(m.group(1)) for mem in memories if (m := _NOTE.search(mem["content"]))]
    extracts = responder.count("chat_extract")
    result = {"backend": backend, "kills": killed, "requests": queued,
              "lost": len(set(range(queued)) - set(notes)), "duplicates": len(notes) - len(set(notes)),
              "extract_calls": extracts, "extra_extracts": extracts - queued,
              "extra_reconciles": responder.count("chat_reconcile") - (queued - 1), "left": left}
    print(f"  {backend:<8} kills {killed}  requests {queued}  lost {result['lost']}  duplicates "
          f"{result['duplicates']}  extraction calls {extracts} (+{result['extra_extracts']} over one per request)  "
          f"queue after {left}")
    return result


# ---------------------------------------------------------------- throughput


def _busy() -> tuple[float, float]:
    fields = [float(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


class _Timed:
    """The stage responder, with when each answer started and ended."""

    def __init__(self, inner: StageResponder) -> None:
        self.inner, self.spans = inner, []

    def __call__(self, body: dict[str, Any]) -> str:
        started = time.perf_counter()
        reply = self.inner(body)
        self.spans.append((started, time.perf_counter()))
        return reply


def throughput(requests: int = 40) -> None:
    import resource

    print(f"PostgreSQL, {requests} requests of one user in distinct sessions, stub answers in {MODEL_S * 1000:.0f} ms:")
    rates = {}
    timed = _Timed(_responder())
    with OpenAIStub(responder=timed, embedding_dims=64) as stub, tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            db = {"MEMORY_DB_URL": os.environ["HY_TEST_PG_URL"], "MEMORY_DB_SCHEMA_PREFIX": f"b{uuid.uuid4().hex[:8]}_"}
            env = _env(stub, db)
            data_dir = Path(tmp) / f"w{workers}"
            _queue_notes(env, data_dir, requests)
            timed.spans.clear()
            busy0, total0 = _busy()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            procs = [_worker(env, data_dir) for _ in range(workers)]
            for proc in procs:
                proc.wait()
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            busy1, total1 = _busy()
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            first, last = min(s for s, _ in timed.spans), max(e for _, e in timed.spans)
            span = last - first
            in_flight = sum(e - s for s, e in timed.spans) / span
            rates[workers] = requests / span
            print(f"  {workers} worker{'s' if workers > 1 else ' '}  {requests / span:5.2f} requests/s over "
                  f"{span:5.1f} s (first model call to last answer; start-up {first - started:4.1f} s)  "
                  f"model calls {len(timed.spans)}, {in_flight:.2f} in flight on average  workers' CPU "
                  f"{cpu:.1f} s = {100 * cpu / (wall * (os.cpu_count() or 1)):.0f}% of {os.cpu_count()} cores over "
                  f"{wall:.1f} s (machine busy {100 * (busy1 - busy0) / (total1 - total0):.0f}%, other processes included)")
    print(f"  2 workers / 1 worker: {rates[2] / rates[1]:.2f}x the requests per second")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["latency", "economy", "kills", "throughput", "all"])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    for name in ("NO_PROXY", "no_proxy"):
        os.environ[name] = ",".join(filter(None, [os.environ.get(name, ""), "127.0.0.1", "localhost"]))
    if args.what in ("latency", "all"):
        latency()
    if args.what in ("economy", "all"):
        economy()
    if args.what in ("kills", "all"):
        print(f"SIGKILL of the worker process {args.rounds} times at random points:")
        backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
        results = [kills(b, rounds=args.rounds) for b in backends]
        print(json.dumps(results))
    if args.what in ("throughput", "all"):
        throughput()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
