"""Edits read from a local git work tree (``MEMORY_CODING_CHAIN_REPO_ROOT``). Best effort.

For each file a write touched (tool-call paths, patch headers) that lies in the work
tree and for which the trace itself carried no edit, the change is
``base → work-tree text`` where ``base`` is the text the chain last saw of that file
(a snapshot kept in the chain store, valid while HEAD has not moved) or else the HEAD
version (``git show HEAD:<file>``; empty for a new, untracked file). The first read of
a file is therefore exactly ``git diff HEAD -- <file>``; later writes record only what
changed since. Symbols are located in the full work-tree text. Every touched file's
snapshot is refreshed, so edits already recorded from the trace are not read again.

Any git failure (not a repository, git missing, binary or huge file, timeout) yields
no edit for that file and is logged at debug level.

With a ``redact`` function (secret redaction on), every text read from the work tree or
from HEAD passes through it first: snapshots, diffs and rounds only ever hold the
redacted text, and a secret that did not change never shows up as an edit.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from hy_memory_langgraph.chain.diffs import diff_lines
from hy_memory_langgraph.chain.edits import Edit, normalize_path
from hy_memory_langgraph.chain.store import ChainStore
from hy_memory_langgraph.chain.symbols import split_hunk

log = logging.getLogger(__name__)

_TIMEOUT_S: Final = 5.0
_MAX_BYTES: Final = 1_000_000
_NO_HEAD: Final = "-"


class GitWorkTree:
    """A git work tree read through ``git`` subprocesses (read-only: no git writes).

    Args:
        root: The work-tree directory (``MEMORY_CODING_CHAIN_REPO_ROOT``).
        redact: Applied to every text read (work tree and HEAD), e.g. secret redaction.
    """

    def __init__(self, root: str | os.PathLike[str], *, redact: Callable[[str], str] | None = None) -> None:
        self.root = Path(root)
        self.root_text = str(self.root)
        self._redact = redact

    def _git(self, *args: str) -> str | None:
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            done = subprocess.run(["git", "-C", self.root_text, *args], capture_output=True,
                                  timeout=_TIMEOUT_S, check=False, env=env)
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("chain git %s failed: %s", args[:1], exc)
            return None
        if done.returncode != 0:
            return None
        try:
            return done.stdout.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def head(self) -> str:
        out = self._git("rev-parse", "--verify", "-q", "HEAD")
        return out.strip() if out else _NO_HEAD

    def is_repo(self) -> bool:
        return (self._git("rev-parse", "--is-inside-work-tree") or "").strip() == "true"

    def relative(self, path: str) -> str | None:
        """``path`` relative to the root when it lies inside, else ``None``."""
        p = path.strip()
        full = Path(p) if os.path.isabs(p) else self.root / normalize_path(p)
        try:
            rel = os.path.relpath(os.path.realpath(full), os.path.realpath(self.root))
        except ValueError:
            return None
        if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
            return None
        return rel.replace(os.sep, "/")

    def read_lines(self, rel: str) -> list[str] | None:
        """Current work-tree lines of ``rel`` (``None``: missing, binary or too large)."""
        text = self._read(rel)
        return None if text is None else text.splitlines()

    def _read(self, rel: str) -> str | None:
        path = self.root / rel
        try:
            if not path.is_file() or path.stat().st_size > _MAX_BYTES:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if b"\0" in data:
            return None
        text = data.decode("utf-8", errors="replace")
        return self._redact(text) if self._redact else text

    def head_text(self, rel: str) -> str:
        """The HEAD version of ``rel`` (``git show HEAD:<rel>``), ``""`` when absent."""
        out = self._git("show", f"HEAD:{rel}")
        if out is None or "\0" in out:
            return ""
        return self._redact(out) if self._redact else out

    def edits(self, store: ChainStore, owner: str, branch: str | None, files: Iterable[str],
              *, skip: Iterable[str] = (), asked: dict[str, str] | None = None,
              position: int = 0) -> list[Edit]:
        """Edits of ``files`` since last seen; snapshots of every file refreshed.

        Args:
            store: Keeps the snapshots.
            owner, branch: The chain owner and branch of the write.
            files: Paths touched by the write (absolute or relative to the root).
            skip: Files (relative) whose edits came from the trace: snapshot only.
            asked: File (relative) → the user words of its last edit.
            position: Ordering position of the produced edits.
        """
        rels = list(dict.fromkeys(r for r in (self.relative(f) for f in files) if r))
        if not rels or not self.is_repo():
            return []
        head, skipped, out = self.head(), set(skip), []
        for rel in rels:
            current = self._read(rel)
            if current is None:
                continue
            seen = store.snapshot(owner, branch, self.root_text, rel)
            base = seen[1] if seen and seen[0] == head else None
            if base is None:
                base = self.head_text(rel) if head != _NO_HEAD else ""
            store.save_snapshot(owner, branch, self.root_text, rel, head, current)
            if rel in skipped or base == current:
                continue
            new_lines = current.splitlines()
            for hunk in diff_lines(base.splitlines(), new_lines):
                for symbol, removed, added in split_hunk(hunk, prefix=new_lines[:hunk.new_start]):
                    if removed or added:
                        out.append(Edit(rel, symbol, tuple(removed), tuple(added), "git",
                                        position, (asked or {}).get(rel, "")))
        return out

