"""Candidate queries: core terms, the exactly-once constraint, the coherent set."""

import numpy as np
import pytest

from personalens.lenses.pqb.candidate_queries import (
    check_candidate,
    clean_reply,
    coherent_subset,
    core_terms,
    template_candidates,
)
from personalens.lenses.pqb.spacy_pipeline import load_pipeline

TERMS = ["electric", "guitar", "tan", "mahogany", "body"]


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


def test_core_terms_are_the_titles_content_words_in_order(nlp):
    title = "Electric guitar, tan mahogany body, rosewood fingerboard, H pickup"
    assert core_terms(title, "", nlp) == TERMS
    # Stop words and punctuation are skipped; too few content words anywhere gives None.
    assert core_terms("The red one", "", nlp) is None
    assert core_terms("Red strap", "for a bass guitar with a leather end", nlp) == [
        "red", "strap", "bass", "guitar", "leather"]


@pytest.mark.parametrize("query, reason", [
    ("I need an electric guitar with a tan mahogany body.", None),
    ("Where can I find a tan electric guitar whose body is mahogany?", None),
    ("I need an electric guitar with a mahogany body.", "core term 'tan' appears 0 times"),
    ("I need an electric guitar, electric, tan mahogany body.",
     "core term 'electric' appears 2 times"),
    ("An electric guitar with a tan mahogany body.", "not in the first person"),
    ("I need a cheap electric guitar with a tan mahogany body.", "adds 'cheap'"),
    ("", "empty"),
])
def test_check_candidate(nlp, query, reason):
    assert check_candidate(query, TERMS, nlp) == reason


def test_every_template_keeps_the_constraint(nlp):
    queries = template_candidates(TERMS)
    assert len(set(queries)) == 8
    assert [check_candidate(q, TERMS, nlp) for q in queries] == [None] * 8


def test_clean_reply_takes_the_first_line_without_marks():
    assert clean_reply('\n1. "I need a tan guitar."\nSecond line') == "I need a tan guitar."
    assert clean_reply("Query: I want it") == "I want it"
    assert clean_reply("   ") == ""


def test_coherent_subset_by_hand():
    # Unit vectors at 0, 20 and 40 degrees, and one at 90: cos(20) = .940, cos(40) = .766.
    angles = np.radians([0, 20, 40, 90])
    vectors = np.column_stack([np.cos(angles), np.sin(angles)]) * [[1], [2], [3], [4]]
    # Mean cosine to all four (self included): .677, .806, .837, .496, so the 40-degree one is
    # taken first, then 20 (cos 20 = .940); 0 misses 40 (.766) and 90 misses both.
    assert coherent_subset(vectors, 0.9) == [1, 2]
    assert coherent_subset(vectors, 0.7) == [0, 1, 2]
    assert coherent_subset(vectors, -1.0) == [0, 1, 2, 3]
    assert coherent_subset(np.zeros((0, 2)), 0.9) == []
