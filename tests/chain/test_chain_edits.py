"""Version chain, edit sources: diff text, Edit/MultiEdit/str_replace args, apply_patch,
whole-file writes, failed tool results, symbol location. Pure functions, no store."""

from __future__ import annotations

import json
from typing import Any

from hy_memory_langgraph.chain.diffs import (
    diff_lines,
    parse_apply_patch,
    parse_unified_diff,
)
from hy_memory_langgraph.chain.edits import extract_edits, result_failed
from hy_memory_langgraph.chain.symbols import FILE_SYMBOL, split_hunk, symbol_at
from hy_memory_langgraph.messages.normalize import normalize_messages
from hy_memory_langgraph.messages.types import Msg
from tests.productivity.support import tool_trace


def _msgs(*turns: list[dict[str, Any]]) -> list[Msg]:
    return normalize_messages([m for turn in turns for m in turn])


def _one(edits: list[Any]) -> Any:
    assert len(edits) == 1, edits
    return edits[0]


GIT_DIFF = """Here is the fix:
```diff
diff --git a/src/search.py b/src/search.py
index 1111111..2222222 100644
--- a/src/search.py
+++ b/src/search.py
@@ -10,7 +10,7 @@ class SearchClient:
     def fetch(self, query):
         url = self.base + query
-        return http.get(url, timeout=10)
+        return http.get(url, timeout=30)

     def close(self):
         pass
```
"""


def test_unified_diff_in_message_text() -> None:
    msgs = _msgs([{"role": "user", "content": "Raise the timeout"},
                  {"role": "assistant", "content": GIT_DIFF}])
    edit = _one(extract_edits(msgs))
    assert (edit.file, edit.symbol, edit.source) == ("src/search.py", "fetch", "diff")
    assert edit.removed == ("        return http.get(url, timeout=10)",)
    assert edit.added == ("        return http.get(url, timeout=30)",)
    assert edit.asked == "Raise the timeout"


def test_plain_unified_diff_hunk_header_gives_symbol_and_sql_comment_lines() -> None:
    text = ("--- a/db/q.sql\n+++ b/db/q.sql\n@@ -1,2 +1,2 @@ function load_users(\n"
            "--- old comment\n+-- new comment\n   select 1;\n")
    patch = _one(parse_unified_diff(text))
    assert patch.file == "db/q.sql"
    assert patch.hunks[0].lines == [("-", "-- old comment"), ("+", "-- new comment"),
                                   (" ", "  select 1;")]
    text2 = "--- a/x.go\n+++ b/x.go\n@@ -5,3 +5,3 @@ func (s *Server) Handle(w http.ResponseWriter) {\n \tx := 1\n-\ty := 2\n+\ty := 3\n"
    assert split_hunk(parse_unified_diff(text2)[0].hunks[0])[0][0] == "Handle"


def test_claude_code_edit_args() -> None:
    args = {"file_path": "/repo/src/search.py",
            "old_string": "    def fetch(self, q):\n        return get(q, timeout=10)",
            "new_string": "    def fetch(self, q):\n        return get(q, timeout=30)"}
    edit = _one(extract_edits(_msgs(tool_trace("raise it", tool="Edit", args=args,
                                               result="The file has been updated."))))
    assert (edit.file, edit.symbol, edit.source, edit.asked) == (
        "/repo/src/search.py", "fetch", "edit", "raise it")
    assert edit.removed == ("        return get(q, timeout=10)",)
    assert edit.added == ("        return get(q, timeout=30)",)


def test_multiedit_args_give_one_piece_per_edit_and_root_relative_paths() -> None:
    args = {"file_path": "/repo/app.py", "edits": [
        {"old_string": "def a():\n    return 1", "new_string": "def a():\n    return 2"},
        {"old_string": "def b():\n    return 1", "new_string": "def b():\n    return 3"},
    ]}
    edits = extract_edits(_msgs(tool_trace("bump", tool="MultiEdit", args=args, result="ok")),
                          root="/repo")
    assert [(e.file, e.symbol, e.added) for e in edits] == [
        ("app.py", "a", ("    return 2",)), ("app.py", "b", ("    return 3",))]


def test_str_replace_editor_args_create_and_insert() -> None:
    replace = {"command": "str_replace", "path": "lib/util.py",
               "old_str": "class Cache:\n    size = 1", "new_str": "class Cache:\n    size = 8"}
    create = {"command": "create", "path": "lib/new.py", "file_text": "x = 1\ny = 2\n"}
    insert = {"command": "insert", "path": "lib/util.py", "insert_line": 3, "new_str": "z = 0"}
    view = {"command": "view", "path": "lib/util.py"}
    msgs = _msgs(tool_trace("a", tool="str_replace_editor", args=replace, call_id="c1"),
                 tool_trace("b", tool="str_replace_editor", args=create, call_id="c2"),
                 tool_trace("c", tool="str_replace_editor", args=insert, call_id="c3"),
                 tool_trace("d", tool="str_replace_editor", args=view, call_id="c4"))
    got = [(e.file, e.symbol, e.removed, e.added, e.source) for e in extract_edits(msgs)]
    assert got == [
        ("lib/util.py", "Cache", ("    size = 1",), ("    size = 8",), "edit"),
        ("lib/new.py", FILE_SYMBOL, (), ("x = 1", "y = 2"), "write"),
        ("lib/util.py", FILE_SYMBOL, (), ("z = 0",), "edit"),
    ]


APPLY_PATCH = """*** Begin Patch
*** Update File: src/search.py
@@ class SearchClient
@@     def fetch(self, query):
         url = self.base + query
-        return http.get(url)
+        return http.get(url, timeout=30)
*** Add File: src/retry.py
+def retry(fn):
+    return fn
*** Delete File: src/old.py
*** End Patch"""


