
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from personalens.retrieval import hit_at_k, mrr, ndcg_at_k, recall_at_k, relevance_matrix, top_k

RETRIEVED = [["a", "b", "c"], ["x", "y", "z"], ["b", "b", "a"]]
RELEVANT = [{"b", "c", "d"}, {"q"}, {"a", "b"}]


def test_relevance_matrix_marks_first_occurrence_only():
    rel = relevance_matrix(RETRIEVED, RELEVANT, 3)
    assert rel.tolist() == [[False, True, True], [False, False, False], [True, False, True]]


def test_recall_hand_computed():
    rel = relevance_matrix(RETRIEVED, RELEVANT, 3)
    assert recall_at_k(rel, RELEVANT).tolist() == pytest.approx([2 / 3, 0.0, 1.0])


def test_ndcg_hand_computed():
    rel = relevance_matrix(RETRIEVED, RELEVANT, 3)
    # query 0: hits at ranks 2 and 3; ideal fills 3 ranks (|G| = 3, k = 3).
    dcg0 = 1 / np.log2(3) + 1 / np.log2(4)
    idcg0 = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    # query 2: hits at ranks 1 and 3 (the repeated "b" counts once); ideal fills 2 ranks.
    dcg2 = 1 + 1 / np.log2(4)
    idcg2 = 1 + 1 / np.log2(3)
    assert ndcg_at_k(rel, RELEVANT).tolist() == pytest.approx([dcg0 / idcg0, 0.0, dcg2 / idcg2])


def test_ndcg_ideal_is_capped_at_k():
    rel = relevance_matrix([["a"]], [{"a", "b", "c"}], 1)
    assert ndcg_at_k(rel, [{"a", "b", "c"}]).tolist() == [1.0]


def test_hit_and_mrr_hand_computed():
    rel = relevance_matrix(RETRIEVED, RELEVANT, 3)
    assert hit_at_k(rel).tolist() == [1.0, 0.0, 1.0]
    assert mrr(rel).tolist() == pytest.approx([0.5, 0.0, 1.0])
    rel_k1 = relevance_matrix(RETRIEVED, RELEVANT, 1)
    assert hit_at_k(rel_k1).tolist() == [0.0, 0.0, 1.0]


def test_empty_gold_set_scores_zero_not_nan():
    rel = relevance_matrix([["a"]], [set()], 1)
    assert recall_at_k(rel, [set()]).tolist() == [0.0]
    assert ndcg_at_k(rel, [set()]).tolist() == [0.0]


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        relevance_matrix([["a"]], [{"a"}], 0)


def test_top_k_orders_by_score_and_breaks_ties_by_document_order():
    ranking = top_k(np.array([[0.1, 0.5, 0.5, 0.2]]), ["d0", "d1", "d2", "d3"], 3)
    assert ranking.ids == [["d1", "d2", "d3"]]
    assert ranking.scores.tolist() == [[0.5, 0.5, 0.2]]


def test_top_k_keeps_the_first_tied_documents_at_the_cut():
    # Three documents tie at the k-th score: the two earliest are kept, in document order.
    scores = np.array([[0.3, 0.9, 0.3, 0.1, 0.3, 0.9]])
    ranking = top_k(scores, [f"d{i}" for i in range(6)], 4)
    assert ranking.ids == [["d1", "d5", "d0", "d2"]]


@pytest.mark.parametrize("k", [1, 3, 10, 49, 50])
def test_top_k_is_the_stable_full_sort_of_each_row(k):
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 4, size=(20, 50)).astype(np.float32)  # ties everywhere
    scores[3, ::7] = np.nan
    scores[4] = 0.0
    ids = [f"d{i}" for i in range(50)]
    full = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    ranking = top_k(scores, ids, k)
    assert ranking.ids == [[ids[j] for j in row] for row in full]
    assert np.array_equal(ranking.scores, np.take_along_axis(scores, full, axis=1),
                          equal_nan=True)


def test_top_k_of_nothing_has_the_right_shape():
    assert top_k(np.zeros((3, 0)), [], 5).scores.shape == (3, 0)
    assert top_k(np.zeros((3, 0)), [], 5).ids == [[], [], []]
    assert top_k(np.zeros((0, 4)), ["a", "b", "c", "d"], 2).scores.shape == (0, 2)

ids = st.sampled_from([f"s{i}" for i in range(8)])
rankings = st.lists(ids, min_size=1, max_size=6)
gold_sets = st.sets(ids, min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(rankings, gold_sets), min_size=1, max_size=5), st.integers(1, 6))
def test_metrics_stay_in_unit_interval_and_agree(cases, k):
    retrieved, relevant = zip(*cases, strict=True)
    rel = relevance_matrix(retrieved, relevant, k)
    recall, ndcg, hit, rr = (recall_at_k(rel, relevant), ndcg_at_k(rel, relevant), hit_at_k(rel),
                             mrr(rel))
    for values in (recall, ndcg, hit, rr):
        assert np.all((values >= 0) & (values <= 1 + 1e-12))
    assert np.array_equal(recall > 0, hit > 0) and np.array_equal(ndcg > 0, hit > 0)
    assert np.all(rr <= hit)


@settings(max_examples=200, deadline=None)
@given(gold_sets, st.integers(1, 6))
def test_retrieving_exactly_the_gold_set_is_perfect(gold, k):
    ranked = sorted(gold)[:k]
    rel = relevance_matrix([ranked], [gold], k)
    assert ndcg_at_k(rel, [gold])[0] == 1.0  # the ideal fills min(|gold|, k) ranks
    assert recall_at_k(rel, [gold])[0] == min(len(gold), k) / len(gold)
