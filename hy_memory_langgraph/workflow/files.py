"""Markdown files of the workflow memory, one directory per user.

Layout under ``config.workflow_dir``::

    <escaped user_id>/user.md              profile                  ┐ no memory app id
    <escaped user_id>/memory.md            global long-term memory  │
    <escaped user_id>/workflows/<id>.md    workflow:{id}            ┘
    <escaped user_id>/apps/<escaped app id>/…   the same three, for one memory app id
    <escaped user_id>/.lock                writers' lock (one per user, every app)

A memory app id is a storage scope of its own: nothing saved under one app id (or
under none) is read under another.

Writes are atomic (temp file in the same directory, fsync, ``os.replace``) and
happen under the user's lock (:meth:`WorkflowFiles.locked`), so readers
never see a half-written file and concurrent writers never lose each other's
entries (they re-read inside the lock).

The storage seam: :class:`WorkflowDocuments` is what the nodes and the service use
(``read``, ``write``, ``locked``, ``relative``, ``delete_user``). :class:`WorkflowFiles`
is the embedded default; :class:`~hy_memory_langgraph.workflow.database.WorkflowDatabase`
keeps the same documents in a database (``MEMORY_DB_URL``). The client picks one;
:func:`workflow_documents` turns a directory into files and passes a documents object
through.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable
from urllib.parse import quote

from hy_memory_langgraph.ids import require_clean_label, require_id
from hy_memory_langgraph.redact.gate import Seal, seal
from hy_memory_langgraph.workflow.entries import Entry, parse_entries
from hy_memory_langgraph.workflow.errors import WorkflowStorageError

#: Longest escaped file name (file systems allow 255 bytes).
_MAX_NAME = 200
_TITLES = {
    "user": "# user.md — 用户画像 (profile: identity, display and communication preferences)",
    "global": "# memory.md — 长期记忆 (global: aliases → workflows, cross-workflow facts, lessons)",
}


def escape_name(value: str) -> str:
    """A file-name-safe escape (percent-encoding; ``.`` and ``~`` escaped too).

    Names whose escape would be too long for a file system (over :data:`_MAX_NAME`
    characters, e.g. long non-ASCII ids) keep a readable head and end with ``~`` and a
    hash of the whole id. ``~`` is escaped everywhere else, so no id escapes to another
    id's hashed name: distinct ids never share a file.

    Example:
        >>> escape_name("a.b/c~d")
        'a%2Eb%2Fc%7Ed'
        >>> escape_name("v" * 300) == escape_name(escape_name("v" * 300))
        False
    """
    escaped = quote(value, safe="").replace(".", "%2E").replace("~", "%7E")
    if len(escaped) <= _MAX_NAME:
        return escaped
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]
    return f"{escaped[:_MAX_NAME - 40]}~{digest}"


def dimension_of(workflow_id: str | None) -> str:
    """``"global"`` or ``"workflow:{id}"``."""
    return "global" if workflow_id is None else f"workflow:{workflow_id}"


def relative_name(dimension: str, app_id: str | None = None) -> str:
    """A document's name inside a user's directory (``memory.md``, ``apps/crm/workflows/<id>.md``…).

    Example:
        >>> relative_name("global", "crm")
        'apps/crm/memory.md'
    """
    if dimension == "user":
        name = "user.md"
    elif dimension == "global":
        name = "memory.md"
    elif dimension.startswith("workflow:"):
        name = f"workflows/{escape_name(_placing(dimension[len('workflow:'):], 'workflow_id (workflowId)'))}.md"
    else:
        raise ValueError(f"unknown dimension {dimension!r}")
    return name if app_id is None else f"apps/{escape_name(_placing(app_id, 'memory_app_id (memoryAppId)'))}/{name}"


def _placing(value: str, field: str) -> str:
    """An id that names a document, checked as every id is and refused when it carries a
    credential: whatever path an id took here (a caller, a dynamic context, a message),
    no document is named by an invisible character or a secret."""
    return require_clean_label(require_id(value, field), field)


def render_document(dimension: str, entries: list[Entry]) -> str:
    """The markdown text of a dimension document (title, blank line, one line per entry)."""
    title = _TITLES.get(dimension) or f"# {dimension} — 工作流记忆 (fields, options, nodes, approval rules, risks)"
    return "\n".join([title, "", *(e.line() for e in entries)]) + "\n"


@runtime_checkable
class WorkflowDocuments(Protocol):
    """Where the dimension documents of every user are kept (per memory app id)."""

    def read(self, user_id: str, dimension: str, app_id: str | None = None) -> list[Entry]:
        """The entries of one dimension (``[]`` when there is no document)."""

    def write(self, user_id: str, dimension: str, entries: list[Entry],
              app_id: str | None = None) -> None:
        """Replace a dimension document (call inside :meth:`locked`)."""

    def locked(self, user_id: str) -> AbstractContextManager[None]:
        """Exclusive access to one user's documents (threads and processes)."""

    def relative(self, user_id: str, dimension: str, app_id: str | None = None) -> str:
        """The document's name as reported in results (``memory.md``…)."""

    def delete_user(self, user_id: str) -> int:
        """Erase every document of ``user_id`` (all app scopes); the number removed."""


