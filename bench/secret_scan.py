"""Secret redaction: recall on our secret corpus, false redactions on real conversations.

* **Recall** (``bench/common/secret_corpus.py``: every kind in en/zh prose, touching Chinese text,
  full-width colons, escaped JSON, on every write path): each case is written through a
  real client (lite mode, SQLite files), then every file under the data dir is read
  byte for byte; a case is caught when no file holds its secret.
* **Precision**: every message of LoCoMo, τ-bench airline (contents, tool-call arguments,
  tool results) and BFCL v4 memory run through the write path's redaction; each
  placeholder it puts into these secret-free texts is a false redaction. With ``--code``,
  also the paragraphs of installed packages' sources and docs (code the coding scene
  stores), and vendor-shape keys in every text line of site-packages.

Data sets are read from ``../shared/data`` (never copied): LoCoMo (Maharana et al. 2024,
CC BY-NC 4.0), τ-bench (MIT), BFCL v4 memory (Apache-2.0).

Usage::

    python -m bench.secret_scan [--data ../shared/data] [--examples 5] [--code]
    python -m bench.secret_scan --cost   # only the scan's cost per LoCoMo turn
"""

from __future__ import annotations

import argparse
import json
import sysconfig
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.common.paths import DATA_ROOT as DATA
from bench.common.secret_corpus import Case, build_cases
from bench.common.secret_heldout import CLEAN_2, CLEAN_3, HELD_OUT, HELD_OUT_2, HELD_OUT_3
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.redaction import redact_messages
from hy_memory_langgraph.redact import redact_text, redact_value
from hy_memory_langgraph.redact.prefixed import prefixed_tokens
from hy_memory_langgraph.redact.scan import scan
from hy_memory_langgraph.testing import HashingEmbeddings


# ------------------------------------------------------------------------------ recall
def _tool_trace(user: str, args: Any, result: str = "done", *, anthropic: bool = False) -> list[dict[str, Any]]:
    if anthropic:
        return [{"role": "user", "content": user},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run", "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]}]
    raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return [{"role": "user", "content": user},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": raw}}]},
            {"role": "tool", "tool_call_id": "c1", "content": result}]


def write_case(client: HyMemoryClient, case: Case, user: str) -> None:
    """Write ``case`` through the client the way its carrier says."""
    value = case.extra.get("value")
    structured = {case.key: value} if case.key and value is not None else None
    if case.carrier == "chat":
        client.add(case.text, user_id=user)
    elif case.carrier in ("update", "update_metadata"):
        memory_id = client.add("a note to be edited", user_id=user)["memory_ids"][0]
        if case.carrier == "update":
            client.update(memory_id, case.text)
        else:
            client.update(memory_id, "an edited note", metadata=structured)
    elif case.carrier == "metadata":
        client.add("a note with metadata", user_id=user, metadata=structured or {case.key: case.text})
    elif case.carrier == "nested_metadata":
        client.add("a note with nested metadata", user_id=user, metadata={"db": {"conn": structured}})
    elif case.carrier in ("openai_tool_args", "anthropic_tool_input"):
        args = structured or {"body": case.text}
        client.add(_tool_trace("Send the deploy note", args, anthropic=case.carrier == "anthropic_tool_input"),
                   scene="working", user_id=user)
    elif case.carrier == "tool_result":
        client.add(_tool_trace("Read the deploy note", {"path": "notes.txt"}, result=case.text),
                   scene="working", user_id=user)
    elif case.carrier == "escaped_json":
        client.add(_tool_trace("Save the note", case.text), scene="coding", user_id=user)
    elif case.carrier == "workspace_id":
        client.add(_tool_trace("Fix the build", {"path": "ci.yml"}), scene="coding", user_id=user,
                   workspace_id=case.text)
    else:
        raise ValueError(f"unknown carrier {case.carrier!r}")


