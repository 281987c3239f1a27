"""Retriever names -> retrievers.

`bm25`; `minilm` or any sentence-transformers name or path (dense); and the prefixed families
`splade`, `colbert`, `hybrid`, `rerank-ce`, `rerank-llm`, each alone (its default model) or as
`<family>:<argument>`. Every name is checked here, before any run directory exists.
"""

import difflib
import os
from collections.abc import Callable

from personalens.errors import InputError
from personalens.models.settings import ModelSettings
from personalens.models.spec import DEFAULT_MODEL
from personalens.retrieval.bm25 import BM25Retriever
from personalens.retrieval.dense import DenseRetriever
from personalens.retrieval.hybrid import DEFAULT_HYBRID, HybridRetriever, parse_components
from personalens.retrieval.late_interaction import COLBERT, LateInteractionRetriever
from personalens.retrieval.ranking import Retriever
from personalens.retrieval.rerank import (
    MS_MARCO_CROSS_ENCODER,
    CrossEncoderReranker,
    LLMReranker,
    RerankRetriever,
)
from personalens.retrieval.retriever_names import RETRIEVER_HELP
from personalens.retrieval.sparse import SPLADE, SparseRetriever
from personalens.runs.usage import UsageLedger

# Families that cannot be parts of a hybrid: they do not score the whole corpus.
_NOT_FUSABLE = ("hybrid", "rerank-ce", "rerank-llm")


def get_retriever(name: str, *, ledger: UsageLedger | None = None,
                  endpoint: ModelSettings | None = None, executor=None) -> Retriever:
    """The retriever a name stands for; InputError (one line) for a name that cannot work.

    Dense encoders (alone or inside a hybrid) encode on `executor` when it is distributed.

    An LLM reranker's model uses `endpoint`'s settings (base URL, key variable, cache,
    concurrency, attempts, timeout) with its own spec, and records its usage in `ledger` under
    the role "reranker", so the run's manifest reports it.
    """
    if not name.strip():
        raise InputError(f"empty retriever name; expected {RETRIEVER_HELP}")
    if name == "bm25":
        return BM25Retriever()
    family, colon, argument = name.partition(":")
    if family not in _FAMILIES and family != "rerank-llm":
        try:
            return DenseRetriever(name, executor=executor)
        except InputError as exc:
            if "/" in name or os.path.exists(name):
                raise  # a model or folder name the user meant as such: its own message says why
            raise InputError(f"{exc}. {unknown_name_hint(name)}") from None
    if colon and not argument.strip():
        raise InputError(f"retriever {name!r}: nothing after ':'; use {family!r} for its "
                         f"default or {family}:<...>")
    if family == "rerank-llm":
        return _rerank_llm(argument or None, name, ledger, endpoint)
    return _FAMILIES[family](argument or None, name, executor)


def reranks_with_a_model(name: str) -> bool:
    """Whether the retriever `name` calls a chat model (role "reranker") for each query."""
    return name.partition(":")[0] == "rerank-llm"


def unknown_name_hint(name: str) -> str:
    """The retrievers personalens knows by name, and the nearest to a mistyped one."""
    known = ["bm25", "minilm", "minilm-int8", *_FAMILIES, "rerank-llm"]
    close = difflib.get_close_matches(name.partition(":")[0], known, n=1)
    guess = f"Did you mean {close[0]!r}? " if close else ""
    return f"{guess}Retrievers personalens knows by name: {', '.join(known)}"


def _splade(model: str | None, name: str, executor) -> Retriever:
    return SparseRetriever(model or SPLADE, name=name)


def _colbert(model: str | None, name: str, executor) -> Retriever:
    return LateInteractionRetriever(model or COLBERT, name=name)


def _hybrid(spec: str | None, name: str, executor) -> Retriever:
    components = parse_components(spec or DEFAULT_HYBRID, name)
    for component, _ in components:
        if component.partition(":")[0] in _NOT_FUSABLE:
            raise InputError(f"retriever {name!r}: {component!r} cannot be part of a hybrid "
                             "(only retrievers that score the whole corpus can)")
    return HybridRetriever([(get_retriever(c, executor=executor), w) for c, w in components],
                           name=name)


def _rerank_ce(model: str | None, name: str, executor) -> Retriever:
    return RerankRetriever(CrossEncoderReranker(model or MS_MARCO_CROSS_ENCODER, name=name))


def _rerank_llm(spec: str | None, name: str, ledger: UsageLedger | None,
                endpoint: ModelSettings | None) -> Retriever:
    settings = (endpoint or ModelSettings(spec="")).with_spec(spec or DEFAULT_MODEL)
    return RerankRetriever(LLMReranker(lambda: settings.load("reranker", ledger), name=name))


_FAMILIES: dict[str, Callable[[str | None, str, object], Retriever]] = {
    "splade": _splade, "colbert": _colbert, "hybrid": _hybrid, "rerank-ce": _rerank_ce,
}
