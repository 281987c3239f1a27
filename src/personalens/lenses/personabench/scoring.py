"""PersonaBench's scores for one question: retrieval (best over alternatives) and answer words.

Answer scoring compares word SETS after stripping everything outside [a-zA-Z0-9 whitespace] and
lowercasing. The release script never builds a gold set for integer answers (it silently reuses
the previous question's); here an integer is scored as its decimal words, like any other answer.
"""

import itertools
import re
from dataclasses import dataclass
from typing import Any

from personalens.retrieval.metrics import ndcg_at_k, recall_at_k, relevance_matrix

_NOT_WORD = re.compile(r"[^a-zA-Z0-9\s]")


def answer_words(value: Any) -> set[str]:
    """The normalised word set of an answer or prediction: str, int, or a list of them/dicts."""
    if isinstance(value, list):
        return set().union(*(answer_words(v) for v in value)) if value else set()
    if isinstance(value, dict):
        # Release semantics: str() of a one-key dict, so keys' words count as well as values'.
        return answer_words(str(value))
    return set(_NOT_WORD.sub("", str(value)).lower().split())


@dataclass(frozen=True)
class AnswerScore:
    precision: float
    recall: float
    f1: float


def score_answer(gold: Any, prediction: str) -> AnswerScore:
    gold_words, predicted = answer_words(gold), answer_words(prediction)
    hits = len(gold_words & predicted)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold_words) if gold_words else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return AnswerScore(precision, recall, f1)


def outdated_recall(outdated: Any, prediction: str, current: Any = None) -> float:
    """Share of the outdated value's words the prediction still repeats (lower is better).

    Words the current answer shares with the outdated one ("films" in "horror films" ->
    "animated films") are not counted: repeating them is correct. The release counts them.
    """
    stale = answer_words(outdated) - answer_words(current)
    if not stale:
        return 0.0
    return len(stale & answer_words(prediction)) / len(stale)


@dataclass(frozen=True)
class RetrievalScore:
    recall: float
    ndcg: float


def score_retrieval(retrieved: list[str], alternatives: dict[str, list[str]]) -> RetrievalScore:
    """Max recall and max nDCG over every way of picking one session per answer item.

    k is the number of retrieved chunks. Recall and nDCG are maximised independently, as the
    release does. The loader refuses questions with more than MAX_COMBINATIONS combinations.
    """
    gold_sets = [set(c) for c in itertools.product(*alternatives.values())]
    rel = relevance_matrix([retrieved] * len(gold_sets), gold_sets, max(len(retrieved), 1))
    return RetrievalScore(float(recall_at_k(rel, gold_sets).max()),
                          float(ndcg_at_k(rel, gold_sets).max()))


def category(question_type: str, difficulty: str) -> str | None:
    """The reporting category; None for Subjective questions, which are not scored."""
    if question_type == "Basic information":
        return "basic"
    if question_type == "Preference":
        return f"preference_{difficulty}"
    if question_type == "Social":
        return "social"  # easy and hard social questions are pooled, as in the release
    return None
