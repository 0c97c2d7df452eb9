"""Export and import of a whole memory: rows of JSON, an exact round trip.

An export is a sequence of JSON objects (one per line in a JSONL file), each with a
``type``:

| type | what | fields |
|---|---|---|
| ``header`` | first row | ``format`` (``"hy-memory-export"``), ``version``, ``exported_at``, ``embedding_model`` |
| ``memory`` | one chat memory, experience or fact, any status, exactly as stored (id, content, metadata, ``memory_at``, status, ``supersedes`` / ``superseded_by``, version, times, internal fields) | ``scene``, ``id``, ``value`` |
| ``event`` | one history event (``history(memory_id)`` reads them) | ``scene``, ``key``, ``value`` |
| ``trace`` | the conversation log of earlier writes and the last-turns window (extraction context) | ``store`` (``chat`` / ``productivity``), ``namespace``, ``key``, ``value`` |
| ``chain_thread`` | one coding version-chain thread with its rounds | ``value`` |
| ``workflow_file`` | one workflow-memory markdown file | ``path`` (relative to ``{data_dir}/workflow``), ``text`` |
| ``footer`` | last row: proves the export is complete | ``rows`` (rows before it), ``counts`` |

With ``MEMORY_REDACT_SECRETS`` on (the default), an import is written through the stores'
privacy gate (:mod:`hy_memory_langgraph.redact.gate`) as a write is: every text of every
row (memories, history, traces, version-chain rounds, workflow files, metadata at any
depth, names and sources included) is redacted, and a row whose place (a memory id, a user
id, a key, a namespace label) carries a secret is refused and reported, never filed under
another name. U+0000 is dropped. An export of a store that redacted is unchanged by this
(redaction is idempotent); one made with redaction off loses its secrets on the way in.

An import writes only the users the caller names (``user_ids``): a row of anyone else
(a memory, its history, a trace, a version-chain thread, a workflow file) is not written
and is counted in the report's ``refused_users``. ``user_ids=None`` writes every user
of the file (restoring a whole data dir); an import must say which.

Not exported: vectors and the FAISS/BM25 indexes (derived: recomputed on import, with
the importing client's embedding model; free when its embedding cache already holds
them), git snapshots of the version chain (work-tree caches), the embedding cache, the
LLM usage counters. Importing into an empty data dir with the same embedding model gives
identical ``search`` / ``get`` / ``history`` results; importing into a non-empty one
replaces records with the same ids and keeps the rest.

Example:
    >>> rows = list(export_rows(client))  # doctest: +SKIP
    >>> import_rows(other_client, rows, user_ids=["u1"])["memory"]  # doctest: +SKIP
    12
"""

from __future__ import annotations

import enum
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

from hy_memory_langgraph.chain.store import owner_of
from hy_memory_langgraph.errors import InvalidInputError
from hy_memory_langgraph.ids import require_ids
from hy_memory_langgraph.limits import check_import_row, check_user_ids
from hy_memory_langgraph.models import model_identity
from hy_memory_langgraph.redact.gate import carries_secret, gate
from hy_memory_langgraph.repos.base import RecordRepository
from hy_memory_langgraph.repos.namespaces import encode_label
from hy_memory_langgraph.repos.trace import TraceRepository
from hy_memory_langgraph.scenes import PRODUCTIVITY_SCENES
from hy_memory_langgraph.services.context import MemoryContext
from hy_memory_langgraph.timeutil import iso, utcnow
from hy_memory_langgraph.values import without_nul
from hy_memory_langgraph.workflow.files import escape_name

_EXPORT_FORMAT: Final = "hy-memory-export"
_EXPORT_VERSION: Final = 1
_ROW_TYPES: Final = ("header", "memory", "event", "trace", "chain_thread", "workflow_file", "footer")
_FLUSH: Final = 256
_SCENES: Final = ("chat", *PRODUCTIVITY_SCENES)


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "unset"


#: An argument the caller did not pass (``import_rows`` requires ``user_ids``).
UNSET: Final = Unset.UNSET


def _repo(context: MemoryContext, scene: str) -> RecordRepository:
    return context.chat_repo if scene == "chat" else context.productivity_repo(scene)


def _traces(context: MemoryContext, store: str) -> TraceRepository:
    if store not in ("chat", "productivity"):
        raise InvalidInputError(f"trace store {store!r} is unknown: expected 'chat' or 'productivity'")
    return context.chat_traces if store == "chat" else context.productivity_traces


def _workflow_files(root: Path) -> Iterator[tuple[str, str]]:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.md")):
        if not path.name.startswith("."):
            yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")


