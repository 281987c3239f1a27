"""The retrievers PersonalQuery-Benchmark compares: SPLADE, ColBERT, hybrid fusion, reranking.

Everything here runs offline: SPLADE and the cross-encoder are built from the bundled MiniLM,
and the LLM reranker talks to the scripted model.
"""

import importlib.util
import json

import numpy as np
import pytest

from personalens.errors import InputError
from personalens.models.chat_model import ChatModel
from personalens.models.failures import TransientModelError
from personalens.models.providers.scripted import ScriptedProvider
from personalens.models.retry import RetryPolicy
from personalens.retrieval import (
    BM25Retriever,
    Document,
    HybridRetriever,
    LLMReranker,
    RerankRetriever,
    SparseRetriever,
    get_retriever,
)
from personalens.retrieval.dense import DenseRetriever, bundled_minilm_path
from personalens.retrieval.embedding_cache import EmbeddingCache
from personalens.retrieval.hybrid import min_max, parse_components
from personalens.retrieval.late_interaction import maxsim
from personalens.retrieval.ranking import QUERY_BATCH, search_by_scores
from personalens.retrieval.rerank import CrossEncoderReranker, order_scores
from personalens.retrieval.sparse import pack, save_offline_splade, to_csr, unpack

DOCS = [Document("pets", "My cat Figo sleeps on the sofa all day."),
        Document("work", "I teach chemistry at a school in Leeds."),
        Document("food", "We cooked a spicy jollof rice for dinner.")]
QUERIES = ["who teaches chemistry", "Figo", "what did we eat"]

# Word counts 4, 6 and 10, so the word-count component's min-max values are 0, 1/3 and 1.
SHORT = [Document("a", "red electric guitar amp"),
         Document("b", "violin bow with rosin and case"),
         Document("c", "drum sticks and a practice pad for beginners and kids")]


class WordCount:
    """A deterministic whole-corpus scorer (longer documents score higher), to hand-check fusion."""

    name = "word-count"

    def index(self, docs):
        return WordCountIndex(docs)


class WordCountIndex:
    def __init__(self, docs):
        self.doc_ids = [d.id for d in docs]
        self.counts = np.array([len(d.text.split()) for d in docs], dtype=float)

    def scores(self, queries):
        return np.tile(self.counts, (len(queries), 1))

    def search(self, queries, k):
        return search_by_scores(self, queries, k)


# --- registry -----------------------------------------------------------------------------

def test_bm25_uses_pqbs_configuration():
    bm25 = get_retriever("bm25")
    assert (bm25.k1, bm25.b, bm25.method) == (1.5, 0.75, "lucene")


def test_names_choose_the_retriever_family(tmp_path):
    hybrid = get_retriever("hybrid")
    assert [(r.name, w) for r, w in hybrid.components] == [("bm25", 1.0), ("minilm", 1.0)]
    weighted = get_retriever("hybrid:bm25=0.3+minilm=0.7")
    assert [(r.name, w) for r, w in weighted.components] == [("bm25", 0.3), ("minilm", 0.7)]
    assert isinstance(weighted.components[1][0], DenseRetriever)
    llm = get_retriever("rerank-llm:scripted")
    assert isinstance(llm, RerankRetriever) and isinstance(llm.reranker, LLMReranker)
    assert llm.reranker.model.spec == "scripted" and llm.name == "rerank-llm:scripted"
    assert isinstance(llm.first_stage, BM25Retriever) and llm.depth == 25
    assert get_retriever("rerank-llm").reranker.model.spec == "local/smollm2-135m"
    ce = get_retriever("rerank-ce:minilm")
    assert isinstance(ce.reranker, CrossEncoderReranker)
    assert ce.reranker.identity == "sentence-transformers/all-MiniLM-L6-v2"
    assert isinstance(get_retriever("minilm"), DenseRetriever)


def test_hybrid_weights_parse_and_a_path_may_contain_an_equals_sign():
    assert parse_components("bm25=0.3+minilm=0.7", "h") == [("bm25", 0.3), ("minilm", 0.7)]
    assert parse_components("bm25+./runs/m=x", "h") == [("bm25", 1.0), ("./runs/m=x", 1.0)]


