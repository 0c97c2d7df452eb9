"""Approximate (IVF) vs exact search of one large scope, on e5 vectors of real text.

Sub-commands:

* ``embed``: embeds a corpus of real sentences with the bundled e5 (LoCoMo turns,
  summaries and observations; τ-bench airline messages; docstring sentences of the
  Python standard library to reach ``--texts``) and LoCoMo's questions as queries;
  writes ``corpus.npy`` / ``queries.npy`` under ``--out``. Slow (about 60 texts/s
  on two cores): run once.
* ``measure``: builds the store's approximate index (:class:`VectorIndex` with
  ``approximate=True``) over the corpus (``--scale`` repeats it with a small seeded
  perturbation when more vectors are asked for than were embedded, and says so), and
  for each ``nprobe`` of a grid prints recall@10 against exact search and search p50.
  Then, at the default ``nprobe``, the recall of a restricted search whose candidates
  are a random 60% of the scope (the approximate path under a selector).
  ``nprobe`` is then chosen by 5-fold cross-validation over the queries (the smallest
  value whose recall on the four training folds is >= the target) and the recall of
  the held-out folds is printed. The coded twin's re-rank depth is cross-validated the
  same way: for each depth of a grid, the twin's candidates re-ranked on their full
  vectors against the full-vector scan of the same lists, at 5%, 10% and 20% of the
  lists probed; chosen per fold is the smallest depth whose recall@k on the training
  folds is within ``--twin-loss`` (0.001) of the full-vector scan's at every probe
  count, and its held-out loss is printed.
* ``growth``: how the probes a recall needs grow with the lists: for random subsets
  of the corpus of 1/16 … all of it (each with its own lists, about ``2 * sqrt(n)``),
  the recall@k of a grid of probe counts, the smallest count reaching ``--target``
  and the growth exponent fitted between the smallest and the largest subset (the
  basis of :attr:`ApproximateSearch.probe_root`).

LoCoMo is CC BY-NC 4.0 (benchmark use only), τ-bench MIT; both are read from
``../shared/data`` and never copied.

Usage:
    python -m bench.ann_recall embed --out /tmp/e5corpus --texts 30000
    python -m bench.ann_recall measure --out /tmp/e5corpus
    python -m bench.ann_recall growth --out /tmp/e5corpus
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _locomo() -> tuple[list[str], list[str]]:
    texts, questions = [], []
    for conv in json.loads((DATA / "locomo" / "locomo_dev5.json").read_text()):
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                texts += [turn["text"] for turn in session if turn.get("text")]
        for field in ("session_summary", "observation", "event_summary"):
            texts += _strings(conv.get(field))
        questions += [qa["question"] for qa in conv["qa"]]
    return texts, questions


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [s for s in _SENTENCE.split(value) if len(s.split()) >= 4]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _tau() -> list[str]:
    out = []
    for task in json.loads((DATA / "tau_bench" / "airline_dev100.json").read_text()):
        for message in task.get("traj", []):
            content = message.get("content")
            if isinstance(content, str) and message.get("role") in ("user", "assistant"):
                out += [s for s in _SENTENCE.split(content) if len(s.split()) >= 4]
    return out


def _docstrings(limit: int) -> list[str]:
    out: list[str] = []
    for path in sorted(Path(ast.__file__).parent.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Module)):
                doc = ast.get_docstring(node) or ""
                out += [" ".join(s.split()) for s in _SENTENCE.split(doc) if 5 <= len(s.split()) <= 60]
        if len(out) >= limit:
            break
    return out[:limit]


def embed(out: Path, n_texts: int) -> None:
    from hy_memory_langgraph.models.embeddings import E5Embeddings  # noqa: PLC0415

    texts, questions = _locomo()
    texts += _tau()
    texts = list(dict.fromkeys(texts))
    texts += _docstrings(max(0, n_texts - len(texts)))
    texts = list(dict.fromkeys(texts))[:n_texts]
    print(f"{len(texts)} texts, {len(questions)} queries", flush=True)
    model = E5Embeddings()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    chunks = []
    for at in range(0, len(texts), 256):
        chunks.append(np.asarray(model.embed_documents(texts[at:at + 256]), dtype=np.float32))
        if at % 2560 == 0:
            print(f"  {at + len(chunks[-1])} embedded, {time.perf_counter() - started:.0f} s", flush=True)
    np.save(out / "corpus.npy", np.concatenate(chunks))
    np.save(out / "queries.npy", np.asarray([model.embed_query(q) for q in questions], dtype=np.float32))
    (out / "texts.json").write_text(json.dumps(texts))


def _scaled(corpus: np.ndarray, n: int, seed: int = 7) -> tuple[np.ndarray, bool]:
    """``n`` vectors: the corpus, repeated with a seeded perturbation if ``n`` exceeds it."""
    if n <= len(corpus):
        return corpus[:n], False
    rng = np.random.default_rng(seed)
    reps = -(-n // len(corpus))
    blocks = [corpus] + [corpus + rng.normal(0, 0.02, corpus.shape).astype(np.float32) for _ in range(reps - 1)]
    return np.concatenate(blocks)[:n], True


def measure(out: Path, n: int, k: int, target: float, twin_loss: float) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hy_memory_langgraph.store.vector.settings import ApproximateSearch  # noqa: PLC0415
    from hy_memory_langgraph.store.vector.index import VectorIndex  # noqa: PLC0415

    corpus, scaled = _scaled(np.load(out / "corpus.npy"), n)
    queries = np.load(out / "queries.npy")
    print(f"{len(corpus)} vectors ({'perturbed copies of ' if scaled else ''}e5 of real text), "
          f"{len(queries)} queries, k={k}")
    ids = np.arange(len(corpus), dtype=np.int64) << 20
    exact = VectorIndex(corpus.shape[1])
    exact.add(ids, corpus)
    truth, exact_ms = [], []
    for q in queries:
        t = time.perf_counter()
        truth.append(set(exact.search(q, k)[1].tolist()))
        exact_ms.append((time.perf_counter() - t) * 1000)
    print(f"exact: p50 {statistics.median(exact_ms):.2f} ms")
    started = time.perf_counter()
    approx = VectorIndex(corpus.shape[1], approximate=ApproximateSearch(min_vectors=1))
    approx.add(ids, corpus)
    default = ApproximateSearch().lists_to_probe(approx.nlist)
    print(f"approximate build: {time.perf_counter() - started:.1f} s, nlist {approx.nlist}, default probes {default}")
    grid = sorted({1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, default})
    hits = np.zeros((len(grid), len(queries)))
    for g, nprobe in enumerate(grid):
        times = []
        for j, q in enumerate(queries):
            t = time.perf_counter()
            found = approx.search(q, k, nprobe=nprobe)[1].tolist()
            times.append((time.perf_counter() - t) * 1000)
            hits[g, j] = len(truth[j] & set(found)) / max(1, len(truth[j]))
        print(f"nprobe {nprobe:4d}: recall@{k} {hits[g].mean():.4f}  p50 {statistics.median(times):.2f} ms")
    _cross_validate(grid, hits, target)
    _rerank_depths(approx, corpus, queries, truth, k, twin_loss)
    allowed = np.sort(np.random.default_rng(1).choice(ids, int(0.6 * len(ids)), replace=False))
    restricted = [len(set(exact.search(q, k, allowed)[1].tolist()) & set(approx.search(q, k, allowed)[1].tolist())) / k
                  for q in queries]
    print(f"60% candidates, default nprobe: recall@{k} {np.mean(restricted):.4f}")


def growth(out: Path, k: int, target: float) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hy_memory_langgraph.store.vector.settings import ApproximateSearch  # noqa: PLC0415
    from hy_memory_langgraph.store.vector.index import VectorIndex  # noqa: PLC0415

    corpus, queries = np.load(out / "corpus.npy"), np.load(out / "queries.npy")
    order = np.random.default_rng(7).permutation(len(corpus))
    grid, needed = [2, 3, 4, 6, 8, 11, 16, 22, 32, 45, 64, 90, 128], []
    for share in (16, 8, 4, 2, 1):
        data = corpus[np.sort(order[: len(corpus) // share])]
        ids = np.arange(len(data), dtype=np.int64) << 20
        exact, approx = VectorIndex(data.shape[1]), VectorIndex(data.shape[1], approximate=ApproximateSearch(min_vectors=1))
        exact.add(ids, data)
        approx.add(ids, data)
        truth = [set(exact.search(q, k)[1].tolist()) for q in queries]
        curve = [(p, float(np.mean([len(truth[j] & set(approx.search(q, k, nprobe=p)[1].tolist())) / k
                                    for j, q in enumerate(queries)]))) for p in grid if p <= approx.nlist]
        reached = next((p for p, r in curve if r >= target), None)
        needed.append((approx.nlist, reached))
        print(f"{len(data)} vectors, {approx.nlist} lists: " + " ".join(f"{p}:{r:.4f}" for p, r in curve)
              + f"  -> {reached} probes reach {target}")
    (l0, p0), (l1, p1) = needed[0], needed[-1]
    if p0 and p1:
        print(f"growth exponent (probes ~ lists^a) between {l0} and {l1} lists: a = "
              f"{np.log(p1 / p0) / np.log(l1 / l0):.2f}")


def _cross_validate(grid: list[int], hits: np.ndarray, target: float, folds: int = 5) -> None:
    order = np.random.default_rng(0).permutation(hits.shape[1])
    held = []
    for f in range(folds):
        test = order[f::folds]
        train = np.setdiff1d(order, test)
        chosen = next((g for g in range(len(grid)) if hits[g, train].mean() >= target), len(grid) - 1)
        held.append((grid[chosen], hits[chosen, test].mean()))
        print(f"fold {f}: nprobe {grid[chosen]} chosen on training folds, held-out recall {held[-1][1]:.4f}")
    print(f"held-out recall@10 mean {np.mean([h for _, h in held]):.4f}")


def _rerank_depths(approx: object, corpus: np.ndarray, queries: np.ndarray, truth: list[set[int]], k: int,
                   twin_loss: float, folds: int = 5) -> None:
    """Recall of the twin's candidates re-ranked at each depth vs the full-vector scan."""
    import faiss  # noqa: PLC0415

    from hy_memory_langgraph.store.vector.index import normalize  # noqa: PLC0415

    pair = approx.ivf()  # type: ignore[attr-defined]
    nlist, q = int(pair.exact.nlist), normalize(np.array(queries, dtype=np.float32, ndmin=2))
    depths, probes = [20, 40, 80, 160, 320], [max(1, round(share * nlist)) for share in (0.05, 0.1, 0.2)]

    def recall(found: np.ndarray) -> np.ndarray:
        return np.array([len(truth[j] & set(found[j][found[j] >= 0].tolist())) / max(1, len(truth[j]))
                         for j in range(len(q))])

    full, twin = {}, {}
    for probe in probes:
        full[probe] = recall(pair.exact.search(q, k, params=faiss.SearchParametersIVF(nprobe=probe))[1])
        for depth in depths:
            cand = pair.codes.search(q, depth, params=faiss.SearchParametersIVF(nprobe=probe))[1]
            ranked = np.full((len(q), k), -1, np.int64)
            for j in range(len(q)):
                c = cand[j][cand[j] >= 0]
                ranked[j, :min(k, len(c))] = c[np.argsort(-(pair.exact.reconstruct_batch(c) @ q[j]))[:k]]
            twin[probe, depth] = recall(ranked)
        print(f"{probe} lists: full vectors {full[probe].mean():.4f}; twin + re-rank "
              + "  ".join(f"{d}: {twin[probe, d].mean():.4f}" for d in depths))
    order = np.random.default_rng(0).permutation(len(q))
    for f in range(folds):
        test = order[f::folds]
        train = np.setdiff1d(order, test)
        chosen = next((d for d in depths if all(twin[p, d][train].mean() >= full[p][train].mean() - twin_loss
                                                for p in probes)), depths[-1])
        loss = max(full[p][test].mean() - twin[p, chosen][test].mean() for p in probes)
        print(f"fold {f}: re-rank depth {chosen} chosen on training folds, held-out loss vs full vectors "
              f"at most {loss:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["embed", "measure", "growth"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/e5corpus"))
    parser.add_argument("--texts", type=int, default=30000)
    parser.add_argument("--vectors", type=int, default=0, help="index size (default: the corpus)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--target", type=float, default=0.98)
    parser.add_argument("--twin-loss", type=float, default=0.001)
    args = parser.parse_args()
    if args.command == "embed":
        embed(args.out, args.texts)
    elif args.command == "growth":
        growth(args.out, args.k, args.target)
    else:
        measure(args.out, args.vectors or len(np.load(args.out / "corpus.npy", mmap_mode="r")), args.k, args.target,
                args.twin_loss)


if __name__ == "__main__":
    main()
