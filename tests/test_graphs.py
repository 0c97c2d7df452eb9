"""The deployable graphs named in langgraph.json load and run."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from hy_memory_langgraph.flows.diagrams import render_diagrams

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_graphs_remember_and_recall(monkeypatch) -> None:
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    paths = {spec.split(":")[0] for spec in graphs.values()}
    assert paths == {"./graphs/memory.py"}
    spec = importlib.util.spec_from_file_location("hy_deploy_graphs", ROOT / "graphs" / "memory.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "hy_deploy_graphs", module)
    spec.loader.exec_module(module)
    remember, recall = (getattr(module, spec.split(":")[1]) for spec in (graphs["remember"], graphs["recall"]))
    written = remember.invoke({"messages": [{"role": "user", "content": "I collect vinyl records"}],
                               "user_id": "studio"})["result"]
    assert written["success"] and written["scene"] == "chat"
    found = recall.invoke({"query": "vinyl", "user_ids": ["studio"]})["result"]
    assert found["memories"][0]["content"] == "I collect vinyl records"
    module.client().close()


def test_docs_graphs_are_generated_from_the_compiled_graphs() -> None:
    expected = render_diagrams()
    assert "subgraph productivity" in expected and "judge_scene" in expected
    assert (ROOT / "docs" / "graphs.md").read_text(encoding="utf-8") == expected, (
        "docs/graphs.md is stale: python -m hy_memory_langgraph.flows.diagrams > docs/graphs.md")