@pytest.mark.parametrize(("name", "message"), [
    ("splade:", "retriever 'splade:': nothing after ':'; use 'splade' for its default"),
    ("rerank-llm:", "retriever 'rerank-llm:': nothing after ':'"),
    ("hybrid:", "retriever 'hybrid:': nothing after ':'"),
    ("  ", "empty retriever name"),
    ("hybrid:bm25", "a hybrid needs at least two components"),
    ("hybrid:bm25+bm25", "a component is listed twice"),
    ("hybrid:bm25++minilm", "empty component"),
    ("hybrid:bm25=-1+minilm", "weight '-1' of 'bm25' must be a finite number >= 0"),
    ("hybrid:bm25=0+minilm=0", "at least one weight must be above 0"),
    ("hybrid:bm25+rerank-ce", "'rerank-ce' cannot be part of a hybrid"),
    ("hybrid:bm25+hybrid", "'hybrid' cannot be part of a hybrid"),
    ("rerank-llm:nonsense", "unknown model spec 'nonsense'"),
    ("rerank-llm:openai/gpt-4o-mini", "openai models need an API key"),
])
def test_bad_names_fail_with_one_line(name, message):
    with pytest.raises(InputError) as caught:
        get_retriever(name)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_splade_by_hub_name_fails_fast_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError) as caught:
        get_retriever("splade")
    assert str(caught.value) == (
        "retriever 'splade' (naver/splade-cocondenser-ensembledistil) is not a local folder and "
        "not in the Hugging Face cache, and HF_HUB_OFFLINE=1 forbids downloading it")
    with pytest.raises(InputError, match=r"^retriever 'rerank-ce' \(cross-encoder/ms-marco"):
        get_retriever("rerank-ce")


@pytest.mark.skipif(importlib.util.find_spec("pylate") is not None, reason="PyLate is installed")
@pytest.mark.parametrize("name", ["colbert", "colbert:lightonai/GTE-ModernColBERT-v1"])
def test_colbert_without_pylate_names_the_extra(name):
    with pytest.raises(InputError) as caught:
        get_retriever(name)
    assert str(caught.value) == ("retriever 'colbert' needs PyLate: "
                                 "pip install 'personalens[colbert]'")


def test_maxsim_is_exact_for_short_documents_and_short_queries():
    queries = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0]])]
    docs = [np.array([[1.0, 0.0]]), np.array([[0.5, 0.5], [-1.0, 0.0]]), np.array([[-1.0, 0.0]])]
    # The last document has one token at similarity -1 to the first query token: zero padding
    # would have scored that token 0 instead.
    assert maxsim(queries, docs).tolist() == [[1.0, 1.0, -1.0], [0.0, 0.5, 0.0]]
    assert maxsim(queries, []).shape == (2, 0)


# --- shared ranking machinery -------------------------------------------------------------

def test_search_ranks_any_number_of_queries_in_batches():
    index = BM25Retriever().index(DOCS)
    queries = [QUERIES[i % 3] for i in range(QUERY_BATCH + 7)]
    ranking = index.search(queries, 2)
    assert len(ranking.ids) == QUERY_BATCH + 7 and ranking.scores.shape == (QUERY_BATCH + 7, 2)
    singles = {q: index.search([q], 2) for q in QUERIES}
    assert ranking.ids == [singles[q].ids[0] for q in queries]
    assert np.array_equal(ranking.scores, np.vstack([singles[q].scores for q in queries]))
    assert ranking.ids[QUERY_BATCH + 1] == ["food", "pets"]  # 257 % 3 == 2: "what did we eat"
    assert ranking.errors is None
    assert index.search([], 2).scores.shape == (0, 2)


def test_sparse_vectors_are_stored_exactly_and_unknown_query_terms_dropped():
    packed = pack(np.array([3, 29_999]), np.array([0.5, 1.25]))
    indices, values = unpack(packed)
    assert indices.tolist() == [3, 29_999] and values.tolist() == [0.5, 1.25]
    docs = to_csr([pack(np.array([0, 5]), np.array([1.0, 2.0])),
                   pack(np.array([2]), np.array([3.0]))])
    assert docs.shape == (2, 6)
    query = to_csr([pack(np.array([5, 9]), np.array([4.0, 7.0]))], width=docs.shape[1])
    assert (query @ docs.T).toarray().tolist() == [[8.0, 0.0]]


# --- hybrid -------------------------------------------------------------------------------

def test_min_max_scales_each_row_and_zeroes_constant_rows():
    scaled = min_max(np.array([[2.0, 4.0, 6.0], [5.0, 5.0, 5.0]]))
    assert scaled.tolist() == [[0.0, 0.5, 1.0], [0.0, 0.0, 0.0]]


def test_hybrid_sums_weighted_min_max_scores():
    hybrid = HybridRetriever([(BM25Retriever(), 0.3), (WordCount(), 0.7)], name="h")
    ranking = hybrid.index(SHORT).search(["violin", "zebra"], 3)
    # violin: BM25 only matches b -> [0, 1, 0]; word counts 4, 6, 10 -> [0, 1/3, 1].
    assert ranking.ids[0] == ["c", "b", "a"]
    assert np.allclose(ranking.scores[0], [0.7, 0.3 + 0.7 / 3, 0.0])
    # zebra matches nothing: BM25 is constant, so only the word counts decide.
    assert ranking.ids[1] == ["c", "b", "a"]
    assert np.allclose(ranking.scores[1], [0.7, 0.7 / 3, 0.0])


