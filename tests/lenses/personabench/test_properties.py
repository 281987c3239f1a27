"""Property tests (hypothesis) for the metric functions and the answer normaliser."""

import string

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from personalens.lenses.personabench.scoring import answer_words, score_answer, score_retrieval
from personalens.retrieval import hit_at_k, mrr, ndcg_at_k, recall_at_k, relevance_matrix

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


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=3),
                       st.lists(ids, min_size=1, max_size=3), min_size=1, max_size=3), rankings)
def test_best_combination_is_at_least_every_single_choice(alternatives, retrieved):
    best = score_retrieval(retrieved, alternatives)
    first = score_retrieval(retrieved, {k: v[:1] for k, v in alternatives.items()})
    assert best.recall >= first.recall and best.ndcg >= first.ndcg


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_normaliser_is_idempotent_lowercase_alphanumeric(text):
    words = answer_words(text)
    assert all(w.isascii() and w.isalnum() and w == w.lower() for w in words)
    assert answer_words(" ".join(sorted(words))) == words


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_answer_scores_are_bounded_and_a_self_match_is_perfect(gold, prediction):
    score = score_answer(gold, prediction)
    assert 0 <= score.precision <= 1 and 0 <= score.recall <= 1 and 0 <= score.f1 <= 1
    if answer_words(gold):
        assert score_answer(gold, gold).f1 == 1.0
