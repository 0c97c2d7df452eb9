"""Approximate (IVF) indexes of large scopes: recall against exact search, what stays exact.

The vectors are seeded and clustered (points around 100 centres with noise), the shape
real embeddings have and the one IVF is built for; exact search over the same vectors
is the reference. Recall bounds leave a wide margin under what these seeds give (1.0 at
the default ``nprobe``) so that another CPU's float rounding cannot move a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import faiss
import numpy as np
import pytest
from langgraph.store.base import PutOp
from store_helpers import clustered_embed

from hy_memory_langgraph.errors import ConfigError
from hy_memory_langgraph.store import ApproximateSearch, HyMemoryStore, IndexCache
from hy_memory_langgraph.store.vector import scoped
from hy_memory_langgraph.store.vector.approximate import IvfPair, build_ivf
from hy_memory_langgraph.store.vector.index import BRUTE_FORCE_MAX, VectorIndex
from hy_memory_langgraph.store.vector.mirror import Mirror
from hy_memory_langgraph.store.vector.settings import ID_BYTES, POS_BITS

DIMS = 32
#: Bytes per vector of the coded twin at 32 dims: 8 bits per dimension (at least 384 bits
#: per code) and five float factors; in memory its id and hash-table entry add ID_BYTES.
TWIN_CODE = 32 + 20
TWIN_BYTES = TWIN_CODE + ID_BYTES
N = 20_000
SETTINGS = ApproximateSearch(min_vectors=5_000)


def _clustered(n: int, seed: int, centres: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (centres[rng.integers(0, len(centres), n)] + rng.normal(0, 0.35, (n, DIMS))).astype(np.float32)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    centres = np.random.default_rng(1).normal(size=(100, DIMS))
    vectors = _clustered(N, 2, centres)
    queries = _clustered(100, 3, centres)
    return np.arange(N, dtype=np.int64) << POS_BITS, vectors, queries


def _pair(data: tuple[np.ndarray, np.ndarray, np.ndarray], metric: str = "cosine",
          settings: ApproximateSearch = SETTINGS) -> tuple[VectorIndex, VectorIndex]:
    ids, vectors, _ = data
    exact = VectorIndex(DIMS, metric=metric)
    exact.add(ids, vectors)
    approx = VectorIndex(DIMS, metric=metric, approximate=settings)
    for start in range(0, N, 4_000):  # grows past the threshold through ordinary adds
        approx.add(ids[start:start + 4_000], vectors[start:start + 4_000])
    return exact, approx


def _recall(exact: VectorIndex, approx: VectorIndex, queries: np.ndarray, k: int = 10,
            **kwargs: object) -> float:
    hits = [len(set(exact.search(q, k)[1].tolist()) & set(approx.search(q, k, **kwargs)[1].tolist())) / k
            for q in queries]
    return float(np.mean(hits))


def test_index_turns_approximate_at_the_threshold(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    ids, vectors, _ = data
    index = VectorIndex(DIMS, approximate=SETTINGS)
    index.add(ids[:4_999], vectors[:4_999])
    assert not index.is_approximate and index.nlist == 0
    index.add(ids[4_999:5_000], vectors[4_999:5_000])
    assert index.is_approximate and index.nlist > 0 and index.ntotal == 5_000
    # both indexes' centroids plus the coded twin
    assert index.ivf() is not None and index.ivf().code_bytes() == TWIN_CODE  # type: ignore[union-attr]
    assert index.overhead_bytes() == 2 * index.nlist * DIMS * 4 + 5_000 * TWIN_BYTES
    index.remove(ids[:1_000])
    assert index.overhead_bytes() == 2 * index.nlist * DIMS * 4 + 4_000 * TWIN_BYTES
    assert set(index.search(vectors[0], 5)[1].tolist()).isdisjoint(ids[:1_000].tolist())


def test_min_vectors_zero_and_none_stay_exact(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    ids, vectors, _ = data
    for settings in (None, ApproximateSearch(min_vectors=0)):
        index = VectorIndex(DIMS, approximate=settings)
        index.add(ids, vectors)
        assert not index.is_approximate


@pytest.mark.parametrize("metric", ["cosine", "inner_product", "l2"])
def test_recall_against_exact(data: tuple[np.ndarray, np.ndarray, np.ndarray], metric: str) -> None:
    exact, approx = _pair(data, metric)
    assert approx.is_approximate
    assert _recall(exact, approx, data[2]) >= 0.95
    # every list probed: the same hits and scores as the exact index
    q = data[2][0]
    scores, vids = approx.search(q, 10, nprobe=approx.nlist)
    want_scores, want_vids = exact.search(q, 10)
    assert vids.tolist() == want_vids.tolist()
    assert np.allclose(scores, want_scores, atol=1e-4)


def test_more_lists_probed_never_lowers_recall(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    exact, approx = _pair(data)
    recalls = [_recall(exact, approx, data[2], nprobe=n) for n in (1, 4, 16, approx.nlist)]
    assert recalls == sorted(recalls) and recalls[-1] == 1.0


def test_small_candidate_shares_are_ranked_exactly(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    exact, approx = _pair(data)
    rng = np.random.default_rng(4)
    few = np.sort(rng.choice(data[0], 500, replace=False))  # numpy over the candidates
    share = np.sort(rng.choice(data[0], BRUTE_FORCE_MAX + 500, replace=False))  # under half: every list
    assert len(share) < SETTINGS.exact_share * N
    for allowed in (few, share):
        for q in data[2][:20]:
            assert approx.search(q, 10, allowed, nprobe=1)[1].tolist() == exact.search(q, 10, allowed)[1].tolist()


def test_candidates_far_from_the_query_are_not_starved(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """A large allowed set that lies away from the query: the probed lists hold none of it,
    so the search runs again over every list instead of returning too few hits."""
    ids, vectors, queries = data
    exact, approx = _pair(data)
    q = queries[0]
    order = np.argsort(vectors @ q / np.linalg.norm(vectors, axis=1))  # farthest first
    allowed = np.sort(ids[order[: int(0.6 * N)]])
    got = approx.search(q, 10, allowed, nprobe=1)
    assert got[1].tolist() == exact.search(q, 10, allowed)[1].tolist()
    assert len(got[1]) == 10


def test_removed_vectors_are_gone_and_readded_ones_found(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    ids, vectors, queries = data
    _, approx = _pair(data)
    top = approx.search(vectors[7], 5)[1]
    assert top[0] == ids[7]
    assert approx.remove(ids[:100]) == 100 and approx.ntotal == N - 100
    assert ids[7] not in approx.search(vectors[7], 50, nprobe=approx.nlist)[1]
    approx.add(ids[7:8], vectors[7:8])
    assert approx.search(vectors[7], 1)[1].tolist() == [ids[7]]


def _lists(index: faiss.Index) -> list[tuple[list[int], bytes]]:
    lists = index.invlists
    return [(faiss.rev_swig_ptr(lists.get_ids(n), lists.list_size(n)).tolist(),
             bytes(faiss.rev_swig_ptr(lists.get_codes(n), lists.list_size(n) * index.code_size)))
            for n in range(index.nlist)]


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_lists_filled_at_once_hold_what_faiss_adds_one_by_one(
        data: tuple[np.ndarray, np.ndarray, np.ndarray], metric: str) -> None:
    """Each list is written in one call (exact capacity); its ids, codes and order are
    those of FAISS's own add, for the full vectors and the coded twin, and the id map finds
    every vector."""
    ids, vectors, _ = data
    prepared = vectors / np.linalg.norm(vectors, axis=1, keepdims=True) if metric == "cosine" else vectors
    pair = build_ivf(faiss, np.ascontiguousarray(prepared, dtype=np.float32), ids, metric)
    for built in (pair.exact, pair.codes):
        reference = faiss.clone_index(built)
        reference.reset()
        reference.add_with_ids(prepared, ids)
        assert built.ntotal == reference.ntotal == N
        assert _lists(built) == _lists(reference)
    sample = ids[::997]
    assert np.allclose(pair.exact.reconstruct_batch(sample), prepared[::997])


def test_mirror_size_counts_the_centroids(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    ids, vectors, _ = data
    flat, approx = Mirror(DIMS), Mirror(DIMS, approximate=SETTINGS)
    item_ids = (ids >> POS_BITS).tolist()
    flat.load(item_ids, ["u"] * N, vectors)
    approx.load(item_ids, ["u"] * N, vectors)
    assert approx.index.is_approximate
    assert approx.nbytes() - flat.nbytes() == 2 * approx.index.nlist * DIMS * 4 + N * TWIN_BYTES


@pytest.mark.parametrize("field,value", [("min_vectors", -1), ("nprobe", 0), ("exact_share", 1.5), ("probe_root", -0.1),
                                         ("min_vectors", 2.5)])
def test_bad_settings_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        ApproximateSearch(**{field: value})  # type: ignore[arg-type]


# ------------------------------------------------------------ through the store

STORE_N = 6_000
STORE_SETTINGS = ApproximateSearch(min_vectors=2_000)


_embed = clustered_embed(DIMS, 40)


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., HyMemoryStore]]:
    opened: list[HyMemoryStore] = []
    schemas = request.getfixturevalue("pg_schemas") if request.param == "postgres" else None
    prefix = schemas.prefix() if schemas is not None else ""

    def make(approximate: ApproximateSearch | None = STORE_SETTINGS) -> HyMemoryStore:
        kwargs = {"index": {"dims": DIMS, "embed": _embed, "fields": ["text"]}, "approximate": approximate,
                  "index_cache": IndexCache(1 << 30)}
        if schemas is not None:
            store = HyMemoryStore.from_url(schemas.url, name=prefix + "ann", **kwargs)  # type: ignore[arg-type]
        else:
            store = HyMemoryStore(tmp_path / "ann.db", **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def _fill(store: HyMemoryStore) -> None:
    store.batch([_put(i) for i in range(STORE_N)])


def _put(i: int) -> PutOp:
    return PutOp(("mem", "u1"), f"k{i}", {"text": f"c{i % 40} note {i}", "tag": f"t{i % 100}"})


def test_store_search_on_an_approximate_scope(make_store: Callable[..., HyMemoryStore]) -> None:
    approx, exact = make_store(), make_store(approximate=None)
    _fill(approx)
    query = "c3 note 3"
    got = [r.key for r in approx.search(("mem", "u1"), query=query, limit=10)]
    want = [r.key for r in exact.search(("mem", "u1"), query=query, limit=10)]
    assert got[0] == "k3" and len(set(got) & set(want)) >= 9
    mirrors = [m for (owner, _), m in approx._scoped.cache._entries.items()  # type: ignore[union-attr]
               if owner == approx._scoped.owner]  # type: ignore[union-attr]
    assert [m.index.is_approximate for m in mirrors] == [True]
    # a 1% filter stays exact
    flt = {"tag": "t7"}
    got_f = [(r.key, round(r.score or 0, 4)) for r in approx.search(("mem", "u1"), query=query, filter=flt, limit=10)]
    want_f = [(r.key, round(r.score or 0, 4)) for r in exact.search(("mem", "u1"), query=query, filter=flt, limit=10)]
    assert [k for k, _ in got_f] == [k for k, _ in want_f] and len(got_f) == 10


def test_store_deletes_reach_an_approximate_scope_of_another_instance(
        make_store: Callable[..., HyMemoryStore]) -> None:
    reader, writer = make_store(), make_store()
    _fill(writer)
    assert reader.search(("mem", "u1"), query="c3 note 3", limit=1)[0].key == "k3"  # loads the scope
    writer.delete(("mem", "u1"), "k3")
    writer.put(("mem", "u1"), "new", {"text": "c3 note 3", "tag": "t0"})
    assert [r.key for r in reader.search(("mem", "u1"), query="c3 note 3", limit=2)][0] == "new"
    assert "k3" not in [r.key for r in reader.search(("mem", "u1"), query="c3 note 3", limit=50)]


def test_a_large_load_returns_freed_heap(make_store: Callable[..., HyMemoryStore],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(scoped, "_return_freed_memory", lambda: calls.append(1))
    unsaved = ApproximateSearch(min_vectors=2_000, snapshots=False)  # every open reads the rows
    store = make_store(unsaved)
    _fill(store)
    monkeypatch.setattr(scoped, "_TRIM_AFTER_BYTES", 1 << 40)
    store.search(("mem", "u1"), query="c1 x", limit=1)
    assert calls == []
    reader = make_store(unsaved)
    monkeypatch.setattr(scoped, "_TRIM_AFTER_BYTES", 1)
    reader.search(("mem", "u1"), query="c1 x", limit=1)
    assert calls == [1]
    monkeypatch.undo()
    scoped._return_freed_memory()  # the real call (glibc's malloc_trim here) runs without error


def test_a_load_filled_in_chunks_ranks_like_one_filled_at_once(make_store: Callable[..., HyMemoryStore],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    unsaved = ApproximateSearch(min_vectors=2_000, snapshots=False)  # every open reads the rows
    _fill(make_store(unsaved))
    whole = make_store(unsaved)
    want = [(r.key, r.score) for r in whole.search(("mem", "u1"), query="c5 note 5", limit=10)]
    monkeypatch.setattr(scoped, "_FILL_CHUNK", 999)  # chunk edges fall inside the rows
    chunked = make_store(unsaved)
    got = [(r.key, r.score) for r in chunked.search(("mem", "u1"), query="c5 note 5", limit=10)]
    assert [k for k, _ in got] == [k for k, _ in want] and got[0][0] == "k5"
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_an_owned_add_normalises_in_place_and_ranks_the_same(
        data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    ids, vectors, queries = data
    copied, owned = VectorIndex(DIMS), VectorIndex(DIMS)
    copied.add(ids, vectors)
    handed = vectors.copy()
    owned.add(ids, handed, owned=True)
    assert np.allclose(np.linalg.norm(handed, axis=1), 1.0, atol=1e-5)  # the caller's array was used
    for q in queries[:10]:
        (s1, i1), (s2, i2) = copied.search(q, 10), owned.search(q, 10)
        assert i1.tolist() == i2.tolist() and np.allclose(s1, s2, atol=1e-6)
    frozen = vectors.copy()
    frozen.flags.writeable = False
    VectorIndex(DIMS).add(ids, frozen, owned=True)  # read-only: copied, left as it was
    assert np.array_equal(frozen, vectors)


def test_the_client_setting_reaches_its_stores(tmp_path: Path) -> None:
    from hy_memory_langgraph.client.stores import default_store_factory
    from hy_memory_langgraph.config import MemoryConfig

    for value, approximate in (("0", False), ("3", True)):
        config = MemoryConfig.from_env({"MEMORY_APPROXIMATE_MIN_VECTORS": value}, data_dir=tmp_path / value)
        store = default_store_factory(config)("chat_memory", {"dims": DIMS, "embed": _embed, "fields": ["text"]})
        try:
            store.batch([_put(i) for i in range(8)])
            store.search(("mem", "u1"), query="c1 x", limit=1)
            scoped_index = store._scoped  # type: ignore[attr-defined]
            mirrors = [m for (owner, _), m in scoped_index.cache._entries.items() if owner == scoped_index.owner]
            assert [m.index.is_approximate for m in mirrors] == [approximate]
        finally:
            store.close()


@pytest.mark.parametrize("removed", [50, 5_000])
def test_a_mapped_index_masks_removed_ids_like_a_fresh_index(
        data: tuple[np.ndarray, np.ndarray, np.ndarray], tmp_path: Path, removed: int) -> None:
    """Removed ids of a mapped snapshot are masked in both files' scans: the hits equal an
    index that never held them (every list probed, so both rank exactly)."""
    ids, vectors, queries = data
    built = VectorIndex(DIMS, approximate=SETTINGS)
    built.add(ids, vectors)
    pair = built.ivf()
    assert pair is not None
    files = {}
    for name, index in (("ivf", pair.exact), ("sq", pair.codes)):
        files[name] = str(tmp_path / f"scope.{name}")
        faiss.write_index(index, files[name])
    mapped = VectorIndex(DIMS, approximate=SETTINGS)
    flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY
    mapped.adopt_snapshot(IvfPair(faiss.read_index(files["ivf"], flags), faiss.read_index(files["sq"], flags)),
                          np.sort(ids))
    gone = np.random.default_rng(5).choice(ids, removed, replace=False)
    assert mapped.remove(gone) == removed
    keep = ~np.isin(ids, gone)
    fresh = VectorIndex(DIMS)
    fresh.add(ids[keep], vectors[keep])
    for q in queries[:20]:
        scores, vids = mapped.search(q, 10, nprobe=10_000)
        want_scores, want_vids = fresh.search(q, 10)
        assert set(vids.tolist()).isdisjoint(gone.tolist())
        np.testing.assert_allclose(scores, want_scores, atol=1e-5)  # two kernels: rounding may differ
        clear = want_scores > want_scores[-1] + 1e-5  # hits no near-tie at the cut can swap out
        assert set(want_vids[clear].tolist()) <= set(vids.tolist())
