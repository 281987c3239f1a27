"""The population's quality rules, each told apart from its near misses by hand-counted text."""

import networkx as nx
import pytest

from personalens.population.generated_community import GeneratedCommunity, GeneratedSession
from personalens.population.quality import (
    MemberNames,
    assess,
    high_rules,
    is_degenerate,
    is_degenerate_session,
    repetition,
    totals,
    warning_line,
)
from personalens.population.reveal_check import session_text

FOX = "the quick brown fox jumps over the lazy dog"


def test_a_word_repeated_for_a_third_of_the_text_is_degenerate():
    # sow x3 of 5 words; 3 trigrams, all different.
    assert repetition("sow\nsow\nsow\nuser\nuse") == (3, 0.6, 0.0)
    assert is_degenerate("sow\nsow\nsow\nuser\nuse")
    # Exactly a third (3 of 9 words) is degenerate; 3 of 10 words is not.
    assert is_degenerate("a b c a d e a f g")
    assert not is_degenerate("a b c a d e a f g h")
    # Two of three words alike is a share of 2/3, but 2 occurrences are too few to mean much.
    assert repetition("yes yes no") == (2, 2 / 3, 0.0) and not is_degenerate("yes yes no")


def test_a_repeated_line_is_degenerate_a_repeated_phrase_is_not():
    # One 9-word line twice: 16 trigrams, the second copy's 7 repeat the first's (7/16);
    # "the" is 4 of 18 words.
    top, share, repeated = repetition(f"{FOX}\n{FOX}")
    assert (top, share, repeated) == (4, 4 / 18, 7 / 16) and is_degenerate(f"{FOX}\n{FOX}")
    # A 4-word phrase again: 12 trigrams, 2 repeat ("quick brown fox", "brown fox jumps").
    near = f"{FOX}\nquick brown fox jumps high"
    assert repetition(near)[2] == 2 / 12 and not is_degenerate(near)
    assert repetition("") == (0, 0.0, 0.0) and not is_degenerate("")


def test_a_value_naming_a_member_in_full_is_of_the_wrong_kind():
    members = MemberNames(["Soojin Ferreira", "Leonie Ferreira", "Ann Lee", "Ann Lee Smith"])
    assert members.find("Soojin Ferreira") == "Soojin Ferreira"
    assert members.find("soojin ferreira's blog") == "Soojin Ferreira"
    assert members.find("Ferreira Wines") is None  # a surname alone is a word too
    assert members.find("Soojin Ferreiras") is None  # whole words only
    assert members.find("works for Ann Lee Smith") == "Ann Lee Smith"  # the longest name
    assert MemberNames([]).find("Ann Lee") is None


def _session(person, noise, revealed_by, turns):
    return GeneratedSession(person, "user_ai_interaction", noise,
                            None if noise else {"subject": person, "attribute": "hobbies",
                                                "value": "x", "description": ""},
                            revealed_by, "s", {"user_ai_interaction": [
                                {"role": "user", "content": t} for t in turns]})


def test_assess_counts_each_rule_over_what_it_checks():
    profiles = {
        "Soojin Ferreira": {"persona": "", "attributes": {
            "age": 29, "occupation": "Marketing Coordinator", "hobbies": ["Samba", "Chess"]}},
        "Leonie Ferreira": {"persona": "", "attributes": {
            "age": 23, "occupation": "Soojin Ferreira", "mentor": "Soojin Ferreira"}},
    }
    sessions = [_session("Soojin Ferreira", False, "fallback", ["By the way, x is a hobby."]),
                _session("Soojin Ferreira", False, "model", ["I like x a lot."]),
                _session("Leonie Ferreira", True, None, ["sow", "sow", "sow", "user", "use"])]
    community = GeneratedCommunity("c", profiles, {}, nx.DiGraph(), None, "0.5", sessions)
    quality = assess(community)
    # Values: 1 + 2 for Soojin, 2 for Leonie (ages are integers, never names); only Leonie's
    # occupation is flagged: her mentor may be a member.
    assert quality.counts() == {"fallback_reveals": 1, "personal_sessions": 2,
                                "wrong_kind_values": 1, "profile_values": 5,
                                "degenerate_sessions": 1, "sessions": 3}
    wrong = quality.wrong_values[0]
    assert (wrong.person, wrong.attribute, wrong.names) == ("Leonie Ferreira", "occupation",
                                                            "Soojin Ferreira")
    assert [s.person for s in quality.degenerate] == ["Leonie Ferreira"]


def _counts(fallback, personal, wrong=0, values=10, degenerate=0, sessions=10):
    return {"fallback_reveals": fallback, "personal_sessions": personal,
            "wrong_kind_values": wrong, "profile_values": values,
            "degenerate_sessions": degenerate, "sessions": sessions}


def test_a_share_of_a_quarter_or_more_is_high_and_gets_one_line():
    demo = _counts(9, 9, wrong=1, values=12, degenerate=7, sessions=12)
    assert high_rules(demo) == ["fallback_reveals", "degenerate_sessions"]
    assert warning_line(demo) == (
        "quality warning: 9 of 9 reveals written by the fallback line; 7 of 12 sessions of "
        "degenerate repetition (a quarter or more is high; see the report's quality warnings "
        "before trusting this data)")
    assert high_rules(_counts(1, 4)) == ["fallback_reveals"]  # exactly 25 %
    assert high_rules(_counts(2, 9)) == [] and warning_line(_counts(2, 9)) is None  # 22 %
    assert high_rules(_counts(0, 0, values=0, sessions=0)) == []  # nothing checked


def test_totals_add_up_communities():
    assert totals([_counts(1, 4), _counts(2, 6, wrong=1)]) == _counts(3, 10, wrong=1, values=20,
                                                                     sessions=20)


@pytest.mark.parametrize("text", ["Hey, how was the trip to Lisbon? Did you see the tiles?",
                                  "Rain again, apparently. At least it should clear up by the "
                                  "evening. Let's hope so."])
def test_ordinary_sentences_are_not_degenerate(text):
    assert not is_degenerate(text)


def test_catalogue_fields_shared_by_purchases_are_not_degenerate_writing():
    kitchen = ["Home & Kitchen", "Kitchen & Dining", "Cutlery"]
    items = [{"title": t, "description": d, "categories": kitchen}
             for t, d in [("Chef Knife", "Sharp blade."), ("Cutting Board", "Maple wood."),
                          ("Knife Sharpener", "Two stages."), ("Paring Knife", "Small blade.")]]
    session = {"purchases": items}
    assert is_degenerate(session_text(session))  # what the rule read before
    assert not is_degenerate_session(session)
    looping = {"purchases": [{"title": "Knife", "description": "sow sow sow sow sow sow"}]}
    assert is_degenerate_session(looping)
