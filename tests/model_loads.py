"""Which real models a test loads or runs, so tests/conftest.py can fail one that lacks its
marker: `minilm` for a sentence-transformers model (MiniLM, a cross-encoder, SPLADE, ColBERT)
or an ONNX encoder (the int8 MiniLM), `bundled_model` for a GGUF run by llama.cpp.

The libraries are patched as they are imported (nothing heavy is imported here): a model's
construction and each of its inference calls are noted, so a model cached by an earlier test
still counts for the test that uses it. So are the package's own ways in, before their caches:
a retriever asked to encode (its embedding cache may hold every text an earlier test encoded)
and a chat model on a GGUF asked for a reply (the response cache may hold it). A process
started by tests/cli_runner.py loads this module through tests/model_probe/sitecustomize.py and
appends what it notes to the file named by $PERSONALENS_TEST_MODEL_LOG.
"""

import functools
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Callable
from pathlib import Path

LOG_ENV = "PERSONALENS_TEST_MODEL_LOG"
PROBE_DIR = Path(__file__).resolve().parent / "model_probe"

_notes: list[Callable[[str], None]] = []


def _note(kind: str) -> None:
    for note in _notes:
        note(kind)


def _noting(function, kind: str):
    if getattr(function, "_noted_as", None):
        return function

    @functools.wraps(function)
    def noted(*args, **kwargs):
        _note(kind)
        return function(*args, **kwargs)

    noted._noted_as = kind
    return noted


def _patch_methods(cls, names: tuple[str, ...], kind: str) -> None:
    for name in names:
        if name in vars(cls):
            setattr(cls, name, _noting(vars(cls)[name], kind))


def _sentence_transformers(module) -> None:
    for name in ("SentenceTransformer", "CrossEncoder", "SparseEncoder"):
        cls = getattr(module, name, None)
        if cls is not None:
            _patch_methods(cls, ("__init__", "encode", "predict", "rank", "encode_query",
                                 "encode_document"), "minilm")


def _onnxruntime(module) -> None:
    _patch_methods(module.InferenceSession, ("__init__", "run"), "minilm")


class _NotedServer:
    """xllamacpp.Server (an extension type, which cannot be patched) behind a proxy."""

    def __init__(self, server_class, *args, **kwargs):
        _note("bundled_model")
        self._server = server_class(*args, **kwargs)

    def __getattr__(self, name):
        attribute = getattr(self._server, name)
        if callable(attribute):
            return _noting(attribute, "bundled_model")
        return attribute


def _xllamacpp(module) -> None:
    server_class = module.Server
    if isinstance(server_class, functools.partial):
        return
    module.Server = functools.partial(_NotedServer, server_class)


def _retrievers(module) -> None:
    for name in ("DenseRetriever", "SparseRetriever", "LateInteractionRetriever"):
        cls = getattr(module, name, None)
        if cls is not None:
            _patch_methods(cls, ("encode",), "minilm")


def _chat_model(module) -> None:
    cls = module.ChatModel
    complete = vars(cls)["complete"]
    if getattr(complete, "_noted_as", None):
        return

    @functools.wraps(complete)
    def noted(self, *args, **kwargs):
        if type(self.provider).__name__ == "LocalGGUFProvider":
            _note("bundled_model")
        return complete(self, *args, **kwargs)

    noted._noted_as = "bundled_model"
    cls.complete = noted


HOOKS = {"sentence_transformers": _sentence_transformers, "onnxruntime": _onnxruntime,
         "xllamacpp": _xllamacpp, "personalens.retrieval.dense": _retrievers,
         "personalens.retrieval.sparse": _retrievers,
         "personalens.retrieval.late_interaction": _retrievers,
         "personalens.models.chat_model": _chat_model}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs HOOKS[name] on a module right after it is executed."""

    def find_spec(self, name, path, target=None):
        if name not in HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)  # a plain file on disk
        if spec is None or spec.loader is None:
            return None
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            HOOKS[name](module)

        spec.loader.exec_module = exec_module
        return spec


def install(note: Callable[[str], None]) -> None:
    """Call note(kind) whenever a real model is built or run; idempotent per callback."""
    if note not in _notes:
        _notes.append(note)
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
    for name, hook in HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])


def install_from_env() -> None:
    """In a process started by a test: append each kind to $PERSONALENS_TEST_MODEL_LOG."""
    log = os.environ.get(LOG_ENV)
    if not log:
        return
    seen: set[str] = set()

    def note(kind: str) -> None:
        if kind not in seen:
            seen.add(kind)
            with open(log, "a") as handle:
                handle.write(kind + "\n")

    install(note)


def process_env(env: dict) -> dict:
    """`env` for a process that notes its models (when a test's log file is set)."""
    if not env.get(LOG_ENV):
        return env
    path = os.pathsep.join(p for p in (str(PROBE_DIR), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path}