def test_hybrid_weights_can_flip_the_order():
    hybrid = HybridRetriever([(BM25Retriever(), 0.8), (WordCount(), 0.2)], name="h")
    ranking = hybrid.index(SHORT).search(["violin"], 3)
    assert ranking.ids == [["b", "c", "a"]]
    assert np.allclose(ranking.scores, [[0.8 + 0.2 / 3, 0.2, 0.0]])


def test_a_reranker_cannot_be_fused():
    hybrid = HybridRetriever([(BM25Retriever(), 1.0), (get_retriever("rerank-llm:scripted"), 1.0)],
                             name="h")
    with pytest.raises(InputError, match="'rerank-llm:scripted' does not score the whole corpus"):
        hybrid.index(SHORT)


# --- LLM reranking ------------------------------------------------------------------------

INSTRUMENTS = [Document("g1", "red electric guitar"), Document("g2", "guitar strings set"),
               Document("d1", "drum sticks"), Document("p1", "piano bench")]


def _rules(tmp_path, rules, default="not json"):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": rules, "default": default}))
    return f"rerank-llm:scripted:{path}"


def test_llm_order_replaces_bm25_order(tmp_path):
    name = _rules(tmp_path, [
        {"pattern": "Search query: guitar\n", "reply": '{"ranking": [3, 1]}'},
        {"pattern": "Search query: piano", "reply": '```json\n{"ranking": [4, 2, 1, 3]}\n```'},
    ])
    retriever = get_retriever(name)
    retriever.reranker.model.provider.keep_calls = True  # a CLI-loaded model keeps none
    index = retriever.index(INSTRUMENTS)
    # BM25: g1 and g2 tie on "guitar" (same length) and keep corpus order; the rest score 0.
    assert index.first.search(["guitar"], 4).ids == [["g1", "g2", "d1", "p1"]]
    ranking = index.search(["guitar", "piano"], 4)
    # The model named only 3 and 1; the others follow in BM25 order.
    # piano: BM25 gives p1, g1, g2, d1, so [4, 2, 1, 3] means d1, g1, p1, g2.
    assert ranking.ids == [["d1", "g1", "g2", "p1"], ["d1", "g1", "p1", "g2"]]
    assert ranking.scores.tolist() == [[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0]]
    assert ranking.errors is None
    prompt = retriever.reranker.model.provider.calls[0][-1]["content"]
    assert "Search query: guitar\n" in prompt
    assert "[1] red electric guitar\n[2] guitar strings set\n[3] drum sticks" in prompt


def test_a_query_whose_rerank_fails_is_marked_not_scored(tmp_path):
    name = _rules(tmp_path, [
        {"pattern": "Search query: guitar\n", "reply": '{"ranking": [2, 1, 3, 4]}'},
        {"pattern": "Search query: drum", "reply": '{"ranking": [9]}'},  # no candidate 9
    ])
    ranking = get_retriever(name).index(INSTRUMENTS).search(["guitar", "drum"], 3)
    assert ranking.ids == [["g2", "g1", "d1"], ["d1", "g1", "g2"]]
    assert ranking.scores[0].tolist() == [4.0, 3.0, 2.0] and np.isnan(ranking.scores[1]).all()
    assert ranking.errors[0] is None
    assert ranking.errors[1].startswith("rerank failed: invalid_structured_output after 2 attempt")


def test_transient_faults_are_retried_then_recorded():
    def overloaded(messages, params):
        raise TransientModelError("server_error", "503 from the reranker")

    provider = ScriptedProvider([("Search query: guitar\n", '{"ranking": [2, 1]}'),
                                 ("Search query: drum", overloaded)])
    model = ChatModel("scripted", provider, role="reranker",
                      retry=RetryPolicy(max_attempts=3, base_delay=0.0))
    reranker = LLMReranker(lambda: model, name="rerank-llm:test")
    retriever = RerankRetriever(reranker, depth=2)
    try:
        ranking = retriever.index(INSTRUMENTS).search(["guitar", "drum"], 3)
        again = retriever.index(INSTRUMENTS).search(["guitar"], 1)  # the same loop, reused
    finally:
        reranker.close()
    assert ranking.ids == [["g2", "g1", "d1"], ["d1", "g1", "g2"]]
    # Below depth 2 the first stage's order continues, unscored.
    assert ranking.scores[0, :2].tolist() == [2.0, 1.0] and np.isnan(ranking.scores[0, 2])
    assert ranking.errors == [None, "rerank failed: server_error after 3 attempt(s): "
                                    "503 from the reranker"]
    assert model.ledger.as_dict()["reranker"]["retries"] == {"server_error": 2}
    assert again.ids == [["g2"]]