def export_rows(context: MemoryContext, embeddings: Any, workflow_dir: Path, *,
                user_ids: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every row of an export (see the module docstring), header first, footer last.

    Args:
        context: The client's context (stores and repositories).
        embeddings: The client's embedding model (named in the header).
        workflow_dir: The workflow-memory root.
        user_ids: Export only these users (default: everyone).
    """
    users = None if user_ids is None else set(user_ids)
    labels = None if users is None else {encode_label(u) for u in users}
    owners = None if users is None else tuple(owner_of(u, None) for u in users)
    dirs = None if users is None else {escape_name(u) for u in users}
    counts: Counter[str] = Counter()
    yield {"type": "header", "format": _EXPORT_FORMAT, "version": _EXPORT_VERSION,
           "exported_at": iso(utcnow()), "embedding_model": model_identity(embeddings)}

    def counted(row: dict[str, Any]) -> dict[str, Any]:
        counts[row["type"]] += 1
        return row

    for scene in _SCENES:
        for what, key, value in _repo(context, scene).dump():
            if users is not None and value.get("user_id") not in users:
                continue
            if what == "record":
                yield counted({"type": "memory", "scene": scene, "id": key, "value": value})
            else:
                yield counted({"type": "event", "scene": scene, "key": key, "value": value})
    for store in ("chat", "productivity"):
        for namespace, key, value in _traces(context, store).dump():
            if labels is None or namespace[1] in labels:
                yield counted({"type": "trace", "store": store, "namespace": list(namespace),
                               "key": key, "value": value})
    for thread in context.chain_store.dump():
        if owners is None or thread["owner"].startswith(owners):
            yield counted({"type": "chain_thread", "value": thread})
    for path, text in _workflow_files(workflow_dir):
        if dirs is None or path.split("/", 1)[0] in dirs:
            yield counted({"type": "workflow_file", "path": path, "text": text})
    yield {"type": "footer", "rows": sum(counts.values()), "counts": dict(counts)}


def _row_user(row: dict[str, Any]) -> str:
    """Whose row ``row`` is (``""`` when it does not say): the user of a memory or event,
    of a trace's namespace, of a chain thread's owner, of a workflow file's directory."""
    kind = row.get("type")
    value = row.get("value")
    if kind in ("memory", "event"):
        user = value.get("user_id") if isinstance(value, dict) else None
    elif kind == "trace":
        namespace = row.get("namespace")
        user = unquote(namespace[1]) if isinstance(namespace, list) and len(namespace) > 1 \
            and isinstance(namespace[1], str) else None
    elif kind == "chain_thread":
        owner = value.get("owner") if isinstance(value, dict) else None
        user = unquote(owner.split("|", 1)[0]) if isinstance(owner, str) and "|" in owner else None
    else:
        path = row.get("path")
        user = unquote(path.split("/", 1)[0]) if isinstance(path, str) and "/" in path else None
    return user if isinstance(user, str) else ""


class _Importer:
    """Buffers rows per destination and writes them in batches."""

    def __init__(self, context: MemoryContext, workflow_dir: Path, users: Collection[str] | None) -> None:
        self.context = context
        self.workflow_dir = workflow_dir
        self.users = None if users is None else frozenset(users)
        self.refused_users: Counter[str] = Counter()
        self.redact = context.config.redact_secrets
        self.seal = gate(self.redact)
        self.records: dict[str, list[dict[str, Any]]] = {s: [] for s in _SCENES}
        self.events: dict[str, list[tuple[str, dict[str, Any]]]] = {s: [] for s in _SCENES}
        self.traces: dict[str, list[tuple[list[str], str, dict[str, Any]]]] = {"chat": [], "productivity": []}
        self.threads: list[dict[str, Any]] = []
        self.refused: list[dict[str, str]] = []
        self.pending = 0

    def add(self, row: dict[str, Any], line: int) -> bool:
        """Buffer (or write) one row; ``False`` when it is refused (its user is not one the
        import may write, or its place carries a secret)."""
        kind = row.get("type")
        if kind not in _ROW_TYPES[1:-1]:
            raise InvalidInputError(f"type {kind!r} is unknown: expected one of {', '.join(_ROW_TYPES)}")
        if self.users is not None and (user := _row_user(row)) not in self.users:
            self.refused_users[user] += 1
            return False
        try:
            if self._refused_place(row):
                return False
            if kind in ("memory", "event"):
                scene = row["scene"]
                if scene not in _SCENES:
                    raise InvalidInputError(f"scene {scene!r} is unknown: expected one of {', '.join(_SCENES)}")
                if kind == "memory":
                    self.records[scene].append(self._clean(row["value"]))
                else:
                    self.events[scene].append((str(row["key"]), self._clean(row["value"])))
            elif kind == "trace":
                _traces(self.context, row["store"])
                self.traces[row["store"]].append((list(row["namespace"]), str(row["key"]),
                                                  self._clean(row["value"])))
            elif kind == "chain_thread":
                self.threads.append(self._clean(row["value"]))
            elif kind == "workflow_file":
                self._write_file(str(row["path"]), self.seal(without_nul(str(row["text"]))))
                return True
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"row {line} ({kind}) is missing or has a bad field: {exc}") from exc
        self.pending += 1
        if self.pending >= _FLUSH:
            self.flush()
        return True

    def _refused_place(self, row: dict[str, Any]) -> bool:
        """Whether the row's place (ids, key, namespace labels, owner) carries a secret
        (the row is then refused, reported in ``refused``; with redaction off, never)."""
        if not self.redact:
            return False
        value = row.get("value") if isinstance(row.get("value"), dict) else {}
        places = [*map(str, row.get("namespace") or ()), *(str(row[k]) for k in ("id", "key") if k in row),
                  *(str(value[k]) for k in ("memory_id", "user_id", "owner") if value.get(k) is not None)]
        if not any(carries_secret(p) for p in places):
            return False
        self.refused.append({"memory_id": str(value.get("memory_id", row.get("key", row.get("id")))),
                             "user_id": str(value.get("user_id")),
                             "reason": "an id, key or name placing the row holds what looks like a secret"})
        return True

    @staticmethod
    def _clean(value: Any) -> dict[str, Any]:
        """A row's value as a write would take it: U+0000 dropped (the stores' gate
        redacts it on the way in)."""
        if not isinstance(value, dict):
            raise TypeError(f"value must be an object, not {type(value).__name__}")
        return without_nul(value)  # of bounded depth: import_rows checked the row

    def _write_file(self, relative: str, text: str) -> None:
        root = self.workflow_dir.resolve()
        target = (root / relative).resolve()
        if root not in target.parents or target.suffix != ".md":
            raise InvalidInputError(f"workflow_file path {relative!r} must be a .md file inside the workflow dir")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, target)

    def flush(self) -> None:
        for scene in _SCENES:
            if self.records[scene] or self.events[scene]:
                _, refused = _repo(self.context, scene).restore(self.records[scene], self.events[scene])
                self.refused += refused
                self.records[scene], self.events[scene] = [], []
        for store, rows in self.traces.items():
            if rows:
                _traces(self.context, store).restore(rows)
                self.traces[store] = []
        if self.threads:
            self.context.chain_store.restore(self.threads)
            self.threads = []
        self.pending = 0