def files_holding(root: Path, needles: list[str]) -> set[str]:
    """The needles some file under ``root`` holds (as UTF-8 bytes)."""
    found: set[str] = set()
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found.update(n for n in needles if n.encode("utf-8") in data)
    return found


def leaked_cases(cases: list[Case], workdir: Path) -> list[Case]:
    """The cases whose secret some file holds after writing them, with the client open and
    after it closed (one client per carrier, one user per case)."""
    leaked: list[Case] = []
    by_carrier: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_carrier[case.carrier].append(case)
    for carrier, group in by_carrier.items():
        root = workdir / carrier
        needles = [c.needle for c in group]
        with HyMemoryClient(mode="lite", data_dir=root, embeddings=HashingEmbeddings(dims=32)) as client:
            for number, case in enumerate(group):
                write_case(client, case, user=f"u{number}")
            found = files_holding(root, needles)  # while open: write-ahead logs included
        found |= files_holding(root, needles)
        leaked += [c for c in group if c.needle in found]
    return leaked


# --------------------------------------------------------------------------- precision
def _locomo(data: Path) -> Iterator[list[dict[str, Any]]]:
    for conv in json.loads((data / "locomo" / "locomo_dev5.json").read_text(encoding="utf-8")):
        sessions = conv["conversation"]
        for key, turns in sessions.items():
            if key.startswith("session_") and isinstance(turns, list):
                yield [{"role": "user", "content": t.get("text", "")} for t in turns]


def _tau(data: Path) -> Iterator[list[dict[str, Any]]]:
    for dialogue in json.loads((data / "tau_bench" / "airline_dev100.json").read_text(encoding="utf-8")):
        yield dialogue["traj"]  # the airline policy (system) included: it speaks of passengers


