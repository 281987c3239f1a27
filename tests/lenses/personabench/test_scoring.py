import numpy as np
import pytest

from personalens.lenses.personabench.evaluation import gt_context_ids
from personalens.lenses.personabench.scoring import (
    answer_words,
    category,
    outdated_recall,
    score_answer,
    score_retrieval,
)


def test_answer_words_strip_punctuation_and_lowercase():
    assert answer_words("Cambridge, MA") == {"cambridge", "ma"}
    assert answer_words(["Green tea", "espresso!"]) == {"green", "tea", "espresso"}
    assert answer_words([{"Eye color": "Blue"}]) == {"eye", "color", "blue"}
    assert answer_words("5'6\"") == {"56"}


def test_integer_answers_are_scored_as_their_digits():
    # The release script reuses the previous question's gold set here; we score "39" itself.
    assert score_answer(39, "39").f1 == 1.0
    assert score_answer(39, "I am 40").f1 == 0.0


def test_answer_precision_recall_f1_hand_computed():
    s = score_answer(["green tea", "merlot"], "Green tea, coffee")
    # gold {green, tea, merlot}, predicted {green, tea, coffee}: 2 shared words.
    assert (s.precision, s.recall) == pytest.approx((2 / 3, 2 / 3))
    assert s.f1 == pytest.approx(2 / 3)
    assert score_answer("Paris", "").f1 == 0.0


def test_outdated_recall_counts_stale_words():
    assert outdated_recall(["matcha"], "Matcha, green tea") == 1.0
    assert outdated_recall(["forest green", "cream"], "forest walks") == pytest.approx(1 / 3)
    # Words the current answer shares with the old one are not stale.
    assert outdated_recall(["Thai food"], "Italian food", ["Italian food"]) == 0.0
    assert outdated_recall(["Thai food"], "Thai food", ["Italian food"]) == 1.0
    assert outdated_recall(["food"], "food", ["food"]) == 0.0


def test_retrieval_takes_the_best_combination_of_alternatives():
    alternatives = {"a": ["s1", "s2"], "b": ["s3"]}
    # Combination (s2, s3) is fully retrieved; (s1, s3) only half.
    score = score_retrieval(["s2", "x", "s3"], alternatives)
    assert score.recall == 1.0
    assert score.ndcg == pytest.approx((1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3)))


def test_retrieval_with_no_hit_is_zero():
    assert score_retrieval(["x", "y"], {"a": ["s1"]}).recall == 0.0


def test_category_pools_social_and_skips_subjective():
    assert category("Basic information", "easy") == "basic"
    assert category("Preference", "hard") == "preference_hard"
    assert category("Social", "hard") == "social"
    assert category("Subjective", "easy") is None


def test_gt_context_repeats_first_alternatives_cyclically():
    assert gt_context_ids({"a": ["s1", "s9"], "b": ["s2"]}, 5) == ["s1", "s2", "s1", "s2", "s1"]
    assert gt_context_ids({str(i): [f"s{i}"] for i in range(6)}, 5) == [f"s{i}" for i in range(6)]