def import_rows(context: MemoryContext, workflow_dir: Path, rows: Iterable[dict[str, Any]], *,
                user_ids: Sequence[str] | str | None | Unset, on_row: Callable[[int], None] | None = None,
                ) -> dict[str, Any]:
    """Write an export's rows into this data dir (see the module docstring).

    Args:
        context: The importing client's context.
        workflow_dir: The workflow-memory root.
        rows: The rows, header first.
        user_ids: The users whose rows are written (a string is one user); ``None``:
            every user of the file. Required.
        on_row: Called with the number of rows read so far (a progress bar).

    Returns:
        Counts per row type (rows written), ``rows`` (rows written), ``complete`` (the
        footer was there and matched the rows read), ``refused``: the memory rows not
        written, each with its ``memory_id``, ``user_id`` and ``reason`` (an id that is
        another user's memory here, not an id of the row's scene and kind, or a place
        that carries a secret), and
        ``refused_users``: rows not written because their user is not in ``user_ids``,
        counted per user (``""``: rows that name no user).

    Raises:
        InvalidInputError: ``user_ids`` not given or invalid, no header, an unknown format
            or version, a row over the limits (:mod:`hy_memory_langgraph.limits`) or a bad
            row (rows before it are written).
    """
    if user_ids is UNSET:
        raise InvalidInputError(
            "import_memories needs user_ids: the users whose rows this import may write, e.g. "
            "user_ids=['user_123'] (rows of other users are refused and counted), or user_ids=None "
            "to write every user of the file (restoring a whole data dir)")
    limits = context.config.limits
    check_user_ids(limits, user_ids)
    users = None if user_ids is None else require_ids(user_ids, "user_ids")
    importer = _Importer(context, workflow_dir, users)
    counts: Counter[str] = Counter()
    footer: dict[str, Any] | None = None
    line = read = 0
    for line, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise InvalidInputError(f"row {line} is not a JSON object")
        check_import_row(limits, row, line)
        if line == 1:
            if row.get("type") != "header" or row.get("format") != _EXPORT_FORMAT:
                raise InvalidInputError(
                    f"row 1 is not a {_EXPORT_FORMAT} header: is this a file written by `hy-memory export`?")
            if row.get("version") != _EXPORT_VERSION:
                raise InvalidInputError(f"export version {row.get('version')!r} is not supported "
                                        f"(this version reads {_EXPORT_VERSION})")
        elif row.get("type") == "footer":
            footer = row
        elif footer is not None:
            raise InvalidInputError(f"row {line} follows the footer")
        else:
            read += 1
            if importer.add(row, line):
                counts[str(row["type"])] += 1
        if on_row is not None:
            on_row(line)
    if line == 0:
        raise InvalidInputError("the export is empty: expected a header row first")
    importer.flush()
    total = sum(counts.values())
    return {**{t: counts.get(t, 0) for t in _ROW_TYPES[1:-1]}, "rows": total,
            "complete": footer is not None and footer.get("rows") == read,
            "refused": importer.refused, "refused_users": dict(importer.refused_users)}
