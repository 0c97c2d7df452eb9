"""Snapshots of approximate scopes: a cold open maps the saved index, replays the log
since it, and never serves what the database no longer holds.

Results are compared with a store that reads the same database without snapshots
(``snapshots=False``); both probe every list (``nprobe`` above the list count), so the
ranking is exact whichever lists a training chose, and scores agree within a float
tolerance.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import faiss
import numpy as np
import pytest
from langgraph.store.base import PutOp
from store_helpers import clustered_embed

from hy_memory_langgraph.store import ApproximateSearch, HyMemoryStore, IndexCache
from hy_memory_langgraph.store.sql import statements as sql
from hy_memory_langgraph.store.vector import scoped
from hy_memory_langgraph.store.vector.index import VectorIndex
from hy_memory_langgraph.store.vector.settings import ID_BYTES, POS_BITS
from hy_memory_langgraph.store.vector.mirror import Mirror
from hy_memory_langgraph.store.vector.snapshot import SnapshotDir

DIMS = 16
N = 3_000
NS = ("mem", "u1")


_embed = clustered_embed(DIMS, 30)


def _put(i: int, text: str | None = None) -> PutOp:
    return PutOp(NS, f"k{i}", {"text": text or f"c{i % 30} note {i}", "tag": f"t{i % 100}"})


class Stores:
    """Stores over one database; ``snapshot_dir`` is where saved scopes go."""

    def __init__(self, url: str | Path, name: str | None, snapshot_dir: Path | None, folder: Path) -> None:
        self.url, self.name, self.snapshot_dir, self.folder = url, name, snapshot_dir, folder
        self.opened: list[HyMemoryStore] = []

    def open(self, *, snapshots: bool = True, retention: int = 100_000) -> HyMemoryStore:
        settings = ApproximateSearch(min_vectors=1_000, nprobe=1_000, snapshots=snapshots,
                                     snapshot_dir=self.snapshot_dir)
        kwargs = {"index": {"dims": DIMS, "embed": _embed, "fields": ["text"]}, "approximate": settings,
                  "index_cache": IndexCache(1 << 30), "changelog_retention": retention}
        if self.name is not None:
            store = HyMemoryStore.from_url(str(self.url), name=self.name, **kwargs)  # type: ignore[arg-type]
        else:
            store = HyMemoryStore(self.url, **kwargs)  # type: ignore[arg-type]
        self.opened.append(store)
        return store

    def files(self) -> list[str]:
        return sorted(os.listdir(self.folder)) if self.folder.exists() else []


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "postgres":
        schemas = request.getfixturevalue("pg_schemas")
        made = Stores(schemas.url, schemas.prefix() + "snap", tmp_path / "ann", tmp_path / "ann")
    else:  # the default place: beside the database file
        made = Stores(tmp_path / "s.db", None, None, tmp_path / "s.db.ann")
    yield made
    for store in made.opened:
        store.close()


def _mirrors(store: HyMemoryStore) -> list[Mirror]:
    index = store._scoped
    assert index is not None
    return [m for (owner, _), m in index.cache._entries.items() if owner == index.owner]


def _hits(store: HyMemoryStore, query: str, **kwargs: object) -> list[tuple[str, float]]:
    return [(r.key, float(r.score or 0)) for r in store.search(NS, query=query, limit=10, **kwargs)]  # type: ignore[arg-type]


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [k for k, _ in got] == [k for k, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


QUERIES = ["c3 note 3", "c7 something", "c11 else", "c29 note 29"]


def _filled(stores: Stores) -> HyMemoryStore:
    writer = stores.open()
    writer.batch([_put(i) for i in range(N)])
    writer.search(NS, query="c1 x", limit=1)  # the first load builds the IVF index and saves it
    assert [m.index.is_approximate for m in _mirrors(writer)] == [True]
    assert any(name.endswith(".json") for name in stores.files())
    return writer


def test_a_cold_open_maps_the_saved_index(stores: Stores) -> None:
    _filled(stores)
    cold, plain = stores.open(), stores.open(snapshots=False)
    for query in QUERIES:
        _same(_hits(cold, query), _hits(plain, query))
        _same(_hits(cold, query, filter={"tag": "t7"}), _hits(plain, query, filter={"tag": "t7"}))
    assert [m.index.is_mapped for m in _mirrors(cold)] == [True]
    assert [m.index.is_mapped for m in _mirrors(plain)] == [False]
    mapped, built = _mirrors(cold)[0], _mirrors(plain)[0]
    # no reader threads started per search for the mapped lists (the file is in the page cache)
    for index in (mapped.index._base_pair.exact, mapped.index._base_pair.codes):  # type: ignore[union-attr]
        assert faiss.downcast_InvertedLists(index.invlists).prefetch_nthread == 0
    # the vectors and their codes (16 dims: 8 bits each and five float factors) stay in
    # the files; the snapshot's sorted id list is held (8 bytes each)
    assert built.nbytes() - mapped.nbytes() == N * DIMS * 4 + N * (DIMS + 20 + ID_BYTES) - N * 8


def test_changes_since_the_snapshot_are_replayed(stores: Stores) -> None:
    writer = _filled(stores)
    writer.close()
    other = stores.open()  # writes while nobody holds the scope
    other.batch([_put(5, "c3 note 3"), _put(N + 1, "c3 note 3"), PutOp(NS, "plain", {"tag": "t1"})])
    other.close()
    cold, plain = stores.open(), stores.open(snapshots=False)
    for query in QUERIES:
        _same(_hits(cold, query), _hits(plain, query))
    top = [k for k, _ in _hits(cold, "c3 note 3")]
    assert {"k3", "k5", f"k{N + 1}"} <= set(top[:3])
    assert [m.index.is_mapped for m in _mirrors(cold)] == [True]
    # and changes made after the cold open reach it as they reach any cached scope
    plain.put(NS, "k3", {"text": "c20 moved away", "tag": "t0"})
    assert "k3" not in [k for k, _ in _hits(cold, "c3 note 3")]
    _same(_hits(cold, "c20 moved"), _hits(plain, "c20 moved"))


def test_a_delete_erases_the_saved_index(stores: Stores) -> None:
    writer = _filled(stores)
    writer.delete(NS, "k3")
    assert stores.files() == []  # the files held k3's vector
    cold, plain = stores.open(), stores.open(snapshots=False)
    _same(_hits(cold, "c3 note 3"), _hits(plain, "c3 note 3"))
    assert "k3" not in [k for k, _ in _hits(cold, "c3 note 3")]
    assert [m.index.is_mapped for m in _mirrors(cold)] == [False]  # rebuilt, and saved again
    assert any(name.endswith(".json") for name in stores.files())


def test_a_removal_found_on_replay_erases_the_file(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _filled(stores)
    saved = {name: (stores.folder / name).read_bytes() for name in stores.files()}
    writer.delete(NS, "k3")  # discards the files ...
    for name, data in saved.items():  # ... which another host's folder would still hold
        (stores.folder / name).write_bytes(data)
    cold = stores.open()
    assert "k3" not in [k for k, _ in _hits(cold, "c3 note 3")]
    assert [m.index.is_mapped for m in _mirrors(cold)] == [True]
    assert stores.files() == []


def test_an_expired_item_erases_the_saved_index(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _filled(stores)
    writer.batch([PutOp(NS, "brief", {"text": "c3 note 3", "tag": "t0"}, ttl=1.0)])
    assert any(name.endswith(".json") for name in stores.files())
    later = sql.now_us() + 3_600 * 1_000_000
    monkeypatch.setattr(sql, "now_us", lambda: later)  # an hour on: the sweep removes it
    assert writer._sweep() == 1
    assert stores.files() == []


@pytest.mark.parametrize("damage", ["truncate", "codes_truncate", "codes_missing", "manifest", "other_store",
                                    "retention"])
def test_an_unusable_snapshot_means_a_rebuild(stores: Stores, damage: str, tmp_path: Path) -> None:
    writer = _filled(stores)
    ivf = next(stores.folder / n for n in stores.files() if n.endswith(".ivf"))
    manifest = ivf.with_suffix(".json")
    retention = 100_000
    codes = ivf.with_suffix(".codes")
    if damage == "truncate":
        ivf.write_bytes(ivf.read_bytes()[:1000])
    elif damage == "codes_truncate":  # the coded twin torn: same size check, then its header
        codes.write_bytes(codes.read_bytes()[:1000])
    elif damage == "codes_missing":
        codes.unlink()
    elif damage == "manifest":
        manifest.write_text("{not json", encoding="utf-8")
    elif damage == "other_store":
        data = json.loads(manifest.read_text(encoding="utf-8"))
        manifest.write_text(json.dumps({**data, "store_uid": "another"}), encoding="utf-8")
    else:  # the change log no longer reaches back to the snapshot
        retention = 5
        writer.close()
        pruner = stores.open(retention=retention)
        pruner.batch([_put(N + i) for i in range(1_100)])  # prunes at the next thousand
        pruner.close()
    cold, plain = stores.open(retention=retention), stores.open(snapshots=False)
    for query in QUERIES:
        _same(_hits(cold, query), _hits(plain, query))
    assert [m.index.is_mapped for m in _mirrors(cold)] == [False]


def test_too_many_changes_mean_a_rebuild(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _filled(stores)
    monkeypatch.setattr(scoped, "_OVERLAY_MIN", 10)
    writer.batch([_put(i, f"c{(i + 1) % 30} changed {i}") for i in range(400)])  # > 10% of the scope
    cold, plain = stores.open(), stores.open(snapshots=False)
    _same(_hits(cold, "c4 changed 3"), _hits(plain, "c4 changed 3"))
    assert [m.index.is_mapped for m in _mirrors(cold)] == [False]


def test_a_read_only_folder_only_costs_the_rebuild(tmp_path: Path) -> None:
    folder = tmp_path / "file-not-folder"
    folder.write_text("x", encoding="utf-8")  # mkdir fails: nothing can be saved there
    settings = ApproximateSearch(min_vectors=1_000, snapshot_dir=folder / "ann")
    store = HyMemoryStore(tmp_path / "r.db", index={"dims": DIMS, "embed": _embed, "fields": ["text"]},
                          approximate=settings, index_cache=IndexCache(1 << 30))
    try:
        store.batch([_put(i) for i in range(N)])
        assert store.search(NS, query="c3 note 3", limit=1)[0].key == "k3"
    finally:
        store.close()


# ------------------------------------------------------------ the overlay, exactly


def test_overlay_search_equals_a_fresh_index(tmp_path: Path) -> None:
    """Masked snapshot ids and overlay ids, ranked through every path (unrestricted,
    few candidates, many candidates under a selector), equal an index built from the
    same vectors."""
    n = 10_000
    rng = np.random.default_rng(9)
    vectors = rng.normal(size=(n, DIMS)).astype(np.float32)
    settings = ApproximateSearch(min_vectors=1_000, nprobe=10_000)  # every list: exact ranking
    built = VectorIndex(DIMS, approximate=settings)
    built.add(np.arange(n, dtype=np.int64) << POS_BITS, vectors)
    snaps = SnapshotDir(tmp_path, store_uid="u")
    assert snaps.write("s", built.ivf(), item_ids=list(range(n)), counts=[1] * n, namespaces=["s"] * n, seq=0,
                       dims=DIMS, metric="cosine")
    snap = snaps.read("s", dims=DIMS, metric="cosine")
    assert snap is not None
    mirror = Mirror(DIMS, approximate=settings)
    mirror.adopt_snapshot(snap.index, snap.item_ids.tolist(), snap.counts.tolist(), snap.namespaces)
    changed = {i: ("s", rng.normal(size=(1, DIMS)).astype(np.float32)) for i in range(0, 600, 3)}
    gone = set(range(1, 600, 3))
    added = {n + i: ("s", rng.normal(size=(1, DIMS)).astype(np.float32)) for i in range(50)}
    mirror.apply({**changed, **dict.fromkeys(gone), **added})
    live = {i: vectors[i:i + 1] for i in range(n) if i not in gone}
    live.update({i: v for i, (_, v) in {**changed, **added}.items()})
    keys = sorted(live)
    all_ids = np.asarray(keys, np.int64) << POS_BITS
    reference = VectorIndex(DIMS)
    reference.add(all_ids, np.concatenate([live[i] for i in keys]))
    assert mirror.index.ntotal == reference.ntotal == len(keys)
    queries = rng.normal(size=(5, DIMS)).astype(np.float32)
    for allowed in (None, all_ids[:40], all_ids[: len(all_ids) - 500]):
        for q in queries:
            got, want = mirror.index.search(q, 10, allowed), reference.search(q, 10, allowed)
            assert got[1].tolist() == want[1].tolist()
            assert np.allclose(got[0], want[0], atol=1e-5)