def test_order_scores_keep_a_partial_order_then_the_first_stage_order():
    assert order_scores([3, 3, 1], 4).tolist() == [3.0, 2.0, 4.0, 1.0]


# --- models built from the bundled MiniLM (slow) ------------------------------------------

@pytest.fixture(scope="module")
def splade_folder(tmp_path_factory):
    return save_offline_splade(tmp_path_factory.mktemp("splade") / "minilm-splade")


@pytest.mark.minilm
@pytest.mark.slow
def test_splade_ranks_by_sparse_dot_product_and_caches_vectors(splade_folder, tmp_path):
    from sentence_transformers import SparseEncoder

    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    first = SparseRetriever(str(splade_folder), name="splade:test", cache=cache)
    ranking = first.index(DOCS).search(QUERIES, 2)
    assert ranking.ids == [["work", "food"], ["pets", "food"], ["food", "work"]]
    assert ranking.scores.shape == (3, 2) and first.encoded_texts == 6
    encoder = SparseEncoder(str(splade_folder), device="cpu")
    reference = encoder.similarity(encoder.encode_query(QUERIES),
                                   encoder.encode_document([d.text for d in DOCS])).numpy()
    expected = np.take_along_axis(reference, np.argsort(-reference, axis=1)[:, :2], axis=1)
    assert np.allclose(ranking.scores, expected, rtol=1e-5)
    second = SparseRetriever(str(splade_folder), name="splade:test", cache=cache)
    again = second.index(DOCS).search(QUERIES, 2)
    assert second.encoded_texts == 0 and second._model is None  # the model never loaded
    assert again.ids == ranking.ids and np.array_equal(again.scores, ranking.scores)


@pytest.mark.minilm
@pytest.mark.slow
def test_splade_by_path_through_the_registry_fuses_with_bm25(splade_folder):
    hybrid = get_retriever(f"hybrid:bm25+splade:{splade_folder}")
    ranking = hybrid.index(DOCS).search(QUERIES, 1)
    assert [r.name for r, _ in hybrid.components] == ["bm25", f"splade:{splade_folder}"]
    assert ranking.ids == [["work"], ["pets"], ["food"]]
    assert ranking.scores[:2, 0].tolist() == [2.0, 2.0]  # both components put it on top


@pytest.fixture(scope="module")
def cross_encoder_folder(tmp_path_factory):
    """MiniLM with a seeded random classification head: a real CrossEncoder, fixed weights."""
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("ce") / "minilm-ce"
    CrossEncoder(str(bundled_minilm_path()), device="cpu").save(str(folder))
    return folder


PRODUCTS = [Document(f"p{i:02d}", f"{color} {kind} number {i}")
            for i, (color, kind) in enumerate(
                (c, k) for c in ("red", "blue", "green", "black", "white", "silver")
                for k in ("guitar", "ukulele", "drum", "violin", "keyboard", "cable"))]


@pytest.mark.minilm
@pytest.mark.slow
def test_cross_encoder_reorders_bm25s_top_25(cross_encoder_folder):
    from sentence_transformers import CrossEncoder

    queries = ["red guitar", "a cable for my keyboard"]
    retriever = get_retriever(f"rerank-ce:{cross_encoder_folder}")
    index = retriever.index(PRODUCTS)
    bm25 = index.first.search(queries, 30)
    ranking = index.search(queries, 30)
    encoder = CrossEncoder(str(cross_encoder_folder), device="cpu")
    text = {d.id: d.text for d in PRODUCTS}
    for row, query in enumerate(queries):
        head = bm25.ids[row][:25]
        assert sorted(ranking.ids[row][:25]) == sorted(head)
        assert ranking.ids[row][25:] == bm25.ids[row][25:]  # below depth: BM25's order
        reference = encoder.predict([(query, text[i]) for i in head])
        order = np.argsort(-reference, kind="stable")
        assert ranking.ids[row][:25] == [head[j] for j in order]
        assert np.allclose(ranking.scores[row, :25], reference[order], rtol=1e-5)
        assert np.isnan(ranking.scores[row, 25:]).all()
    assert ranking.ids[0][:25] != bm25.ids[0][:25] and ranking.errors is None


def test_bm25_scores_a_stopword_only_query_as_matching_nothing():
    from personalens.retrieval import BM25Retriever

    index = BM25Retriever().index(INSTRUMENTS)
    assert index.scores(["the a", "guitar"])[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert index.search(["the a"], 2).ids == [["g1", "g2"]]  # ties keep corpus order