def test_apply_patch_envelope_in_args_and_in_shell_command_list() -> None:
    patch = parse_apply_patch(APPLY_PATCH)
    assert [(p.file, p.whole) for p in patch] == [("src/search.py", False), ("src/retry.py", True)]
    assert patch[0].hunks[0].header == "def fetch(self, query):"
    for args in ({"input": APPLY_PATCH}, {"command": ["apply_patch", APPLY_PATCH]}):
        edits = extract_edits(_msgs(tool_trace("timeout", tool="apply_patch", args=args)))
        assert [(e.file, e.symbol, e.source) for e in edits] == [
            ("src/search.py", "fetch", "patch"), ("src/retry.py", FILE_SYMBOL, "write")]
        assert edits[0].added == ("        return http.get(url, timeout=30)",)


def test_apply_patch_update_without_at_at_header() -> None:
    text = "*** Begin Patch\n*** Update File: k.py\n-a = 1\n+a = 2\n*** End Patch\n"
    edit = _one(extract_edits(_msgs(tool_trace("x", tool="apply_patch", args={"input": text}))))
    assert (edit.file, edit.symbol, edit.removed, edit.added) == ("k.py", FILE_SYMBOL, ("a = 1",),
                                                                  ("a = 2",))


def test_apply_patch_with_plain_unified_diff() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    edit = _one(extract_edits(_msgs(tool_trace("x", tool="apply_patch", args={"patch": diff}))))
    assert (edit.file, edit.symbol, edit.removed, edit.added) == ("m.py", "f", ("    return 1",),
                                                                  ("    return 2",))


def test_whole_file_write_tool() -> None:
    args = {"file_path": "notes/plan.md", "content": "# Plan\n\n- step 1\n"}
    edit = _one(extract_edits(_msgs(tool_trace("write the plan", tool="Write", args=args))))
    assert (edit.file, edit.symbol, edit.removed, edit.added, edit.source) == (
        "notes/plan.md", FILE_SYMBOL, (), ("# Plan", "", "- step 1"), "write")
    read = {"file_path": "notes/plan.md", "content": "pattern"}
    assert extract_edits(_msgs(tool_trace("grep", tool="Grep", args=read))) == []


def test_failed_tool_results_drop_their_edits() -> None:
    args = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    failures = ["<tool_use_error>String to replace not found in file.</tool_use_error>",
                "Error: file a.py does not exist", "No match found for old_string",
                "patch failed: hunk #1 FAILED at 3", "No replacement was performed.",
                "apply_patch verification failed: Failed to find expected lines"]
    for text in failures:
        assert extract_edits(_msgs(tool_trace("x", tool="Edit", args=args, result=text))) == []
    flagged = [{"role": "user", "content": "x"},
               {"role": "assistant", "content": [
                   {"type": "tool_use", "id": "t1", "name": "Edit", "input": args}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "boom"}]}]
    assert extract_edits(normalize_messages(flagged)) == []
    ok = ("The file a.py has been updated. Here's the result of running `cat -n`:\n"
          "  1  raise KeyError('user not found')")
    assert len(extract_edits(_msgs(tool_trace("x", tool="Edit", args=args, result=ok)))) == 1
    assert not result_failed(None)


def test_duplicates_from_several_sources_count_once_and_history_reads_are_ignored() -> None:
    args = {"file_path": "src/search.py",
            "old_string": "        return http.get(url, timeout=10)",
            "new_string": "        return http.get(url, timeout=30)"}
    msgs = _msgs(
        [{"role": "user", "content": "Raise the timeout"}, {"role": "assistant", "content": GIT_DIFF}],
        tool_trace("apply it", tool="Edit", args=args, call_id="c1"),
        tool_trace("show history", tool="bash", args={"command": "git log -p -3"}, call_id="c2",
                   result="commit abc\n" + GIT_DIFF.replace("timeout=30", "timeout=99")),
    )
    edit = _one(extract_edits(msgs))
    assert edit.symbol == "fetch" and edit.asked == "Raise the timeout"


def test_symbol_location_rules() -> None:
    lines = ["import os", "", "class A:", "    def run(self):", "        x = 1", "",
             "    # note", "        y = 2", "if __name__ == '__main__':", "    main()"]
    assert symbol_at(lines, 4) == "run"
    assert symbol_at(lines, 7) == "run"  # comment at a lower indent is not a scope
    assert symbol_at(lines, 3) == "run"  # a definition line names itself
    assert symbol_at(lines, 9) == FILE_SYMBOL  # module code, not a function
    assert symbol_at(lines, 0) == FILE_SYMBOL
    js = ["export async function load(id) {", "  const r = await get(id);", "}"]
    assert symbol_at(js, 1) == "load"
    hunks = diff_lines(["def f():", "    return 1", "", "", "def g():", "    return 1"],
                       ["def f():", "    return 2", "", "", "def g():", "    return 3"], context=3)
    assert [s for h in hunks for s, _, _ in split_hunk(h)] == ["f", "g"]
    new_fn = diff_lines(["x = 1"], ["x = 1", "", "def added():", "    return 0"])
    assert split_hunk(new_fn[0])[0][0] == "added"


def test_tool_call_arguments_as_json_string_are_parsed() -> None:
    raw = json.dumps({"path": "k.py", "old_str": "a = 1", "new_str": "a = 2"})
    msgs = normalize_messages([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "str_replace_editor", "arguments": raw}}]},
        {"role": "tool", "tool_call_id": "c", "content": "edited"}])
    assert _one(extract_edits(msgs)).added == ("a = 2",)