def _bfcl(data: Path) -> Iterator[list[dict[str, Any]]]:
    for path in sorted((data / "bfcl_v4_memory" / "memory_prereq_conversation").glob("*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                for turn in record.get("question", []):
                    yield [m for m in turn if isinstance(m, dict)]


CORPORA = {"LoCoMo": _locomo, "tau-bench airline": _tau, "BFCL v4 memory": _bfcl}


def false_redactions(data: Path) -> dict[str, tuple[int, int, list[str]]]:
    """Per corpus: (messages, placeholders put in, a few redacted excerpts)."""
    out = {}
    for name, read in CORPORA.items():
        messages, count, examples = 0, 0, []
        for conversation in read(data):
            msgs = normalize_messages(conversation)
            messages += len(msgs)
            for msg in redact_messages(msgs):
                text = msg.content + json.dumps([c.arguments for c in msg.tool_calls], ensure_ascii=False)
                hits = text.count("[REDACTED:")
                if hits:
                    count += hits
                    examples.append(text[max(0, text.find("[REDACTED:") - 60):][:140])
        out[name] = (messages, count, examples)
    return out


#: Installed packages whose sources and docs stand for the code the coding scene stores.
CODE_PACKAGES = ("langgraph", "langchain_core", "sqlalchemy", "pydantic", "numpy", "requests", "urllib3",
                 "httpx", "openai", "faiss", "jieba", "hypothesis", "mcp", "psycopg", "pip")
_CODE_FILES = (".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".json", ".yaml", ".yml")


def _code_precision(examples: int) -> None:
    """Redactions in the paragraphs of :data:`CODE_PACKAGES`' files (a few are sample
    passwords of their docs, ``password="tiger"``; the rest are false), and vendor-shape
    keys found in the lines of every text file of site-packages (none is a real key)."""
    site = Path(sysconfig.get_paths()["purelib"])
    kinds: Counter[str] = Counter()
    paragraphs, shown = 0, 0
    for package in CODE_PACKAGES:
        for path in sorted((site / package).rglob("*")):
            if path.suffix not in _CODE_FILES or not path.is_file():
                continue
            for paragraph in path.read_text(encoding="utf-8", errors="replace").split("\n\n"):
                paragraphs += 1
                for start, end, kind in scan(paragraph):
                    kinds[kind] += 1
                    if shown < examples:
                        shown += 1
                        print(f"    {path.name}: {paragraph[max(0, start - 50):end + 10]!r}")
    print(f"code: {sum(kinds.values())} redactions in {paragraphs} paragraphs of {len(CODE_PACKAGES)} packages: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    lines = keys = 0
    for path in site.rglob("*"):
        if path.is_file() and (path.suffix in _CODE_FILES or path.name in ("RECORD", "METADATA")) \
                and path.stat().st_size < 2_000_000:
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                lines += 1
                keys += len(prefixed_tokens(line))
    print(f"code: {keys} vendor-shape keys (redact/prefixed.py) in {lines} lines of site-packages")


def scan_cost(data: Path, rounds: int = 5) -> tuple[int, float, float]:
    """``scan()`` of every LoCoMo turn's text: the turns, and the best and the median of
    ``rounds`` rounds in microseconds per turn (CPU time of this process)."""
    turns = [message["content"] for session in _locomo(data) for message in session]
    for text in turns[:200]:  # compile the rules and warm the caches outside the rounds
        scan(text)
    per_turn = []
    for _ in range(rounds):
        started = time.process_time()
        for text in turns:
            scan(text)
        per_turn.append((time.process_time() - started) / len(turns) * 1e6)
    per_turn.sort()
    return len(turns), per_turn[0], per_turn[len(per_turn) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--code", action="store_true",
                        help="also count redactions in installed packages' sources (a minute)")
    parser.add_argument("--cost", action="store_true", help="only measure scan() per LoCoMo turn (5 rounds)")
    args = parser.parse_args()
    if args.cost:
        turns, best, median = scan_cost(args.data)
        print(f"scan() of a LoCoMo turn ({turns} turns, 5 rounds, CPU time): "
              f"best {best:.1f} µs, median {median:.1f} µs")
        return
    cases = build_cases()
    with tempfile.TemporaryDirectory() as tmp:
        leaked = leaked_cases(cases, Path(tmp))
    print(f"recall: {len(cases) - len(leaked)} / {len(cases)} cases kept off disk "
          f"= {(len(cases) - len(leaked)) / len(cases):.3f}")
    by_kind = Counter(c.kind for c in cases)
    missed = Counter(c.kind for c in leaked)
    for kind in sorted(by_kind):
        print(f"  {kind:<22} {by_kind[kind] - missed[kind]:>4} / {by_kind[kind]}")
    for case in leaked[: args.examples]:
        print(f"  leaked: {case.kind} via {case.carrier}: {case.text[:80] or case.key!r}")
    print(f"redact_value of a {{'password': …}} dict: {redact_value({'password': 'x'})}")
    for name, held in (("HELD_OUT", HELD_OUT), ("HELD_OUT_2", HELD_OUT_2), ("HELD_OUT_3", HELD_OUT_3)):
        missed_by_hand = [(text, needle) for text, needle in held if needle in redact_text(text)]
        print(f"hand-written cases (bench/common/secret_heldout.py {name}): "
              f"{len(held) - len(missed_by_hand)} / {len(held)} redacted")
        for text, _ in missed_by_hand[: args.examples]:
            print(f"  missed: {text[:80]!r}")
    for name, clean in (("CLEAN_2", CLEAN_2), ("CLEAN_3", CLEAN_3)):
        changed = [text for text in clean if redact_text(text) != text]
        print(f"hand-written clean texts ({name}): {len(clean) - len(changed)} / {len(clean)} kept")
    for name, (messages, count, examples) in false_redactions(args.data).items():
        print(f"precision: {name}: {count} false redactions in {messages} messages")
        for example in examples[: args.examples]:
            print(f"    {example!r}")
    if args.code:
        _code_precision(args.examples)


if __name__ == "__main__":
    main()