def workflow_documents(source: str | Path | WorkflowDocuments, *, sealed: Seal = seal) -> WorkflowDocuments:
    """``source`` itself when it is a documents store, else files under that directory
    (each document passing ``sealed``, the privacy gate, before it is written)."""
    if isinstance(source, WorkflowDocuments):
        return source
    return WorkflowFiles(Path(source), sealed=sealed)


class WorkflowFiles:
    """Reads and writes the users' dimension documents under ``root``.

    Example:
        >>> files = WorkflowFiles(Path("/data/workflow"))
        >>> files.relative("u1", "global", app_id="crm")
        'apps/crm/memory.md'
    """

    def __init__(self, root: Path, *, sealed: Seal = seal) -> None:
        self.root = Path(root)
        #: The privacy gate every document passes before it is written.
        self.seal = sealed

    def user_dir(self, user_id: str) -> Path:
        """The user's directory."""
        return self.root / escape_name(user_id)

    def path(self, user_id: str, dimension: str, app_id: str | None = None) -> Path:
        return self.user_dir(user_id) / relative_name(dimension, app_id)

    def relative(self, user_id: str, dimension: str, app_id: str | None = None) -> str:
        """The file of a dimension relative to the user's directory (``apps/x/memory.md``)."""
        return relative_name(dimension, app_id)

    def read(self, user_id: str, dimension: str, app_id: str | None = None) -> list[Entry]:
        """The entries of one dimension (``[]`` when the file does not exist)."""
        path = self.path(user_id, dimension, app_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise WorkflowStorageError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc
        return parse_entries(text)

    def write(self, user_id: str, dimension: str, entries: list[Entry],
              app_id: str | None = None) -> None:
        """Replace a dimension document atomically (call inside :meth:`locked`)."""
        path = self.path(user_id, dimension, app_id)
        body = self.seal(render_document(dimension, entries))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                    handle.write(body)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise WorkflowStorageError(f"cannot write {path}: {type(exc).__name__}: {exc}") from exc

    def delete_user(self, user_id: str) -> int:
        """Remove every document of ``user_id`` (all app scopes); returns the files removed."""
        base = self.user_dir(user_id)
        if not base.exists():
            return 0
        with self.locked(user_id):
            files = [p for p in base.rglob("*") if p.is_file() and p.name != ".lock"]
            for path in files:
                path.unlink()
            for directory in sorted((p for p in base.rglob("*") if p.is_dir()), reverse=True):
                directory.rmdir()
        shutil.rmtree(base, ignore_errors=True)
        return len(files)

    @contextmanager
    def locked(self, user_id: str) -> Iterator[None]:
        """Exclusive access to one user's documents: ``flock`` on the user's ``.lock``, opened
        anew by each call (``flock`` excludes every other open of the file, this process's
        threads' too; closing it releases the lock)."""
        try:
            self.user_dir(user_id).mkdir(parents=True, exist_ok=True)
            handle = open(self.user_dir(user_id) / ".lock", "a+b")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise WorkflowStorageError(f"cannot lock {self.user_dir(user_id)}: {exc}") from exc
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield
