import json

import pytest

from personalens.lenses.pqb.typo_edits import ADJACENT, KINDS, Edit, align, edit_counts, word_spans
from tests.conftest import SHARED


@pytest.mark.parametrize("correct, typed, expected", [
    ("guitar", "guitra", [Edit("transposition", 4, "ar", "ra")]),
    ("and", "ajd", [Edit("adjacent_key", 1, "n", "j")]),
    ("mahogany", "mahogwny", [Edit("adjacent_key", 5, "a", "w")]),
    ("and", "axd", [Edit("other", 1, "n", "x")]),
    ("tan", "ltan", [Edit("insertion", 0, "", "l")]),
    ("scientific", "scpientific", [Edit("insertion", 2, "", "p")]),
    ("the", "thee", [Edit("repetition", 2, "", "e")]),  # the extra e, before the last
    ("and", "nd", [Edit("deletion", 0, "a", "")]),
    ("same", "same", []),
])
def test_hand_made_pairs(correct, typed, expected):
    assert align(correct, typed) == expected


def test_qwerty_neighbours_are_symmetric_and_local():
    assert ADJACENT["g"] == {"f", "h", "t", "y", "v", "b"}
    assert all(a in ADJACENT[b] for a, near in ADJACENT.items() for b in near)


def test_the_release_typo_queries_decompose_into_known_kinds():
    data = json.loads((SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json")
                      .read_text())
    pairs = [(r["syntax_query"], r["typo_query"]) for records in data.values()
             for r in records if r["typo_query"]]
    counts = edit_counts(pairs)
    assert set(counts) == set(KINDS) and sum(counts.values()) > 0
    # PQB injects at most 3 words per query, one edit each in the common case.
    assert sum(counts.values()) <= 3 * 2 * len(pairs)


def test_words_are_runs_of_letters_as_the_typo_generator_walks_them():
    assert word_spans("Don't-stop, mp3 café!") == [
        (0, 3, "Don"), (4, 5, "t"), (6, 10, "stop"), (12, 14, "mp"), (16, 20, "café")]
